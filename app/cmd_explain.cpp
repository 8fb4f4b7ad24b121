#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "app/chip_diff.h"
#include "app/cli.h"
#include "app/command_line.h"
#include "app/explain/mxu_explain.h"
#include "app/explain/mxu_html.h"
#include "app/explain/mxu_vcd_op.h"
#include "app/explain/mxu_walkthrough.h"
#include "app/html_page.h"
#include "hw/chip_config.h"
#include "plan/spec.h"
#include "sim/output.h"
#include "sim/params.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"
#include "workloads/scalesim.h"
#include "workloads/validation_case.h"
#include "workloads/workload.h"

namespace po = boost::program_options;

namespace app {

namespace {

// The explain command runs one op at an MXU clock of 1 GHz, so in a VCD
// cycle c of the op sits at c ns.
constexpr double kExplainClockPeriodNs = 1.0;

// How the walk-through shows its frames.
enum class Pace {
  all,   // print every frame, never wait (--no-pager, or stdin is not a terminal)
  step,  // wait for Enter after each frame
  play,  // wait --play seconds after each frame
};

// Which frames the walk-through shows.
enum class FrameStyle { full, compact };

// ANSI colour only where a terminal shows it (https://no-color.org: NO_COLOR
// set to anything turns it off).
bool colour_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr && term != nullptr && std::string(term) != "dumb";
}

// Shows the walk-through: the intro, one frame per cycle, then the result.
// Stepping, a line of input moves: Enter the next cycle, b the one before, a
// number that cycle, f switches between compact and full frames, a prints the
// rest, q skips to the result.
void present_walkthrough(const explain::MxuWalkthrough& w, Pace pace, double play_seconds, FrameStyle style) {
  // Redrawing in place animates the array, but only a terminal understands
  // the escape sequence (a file or pipe gets the frames one after another).
  const bool terminal = isatty(STDOUT_FILENO), colour = colour_terminal();
  auto frame = [&](std::size_t t) {
    if (style == FrameStyle::full || w.compact_frames.empty()) return w.frames[t];
    return colour ? w.compact_frames[t] : explain::strip_colour(w.compact_frames[t]);
  };
  const std::string keys = "Enter = next, b = back, N = cycle N, f = full/compact, a = run to the end, q = result";
  std::cout << w.intro;
  if (pace == Pace::step) std::cout << "\nAfter each frame: " << keys << ".\n";
  std::cout << "\n" << std::flush;
  // Time to read the intro before the first frame (which may clear it).
  if (pace == Pace::play) std::this_thread::sleep_for(std::chrono::duration<double>(4 * play_seconds));
  const std::size_t last = w.frames.size() - 1;
  for (std::size_t t = 0; t <= last;) {
    const bool redraw = terminal && (pace == Pace::play || (pace == Pace::step && style == FrameStyle::compact));
    if (redraw) std::cout << "\033[H\033[2J";
    std::cout << frame(t) << "\n";
    if (pace == Pace::play) {
      std::cout << std::flush;
      std::this_thread::sleep_for(std::chrono::duration<double>(play_seconds));
    } else if (pace == Pace::step && t < last) {
      std::cout << "-- cycle " << t << " of 0.." << last << ": " << keys << " -- " << std::flush;
      std::string answer;
      if (!std::getline(std::cin, answer) || answer == "a") {
        pace = Pace::all;
      } else if (answer == "q") {
        break;
      } else if (answer == "b") {
        t = t > 0 ? t - 1 : 0;
        continue;
      } else if (answer == "f") {
        if (!w.compact_frames.empty()) style = style == FrameStyle::full ? FrameStyle::compact : FrameStyle::full;
        continue;
      } else if (!answer.empty() && answer.find_first_not_of("0123456789") == std::string::npos) {
        t = std::min<std::size_t>(std::stoull(answer.substr(0, 18)), last);
        continue;
      }
    }
    ++t;
  }
  std::cout << w.summary;
}

// A matrix given on the command line (--a, --b): rows separated by ';',
// values by ',' or spaces, integers in [-kOwnOperandMax, kOwnOperandMax]
// (see mxu_walkthrough), e.g. "1,2,3;4,5,6" is 2x3.
struct OwnMatrix {
  std::uint64_t rows = 0, cols = 0;
  std::vector<hw::bf16> values;  // row-major
};

OwnMatrix parse_own_matrix(const std::string& option, const std::string& text) {
  OwnMatrix m;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    std::string row = text.substr(start, end - start);
    for (char& ch : row)
      if (ch == ',' || ch == '\t') ch = ' ';
    std::vector<hw::bf16> values;
    std::size_t at = 0;
    while ((at = row.find_first_not_of(' ', at)) != std::string::npos) {
      const std::size_t stop = std::min(row.find(' ', at), row.size());
      const std::string word = row.substr(at, stop - at);
      at = stop;
      const std::size_t digits = word[0] == '-' ? 1 : 0;
      if (word.size() == digits || word.size() > digits + 2 ||
          word.find_first_not_of("0123456789", digits) != std::string::npos)
        throw UsageError(option + ": row " + std::to_string(m.rows) + ": '" + word + "' is not an integer from -" +
                         std::to_string(explain::kOwnOperandMax) + " to " + std::to_string(explain::kOwnOperandMax) +
                         " (rows separated by ';', values by ',' or spaces)");
      values.push_back(hw::bf16::from_float(static_cast<float>(std::stoi(word))));
    }
    if (values.empty()) throw UsageError(option + ": row " + std::to_string(m.rows) + " is empty");
    if (m.rows > 0 && values.size() != m.cols)
      throw UsageError(option + ": row " + std::to_string(m.rows) + " has " + std::to_string(values.size()) +
                       " values, row 0 has " + std::to_string(m.cols));
    m.cols = values.size();
    ++m.rows;
    m.values.insert(m.values.end(), values.begin(), values.end());
    start = end + 1;
  }
  return m;
}

