// Drives `tpusim run EXP --html` in headless Chromium (issue 22): the page
// must draw every slice of the run's trace.json (counted here from the file
// the same run wrote, not from the page's embedded data), one memory bar per
// chip with the report's totals, the run's point on the roofline at the
// report's intensity and per-chip rate and not above the roof, the pipeline
// rows of every stage, the report's step time; no script error, no network
// request. Issue 48: a stage's forwards and backwards on one row (the trace's
// sub-microsecond overlaps merged), the optimizer drawn in its own colour,
// memory in GiB with the report's capacity, the achieved rate labelled for
// all chips and per chip, the verdict as the report gives it. Writes a
// screenshot.
//
// Usage: node run_page.mjs TPUSIM_BINARY OUT_DIR
// Exit 77 (ctest SKIP_RETURN_CODE) when Chromium is absent.
import path from "node:path";
import process from "node:process";

import { startBrowserTest } from "./harness.mjs";

const test = await startBrowserTest("run_page.mjs");
const { outDir, check } = test;

// The shipped 4-stage pipeline on a v5e 2x2: engines, pipeline tasks, memory.
const { pagePath, report, events } = test.runWithPage("configs/experiments/train-pp-v5e.yaml", "run");
const slices = events.filter((e) => e.ph === "X").length;
const pipelineTracks = new Set(events.filter((e) => e.ph === "M" && e.name === "thread_name" &&
  e.args.name.startsWith("pipeline tasks")).map((e) => `${e.pid}/${e.tid}`));
const pipelineSlices = events.filter((e) => e.ph === "X" && pipelineTracks.has(`${e.pid}/${e.tid}`));
const stages = new Set(pipelineSlices.map((e) => e.pid)).size;
const optimizerSlices = pipelineSlices.filter((e) => e.name === "optimizer").length;
// The trace's forward and backward tasks of one stage overlap, if at all, by
// less than a microsecond (op spans meeting), never by a task's length.
let fbOverlapUs = 0;
for (const pid of new Set(pipelineSlices.map((e) => e.pid))) {
  const fb = pipelineSlices.filter((e) => e.pid === pid && e.name !== "optimizer").sort((a, b) => a.ts - b.ts);
  for (let i = 1; i < fb.length; ++i) fbOverlapUs = Math.max(fbOverlapUs, fb[i - 1].ts + fb[i - 1].dur - fb[i].ts);
}

