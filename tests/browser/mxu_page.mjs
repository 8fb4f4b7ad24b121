// Drives `tpusim explain mxu --html` in headless Chromium (issue 22): after
// N steps with the page's own controls, the array the page shows must equal
// frame N of the text walk-through (`explain mxu --walk --frames full`,
// parsed here independently of the JSON the page embeds); back, play and
// pause must move the cycle as they say; at the last cycle the page's Y
// must equal A x B computed here by hand. Issue 48: the entries of A and B the
// page highlights, and its active PEs, are the ones the walk-through's frame
// says are in use (tile corners read from the walk-through's own tile
// table); stepping animates the operands; the cycle formula's terms add up
// to the walk-through's cycle count, one full tile's to 2R + m + C - 2 worked
// here by hand, and the term lit at each cycle matches what the frame shows
// (no activation while the weights load, row 0 fed while m is lit, the last
// PE busy at the end). Writes a screenshot.
//
// Usage: node mxu_page.mjs TPUSIM_BINARY OUT_DIR
// Exit 77 (ctest SKIP_RETURN_CODE) when Chromium is absent.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import process from "node:process";

import { startBrowserTest } from "./harness.mjs";

const test = await startBrowserTest("mxu_page.mjs");
const { binary, outDir, chromium, puppeteer, check } = test;

// The student's own operands: A 6x4, B 4x6 on a 4x4 array, two tiles along n
// (so a second tile loads into the other bank while the first streams).
const A = [[1, 2, -1, 0], [3, 0, 2, 1], [-2, 1, 1, 3], [0, -3, 2, 2], [1, 1, 1, 1], [2, -1, 0, -2]];
const B = [[1, 0, 2, -1, 3, 1], [0, 1, -2, 2, 1, 0], [2, 1, 0, 1, -1, 2], [-1, 3, 1, 0, 2, -2]];
const rows = (m) => m.map((r) => r.join(",")).join(";");
const shape = ["--rows", "4", "--cols", "4", "--a", rows(A), "--b", rows(B)];

mkdirSync(outDir, { recursive: true });
const page_path = path.resolve(outDir, "mxu.html");
execFileSync(binary, ["explain", "mxu", ...shape, "--html", page_path], { stdio: "inherit" });
const text = execFileSync(binary, ["explain", "mxu", ...shape, "--walk", "--no-pager", "--frames", "full"], {
  encoding: "utf8",
});

