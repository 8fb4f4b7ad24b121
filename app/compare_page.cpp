// `tpusim compare A B --html FILE`: the comparison as one self-contained page.
#include "app/compare.h"
#include "app/html_page.h"

namespace app {

namespace {

// Two columns (A, B) per figure, grouped as the text table groups them, a
// bar for each side scaled to the larger of the two, and the change,
// coloured by its sign (for times and bytes, more is worse).
const char* const kComparePage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tpusim compare</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
table { border-collapse: collapse; width: 100%; max-width: 1100px; }
th, td { padding: 3px 8px; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; font-family: monospace; }
.bar { display: inline-block; height: 10px; vertical-align: middle; margin-right: 4px; }
.a { background: #4c78a8; } .b { background: #f58518; }
.up { color: #b00; } .down { color: #070; }
#summary { margin: 0.6em 0; font-size: 1.05em; }
</style></head><body>
<h1>tpusim compare</h1>
<div id="runs"></div><div id="summary"></div><div id="tables"></div>
<script type="application/json" id="data">__DATA__</script>
<script>
const cmp = JSON.parse(document.getElementById("data").textContent);
const prefixes = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""], [1e-3, "m"], [1e-6, "\u00b5"], [1e-9, "n"]];
function fmt(v, unit) {
  if (v === null) return "-";
  if (!unit) return v.toFixed(4);
  const a = Math.abs(v);
  for (const [f, p] of prefixes) if (a >= f || f === 1e-9) return (v / f).toPrecision(3) + " " + p + unit;
}
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
document.getElementById("runs").append(el("div", "A: " + cmp.a.path + " (" + cmp.a.name + ")"),
                                       el("div", "B: " + cmp.b.path + " (" + cmp.b.name + ")"));
const c = cmp.largest_contributor;
document.getElementById("summary").textContent =
  (cmp.step_time_delta_s === null ? "" : "step time " + (cmp.step_time_delta_s >= 0 ? "+" : "") + fmt(cmp.step_time_delta_s, "s") + "; ") +
  (c ? "largest contributor: " + c.key + " " + (c.delta_s >= 0 ? "+" : "") + fmt(c.delta_s, "s") +
       (c.share === null ? "" : " (" + Math.round(100 * c.share) + "% of the step's change)") : "no phase to name");
const groups = new Map();
for (const r of cmp.rows) { if (!groups.has(r.group)) groups.set(r.group, []); groups.get(r.group).push(r); }
const tables = document.getElementById("tables");
for (const [g, rows] of groups) {
  tables.append(el("h2", g));
  const t = el("table"), head = el("tr");
  for (const h of ["figure", "A", "B", "B - A", "change"]) head.append(el("th", h));
  t.append(head);
  for (const r of rows) {
    const tr = el("tr"), max = Math.max(Math.abs(r.a || 0), Math.abs(r.b || 0)) || 1;
    tr.append(el("td", r.key));
    for (const [v, cls] of [[r.a, "a"], [r.b, "b"]]) {
      const td = el("td"), bar = el("span", undefined, "bar " + cls);
      bar.style.width = (80 * Math.abs(v || 0) / max) + "px";
      td.append(bar, document.createTextNode(fmt(v, r.unit)));
      tr.append(td);
    }
    const sign = r.delta === null || r.delta === 0 ? "" : (r.delta > 0) === (r.unit === "s" || r.unit === "B") ? "up" : "down";
    tr.append(el("td", r.delta === null ? "-" : (r.delta >= 0 ? "+" : "") + fmt(r.delta, r.unit), sign),
              el("td", r.relative === null ? "" : (r.relative >= 0 ? "+" : "") + (100 * r.relative).toFixed(1) + "%", sign));
    t.append(tr);
  }
  tables.append(t);
}
</script></body></html>
)PAGE";

}  // namespace

std::string compare_html(const nlohmann::json& cmp) { return fill_html_page(kComparePage, cmp.dump()); }

}  // namespace app