const { browser, page, errors, requests } = await test.openPage(pagePath);
try {
  const seen = await page.evaluate(() => {
    const p = window.tpusimPage, point = document.getElementById("run-point");
    // The roof's height at the point's x, from the drawn polyline.
    const pts = document.getElementById("roof").getAttribute("points").split(" ").map((s) => s.split(",").map(Number));
    const cx = Number(point.getAttribute("cx"));
    let roofY = null;
    for (let i = 0; i + 1 < pts.length; ++i)
      if (pts[i][0] <= cx && cx <= pts[i + 1][0])
        roofY = pts[i][1] + (pts[i + 1][1] - pts[i][1]) * (cx - pts[i][0]) / (pts[i + 1][0] - pts[i][0]);
    const text = (id) => document.getElementById(id).textContent;
    const label = (id) => document.getElementById(id).parentElement.cells[0].textContent;
    return { slices: p.slicesDrawn, pipelineRows: p.pipelineRows, memory: p.memoryBars,
             tasks: p.pipelineTasks, colours: p.pipelineColours,
             capacity: text("memory-capacity"), ticks: [...document.querySelectorAll(".memory-tick")].map((t) => t.textContent),
             achievedLabel: label("achieved"), achieved: text("achieved"), perChipLabel: label("achieved-per-chip"),
             perChip: text("achieved-per-chip"), verdict: text("verdict"),
             intensity: Number(point.dataset.intensity), flops: Number(point.dataset.flops),
             cy: Number(point.getAttribute("cy")), roofY, step: document.getElementById("step-time").textContent };
  });
  const r = report.result;
  check(seen.slices === slices, `every slice of trace.json drawn (${seen.slices} of ${slices})`);
  check(fbOverlapUs > 0 && fbOverlapUs < 1, `the trace's forward/backward overlaps are under 1 us (${fbOverlapUs} us)`);
  const fbRows = new Set(seen.tasks.filter((t) => t.kind !== "optimizer").map((t) => t.row));
  check(fbRows.size === 1 && fbRows.has(0), `every stage's forwards and backwards on its first row (rows ${[...fbRows]})`);
  check(seen.tasks.length === pipelineSlices.length, `every pipeline task placed (${seen.tasks.length} of ${pipelineSlices.length})`);
  check(seen.pipelineRows >= stages && seen.pipelineRows <= 2 * stages,
        `a row per stage, and an overlap row only for the optimizer (${seen.pipelineRows} rows, ${stages} stages)`);
  const optimizer = seen.tasks.filter((t) => t.kind === "optimizer").length;
  check(optimizer === optimizerSlices && optimizer === stages, `an optimizer task per stage (${optimizer})`);
  const c = seen.colours;
  check(c.optimizer !== c.forward && c.optimizer !== c.backward && c.forward !== c.backward,
        `forward, backward and optimizer in three colours (${c.forward}, ${c.backward}, ${c.optimizer})`);
  const capacity = r.memory.capacity_bytes / 2 ** 30;
  check(seen.capacity === "capacity " + capacity.toFixed(1) + " GiB", `HBM capacity in GiB as the report says (${seen.capacity})`);
  check(seen.ticks.length > 0 && seen.ticks.every((t) => t.endsWith(" GiB")), `memory axis in GiB (${seen.ticks.join(", ")})`);
  const value = (t) => { const [n, u] = t.split(" "); return Number(n) * ({ T: 1e12, G: 1e9, M: 1e6 }[u[0]] || 1); };
  check(seen.achievedLabel === `achieved, all ${report.pod.chips} chips` &&
        Math.abs(value(seen.achieved) / r.achieved_flops_per_s - 1) < 5e-3,
        `achieved labelled for all chips, the report's rate (${seen.achievedLabel}: ${seen.achieved})`);
  check(seen.perChipLabel === "achieved, per chip" &&
        Math.abs(value(seen.perChip) / (r.achieved_flops_per_s / report.pod.chips) - 1) < 5e-3,
        `achieved per chip, the report's rate over its chips (${seen.perChip})`);
  check(seen.verdict === r.roofline.verdict, `the verdict as the report gives it (${seen.verdict})`);
  const chips = report.per_chip.map((c) => [c.chip, c.memory.total_bytes]);
  check(JSON.stringify(seen.memory.map((m) => [m.chip, m.total_bytes])) === JSON.stringify(chips),
        `one memory bar per chip with the report's totals (${seen.memory.length} bars)`);
  check(seen.intensity === r.arithmetic_intensity, `roofline point at the report's intensity (${seen.intensity})`);
  const perChip = r.achieved_flops_per_s / report.pod.chips;
  check(Math.abs(seen.flops / perChip - 1) < 1e-12, `roofline point at the report's rate per chip (${seen.flops})`);
  check(seen.roofY !== null && seen.cy >= seen.roofY - 0.5, `the point is not above the roof (y ${seen.cy} vs roof ${seen.roofY})`);
  check(seen.step === (r.step_time_s * 1e3).toPrecision(3) + " ms", `step time as the report says (${seen.step})`);
  check(errors.length === 0, `no script errors (${errors.join("; ")})`);
  check(requests.length === 0, `no network requests (${requests.join(", ")})`);
  await page.screenshot({ path: path.join(outDir, "run-page.png"), fullPage: true });
  console.log(`screenshot: ${path.join(outDir, "run-page.png")}`);
} finally {
  await browser.close();
}
process.exit(test.failures ? 1 : 0);
