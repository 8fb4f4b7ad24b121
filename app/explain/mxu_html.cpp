#include "app/explain/mxu_html.h"

#include "app/html_page.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace explain {

namespace {

// NaN (nothing there) becomes JSON null; float and double frames alike.
template <typename Real>
nlohmann::json numbers(const std::vector<Real>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (Real x : v) out.push_back(std::isnan(x) ? nlohmann::json() : nlohmann::json(double(x)));
  return out;
}

nlohmann::json matrix(const std::vector<hw::bf16>& v, std::uint64_t rows, std::uint64_t cols) {
  nlohmann::json out = nlohmann::json::array();
  for (std::uint64_t r = 0; r < rows; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (std::uint64_t c = 0; c < cols; ++c) row.push_back(double(v[r * cols + c].to_float()));
    out.push_back(row);
  }
  return out;
}

// The op's cycles as the path of its last result (docs/mxu.md): the last
// tile's feed starts at s (the recurrence; R for a single tile, the weights
// shifting in), its m vectors enter row 0 one per cycle, the last one takes
// R - 1 cycles down to the bottom row and n - 1 across to the tile's last
// column: cycles = s + m + (R - 1) + (n - 1), which for one full tile is
// 2R + m + C - 2. Each term with the cycles it covers, for the page to light.
nlohmann::json cycle_formula(const MxuWalkthrough& w, const hw::MxuTiling& tiling) {
  const std::uint64_t R = w.config.rows, C = w.config.cols, m = w.shape.m;
  const std::uint64_t s = w.schedule.back().feed_start, n = tiling.last_n_cols;
  const bool one_tile = w.schedule.size() == 1;
  struct Term {
    const char* symbol;
    std::uint64_t value;
    const char* what;
  };
  const Term terms[] = {
      {one_tile ? "R" : "s", s,
       one_tile ? "the weights shift in, one row per cycle" : "the last tile's feed starts (the tile recurrence)"},
      {"m", m, "the rows of A enter row 0, one per cycle"},
      {"(R - 1)", R - 1, "the last row of A goes down to the bottom row"},
      {one_tile && n == C ? "(C - 1)" : "(n - 1)", n - 1, "its sum crosses to the last column and leaves"}};
  nlohmann::json out{{"terms", nlohmann::json::array()}, {"one_full_tile", one_tile && n == C}};
  std::uint64_t at = 0;
  for (const Term& t : terms) {
    out["terms"].push_back(
        {{"symbol", t.symbol}, {"value", t.value}, {"start", at}, {"end", at + t.value}, {"what", t.what}});
    at += t.value;
  }
  out["total"] = at;
  return out;
}

// The page. __DATA__ is replaced by the JSON; the script draws every frame
// from it and computes nothing the simulator has not.
const char* const kPage = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tpusim: weight-stationary systolic array, cycle by cycle</title>
<style>
body { font-family: system-ui, sans-serif; margin: 16px; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.25em; margin: 0 0 4px 0; }
code, .mono { font-family: ui-monospace, monospace; }
#controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 10px 0; padding: 8px;
  background: #f3f4f6; border-radius: 6px; }
#controls button { font-size: 1em; min-width: 3em; padding: 4px 8px; }
#cycle-label { font-weight: bold; font-size: 1.1em; min-width: 11em; }
#status { font-family: ui-monospace, monospace; font-size: 0.9em; margin: 4px 0 10px 0; }
#stage { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
#array-box { display: grid; gap: 0; }
table.grid { border-collapse: separate; border-spacing: 3px; }
table.grid th { font-weight: normal; color: #666; font-size: 0.8em; }
td.pe { width: 64px; height: 54px; border: 2px solid #9ca3af; border-radius: 6px; vertical-align: top;
  font-family: ui-monospace, monospace; font-size: 12px; padding: 2px 4px; background: #fafafa; position: relative; }
td.pe.active { border-color: #15803d; background: #f0fdf4; }
td.pe.leaving { background: #fef3c7; border-color: #b45309; }
td.pe .w { color: #1d4ed8; }
td.pe .a { color: #15803d; font-weight: bold; }
td.pe .p { color: #92400e; font-weight: bold; }
td.pe .tv { color: #6b7280; font-size: 10px; }
td.in { width: 34px; text-align: center; font-family: ui-monospace, monospace; color: #15803d; background: #f0fdf4;
  border-radius: 4px; }
td.in.empty { color: #ccc; background: none; }
td.out { text-align: center; font-family: ui-monospace, monospace; font-size: 12px; color: #92400e; height: 22px; }
td.arrow { color: #9ca3af; text-align: center; }
.legend span { margin-right: 14px; }
.mat { margin-bottom: 12px; }
.mat table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 12px; }
.mat td { border: 1px solid #d1d5db; padding: 2px 6px; text-align: right; min-width: 22px; }
.mat td.fresh { background: #fde68a; }
.mat td.none { color: #bbb; }
.mat caption { text-align: left; font-weight: bold; font-size: 0.9em; padding-bottom: 2px; }
#explain { max-width: 60em; font-size: 0.92em; line-height: 1.4; }
textarea { font-family: ui-monospace, monospace; width: 16em; height: 7em; }
#own { display: flex; gap: 16px; flex-wrap: wrap; align-items: flex-start; }
#regen { background: #f3f4f6; padding: 6px; border-radius: 4px; word-break: break-all; }
#own-error { color: #b91c1c; }
.mat td.fed { background: #bbf7d0; outline: 2px solid #15803d; }
td.pe.moving .a { animation: slide-right 0.35s ease-out; }
td.pe.moving .p { animation: slide-down 0.35s ease-out; }
@keyframes slide-right { from { transform: translateX(-60px); opacity: 0.3; } to { transform: none; opacity: 1; } }
@keyframes slide-down { from { transform: translateY(-40px); opacity: 0.3; } to { transform: none; opacity: 1; } }
#formula { font-family: ui-monospace, monospace; margin: 6px 0; }
#formula span.term { padding: 1px 4px; border-radius: 4px; }
#formula span.term.lit { background: #fde68a; outline: 2px solid #b45309; }
#formula-what { font-size: 0.9em; color: #444; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div>Generated by <code id="command"></code></div>
<div id="controls">
  <button id="first" title="cycle 0 (Home)">|&lt;</button>
  <button id="back" title="one cycle back (Left arrow)">&lt; back</button>
  <button id="play" title="play / pause (Space)">play</button>
  <button id="forward" title="one cycle forward (Right arrow)">next &gt;</button>
  <button id="last" title="last cycle (End)">&gt;|</button>
  <span id="cycle-label"></span>
  <input id="scrub" type="range" min="0" value="0" aria-label="cycle">
  <label>speed <input id="speed" type="range" min="0.5" max="20" step="0.5" value="2"> <span id="speed-label"></span> cycles/s</label>
</div>
<div id="status"></div>
<div id="formula"></div>
<div id="formula-what"></div>
<div class="legend"><span class="w">w = stationary weight (bank in use)</span>
<span class="a" style="color:#15803d">a = activation multiplied this cycle</span>
<span style="color:#92400e">p = psum produced, p_in + a*w, passed down</span>
<span style="background:#fef3c7">leaving the bottom edge into Y</span>
<span style="background:#bbf7d0">entries of A and B in use this cycle</span></div>
<div id="stage">
  <div><table class="grid" id="array"></table></div>
  <div id="matrices"></div>
</div>
<h2 style="font-size:1.05em">Try your own A and B</h2>
<div id="own">
  <label>A (m x k), one row per line<br><textarea id="own-a"></textarea></label>
  <label>B (k x n), one row per line<br><textarea id="own-b"></textarea></label>
  <div>Run this to get the page for them (integers from -99 to 99; up to 32 rows and columns):
  <div id="regen" class="mono"></div><div id="own-error"></div></div>
</div>
<h2 style="font-size:1.05em">How to read it</h2>
<div id="explain">
<p>Weight-stationary: each PE (r, c) holds one weight B[k0+r][n0+c] of the current tile; the weights were shifted down
from the top edge column by column and then stay. Row i of A enters the array <em>skewed</em>: A[i][k0+r] enters row r
at cycle s + i + r (the "next in" columns show what enters each row in the next three cycles), then moves one PE to the
right per cycle. Each PE multiplies the activation passing through it by its weight, adds the partial sum from the PE
above, and passes the sum down. The bottom row's sums leave the array and are added into Y. With double-buffered
weights the next tile loads into the other bank while the current one streams.</p>
<p>Every number on this page was computed by tpusim's PE engine (the same frames as
<code>tpusim explain mxu --walk</code>); the page only draws them. Keys: Left/Right arrow step, Space play/pause,
Home/End first/last cycle.</p>
<pre id="schedule" class="mono"></pre>
</div>
<script id="tpusim-data" type="application/json">__DATA__</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("tpusim-data").textContent);
const R = D.rows, C = D.cols, last = D.frames.length - 1;
const $ = (id) => document.getElementById(id);
const fmt = (x) => (x === null ? "." : String(x));
let cycle = 0, timer = null;

$("title").textContent = `Weight-stationary ${R}x${C} systolic array: Y (${D.m}x${D.n}) = A (${D.m}x${D.k}) x B (${D.k}x${D.n}), ${D.cycles} cycles`;
$("command").textContent = D.command;
$("scrub").max = last;

// The array: "next in" cells on the left of each row, PEs, the bottom edge.
(function build() {
  const t = $("array");
  let h = "<tr><th colspan=3>next in (+3 +2 +1)</th><th></th>";
  for (let c = 0; c < C; ++c) h += `<th>c${c}</th>`;
  h += "</tr>";
  for (let r = 0; r < R; ++r) {
    h += "<tr>";
    for (let d = 0; d < 3; ++d) h += `<td class="in" id="in-${r}-${d}"></td>`;
    h += `<td class="arrow">r${r} &rarr;</td>`;
    for (let c = 0; c < C; ++c) h += `<td class="pe" id="pe-${r}-${c}" data-r="${r}" data-c="${c}"></td>`;
    h += "</tr>";
  }
  h += "<tr><td colspan=4 class=\"arrow\">out &darr;</td>";
  for (let c = 0; c < C; ++c) h += `<td class="out" id="out-${c}"></td>`;
  h += "</tr>";
  t.innerHTML = h;
})();

function matrixHtml(id, title, rows, get, fresh, mark = "fresh") {
  let h = `<div class="mat"><table id="${id}"><caption>${title}</caption>`;
  for (let i = 0; i < rows.length; ++i) {
    h += "<tr>";
    for (let j = 0; j < rows[i].length; ++j) {
      const v = get(i, j);
      const cls = v === null ? "none" : fresh && fresh.has(`${i},${j}`) ? mark : "";
      h += `<td class="${cls}" data-i="${i}" data-j="${j}">${fmt(v)}</td>`;
    }
    h += "</tr>";
  }
  return h + "</table></div>";
}

// The formula's terms, built once; show() lights the one the cycle is in.
(function formula() {
  const F = D.formula, parts = F.terms.map((t, k) => `<span class="term" id="term-${k}" data-start="${t.start}" ` +
    `data-end="${t.end}">${t.symbol}</span>`);
  $("formula").innerHTML = "cycles = " + parts.join(" + ") + " = " + F.terms.map((t) => t.value).join(" + ") +
    " = " + F.total + (F.one_full_tile ? ` (one full tile: 2R + m + C - 2 = 2x${R} + ${D.m} + ${C} - 2 = ${F.total})` : "");
})();

function show(t) {
  const stepped = t === cycle + 1;
  cycle = Math.max(0, Math.min(last, t));
  const f = D.frames[cycle];
  const lit = D.formula.terms.findIndex((term) => term.start <= cycle && cycle < term.end);
  D.formula.terms.forEach((term, k) => { $(`term-${k}`).className = "term" + (k === lit ? " lit" : ""); });
  $("formula").dataset.lit = lit;
  $("formula-what").textContent = lit >= 0 ? `cycle ${cycle} is in ${D.formula.terms[lit].symbol}: ` +
    D.formula.terms[lit].what : "";
  // The entries of A and B the active PEs use this cycle.
  const fedA = new Set(), fedB = new Set();
  $("cycle-label").textContent = `cycle ${cycle} of 0..${last}`;
  $("cycle-label").dataset.cycle = cycle;
  $("scrub").value = cycle;
  $("status").textContent = `${f.feeder} | ${f.loader}`;
  for (let r = 0; r < R; ++r) {
    for (let d = 0; d < 3; ++d) {
      const v = f.next_in[r * 3 + d], e = $(`in-${r}-${d}`);
      e.textContent = fmt(v);
      e.className = v === null ? "in empty" : "in";
    }
    for (let c = 0; c < C; ++c) {
      const i = r * C + c, e = $(`pe-${r}-${c}`), valid = f.tiles[i] >= 0;
      const bank = f.banks[i], w = f.weights[bank][i];
      e.dataset.weight = w;
      e.dataset.bank = bank;
      e.dataset.act = fmt(f.activations[i]);
      e.dataset.psum = fmt(f.psums[i]);
      e.className = "pe" + (valid ? " active" : "") + (valid && r === R - 1 ? " leaving" : "") +
        (valid && stepped ? " moving" : "");
      e.dataset.active = valid ? "1" : "0";
      if (valid) {
        const o = D.tile_origins[f.tiles[i]];
        fedA.add(`${f.vectors[i]},${o.k0 + r}`);
        fedB.add(`${o.k0 + r},${o.n0 + c}`);
      }
      const other = D.double_buffer ? `<span class="tv">/${fmt(f.weights[1 - bank][i])}</span>` : "";
      e.innerHTML = `<div class="w">w ${fmt(w)}${other}</div>` +
        (valid ? `<div class="a">a ${fmt(f.activations[i])}</div><div class="p">p ${fmt(f.psums[i])}</div>` +
                 `<div class="tv">t${f.tiles[i]} i${f.vectors[i]} b${bank}</div>` : "");
    }
  }
  for (let c = 0; c < C; ++c) {
    const i = (R - 1) * C + c;
    $(`out-${c}`).textContent = f.tiles[i] >= 0 ? fmt(f.psums[i]) : "";
  }
  // Y entries reached this cycle are highlighted.
  const fresh = new Set();
  for (const b of f.bottom) { const m = /Y\[(\d+)\]\[(\d+)\]/.exec(b); if (m) fresh.add(`${m[1]},${m[2]}`); }
  $("matrices").innerHTML =
    matrixHtml("mat-a", `A (${D.m}x${D.k}, activations, streamed)`, D.a, (i, j) => D.a[i][j], fedA, "fed") +
    matrixHtml("mat-b", `B (${D.k}x${D.n}, weights, stationary)`, D.b, (i, j) => D.b[i][j], fedB, "fed") +
    matrixHtml("mat-y", `Y so far (. = nothing arrived; final Y ${D.matches_reference ? "matches" : "DOES NOT match"} the host GEMM)`,
               D.y, (i, j) => f.y[i * D.n + j], fresh);
}

function pause() { if (timer) { clearInterval(timer); timer = null; } $("play").textContent = "play"; $("play").dataset.playing = "0"; }
function play() {
  pause();
  if (cycle >= last) show(0);
  timer = setInterval(() => { if (cycle >= last) pause(); else show(cycle + 1); }, 1000 / Number($("speed").value));
  $("play").textContent = "pause";
  $("play").dataset.playing = "1";
}
$("first").onclick = () => { pause(); show(0); };
$("back").onclick = () => { pause(); show(cycle - 1); };
$("forward").onclick = () => { pause(); show(cycle + 1); };
$("last").onclick = () => { pause(); show(last); };
$("play").onclick = () => (timer ? pause() : play());
$("scrub").oninput = () => { pause(); show(Number($("scrub").value)); };
$("speed").oninput = () => { $("speed-label").textContent = $("speed").value; if (timer) play(); };
$("speed-label").textContent = $("speed").value;
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "TEXTAREA" || e.target.tagName === "INPUT") return;
  if (e.key === "ArrowRight") $("forward").onclick();
  else if (e.key === "ArrowLeft") $("back").onclick();
  else if (e.key === " ") { e.preventDefault(); $("play").onclick(); }
  else if (e.key === "Home") $("first").onclick();
  else if (e.key === "End") $("last").onclick();
});

// The schedule of the tiles (load L, feed s, last out E).
let s = "tile  load L  feed s  last out E\n";
for (const t of D.schedule) s += `${String(t.tile).padEnd(6)}${String(t.load).padEnd(8)}${String(t.feed).padEnd(8)}${t.last_out}\n`;
$("schedule").textContent = s;

// The student's own A and B: the page builds the command that simulates them
// (it does not simulate anything itself).
const rowsText = (m) => m.map((r) => r.join(" ")).join("\n");
$("own-a").value = rowsText(D.a);
$("own-b").value = rowsText(D.b);
function regen() {
  const parse = (text) => text.trim().split(/\n+/).map((l) => l.trim().split(/[\s,]+/).join(","));
  const a = parse($("own-a").value), b = parse($("own-b").value);
  const cells = (rows) => rows.map((r) => r.split(","));
  let problem = "";
  for (const [name, m] of [["A", cells(a)], ["B", cells(b)]]) {
    if (m.some((r) => r.length !== m[0].length)) problem = `${name}: rows of different lengths`;
    if (m.flat().some((x) => !/^-?\d+$/.test(x) || Math.abs(Number(x)) > 99)) problem = `${name}: integers from -99 to 99 only`;
  }
  if (!problem && cells(a)[0].length !== b.length) problem = "A has as many columns as B has rows (k)";
  $("regen").textContent = `${D.command_base} --a '${a.join(";")}' --b '${b.join(";")}' --html mxu.html`;
  $("own-error").textContent = problem ? `tpusim will refuse this: ${problem}` : "";
}
$("own-a").oninput = regen;
$("own-b").oninput = regen;
regen();
show(0);
</script>
</body>
</html>
)PAGE";

}  // namespace

std::string mxu_walkthrough_json(const MxuWalkthrough& w, const std::string& command, const std::string& command_base) {
  const hw::MxuShape& s = w.shape;
  nlohmann::json j{{"command", command},
                   {"command_base", command_base},
                   {"rows", w.config.rows},
                   {"cols", w.config.cols},
                   {"m", s.m},
                   {"k", s.k},
                   {"n", s.n},
                   {"double_buffer", w.config.double_buffer},
                   {"cycles", w.cycles},
                   {"matches_reference", w.matches_reference},
                   {"a", matrix(w.a, s.m, s.k)},
                   {"b", matrix(w.b, s.k, s.n)}};
  nlohmann::json y = nlohmann::json::array();
  for (std::uint64_t i = 0; i < s.m; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::uint64_t c = 0; c < s.n; ++c) row.push_back(double(w.y[i * s.n + c]));
    y.push_back(row);
  }
  j["y"] = y;
  nlohmann::json schedule = nlohmann::json::array();
  for (std::size_t t = 0; t < w.schedule.size(); ++t)
    schedule.push_back({{"tile", t},
                        {"load", w.schedule[t].load_start},
                        {"feed", w.schedule[t].feed_start},
                        {"last_out", w.schedule[t].last_output}});
  j["schedule"] = schedule;
  // Tile j's corner in B: the PE engine takes tiles k-fastest (j = nt x k_tiles
  // + kt, hw/systolic_array.cpp), so PE(r,c) of tile j holds B[k0+r][n0+c]
  // and multiplies A[i][k0+r].
  const hw::MxuTiling tiling = hw::mxu_tiling(w.config, s);
  nlohmann::json origins = nlohmann::json::array();
  for (std::size_t t = 0; t < w.schedule.size(); ++t)
    origins.push_back({{"k0", (t % tiling.k_tiles) * w.config.rows}, {"n0", (t / tiling.k_tiles) * w.config.cols}});
  j["tile_origins"] = origins;
  j["formula"] = cycle_formula(w, tiling);
  nlohmann::json frames = nlohmann::json::array();
  for (std::size_t t = 0; t < w.states.size(); ++t) {
    const MxuFrameState& f = w.states[t];
    frames.push_back({{"cycle", t},
                      {"feeder", f.feeder},
                      {"loader", f.loader},
                      {"weights", {numbers(f.weights[0]), numbers(f.weights[1])}},
                      {"activations", numbers(f.activations)},
                      {"psums", numbers(f.psums)},
                      {"tiles", f.tiles},
                      {"vectors", f.vectors},
                      {"banks", f.banks},
                      {"next_in", numbers(f.next_in)},
                      {"bottom", f.bottom},
                      {"y", numbers(f.y)}});
  }
  j["frames"] = frames;
  return j.dump();
}

std::string render_mxu_html(const MxuWalkthrough& w, const std::string& command, const std::string& command_base) {
  return app::fill_html_page(kPage, mxu_walkthrough_json(w, command, command_base));
}

}  // namespace explain