// Quotes a word for a POSIX shell when it needs it.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,") ==
                           std::string::npos)
    return word;
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

int explain_mxu(const std::vector<std::string>& args) {
  po::options_description opts("tpusim explain mxu");
  std::uint32_t rows = 128, cols = 128;
  std::uint64_t m = 128, k = 128, n = 128, seed = 1;
  std::string dataflow = "ws", fidelity = "tile", schedule = "overlapped", vcd_path, frames, html_path, own_a, own_b;
  double play_seconds = 0;
  opts.add_options()("help,h", "this text")("rows", po::value(&rows)->default_value(128), "array rows (2..256)")(
      "cols", po::value(&cols)->default_value(128), "array columns (2..256)")("m", po::value(&m)->default_value(128),
                                                                              "rows of A (streamed activations)")(
      "k", po::value(&k)->default_value(128), "contraction dimension")("n", po::value(&n)->default_value(128),
                                                                       "columns of B (stationary weights)")(
      "dataflow", po::value(&dataflow)->default_value("ws"),
      "ws (weight-stationary), os (output-stationary) or is (input-stationary)")(
      "fidelity", po::value(&fidelity)->default_value("tile"), "tile (closed form) or pe (every PE, every cycle)")(
      "no-double-buffer", po::bool_switch(), "one weight bank: loads do not overlap streaming")(
      "schedule", po::value(&schedule)->default_value("overlapped"),
      "overlapped, or fold_serial (a tile starts once the previous one has left the array: SCALE-Sim's "
      "stall-free cycles)")("seed", po::value(&seed)->default_value(1), "operands of a pe run")(
      "json", po::bool_switch(), "print a JSON object")(
      "walk", po::bool_switch(),
      "cycle-by-cycle walk-through of the array (pe fidelity; arrays up to 16x16, m, k, n up to 32); "
      "waits for Enter after each frame when stdin is a terminal")(
      "play", po::value(&play_seconds)->value_name("SECONDS"),
      "walk-through that plays by itself, SECONDS per cycle (implies --walk)")(
      "no-pager", po::bool_switch(), "walk-through printed whole, no waiting (implies --walk)")(
      "frames", po::value(&frames)->value_name("STYLE"),
      "compact (80x24, colour on a terminal; arrays up to 8x8) or full (every grid and Y); default: compact "
      "on a terminal where the array allows, else full")(
      "vcd", po::value(&vcd_path)->value_name("FILE.vcd"),
      "write every PE's input, weights, psum and valid bit, every cycle, for GTKWave (pe fidelity; cycle c at "
      "c ns; arrays up to 32x32, up to 2e6 PE-cycles)")(
      "html", po::value(&html_path)->value_name("FILE.html"),
      "write the walk-through as one self-contained web page (step, play, speed; opens from disk; pe "
      "fidelity, the walk-through's limits)")(
      "a", po::value(&own_a)->value_name("ROWS"),
      "your own A for --walk or --html instead of seeded operands: rows separated by ';', values by ',' or "
      "spaces, integers from -99 to 99, e.g. '1,2;3,4' (sets m and k)")("b", po::value(&own_b)->value_name("ROWS"),
                                                                        "your own B, as --a (sets k and n; needs --a)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, {}, vm)) return 0;
  const std::optional<hw::MxuDataflow> dataflow_value = hw::mxu_dataflow_names().find(dataflow);
  if (!dataflow_value) throw UsageError("--dataflow: " + hw::mxu_dataflow_names().unknown(dataflow));
  const std::optional<hw::Fidelity> fidelity_value = hw::fidelity_names().find(fidelity);
  if (!fidelity_value) throw UsageError("--fidelity: " + hw::fidelity_names().unknown(fidelity));
  const std::optional<hw::MxuSchedule> schedule_value = hw::mxu_schedule_names().find(schedule);
  if (!schedule_value) throw UsageError("--schedule: " + hw::mxu_schedule_names().unknown(schedule));

  const bool play = vm.count("play") > 0, no_pager = vm["no-pager"].as<bool>(), json = vm["json"].as<bool>();
  const bool walk = vm["walk"].as<bool>() || play || no_pager;
  const bool vcd = vm.count("vcd") > 0, html = vm.count("html") > 0, own = vm.count("a") || vm.count("b");
  if (play && !(std::isfinite(play_seconds) && play_seconds >= 0 && play_seconds <= 60))
    throw UsageError("--play: expected seconds per cycle between 0 and 60, got " + std::to_string(play_seconds));
  if (play && no_pager) throw UsageError("--play and --no-pager: choose one (--no-pager never waits)");
  if (walk && json) throw UsageError("--walk and --json: choose one (the walk-through is text)");
  if (html) check_output_file("--html", html_path);
  if (vcd) check_output_file("--vcd", vcd_path);
  if (own && !(walk || html))
    throw UsageError("--a and --b: your own operands are for --walk or --html (the other modes count cycles only)");
  if (own && !(vm.count("a") && vm.count("b"))) throw UsageError("--a and --b: give both A and B");
  if (own && vcd) throw UsageError("--vcd uses seeded operands; drop --a and --b or --vcd");
  OwnMatrix a_own, b_own;
  if (own) {
    a_own = parse_own_matrix("--a", own_a);
    b_own = parse_own_matrix("--b", own_b);
    if (a_own.cols != b_own.rows)
      throw UsageError("--a is " + std::to_string(a_own.rows) + "x" + std::to_string(a_own.cols) + ", --b is " +
                       std::to_string(b_own.rows) + "x" + std::to_string(b_own.cols) +
                       ": A's columns must equal B's rows (k)");
    for (auto [name, given, value] : {std::tuple<const char*, std::uint64_t, std::uint64_t>{"m", m, a_own.rows},
                                      {"k", k, a_own.cols},
                                      {"n", n, b_own.cols}}) {
      if (!vm[name].defaulted() && given != value)
        throw UsageError(std::string("--") + name + " " + std::to_string(given) + " disagrees with --a and --b (" +
                         name + " = " + std::to_string(value) + "); drop --" + name);
    }
    m = a_own.rows;
    k = a_own.cols;
    n = b_own.cols;
  }
  if (vm.count("frames") && frames != "compact" && frames != "full")
    throw UsageError("--frames: expected compact or full, got '" + frames + "'");
  if (frames == "compact" && (rows > explain::kCompactMaxSide || cols > explain::kCompactMaxSide))
    throw UsageError("--frames compact: arrays up to " + std::to_string(explain::kCompactMaxSide) + "x" +
                     std::to_string(explain::kCompactMaxSide) + " fit 80x24, got " + std::to_string(rows) + "x" +
                     std::to_string(cols) + " (use --frames full)");
  // Both show the PE engine's per-cycle state: pe fidelity is implied, but
  // an explicit tile request is a contradiction worth naming.
  const bool draws = walk || html;
  const std::string drawer = walk ? "--walk" : "--html";
  if ((draws || vcd) && *fidelity_value == hw::Fidelity::tile && !vm["fidelity"].defaulted())
    throw UsageError(std::string(draws ? drawer : "--vcd") +
                     " shows every PE every cycle, which needs --fidelity pe (the tile engine computes cycles in "
                     "closed form)");

  if ((draws || vcd) && *dataflow_value != hw::MxuDataflow::ws)
    throw UsageError(std::string(draws ? drawer : "--vcd") + " draws the weight-stationary array; --dataflow " +
                     dataflow + " is not drawn");

  explain::MxuExplainRequest req;
  req.config.rows = rows;
  req.config.cols = cols;
  req.config.double_buffer = !vm["no-double-buffer"].as<bool>();
  req.config.schedule = *schedule_value;
  req.config.dataflow = *dataflow_value;
  req.shape = {m, k, n};
  req.fidelity = draws || vcd ? hw::Fidelity::pe : *fidelity_value;
  req.seed = seed;

  // The walk-through checks its limits before anything is written.
  std::optional<explain::MxuWalkthrough> w;
  if (draws) {
    w = own ? explain::mxu_walkthrough(req.config, req.shape, a_own.values, b_own.values)
            : explain::mxu_walkthrough(req.config, req.shape, seed);
  }
  if (html) {
    // The command that regenerates the page: the options that shape it.
    std::string base = "tpusim explain mxu --rows " + std::to_string(rows) + " --cols " + std::to_string(cols);
    if (!req.config.double_buffer) base += " --no-double-buffer";
    if (req.config.schedule != hw::MxuSchedule::overlapped) base += " --schedule " + schedule;
    std::string command = base;
    if (own)
      command += " --a " + shell_word(own_a) + " --b " + shell_word(own_b);
    else
      command += " --m " + std::to_string(m) + " --k " + std::to_string(k) + " --n " + std::to_string(n) + " --seed " +
                 std::to_string(seed);
    command += " --html " + shell_word(html_path);
    write_html_page("--html", html_path, explain::render_mxu_html(*w, command, base));
    std::cerr << "wrote " << html_path << ": " << w->cycles << " cycles of a " << rows << "x" << cols << " array, Y "
              << (w->matches_reference ? "matches" : "DOES NOT match") << " the host GEMM\n";
  }

  // The VCD gets the walk-through's operands, so the two can be compared.
  std::string vcd_note;
  bool vcd_matches = false;
  if (vcd) {
    std::vector<hw::bf16> a, b;
    explain::mxu_teaching_operands(req.shape, seed, a, b);
    const explain::MxuVcdOpResult run = explain::run_mxu_op_to_vcd(
        vcd_path, req.config, req.shape, a, b, sc_core::sc_time(kExplainClockPeriodNs, sc_core::SC_NS));
    const std::vector<double> want = explain::host_gemm(req.shape, a, b);
    vcd_matches = std::equal(want.begin(), want.end(), run.y.begin(),
                             [](double host, float array) { return host == double(array); });
    vcd_note = std::to_string(run.signals) + " signals, " + std::to_string(run.cycles) +
               " cycles at 1 ns each; values " +
               (vcd_matches ? "match the host reference" : "MISMATCH with the host reference");
  }

  if (walk) {
    const Pace pace = play ? Pace::play : (no_pager || !isatty(STDIN_FILENO)) ? Pace::all : Pace::step;
    const bool compact = frames == "compact" || (frames.empty() && isatty(STDOUT_FILENO) && !w->compact_frames.empty());
    present_walkthrough(*w, pace, play_seconds, compact ? FrameStyle::compact : FrameStyle::full);
    if (vcd) std::cout << "VCD: " << vcd_path << " (" << vcd_note << ")\n";
    return w->matches_reference && (!vcd || vcd_matches) ? 0 : 1;
  }

  if (html) return w->matches_reference && (!vcd || vcd_matches) ? 0 : 1;

  explain::MxuExplainResult r = explain::mxu_explain(req);

  if (json) {
    nlohmann::json j{{"cycles", r.cycles},
                     {"rows", rows},
                     {"cols", cols},
                     {"m", m},
                     {"k", k},
                     {"n", n},
                     {"dataflow", hw::to_string(req.config.dataflow)},
                     {"fidelity", hw::to_string(req.fidelity)},
                     {"double_buffer", req.config.double_buffer},
                     {"schedule", hw::to_string(req.config.schedule)},
                     {"macs", r.macs},
                     {"utilization", r.utilization},
                     {"wall_time_s", r.wall_time_s}};
    if (r.checked) j["matches_reference"] = r.matches_reference;
    if (vcd)
      j["vcd"] = {{"path", vcd_path}, {"period_s", kExplainClockPeriodNs * 1e-9}, {"matches_reference", vcd_matches}};
    std::cout << j.dump(2) << "\n";
  } else {
    const char* const stationary[] = {"weight-stationary", "output-stationary", "input-stationary"};
    sim::Table t("MXU " + std::to_string(rows) + "x" + std::to_string(cols) + " (" +
                 stationary[static_cast<int>(req.config.dataflow)] + ", " +
                 (req.config.dataflow == hw::MxuDataflow::os ? ""
                  : req.config.double_buffer                 ? "double-buffered stationary tiles, "
                                                             : "single-buffered stationary tiles, ") +
                 (req.config.schedule == hw::MxuSchedule::fold_serial ? "fold-serial, " : "") +
                 hw::to_string(req.fidelity) + " fidelity): A " + std::to_string(m) + "x" + std::to_string(k) +
                 " x B " + std::to_string(k) + "x" + std::to_string(n));
    t.row("cycles", std::to_string(r.cycles),
          req.config.dataflow == hw::MxuDataflow::os ? "(first injection cycle .. last result out)"
                                                     : "(first weight-load cycle .. last result out)");
    t.row("MACs", std::to_string(r.macs));
    t.row("utilization", sim::fixed(100.0 * r.utilization, 2), "% of rows*cols*cycles");
    if (r.checked) t.row("values", r.matches_reference ? "match host reference" : "MISMATCH with host reference");
    if (vcd) t.row("VCD", vcd_path, vcd_note);
    t.row("wall time", sim::fixed(r.wall_time_s, 4), "s");
    std::cout << t.str();
  }
  const bool ok = (!r.checked || r.matches_reference) && (!vcd || vcd_matches);
  return ok ? 0 : 1;
}

// Prints a parameter table (name, type, unit, default, range, meaning) from
// the same declarations that load and validate the YAML. A nested mapping
// prints its description, then its keys; a key of another type that holds a
// mapping (e.g. `workload`) prints its own line first.
void print_params(const nlohmann::json& table, const std::string& prefix) {
  for (const auto& p : table["params"]) {
    const std::string name = prefix + p["name"].get<std::string>();
    const bool nested = p.contains("params");
    if (nested && p["type"] == "mapping" && p["default"].get<std::string>().empty()) {
      std::cout << "  " << name << ": " << p["description"].get<std::string>() << "\n";
      print_params(p, name + ".");
      continue;
    }
    std::cout << "  " << name << " (" << p["type"].get<std::string>();
    if (!p["unit"].get<std::string>().empty()) std::cout << ", " << p["unit"].get<std::string>();
    std::cout << ", default " << p["default"].get<std::string>();
    if (p.contains("range") && !p["range"].get<std::string>().empty())
      std::cout << ", " << p["range"].get<std::string>();
    std::cout << "): " << p["description"].get<std::string>();
    if (p.contains("informational")) std::cout << " [informational: " << p["informational"].get<std::string>() << "]";
    std::cout << "\n";
    if (nested) print_params(p, name + ".");
  }
}

// The topics of `tpusim explain` that list keys: title, table. The workload
// kinds come from the registry.
struct KeyTopic {
  std::string name, title;
  std::function<nlohmann::json()> keys;
};

std::vector<KeyTopic> key_topics() {
  std::vector<KeyTopic> topics = {
      {"chip", "chip file keys (configs/chips/*.yaml), SI units:", [] { return hw::chip_params().describe(); }},
      {"experiment", "experiment file keys (configs/experiments/*.yaml), SI units:",
       [] { return workloads::experiment_params().describe(); }},
      {"pod", "pod keys (`pod:` of an experiment, or `pod:` in configs/pods/*.yaml), SI units:",
       [] { return workloads::pod_params().describe(); }},
      {"multislice", "keys of a pod of several slices joined by DCN (`pod: {slices, slice, dcn, dcn_axes}`), SI units:",
       [] { return workloads::multislice_params().describe(); }},
      {"sweep", "sweep file keys (configs/sweeps/*.yaml):", [] { return sweep::sweep_params().describe(); }},
      {"plan", "plan file keys (tpusim plan PLAN.yaml; docs/plan.md):", [] { return plan::plan_params().describe(); }},
      {"scalesim", "SCALE-Sim v2 config keys (`tpusim scalesim CONFIG.cfg TOPOLOGY.csv`; [section] key = value):",
       [] { return workloads::scalesim_config_params().describe(); }},
      {"case", "validation case keys (validation/cases/*.yaml, run by `tpusim run CASE.yaml`; validation/README.md):",
       [] { return workloads::validation_case_params().describe(); }},
  };
  for (const auto& k : workloads::workload_kinds())
    topics.push_back({k.name, "workload keys of kind: " + k.name + " (" + k.description + "), SI units:", k.keys});
  return topics;
}

std::string topic_names() {
  std::string s = "mxu";
  for (const auto& t : key_topics()) s += ", " + t.name;
  return s;
}

}  // namespace

