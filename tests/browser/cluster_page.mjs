// Drives `tpusim run CLUSTER --html` in headless Chromium (issue 45): the
// page of the shipped two-trainer cluster must draw every slice of the
// run's trace.json (counted here from the file the same run wrote), each
// job's tracks as a group of its own (the trace's process), a row per job
// with the report's slowdown and a row per link that carried bytes; the
// makespan as the report gives it; no script error, no network request.
// Writes a screenshot.
//
// Usage: node cluster_page.mjs TPUSIM_BINARY OUT_DIR
// Exit 77 (ctest SKIP_RETURN_CODE) when Chromium is absent.
import path from "node:path";
import process from "node:process";

import { startBrowserTest } from "./harness.mjs";

const test = await startBrowserTest("cluster_page.mjs");
const { outDir, check } = test;

const { pagePath, report, events } = test.runWithPage("configs/experiments/cluster-two-trainers-v5e.yaml", "cluster");
const slices = events.filter((e) => e.ph === "X").length;
const processes = new Map(events.filter((e) => e.ph === "M" && e.name === "process_name")
  .map((e) => [e.pid, e.args.name]));

const { browser, page, errors, requests } = await test.openPage(pagePath);
try {
  const seen = await page.evaluate(() => ({
    slices: window.tpusimPage.slicesDrawn, jobs: window.tpusimPage.clusterJobs,
    links: document.querySelectorAll("tr.cluster-link").length,
    makespan: document.getElementById("step-time").textContent,
    makespanLabel: document.getElementById("step-time").parentElement.cells[0].textContent,
  }));
  const c = report.cluster;
  check(slices > 0 && seen.slices === slices, `every slice of trace.json drawn (${seen.slices} of ${slices})`);
  const names = c.jobs.map((j, i) => processes.get(i + 1));
  check(JSON.stringify(names) === JSON.stringify(c.jobs.map((j) => `${j.name} (${j.kind})`)),
        `each job a process of the trace, its track group (${names.join(", ")})`);
  check(JSON.stringify(seen.jobs) === JSON.stringify(c.jobs.map((j) => ({ name: j.name, slowdown: j.slowdown }))),
        `a row per job with the report's slowdown (${seen.jobs.map((j) => j.name + " " + j.slowdown).join(", ")})`);
  const used = c.links.filter((l) => l.bytes > 0).length;
  check(seen.links === used, `a row per link that carried bytes (${seen.links} of ${used})`);
  check(seen.makespanLabel === "makespan" && seen.makespan === c.makespan_s.toPrecision(3) + " s",
        `the makespan as the report gives it (${seen.makespan})`);
  check(errors.length === 0, `no script errors (${errors.join("; ")})`);
  check(requests.length === 0, `no network requests (${requests.join(", ")})`);
  await page.screenshot({ path: path.join(outDir, "cluster-page.png"), fullPage: true });
  console.log(`screenshot: ${path.join(outDir, "cluster-page.png")}`);
} finally {
  await browser.close();
}
process.exit(test.failures ? 1 : 0);
