// tpusim._tpusim: the simulator as a Python extension (pybind11). It is the
// thin C++ half of the `tpusim` package (python/tpusim/, docs/python.md):
// each function here calls what the command line calls (app::run_experiment,
// app::validate_path, app::cmd_explain, sweep::expand_sweep), and turns
// sim::ConfigError and sim::SimFailure into tpusim.ConfigError and
// tpusim.SimulationFailed. Simulations run in this process, one at a time,
// with the GIL released: the runtime starts every simulation from a fresh
// SystemC kernel context (sim::reset_kernel, docs/architecture.md, "Several
// simulations in one process").
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <systemc>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "app/cli.h"
#include "app/compare.h"
#include "app/run_experiment.h"
#include "sim/error.h"
#include "sim/log.h"
#include "sweep/points.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"
#include "workloads/report.h"

namespace py = pybind11;

// libsystemc.so needs one, as the CLI's main.cpp says; visible (pybind11
// hides a module's symbols), so that the library, loaded with the module,
// finds it.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) { return 0; }

namespace {

// One simulation per process at a time (the SystemC kernel is a global):
// Python threads that call run() together take turns here.
std::mutex& kernel_mutex() {
  static std::mutex m;
  return m;
}

// std::cout into a string while a CLI command prints (explain's tables).
class CaptureStdout {
 public:
  CaptureStdout() : old_(std::cout.rdbuf(text_.rdbuf())) {}
  ~CaptureStdout() { std::cout.rdbuf(old_); }
  CaptureStdout(const CaptureStdout&) = delete;
  CaptureStdout& operator=(const CaptureStdout&) = delete;
  std::string str() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

// Raises the package's exception class `name` (python/tpusim/errors.py),
// built from `args`.
[[noreturn]] void raise(const char* name, const py::tuple& args) {
  py::object cls = py::module_::import("tpusim.errors").attr(name);
  py::object err = cls(*args);
  PyErr_SetObject(cls.ptr(), err.ptr());
  throw py::error_already_set();
}

// Calls `f` (without the GIL when `release`), turning the CLI's failures into
// the Python exceptions that carry what the CLI prints (app/main.cpp).
template <class F>
auto translated(F f, bool release = false) -> decltype(f()) {
  try {
    if (!release) return f();
    py::gil_scoped_release unlocked;
    std::lock_guard<std::mutex> one_at_a_time(kernel_mutex());
    return f();
  } catch (const sim::ConfigError& e) {
    raise("ConfigError", py::make_tuple(std::string(e.what()), e.where().file, e.where().line, e.where().column,
                                        e.key_path(), e.detail()));
  } catch (const sim::SimFailure& e) {
    py::dict numbers;
    for (const auto& [name, value] : e.numbers()) numbers[py::str(name)] = value;
    raise("SimulationFailed", py::make_tuple(std::string(e.what()), numbers));
  } catch (const app::UsageError& e) {
    throw py::value_error(e.what());
  }
}

workloads::Experiment load(const std::string& source, bool is_text, const std::string& origin,
                           const std::vector<std::string>& sets) {
  return is_text ? workloads::load_experiment_text(source, origin, sets) : workloads::load_experiment(source, sets);
}

// (report.json text, the table `tpusim run` prints, trace.json or "").
std::tuple<std::string, std::string, std::string> run(const std::string& source, bool is_text,
                                                      const std::string& origin, const std::vector<std::string>& sets,
                                                      const std::string& out_dir, bool trace,
                                                      const std::string& report_detail) {
  return translated(
      [&] {
        const workloads::Experiment exp = load(source, is_text, origin, sets);
        workloads::RunOptions ro;
        ro.trace = trace;
        ro.out_dir = out_dir;
        ro.report_detail = workloads::report_detail_names().parse(report_detail, "report_detail");
        const workloads::RunOutput out = app::run_experiment(exp, ro);
        return std::make_tuple(app::report_text(out, ro.report_detail), out.table, out.trace_json);
      },
      true);
}

// The experiment's name and its pod's chip count, checked without running.
std::tuple<std::string, std::uint32_t> check(const std::string& source, bool is_text, const std::string& origin,
                                             const std::vector<std::string>& sets) {
  return translated([&] {
    const workloads::Experiment exp = load(source, is_text, origin, sets);
    return std::make_tuple(exp.name, exp.pod.chips());
  });
}

std::string validate(const std::string& path) {
  return translated([&] { return app::validate_path(path); });
}

std::string explain(const std::vector<std::string>& args) {
  return translated([&] {
    CaptureStdout out;
    app::cmd_explain(args);
    return out.str();
  });
}

// A sweep file's points, as `tpusim sweep` expands them: the base
// experiment's path, the axes' keys, and per point (id, the axes' values as
// one-line YAML, every --set override of the point).
py::tuple sweep_points(const std::string& path) {
  return translated([&] {
    const sweep::SweepSpec spec = sweep::load_sweep_spec(path);
    std::vector<std::string> keys;
    for (const auto& a : spec.axes) keys.push_back(a.key);
    py::list points;
    for (const sweep::SweepPoint& p : sweep::expand_sweep(spec))
      points.append(py::make_tuple(p.id, p.values, p.overrides));
    return py::make_tuple(spec.name, spec.experiment_path, keys, points);
  });
}

// `tpusim compare A B` as JSON text: each side a run folder or report.json
// path, or (is_text) a report's JSON, labelled `label` in the comparison.
std::string compare(const std::string& a, bool a_is_text, const std::string& a_label, const std::string& b,
                    bool b_is_text, const std::string& b_label) {
  return translated([&] {
    const auto report = [](const std::string& s, bool is_text) {
      return is_text ? nlohmann::json::parse(s) : app::read_report(s);
    };
    return app::compare_reports(report(a, a_is_text), report(b, b_is_text), a_label, b_label).dump();
  });
}

std::string compare_text(const std::string& cmp) {
  return translated([&] { return app::compare_text(nlohmann::json::parse(cmp)); });
}

std::vector<std::string> chip_dirs(const std::string& experiment_path) {
  return workloads::chip_search_dirs(experiment_path);
}

}  // namespace

PYBIND11_MODULE(_tpusim, m) {
  m.doc() = "tpusim's simulator; use the tpusim package (docs/python.md)";
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  sim::init_logging("warn");  // long runs' progress (info) stays quiet unless asked for
  m.def("run", &run);
  m.def("check", &check);
  m.def("validate", &validate);
  m.def("explain", &explain);
  m.def("sweep_points", &sweep_points);
  m.def("chip_dirs", &chip_dirs);
  m.def("compare", &compare);
  m.def("compare_text", &compare_text);
  m.def("set_log_level", [](const std::string& level) {
    try {
      sim::init_logging(level);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
  });
  m.attr("version") = TPUSIM_VERSION;
}