int cmd_explain(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << "tpusim explain mxu [options]: one MXU op explained (tpusim explain mxu --help)\n"
                 "tpusim explain mxu --walk --rows 4 --cols 4 --m 6 --k 4 --n 4: the array, cycle by cycle\n"
                 "tpusim explain chip: the keys of a chip file, with units, defaults and ranges\n"
                 "tpusim explain chip --diff A B: two chips side by side, the keys that differ marked\n"
                 "tpusim explain experiment | pod | sweep: the keys of an experiment file, a pod, a sweep file\n"
                 "tpusim explain scalesim: the keys of a SCALE-Sim config file (tpusim scalesim)\n"
                 "tpusim explain KIND: the workload keys of one kind (";
    const auto& kinds = workloads::workload_kinds();
    for (std::size_t i = 0; i < kinds.size(); ++i) std::cout << (i ? ", " : "") << kinds[i].name;
    std::cout << ")\n";
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "mxu") return explain_mxu(std::vector<std::string>(args.begin() + 1, args.end()));
  if (args[0] == "chip" && args.size() > 1 && args[1] == "--diff") {
    if (args.size() != 4) throw UsageError("explain chip --diff takes two chips, e.g. --diff tpu-v5e tpu-v6e");
    std::cout << chip_diff(args[2], args[3]);
    return 0;
  }
  for (const auto& t : key_topics()) {
    if (t.name != args[0]) continue;
    if (args.size() > 1) throw UsageError("explain " + t.name + " takes no options, got '" + args[1] + "'");
    std::cout << t.title << "\n";
    print_params(t.keys(), "");
    if (t.name == "experiment") {
      std::cout << "workload kinds (tpusim explain KIND for the keys of one):\n";
      for (const auto& k : workloads::workload_kinds()) std::cout << "  " << k.name << ": " << k.description << "\n";
    }
    return 0;
  }
  std::vector<std::string> names{"mxu"};
  for (const auto& t : key_topics()) names.push_back(t.name);
  const std::string hint = sim::did_you_mean(args[0], names);
  throw UsageError("explain: unknown topic '" + args[0] + "'; expected one of: " + topic_names() +
                   (hint.empty() ? "" : "; " + hint));
}

}  // namespace app
