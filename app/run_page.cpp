#include "app/run_page.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/html_page.h"

namespace app {

namespace {

// The trace's complete slices, grouped by track: {tracks: [{chip, chip_name,
// name, sort, slices: [[start_us, duration_us, name index]...]}], names,
// aggregated_bin_us, note}. Counters, flows and metadata other than
// names are not drawn. Past `max_slices` slices each engine track's slices
// that start in one bin are one ("37 ops"), the bins as wide as the step
// over as many bins as keep the page within `max_slices` (every chip and
// stage still drawn, each coarser); pipeline tasks are kept whole.
nlohmann::json trace_tracks(const std::string& trace_json, std::size_t max_slices) {
  nlohmann::json out{
      {"tracks", nlohmann::json::array()}, {"names", nlohmann::json::array()}, {"aggregated_bin_us", 0}, {"note", ""}};
  if (trace_json.empty()) return out;
  const nlohmann::json trace = nlohmann::json::parse(trace_json);
  if (trace.contains("otherData")) out["note"] = trace["otherData"].value("tpusim", "");
  std::map<long, std::string> chip_names;
  std::map<std::pair<long, long>, std::pair<std::string, long>> track_names;  // name, sort index
  struct Slice {
    double start, duration;
    std::string name;
  };
  std::map<std::pair<long, long>, std::vector<Slice>> slices;
  std::size_t total = 0;
  double span = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const long pid = e.at("pid");
    if (ph == "M") {
      const std::string what = e.at("name");
      if (what == "process_name") chip_names[pid] = e.at("args").at("name");
      if (what == "thread_name") track_names[{pid, e.at("tid")}].first = e.at("args").at("name");
      if (what == "thread_sort_index") track_names[{pid, e.at("tid")}].second = e.at("args").at("sort_index");
    } else if (ph == "X") {
      const double ts = e.at("ts"), dur = e.at("dur");
      slices[{pid, e.at("tid")}].push_back({ts, dur, e.at("name")});
      span = std::max(span, ts + dur);
      ++total;
    }
  }
  const auto is_pipeline = [&](const std::pair<long, long>& key) {
    return track_names[key].first.rfind("pipeline", 0) == 0;
  };
  double bin = 0;
  if (total > max_slices) {
    std::size_t engine_tracks = 0, kept = 0;
    for (const auto& [key, list] : slices) {
      if (is_pipeline(key))
        kept += list.size();
      else
        ++engine_tracks;
    }
    const std::size_t room = max_slices - std::min(max_slices, kept);
    const std::size_t bins = std::max<std::size_t>(1, room / std::max<std::size_t>(1, engine_tracks));
    bin = span / double(bins);
    out["aggregated_bin_us"] = bin;
  }
  std::map<std::string, std::size_t> name_index;
  const auto index = [&](const std::string& name) {
    const auto [it, fresh] = name_index.try_emplace(name, name_index.size());
    if (fresh) out["names"].push_back(it->first);
    return it->second;
  };
  for (const auto& [key, list] : slices) {
    nlohmann::json drawn = nlohmann::json::array();
    if (bin > 0 && !is_pipeline(key)) {
      std::map<long long, std::pair<std::pair<double, double>, std::size_t>> merged;  // bin -> ([start, end], ops)
      for (const Slice& sl : list) {
        const auto [it, fresh] =
            merged.try_emplace(static_cast<long long>(sl.start / bin), std::pair{sl.start, sl.start + sl.duration}, 0);
        auto& [range, ops] = it->second;
        range = {std::min(range.first, sl.start), std::max(range.second, sl.start + sl.duration)};
        ++ops;
      }
      for (const auto& [b, m] : merged)
        drawn.push_back({m.first.first, m.first.second - m.first.first,
                         index(m.second == 1 ? "1 op" : std::to_string(m.second) + " ops")});
    } else {
      for (const Slice& sl : list) drawn.push_back({sl.start, sl.duration, index(sl.name)});
    }
    const auto& [name, sort] = track_names[key];
    out["tracks"].push_back({{"chip", key.first},
                             {"chip_name", chip_names[key.first]},
                             {"name", name},
                             {"sort", sort},
                             {"slices", std::move(drawn)}});
  }
  return out;
}

// __DATA__ is replaced by {report, trace}; the script draws from it and
// computes nothing but scales.
const char* const kPage = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tpusim run</title>
<style>
body { font-family: system-ui, sans-serif; margin: 16px; color: #1a1a1a; background: #fff; max-width: 1200px; }
h1 { font-size: 1.3em; margin: 0 0 6px 0; }
h2 { font-size: 1.1em; margin: 22px 0 6px 0; }
table.summary td { padding: 2px 12px 2px 0; }
table.summary td:first-child { color: #555; }
.note { color: #555; font-size: 0.9em; }
.legend span { display: inline-block; margin-right: 14px; font-size: 0.9em; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
canvas, svg { border: 1px solid #ddd; }
</style>
</head>
<body>
<h1 id="title"></h1>
<div class="note">Every number on this page comes from the run's report.json and trace.json, embedded here;
the page only draws them.</div>
<table class="summary" id="summary"></table>
<h2>Engines over time, per simulated chip</h2>
<div class="legend" id="legend"></div>
<canvas id="timeline" width="1160" height="100"></canvas>
<div class="note" id="timeline-note"></div>
<div id="pipeline-section">
<h2>Pipeline schedule per stage (idle time shaded)</h2>
<canvas id="pipeline" width="1160" height="100"></canvas>
<div class="note" id="pipeline-note"></div>
</div>
<h2>Roofline</h2>
<svg id="roofline" width="640" height="360" xmlns="http://www.w3.org/2000/svg"></svg>
<div class="note" id="roofline-note"></div>
<div id="cluster-section">
<h2>Jobs sharing the data center</h2>
<table class="summary" id="cluster-jobs"></table>
<table class="summary" id="cluster-links"></table>
<div class="note">Each job's tracks above are its own group: its steps and DCN phases in company (a serving fleet:
its KV transfers into each decode replica). Alone: the job with the fabric to itself.</div>
</div>
<div id="memory-section">
<h2>Memory per chip</h2>
<svg id="memory" width="900" height="300" xmlns="http://www.w3.org/2000/svg"></svg>
<div class="note" id="memory-note"></div>
</div>
<script id="tpusim-data" type="application/json">__DATA__</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("tpusim-data").textContent);
const report = data.report, trace = data.trace, result = report.result || {};
const page = { slicesDrawn: 0, tracksDrawn: 0, pipelineRows: 0, roofline: null, memoryBars: [] };
window.tpusimPage = page;

function si(v, unit) {  // 1.23 ms, 4.5 GB/s ...
  if (v === undefined || v === null) return "-";
  if (v === 0) return "0 " + unit;
  const a = Math.abs(v), prefixes = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""],
    [1e-3, "m"], [1e-6, "u"], [1e-9, "n"]];
  for (const [f, p] of prefixes) if (a >= f || f === 1e-9) return (v / f).toPrecision(3) + " " + p + unit;
}
function gib(v) {  // bytes in GiB, as the terminal prints memory
  return (v / 2 ** 30).toFixed(1) + " GiB";
}
function el(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

// Summary.
const exp = report.experiment || {};
const pod = report.pod || {};
document.getElementById("title").textContent = "tpusim: " + (exp.name || "run") +
  (pod.chip ? " on " + (pod.chips ? pod.chips + " x " : "") + pod.chip : "");
const rows = [[report.cluster ? "makespan" : "step time", si(result.step_time_s, "s"), "step-time"],
  ["MFU", result.mfu !== undefined ? (100 * result.mfu).toFixed(1) + " %" : "-", "mfu"],
  ["verdict", result.roofline ? result.roofline.verdict || result.roofline.bound : "-", "verdict"],
  ["MXU / HBM / ICI busy (busiest chip)", result.roofline && result.roofline.busy_fraction ?
    ["mxu", "hbm", "ici"].map((k) => (100 * result.roofline.busy_fraction[k]).toFixed(1)).join(" / ") + " % of the step" :
    "-", "busy"],
  ["arithmetic intensity", result.arithmetic_intensity !== undefined ?
    result.arithmetic_intensity.toFixed(1) + " FLOP/B" : "-", "intensity"],
  ["achieved, all " + (pod.chips || 1) + " chips", si(result.achieved_flops_per_s, "FLOP/s"), "achieved"],
  ["achieved, per chip", si(result.achieved_flops_per_s / (pod.chips || 1), "FLOP/s"), "achieved-per-chip"]];
if (result.pipeline) rows.push(["pipeline bubble", (100 * result.pipeline.bubble_fraction).toFixed(1) +
  " % (ideal (p-1)/(m+p-1) = " + (100 * result.pipeline.bubble_fraction_ideal).toFixed(1) + " %)", "bubble"]);
for (const [k, v, id] of rows) {
  const tr = document.getElementById("summary").insertRow();
  tr.insertCell().textContent = k;
  const td = tr.insertCell();
  td.textContent = v;
  td.id = id;
}

// Timeline: one row per track, tracks of a chip together, time in us.
const colours = { mxu: "#2e7d32", vector: "#1565c0", dma: "#ef6c00", ici: "#6a1b9a", scalar: "#757575",
  pipeline: "#00838f", other: "#9e9e9e" };
function kind(name) {
  for (const k of ["mxu", "vector", "dma", "ici", "scalar", "pipeline"]) if (name.startsWith(k)) return k;
  return "other";
}
const tracks = trace.tracks.slice().sort((a, b) => a.chip - b.chip || a.sort - b.sort);
let end = 0;
for (const t of tracks) for (const s of t.slices) end = Math.max(end, s[0] + s[1]);
if (result.step_time_s) end = Math.max(end, result.step_time_s * 1e6);
const legend = document.getElementById("legend");
for (const k in colours) {
  const s = document.createElement("span");
  s.innerHTML = '<i style="background:' + colours[k] + '"></i>' + k;
  legend.appendChild(s);
}
function drawRows(canvas, list, rowH, shadeIdle) {
  const left = 250, width = canvas.width - left - 10, axis = 24;
  canvas.height = list.length * rowH + axis + 4;
  const g = canvas.getContext("2d");
  g.font = "11px system-ui, sans-serif";
  const x = (us) => left + (end > 0 ? us / end * width : 0);
  let drawn = 0;
  list.forEach((t, i) => {
    const y = i * rowH;
    g.fillStyle = "#333";
    g.fillText((t.chip_name.split(" ")[0] + " " + t.name).slice(0, 40), 4, y + rowH - 3);
    if (shadeIdle) { g.fillStyle = "#fde2e2"; g.fillRect(x(0), y + 1, x(end) - x(0), rowH - 2); }
    for (const s of t.slices) {
      const nm = trace.names[s[2]];
      g.fillStyle = shadeIdle ? taskColours[taskKind(nm)] : colours[kind(t.name)];
      g.fillRect(x(s[0]), y + 1, Math.max(1, x(s[0] + s[1]) - x(s[0])), rowH - 2);
      ++drawn;
    }
  });
  const y0 = list.length * rowH + 2;
  g.strokeStyle = "#555"; g.beginPath(); g.moveTo(left, y0); g.lineTo(left + width, y0); g.stroke();
  g.fillStyle = "#333";
  for (let k = 0; k <= 5; ++k) {
    g.fillText(si(end * k / 5 * 1e-6, "s"), left + width * k / 5 - (k === 5 ? 40 : 0), y0 + 14);
  }
  g.fillText("time", 4, y0 + 14);
  return drawn;
}
const engineTracks = tracks.filter((t) => !t.name.startsWith("pipeline"));
page.slicesDrawn = drawRows(document.getElementById("timeline"), engineTracks, 12, false);
page.tracksDrawn = engineTracks.length;
page.aggregatedBinUs = trace.aggregated_bin_us;
document.getElementById("timeline-note").textContent = engineTracks.length + " tracks, " + page.slicesDrawn +
  " slices" + (trace.aggregated_bin_us ? "; aggregated for the page's bound: each track's ops that start in one " +
  si(trace.aggregated_bin_us * 1e-6, "s") + " bin are one slice (every chip drawn)" : "") +
  (trace.note ? "; trace.json is " + trace.note : "") +
  ". Chips that are replicas of a simulated chip are not drawn (their name says what each represents).";
// A stage's tasks, from every pipeline track of its chip (the trace puts a
// task that overlaps another on a track of its own, "#1"), packed into as few
// rows as they fit: a task joins the first row whose last task ends no more
// than kMergeUs after it starts. The trace's spans are ops' spans, and a
// forward that starts 0.36 us before the previous one ends is the same stage
// running one task after another, not two at once.
const kMergeUs = 1;
const taskColours = { forward: "#1565c0", backward: "#e65100", optimizer: "#6a1b9a", other: "#757575" };
function taskKind(name) {
  if (name === "optimizer") return "optimizer";
  if (name[0] === "F") return "forward";
  if (name[0] === "B") return "backward";
  return "other";
}
function packStages(list) {
  const byChip = new Map();
  for (const t of list) {
    if (!byChip.has(t.chip)) byChip.set(t.chip, { chip: t.chip, chip_name: t.chip_name, slices: [] });
    byChip.get(t.chip).slices.push(...t.slices);
  }
  const rows = [];
  for (const stage of byChip.values()) {
    const own = [];
    for (const s of stage.slices.slice().sort((a, b) => a[0] - b[0])) {
      let row = own.find((r) => r.last <= s[0] + kMergeUs);
      if (!row) {
        row = { chip: stage.chip, chip_name: stage.chip_name, name: "stage" + (own.length ? " (overlap)" : ""),
                slices: [], last: 0 };
        own.push(row);
      }
      row.slices.push(s);
      row.last = Math.max(row.last, s[0] + s[1]);
      page.pipelineTasks.push({ chip: stage.chip, row: own.indexOf(row), name: trace.names[s[2]],
                                kind: taskKind(trace.names[s[2]]) });
    }
    rows.push(...own);
  }
  return rows;
}
page.pipelineTasks = [];
page.pipelineColours = taskColours;
const pipeTracks = tracks.filter((t) => t.name.startsWith("pipeline"));
if (pipeTracks.length) {
  const stageRows = packStages(pipeTracks);
  page.slicesDrawn += drawRows(document.getElementById("pipeline"), stageRows, 18, true);
  page.pipelineRows = stageRows.length;
  document.getElementById("pipeline-note").textContent = "Blue: forward of a microbatch (F), orange: " +
    "backward (B), purple: the optimizer's update; pink: the stage is idle (the bubble). Tasks that overlap " +
    "by less than " + kMergeUs + " us share a row; a task that truly runs beside another (the optimizer " +
    "starting on the first layers' gradients while the last backward runs) goes on an overlap row.";
} else {
  document.getElementById("pipeline-section").style.display = "none";
}

// Roofline: log-log, FLOP/s against FLOP/B; the chip's two ceilings.
(function roofline() {
  const r = result.roofline;
  const svg = document.getElementById("roofline");
  if (!r || !r.peak_flops_per_s || result.arithmetic_intensity === undefined) {
    svg.style.display = "none";
    return;
  }
  const W = 640, H = 360, L = 70, B = 50, T = 15, R = 15;
  const x0 = 0.1, x1 = 1e5, y1 = r.peak_flops_per_s * 3, y0 = y1 / 1e6;
  const X = (v) => L + (Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * (W - L - R);
  const Y = (v) => H - B - (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) * (H - B - T);
  svg.appendChild(el("rect", { x: L, y: T, width: W - L - R, height: H - B - T, fill: "none", stroke: "#999" }));
  for (let e = -1; e <= 5; ++e) {
    svg.appendChild(el("text", { x: X(10 ** e) - 10, y: H - B + 16, "font-size": 11 }, "1e" + e));
  }
  for (let e = Math.ceil(Math.log10(y0)); e <= Math.log10(y1); e += 2) {
    svg.appendChild(el("text", { x: 4, y: Y(10 ** e) + 4, "font-size": 11 }, si(10 ** e, "FLOP/s")));
  }
  svg.appendChild(el("text", { x: L + 150, y: H - 10, "font-size": 12 }, "arithmetic intensity (FLOP/B)"));
  svg.appendChild(el("text", { x: L + 6, y: T + 14, "font-size": 12 }, "FLOP/s per chip"));
  const ridge = r.ridge_intensity;
  const pts = [[x0, x0 * r.hbm_bytes_per_s], [ridge, r.peak_flops_per_s], [x1, r.peak_flops_per_s]];
  svg.appendChild(el("polyline", { id: "roof", points: pts.map(([a, b]) => X(a) + "," + Y(Math.max(b, y0))).join(" "),
    fill: "none", stroke: "#1565c0", "stroke-width": 2 }));
  svg.appendChild(el("text", { x: X(ridge) + 4, y: Y(r.peak_flops_per_s) - 4, "font-size": 11 },
    "peak " + si(r.peak_flops_per_s, "FLOP/s") + ", ridge " + ridge.toFixed(0) + " FLOP/B"));
  // The roofline is one chip's; the report's achieved rate is the pod's.
  const px = result.arithmetic_intensity, py = result.achieved_flops_per_s / (pod.chips || 1);
  svg.appendChild(el("circle", { id: "run-point", cx: X(px), cy: Y(py), r: 6, fill: "#c62828",
    "data-intensity": px, "data-flops": py }));
  page.roofline = { intensity: px, flops: py };
  document.getElementById("roofline-note").textContent = "The run (red): " + px.toFixed(1) + " FLOP/B, " +
    si(py, "FLOP/s") + " achieved per chip; the ceilings are the chip's HBM bandwidth (" +
    si(r.hbm_bytes_per_s, "B/s") + ") and peak.";
})();

// A cluster (report.cluster): each job alone on the fabric and in company,
// and what each shared link carried, for whom.
page.clusterJobs = [];
(function cluster() {
  const c = report.cluster;
  if (!c) {
    document.getElementById("cluster-section").style.display = "none";
    return;
  }
  const row = (table, cells, cls) => {
    const tr = document.getElementById(table).insertRow();
    if (cls) tr.className = cls;
    for (const v of cells) tr.insertCell().textContent = v;
  };
  row("cluster-jobs", ["job", "kind", "alone on the fabric", "in company", "slowdown"]);
  for (const j of c.jobs) {
    const what = j.serving ? (v) => "TTFT p99 " + si(v, "s") : (v) => "step " + si(v, "s");
    row("cluster-jobs", [j.name, j.kind, what(j.serving ? j.serving.ttft_alone_s.p99 : j.step_alone_s),
      what(j.serving ? j.serving.ttft_s.p99 : j.step_s), j.slowdown.toFixed(3)], "cluster-job");
    page.clusterJobs.push({ name: j.name, slowdown: j.slowdown });
  }
  row("cluster-links", ["link", "utilization", "carried for"]);
  for (const l of c.links.filter((l) => l.bytes > 0))
    row("cluster-links", [l.name, (100 * l.utilization).toFixed(1) + " %",
      Object.entries(l.by_job).map(([k, v]) => k + " " + si(v, "B")).join(", ")], "cluster-link");
})();

// Memory: a stacked bar per chip, against its HBM capacity.
(function memory() {
  const chips = (report.per_chip || []).filter((c) => c.memory);
  const cap = result.memory ? result.memory.capacity_bytes : 0;
  const svg = document.getElementById("memory");
  if (!chips.length || !cap) {
    document.getElementById("memory-section").style.display = "none";
    return;
  }
  const parts = [["params_bytes", "parameters", "#1565c0"], ["grads_bytes", "gradients", "#42a5f5"],
    ["optimizer_bytes", "optimizer state", "#ef6c00"], ["activations_bytes", "activations", "#2e7d32"],
    ["gathered_weights_bytes", "gathered weights", "#8e24aa"], ["ring_buffers_bytes", "ring buffers", "#6d4c41"]];
  const shown = chips.slice(0, 64), W = 900, H = 300, L = 70, B = 40, T = 10;
  const top = Math.max(cap, ...shown.map((c) => c.memory.total_bytes)) * 1.05;
  const bw = Math.min(40, (W - L - 200) / shown.length);
  const Y = (v) => H - B - v / top * (H - B - T);
  svg.appendChild(el("line", { x1: L, x2: L + bw * shown.length, y1: Y(cap), y2: Y(cap), stroke: "#c62828",
    "stroke-dasharray": "4 3" }));
  svg.appendChild(el("text", { x: L + bw * shown.length + 4, y: Y(cap) + 4, "font-size": 11, id: "memory-capacity" },
    "capacity " + gib(cap)));
  for (let k = 0; k <= 4; ++k)
    svg.appendChild(el("text", { x: 2, y: Y(top * k / 4) + 4, "font-size": 11, class: "memory-tick" }, gib(top * k / 4)));
  shown.forEach((c, i) => {
    let acc = 0;
    for (const [key, , colour] of parts) {
      const v = c.memory[key] || 0;
      if (v > 0) svg.appendChild(el("rect", { x: L + i * bw + 2, width: bw - 4, y: Y(acc + v), height: Y(acc) - Y(acc + v),
        fill: colour }));
      acc += v;
    }
    page.memoryBars.push({ chip: c.chip, total_bytes: c.memory.total_bytes });
    svg.appendChild(el("text", { x: L + i * bw + 2, y: H - B + 14, "font-size": 10 }, String(c.chip)));
  });
  svg.appendChild(el("text", { x: L, y: H - 6, "font-size": 12 }, "chip (GiB per chip, stacked)"));
  // report.json at summary detail lists a large pod's chip 0 and outliers only (per_chip_summary).
  const all = report.per_chip_summary ? report.per_chip_summary.chips : chips.length;
  const mem = report.per_chip_summary && report.per_chip_summary.fields["memory.total_bytes"];
  if (shown.length < all) document.getElementById("memory-note").textContent = "Drawn: " + shown.length + " of " +
    all + " chips" + (chips.length < all ? " (report.json lists chip 0 and the chips at each number's minimum and " +
    "maximum; tpusim run --report-detail full lists every chip)" : " (the first 64)") + "." + (mem ? " Over all " +
    all + " chips: " + gib(mem.min) + " (chip " + mem.min_chip + ") to " + gib(mem.max) + " (chip " + mem.max_chip +
    "), mean " + gib(mem.mean) + "." : "");
  page.memoryNote = document.getElementById("memory-note").textContent;
  parts.forEach(([, label, colour], k) => {
    svg.appendChild(el("rect", { x: W - 190, y: T + k * 18, width: 12, height: 12, fill: colour }));
    svg.appendChild(el("text", { x: W - 172, y: T + k * 18 + 11, "font-size": 11 }, label));
  });
})();
</script>
</body>
</html>
)PAGE";

}  // namespace

std::string render_run_html(const nlohmann::json& report, const std::string& trace_json, std::size_t max_slices) {
  const nlohmann::json data{{"report", report}, {"trace", trace_tracks(trace_json, max_slices)}};
  return fill_html_page(kPage, data.dump());
}

}  // namespace app
