// What every browser test of tests/browser starts with: its arguments
// (TPUSIM_BINARY OUT_DIR), Debian's Chromium (exit 77, ctest's skip, when it
// is absent), puppeteer-core (installed by scripts/setup), and a check()
// that prints each result and counts failures.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export async function startBrowserTest(script) {
  const [binary, outDir] = process.argv.slice(2);
  if (!binary || !outDir) {
    console.error(`usage: node ${script} TPUSIM_BINARY OUT_DIR`);
    process.exit(2);
  }
  const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
  if (!existsSync(chromium)) {
    console.log(`SKIP: no Chromium at ${chromium} (scripts/setup installs Debian's chromium; or set CHROMIUM)`);
    process.exit(77);
  }
  let puppeteer;
  try {
    puppeteer = (await import("puppeteer-core")).default;
  } catch (e) {
    console.error(`FAIL: puppeteer-core is not installed in tests/browser (run scripts/setup): ${e.message}`);
    process.exit(1);
  }
  const test = {
    binary, outDir, chromium, puppeteer, failures: 0,
    check(ok, what) {
      console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
      if (!ok) ++test.failures;
    },
    // `tpusim run EXPERIMENT --html` (from the source folder) into
    // OUT_DIR/NAME.html and OUT_DIR/run: the page's path, the run's
    // report.json and trace.json's events.
    runWithPage(experiment, name) {
      mkdirSync(outDir, { recursive: true });
      const pagePath = path.resolve(outDir, name + ".html"), runDir = path.resolve(outDir, "run");
      execFileSync(binary, ["run", experiment, "--html", pagePath, "--out", runDir],
                   { cwd: source, stdio: "inherit", env: { ...process.env, SC_COPYRIGHT_MESSAGE: "DISABLE" } });
      return { pagePath, report: JSON.parse(readFileSync(path.join(runDir, "report.json"), "utf8")),
               events: JSON.parse(readFileSync(path.join(runDir, "trace.json"), "utf8")).traceEvents };
    },
    // The page in headless Chromium, with the script errors and the network
    // requests (other than its own file) it makes.
    async openPage(pagePath) {
      const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"] });
      const page = await browser.newPage();
      await page.setViewport({ width: 1240, height: 900 });
      const errors = [], requests = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
      await page.goto("file://" + pagePath);
      return { browser, page, errors, requests };
    },
  };
  return test;
}
