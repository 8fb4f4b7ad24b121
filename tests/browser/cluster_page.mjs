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
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

import { startBrowserTest } from "./harness.mjs";

const test = await startBrowserTest("cluster_page.mjs");
const { binary, outDir, chromium, puppeteer, check } = test;

const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
mkdirSync(outDir, { recursive: true });
const pagePath = path.resolve(outDir, "cluster.html"), runDir = path.resolve(outDir, "run");
execFileSync(binary, ["run", "configs/experiments/cluster-two-trainers-v5e.yaml", "--html", pagePath, "--out", runDir],
             { cwd: source, stdio: "inherit", env: { ...process.env, SC_COPYRIGHT_MESSAGE: "DISABLE" } });
const report = JSON.parse(readFileSync(path.join(runDir, "report.json"), "utf8"));
const events = JSON.parse(readFileSync(path.join(runDir, "trace.json"), "utf8")).traceEvents;
const slices = events.filter((e) => e.ph === "X").length;
const processes = new Map(events.filter((e) => e.ph === "M" && e.name === "process_name")
  .map((e) => [e.pid, e.args.name]));

const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"] });
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1240, height: 900 });
  const errors = [], requests = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
  await page.goto("file://" + pagePath);
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
