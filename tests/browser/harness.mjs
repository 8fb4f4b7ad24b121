// What every browser test of tests/browser starts with: its arguments
// (TPUSIM_BINARY OUT_DIR), Debian's Chromium (exit 77, ctest's skip, when it
// is absent), puppeteer-core (installed by scripts/setup), and a check()
// that prints each result and counts failures.
import { existsSync } from "node:fs";
import process from "node:process";

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
  };
  return test;
}