// Frame t of the text walk-through: per PE the activation, the psum and the
// weight marked * (the bank in use); null where the frame shows '.'.
function textFrame(t) {
  const start = text.indexOf(`===== cycle ${t} (of`);
  if (start < 0) throw new Error(`no frame ${t} in the walk-through`);
  const end = text.indexOf("===== cycle", start + 5);
  const lines = text.slice(start, end < 0 ? undefined : end).split("\n");
  const gridRows = (title) => {
    const at = lines.findIndex((l) => l.startsWith(title));
    return lines.slice(at + 2, at + 2 + 4).map((l) => l.trim().replace(/^r\d+\s+/, ""));
  };
  const num = (s) => (s === "." ? null : Number(s));
  const act = gridRows("activations").map((l) => [...l.matchAll(/(\.|-?[\d.e+]+ @\d+:\d+)/g)].map((m) => num(m[1].split(" ")[0])));
  const psum = gridRows("psums produced").map((l) => l.split(/\s+/).map(num));
  const weight = gridRows("weights").map((l) =>
    l.split(/\s+/).map((cell) => {
      const banks = cell.split("/");
      const star = banks.findIndex((b) => b.startsWith("*"));
      return star < 0 ? null : Number(banks[star].slice(1));
    }),
  );
  return { act, psum, weight };
}
const cycles = Number(/The op takes (\d+) cycles/.exec(text)[1]);
// The walk-through's tile table: tile, k rows a-b, n cols c-d.
const tileCorners = (walk) => [...walk.matchAll(/^ {2}(\d+) +(\d+)-\d+ +(\d+)-\d+ /gm)].map((m) => ({ k0: Number(m[2]), n0: Number(m[3]) }));
// Frame t's activations as tile and vector per PE (null for a bubble).
function textUse(walk, t, side) {
  const start = walk.indexOf(`===== cycle ${t} (of`);
  const lines = walk.slice(start).split("\n");
  const at = lines.findIndex((l) => l.startsWith("activations"));
  return lines.slice(at + 2, at + 2 + side).map((l) => [...l.trim().replace(/^r\d+\s+/, "").matchAll(/(\.|-?[\d.e+]+ @(\d+):(\d+))/g)]
    .map((m) => (m[1] === "." ? null : { tile: Number(m[2]), vector: Number(m[3]) })));
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  // Root in a container has no user namespace for Chromium's sandbox.
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // The page must need nothing from the network.
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  await page.goto("file://" + page_path, { waitUntil: "load" });

  const pageCycle = () => page.$eval("#cycle-label", (e) => Number(e.dataset.cycle));
  // What the page shows at PE(r,c): its data attributes, as the page drew them.
  const pageFrame = () =>
    page.evaluate(() => {
      const out = { act: [], psum: [], weight: [] };
      for (let r = 0; r < 4; ++r) {
        for (const k of ["act", "psum", "weight"]) out[k].push([]);
        for (let c = 0; c < 4; ++c) {
          const d = document.getElementById(`pe-${r}-${c}`).dataset;
          const num = (s) => (s === "." ? null : Number(s));
          out.act[r].push(num(d.act));
          out.psum[r].push(num(d.psum));
          // The text frame stars a weight only where an activation is.
          out.weight[r].push(d.act === "." ? null : Number(d.weight));
        }
      }
      return out;
    });
  const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);

  check((await pageCycle()) === 0, "the page opens at cycle 0");
  const N = 9;
  for (let i = 0; i < N; ++i) await page.click("#forward");
  check((await pageCycle()) === N, `${N} clicks on next: cycle ${N}`);
  const shown = await pageFrame(), want = textFrame(N);
  check(same(shown.act, want.act), `cycle ${N}: activations equal the walk-through's frame ${N}`);
  check(same(shown.psum, want.psum), `cycle ${N}: psums equal the walk-through's frame ${N}`);
  check(same(shown.weight, want.weight), `cycle ${N}: weights in use equal the walk-through's frame ${N}`);
  check(want.psum.flat().some((x) => x !== null), `frame ${N} has psums in flight (a meaningful comparison)`);
  // The highlighted entries of A and B and the active PEs, against the frame.
  const corners = tileCorners(text), use = textUse(text, N, 4);
  const wantA = new Set(), wantB = new Set(), wantActive = [];
  use.forEach((row, r) => row.forEach((u, c) => {
    if (!u) return;
    wantActive.push(`${r},${c}`);
    wantA.add(`${u.vector},${corners[u.tile].k0 + r}`);
    wantB.add(`${corners[u.tile].k0 + r},${corners[u.tile].n0 + c}`);
  }));
  const marked = await page.evaluate(() => {
    const cells = (id) => [...document.querySelectorAll(`#${id} td.fed`)].map((td) => `${td.dataset.i},${td.dataset.j}`);
    const active = [...document.querySelectorAll("td.pe")].filter((e) => e.dataset.active === "1").map((e) => `${e.dataset.r},${e.dataset.c}`);
    const moving = [...document.querySelectorAll("td.pe.active .a")].map((e) => e.getAnimations().length);
    return { a: cells("mat-a"), b: cells("mat-b"), active, moving };
  });
  const sameSet = (x, y) => same([...x].sort(), [...y].sort());
  check(wantActive.length > 0 && sameSet(marked.active, wantActive), `cycle ${N}: the active PEs are the frame's (${marked.active.length})`);
  check(sameSet(marked.a, wantA), `cycle ${N}: the highlighted A entries are the ones the frame multiplies (${marked.a.join(" ")})`);
  check(sameSet(marked.b, wantB), `cycle ${N}: the highlighted B entries are the weights in use (${marked.b.join(" ")})`);
  check(marked.moving.length > 0 && marked.moving.every((n) => n > 0), "after a step the activations are animated moving in");
  const formula = await page.evaluate(() => ({ text: document.getElementById("formula").textContent,
    lit: Number(document.getElementById("formula").dataset.lit),
    terms: [...document.querySelectorAll("#formula span.term")].map((e) => [Number(e.dataset.start), Number(e.dataset.end)]) }));
  check(formula.terms.length === 4 && formula.terms[3][1] === cycles && formula.text.endsWith(`= ${cycles}`),
        `the formula's terms add up to the walk-through's ${cycles} cycles (${formula.text})`);
  check(formula.terms[formula.lit][0] <= N && N < formula.terms[formula.lit][1], `cycle ${N} lights the term that covers it`);
  await new Promise((r) => setTimeout(r, 400));  // the step's animation ends before the screenshot
  await page.screenshot({ path: path.resolve(outDir, "mxu-page.png"), fullPage: true });

  await page.click("#back");
  check((await pageCycle()) === N - 1, "back: one cycle earlier");
  check(same(await pageFrame(), textFrame(N - 1)), `after back: the page equals frame ${N - 1}`);

  // Play at 5 cycles/s advances by itself (about 2 cycles in 500 ms; it
  // stops by itself at the last cycle, 11 cycles away); pause stops it.
  await page.$eval("#speed", (e) => { e.value = "5"; e.dispatchEvent(new Event("input")); });
  await page.click("#play");
  await new Promise((r) => setTimeout(r, 500));
  const playing = await page.$eval("#play", (e) => e.dataset.playing);
  await page.click("#play");
  const paused = await pageCycle();
  check(playing === "1" && paused > N - 1, `play advances (cycle ${N - 1} -> ${paused})`);
  await new Promise((r) => setTimeout(r, 400));
  check((await pageCycle()) === paused, "pause stops it");
  check(same(await pageFrame(), textFrame(paused)), `after pause: the page equals frame ${paused}`);

  await page.click("#last");
  check((await pageCycle()) === cycles - 1, `last: cycle ${cycles - 1}, the walk-through's last`);
  const y = await page.$$eval("#mat-y tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => Number(td.textContent))));
  const hand = A.map((a) => B[0].map((_, j) => a.reduce((s, x, p) => s + x * B[p][j], 0)));
  check(same(y, hand), "at the last cycle the page's Y equals A x B computed by hand");
  const regen = await page.$eval("#regen", (e) => e.textContent);
  check(regen.includes(`--a '${rows(A)}'`) && regen.includes(`--b '${rows(B)}'`), "the page shows the command for its A and B");

  // One full tile (m 6, k 4, n 4 on 4x4): 2R + m + C - 2 = 8 + 6 + 4 - 2 = 16 cycles, by hand.
  const oneShape = ["--rows", "4", "--cols", "4", "--m", "6", "--k", "4", "--n", "4"];
  const onePath = path.resolve(outDir, "mxu-one-tile.html");
  execFileSync(binary, ["explain", "mxu", ...oneShape, "--html", onePath], { stdio: "inherit" });
  const oneText = execFileSync(binary, ["explain", "mxu", ...oneShape, "--walk", "--no-pager", "--frames", "full"], { encoding: "utf8" });
  const oneCycles = Number(/The op takes (\d+) cycles/.exec(oneText)[1]);
  check(oneCycles === 2 * 4 + 6 + 4 - 2, `one full tile takes 2R + m + C - 2 = 16 cycles (walk-through: ${oneCycles})`);
  await page.goto("file://" + onePath, { waitUntil: "load" });
  const f16 = await page.$eval("#formula", (e) => e.textContent);
  check(f16.includes("2R + m + C - 2 = 2x4 + 6 + 4 - 2 = 16") && f16.startsWith("cycles = R + m + (R - 1) + (C - 1)"),
        `the one-tile page shows 2R + m + C - 2 (${f16})`);
  const litAt = [];
  for (let t = 0; t < oneCycles; ++t) {
    await page.$eval("#scrub", (e, v) => { e.value = String(v); e.dispatchEvent(new Event("input")); }, t);
    litAt.push(await page.$eval("#formula", (e) => Number(e.dataset.lit)));
  }
  const frames = [...Array(oneCycles).keys()].map((t) => textUse(oneText, t, 4));
  const idle = (t) => frames[t].flat().every((u) => u === null);
  check(litAt.every((k, t) => (k === 0) === idle(t)), "R is lit exactly while the frames show no activation (the weights load)");
  check(litAt.every((k, t) => (k === 1) === (frames[t][0][0] !== null)), "m is lit exactly while PE(0,0) multiplies a row of A");
  check(litAt[oneCycles - 1] === 3 && frames[oneCycles - 1][3][3] !== null,
        "the last cycle lights C - 1, with the bottom-right PE busy");
  check(errors.length === 0, `no script errors${errors.length ? ": " + errors.join("; ") : ""}`);
  check(requests.every((u) => u.startsWith("file:")), "no network requests");
} finally {
  await browser.close();
}
console.log(test.failures ? `${test.failures} check(s) failed` : `all checks passed; screenshot ${path.resolve(outDir, "mxu-page.png")}`);
process.exit(test.failures ? 1 : 0);
