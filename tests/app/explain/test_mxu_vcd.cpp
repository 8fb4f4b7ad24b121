// mxu.vcd read back: the file is parsed here (scopes, $var, #time, scalar,
// vector and real changes) and the signal values at chosen times are
// compared with the hand-worked 2x2 example of docs/mxu.md and, signal by
// signal and cycle by cycle, with an independent run of the PE engine's
// observer.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <systemc>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "app/explain/mxu_vcd_op.h"
#include "hw/mxu.h"
#include "hw/mxu_timing.h"
#include "hw/mxu_vcd.h"
#include "hw/systolic_array.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace test_mxu_vcd {

using hw::bf16;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

// Value changes of every signal, by full dotted name without the top
// "SystemC" scope (e.g. "mxu.pe_r1_c0.psum").
class VcdFile {
 public:
  explicit VcdFile(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in);
    std::vector<std::string> scope;
    std::map<std::string, std::string> names;  // id -> name
    std::uint64_t now = 0;
    std::string tok;
    auto change = [&](const std::string& id, double value) {
      REQUIRE(names.count(id) == 1);
      changes_[names[id]].push_back({now, value});
    };
    while (in >> tok) {
      if (tok == "$scope") {
        std::string kind, name, end;
        in >> kind >> name >> end;
        scope.push_back(name);
      } else if (tok == "$upscope") {
        in >> tok;
        scope.pop_back();
      } else if (tok == "$var") {
        std::string type, size, id, name;
        in >> type >> size >> id >> name;
        std::string full;
        for (std::size_t i = 1; i < scope.size(); ++i) full += scope[i] + ".";  // skip "SystemC"
        names[id] = full + name;
        types_[full + name] = type;
        while (in >> tok && tok != "$end") {
        }
      } else if (tok == "$timescale") {
        std::string rest;
        while (in >> tok && tok != "$end") rest += tok;
        timescale_ = rest;
      } else if (tok == "$dumpvars" || tok == "$end" || tok == "$enddefinitions") {
        // $dumpvars holds ordinary value changes at time 0.
      } else if (tok[0] == '$') {  // $date, $version, $comment: skip to $end
        while (in >> tok && tok != "$end") {
        }
      } else if (tok[0] == '#') {
        now = std::stoull(tok.substr(1));
      } else if (tok[0] == 'b') {
        std::string id;
        in >> id;
        change(id, double(std::stoull(tok.substr(1), nullptr, 2)));
      } else if (tok[0] == 'r') {
        std::string id;
        in >> id;
        change(id, std::stod(tok.substr(1)));
      } else {
        REQUIRE((tok[0] == '0' || tok[0] == '1'));
        change(tok.substr(1), tok[0] == '1' ? 1.0 : 0.0);
      }
    }
  }

  bool has(const std::string& name) const { return changes_.count(name) == 1; }
  const std::string& timescale() const { return timescale_; }
  const std::string& type(const std::string& name) const { return types_.at(name); }
  std::size_t signals() const { return types_.size(); }

  // The value `name` holds at time `t` (in timescale units).
  double at(const std::string& name, std::uint64_t t) const {
    const auto it = changes_.find(name);
    if (it == changes_.end()) FAIL("no signal " << name);
    double v = 0;
    bool seen = false;
    for (const auto& c : it->second) {
      if (c.first > t) break;
      v = c.second;
      seen = true;
    }
    if (!seen) FAIL(name << " has no value at " << t);
    return v;
  }

 private:
  std::map<std::string, std::vector<std::pair<std::uint64_t, double>>> changes_;
  std::map<std::string, std::string> types_;
  std::string timescale_;
};

// A scratch directory for one test case, removed when it ends.
struct Scratch {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tpusim-test-mxu-vcd-" + std::to_string(getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::vector<bf16> from_floats(const std::vector<float>& v) {
  std::vector<bf16> out;
  for (float x : v) out.push_back(bf16::from_float(x));
  return out;
}

std::string pe(std::uint32_t r, std::uint32_t c, const std::string& signal) {
  return "mxu.pe_r" + std::to_string(r) + "_c" + std::to_string(c) + "." + signal;
}

constexpr std::uint64_t kNs = 1000;  // the file's unit is 1 ps

// Issues its ops one after another, then idles one more period so SystemC
// writes the final idle state (it writes a step when the next one begins).
struct Issuer : sc_core::sc_module {
  SC_HAS_PROCESS(Issuer);
  struct Job {
    hw::MxuShape shape;
    std::vector<bf16> a, b;
  };
  Issuer(sc_core::sc_module_name name, hw::Mxu& mxu, std::vector<Job> jobs)
      : sc_core::sc_module(name), mxu_(mxu), jobs_(std::move(jobs)) {
    SC_THREAD(run);
  }
  void run() {
    for (const Job& j : jobs_) {
      mxu_.execute(j.shape, j.a.data(), j.b.data());
      ends.push_back(sc_core::sc_time_stamp());
    }
    wait(mxu_.period());
  }
  hw::Mxu& mxu_;
  std::vector<Job> jobs_;
  std::vector<sc_time> ends;
};

}  // namespace

TEST_CASE("mxu vcd: the 2x2 worked example read back at chosen cycles", "[mxu][vcd]") {
  // docs/mxu.md: A = [[1,2],[3,4]], B = [[5,6],[7,8]], 6 cycles. Column 0
  // latches at the end of cycle 1, column 1 at the end of cycle 2; vector 0
  // is injected in cycle 2, vector 1 in cycle 3.
  const Scratch scratch;
  const std::string path = scratch / "worked.vcd";
  const explain::MxuVcdOpResult r = explain::run_mxu_op_to_vcd(path, {2, 2, true}, {2, 2, 2}, from_floats({1, 2, 3, 4}),
                                                               from_floats({5, 6, 7, 8}), sc_time(1, SC_NS));
  CHECK(r.cycles == 6);
  CHECK(r.y == std::vector<float>{19, 22, 43, 50});
  const VcdFile vcd(path);
  CHECK(vcd.timescale() == "1ps");
  CHECK(vcd.signals() == r.signals);
  CHECK(vcd.signals() == 9 + 7 * 4);
  CHECK(vcd.type(pe(0, 0, "psum")) == "real");
  CHECK(vcd.type(pe(0, 0, "valid")) == "wire");

  for (std::uint64_t t = 0; t < 6; ++t) {
    CHECK(vcd.at("mxu.cycle", t * kNs) == t);
    CHECK(vcd.at("mxu.busy", t * kNs) == 1);
    CHECK(vcd.at("mxu.op", t * kNs) == 1);
    CHECK(vcd.at("mxu.feeder.valid", t * kNs) == (t == 2 || t == 3 ? 1 : 0));
    CHECK(vcd.at("mxu.loader.active", t * kNs) == (t <= 2 ? 1 : 0));
  }
  CHECK(vcd.at("mxu.feeder.vector", 3 * kNs) == 1);
  // Cycle 2: only PE(0,0) works: 1 * 5.
  CHECK(vcd.at(pe(0, 0, "valid"), 2 * kNs) == 1);
  CHECK(vcd.at(pe(0, 0, "a_in"), 2 * kNs) == 1);
  CHECK(vcd.at(pe(0, 0, "w"), 2 * kNs) == 5);
  CHECK(vcd.at(pe(0, 0, "psum"), 2 * kNs) == 5);
  CHECK(vcd.at(pe(1, 0, "valid"), 2 * kNs) == 0);
  // Cycle 3: 3*5 = 15, 1*6 = 6, 5 + 2*7 = 19 leaves; PE(1,1) waits.
  CHECK(vcd.at(pe(0, 0, "a_in"), 3 * kNs) == 3);
  CHECK(vcd.at(pe(0, 0, "psum"), 3 * kNs) == 15);
  CHECK(vcd.at(pe(0, 1, "a_in"), 3 * kNs) == 1);
  CHECK(vcd.at(pe(0, 1, "psum"), 3 * kNs) == 6);
  CHECK(vcd.at(pe(1, 0, "a_in"), 3 * kNs) == 2);
  CHECK(vcd.at(pe(1, 0, "w"), 3 * kNs) == 7);
  CHECK(vcd.at(pe(1, 0, "psum"), 3 * kNs) == 19);
  CHECK(vcd.at(pe(1, 1, "valid"), 3 * kNs) == 0);
  // Cycle 4: 3*6 = 18, 15 + 4*7 = 43 and 6 + 2*8 = 22 leave.
  CHECK(vcd.at(pe(0, 1, "psum"), 4 * kNs) == 18);
  CHECK(vcd.at(pe(1, 0, "psum"), 4 * kNs) == 43);
  CHECK(vcd.at(pe(1, 1, "a_in"), 4 * kNs) == 2);
  CHECK(vcd.at(pe(1, 1, "psum"), 4 * kNs) == 22);
  CHECK(vcd.at(pe(0, 0, "valid"), 4 * kNs) == 0);
  // Cycle 5: 18 + 4*8 = 50, the last result.
  CHECK(vcd.at(pe(1, 1, "psum"), 5 * kNs) == 50);
  CHECK(vcd.at(pe(1, 0, "valid"), 5 * kNs) == 0);
  // At the op's end the array is idle; the weights stay.
  CHECK(vcd.at("mxu.busy", 6 * kNs) == 0);
  CHECK(vcd.at(pe(1, 1, "valid"), 6 * kNs) == 0);
  CHECK(vcd.at(pe(1, 1, "w0"), 6 * kNs) == 8);
}

TEST_CASE("mxu vcd: every signal of every cycle equals the PE engine's own view", "[mxu][vcd]") {
  // A 3x4 array with ragged tiles (k = 7 -> 3 k-tiles, n = 6 -> 2 n-tiles),
  // both weight modes, two ops back to back through the SystemC module.
  // The expectation comes from a separate SystolicArray run with an
  // observer: what the PE model says each PE did in each cycle.
  for (bool double_buffer : {true, false}) {
    const hw::MxuConfig config{3, 4, double_buffer};
    std::mt19937 rng(double_buffer ? 7 : 8);
    std::uniform_int_distribution<int> pick(-8, 8);
    auto operand = [&](std::size_t count) {
      std::vector<float> v(count);
      for (float& x : v) x = float(pick(rng)) / 4;  // quarters: exact in BF16, fractional in the file
      return from_floats(v);
    };
    std::vector<Issuer::Job> jobs;
    for (hw::MxuShape s : {hw::MxuShape{5, 7, 6}, hw::MxuShape{2, 3, 4}}) {
      jobs.push_back({s, operand(s.m * s.k), operand(s.k * s.n)});
    }

    struct Seen {
      bool valid, bank;
      float a, w, w0, w1, psum;
    };
    struct Cycle {
      std::vector<Seen> pes;
      bool feeder_valid, loader_active;
      std::uint64_t feeder_tile, feeder_vector;
    };
    std::vector<std::vector<Cycle>> want;
    for (const Issuer::Job& j : jobs) {
      std::vector<Cycle> cycles;
      hw::SystolicArray array;
      array.run(config, j.shape, j.a.data(), j.b.data(), [&](const hw::ArrayStateView& v) {
        Cycle c{{}, v.injected_tile >= 0, v.load_count > 0, 0, 0};
        if (c.feeder_valid) c.feeder_tile = std::uint64_t(v.injected_tile), c.feeder_vector = v.injected_vector;
        for (std::uint32_t r = 0; r < v.rows; ++r)
          for (std::uint32_t col = 0; col < v.cols; ++col) {
            const bool valid = v.valid(r, col);
            c.pes.push_back({valid, v.bank(r, col) == 1, valid ? v.activation(r, col) : 0.0f, v.active_weight(r, col),
                             v.weight(0, r, col), v.weight(1, r, col), valid ? v.psum(r, col) : 0.0f});
          }
        cycles.push_back(std::move(c));
      });
      REQUIRE(cycles.size() == hw::mxu_tile_cycles(config, j.shape));
      want.push_back(std::move(cycles));
    }

    const Scratch scratch;
    const std::string path = scratch / (double_buffer ? "two-banks.vcd" : "one-bank.vcd");
    std::vector<sc_time> ends;
    {
      sim::reset_kernel();
      hw::Mxu mxu("mxu", config, sc_time(2, SC_NS), hw::Fidelity::pe);
      auto vcd = std::make_unique<hw::MxuVcd>(path, config);
      mxu.set_cycle_hook(vcd.get());
      Issuer issuer("issuer", mxu, jobs);
      sc_core::sc_start();
      CHECK(vcd->cycles_traced() == want[0].size() + want[1].size());
      vcd.reset();
      ends = issuer.ends;
    }
    // The hook must not change the op's timing: cycles x period per op.
    REQUIRE(ends.size() == 2);
    CHECK(ends[0] == sc_time(2.0 * double(want[0].size()), SC_NS));
    CHECK(ends[1] == sc_time(2.0 * double(want[0].size() + want[1].size()), SC_NS));

    const VcdFile file(path);
    const std::uint64_t period = 2 * kNs;
    std::uint64_t start = 0;
    for (std::size_t op = 0; op < want.size(); ++op) {
      for (std::uint64_t t = 0; t < want[op].size(); ++t) {
        const std::uint64_t at = start + t * period;
        const Cycle& c = want[op][t];
        INFO("double_buffer " << double_buffer << " op " << op << " cycle " << t);
        CHECK(file.at("mxu.busy", at) == 1);
        CHECK(file.at("mxu.op", at) == op + 1);
        CHECK(file.at("mxu.cycle", at) == t);
        CHECK(file.at("mxu.feeder.valid", at) == c.feeder_valid);
        if (c.feeder_valid) {
          CHECK(file.at("mxu.feeder.tile", at) == c.feeder_tile);
          CHECK(file.at("mxu.feeder.vector", at) == c.feeder_vector);
        }
        CHECK(file.at("mxu.loader.active", at) == c.loader_active);
        for (std::uint32_t r = 0; r < config.rows; ++r) {
          for (std::uint32_t col = 0; col < config.cols; ++col) {
            const Seen& s = c.pes[r * config.cols + col];
            INFO("PE(" << r << "," << col << ")");
            CHECK(file.at(pe(r, col, "valid"), at) == s.valid);
            CHECK(file.at(pe(r, col, "bank"), at) == s.bank);
            CHECK(float(file.at(pe(r, col, "a_in"), at)) == s.a);
            CHECK(float(file.at(pe(r, col, "w"), at)) == s.w);
            CHECK(float(file.at(pe(r, col, "w0"), at)) == s.w0);
            CHECK(float(file.at(pe(r, col, "w1"), at)) == s.w1);
            CHECK(float(file.at(pe(r, col, "psum"), at)) == s.psum);
          }
        }
      }
      start += want[op].size() * period;
    }
    CHECK(file.at("mxu.busy", start) == 0);
    CHECK(file.at(pe(2, 3, "valid"), start) == 0);
  }
}

TEST_CASE("mxu vcd: a hooked op still queues behind a running one", "[mxu][vcd]") {
  // Two callers at time 0: the second op starts when the first ends, and
  // the file shows op 2 starting at cycle 0 then.
  const Scratch scratch;
  const std::string path = scratch / "queue.vcd";
  const hw::MxuConfig config{2, 2, true};
  const std::vector<bf16> a = from_floats({1, 2, 3, 4}), b = from_floats({5, 6, 7, 8});
  std::vector<sc_time> first, second;
  {
    sim::reset_kernel();
    hw::Mxu mxu("mxu", config, sc_time(1, SC_NS), hw::Fidelity::pe);
    auto vcd = std::make_unique<hw::MxuVcd>(path, config);
    mxu.set_cycle_hook(vcd.get());
    Issuer one("one", mxu, {{{2, 2, 2}, a, b}});
    Issuer two("two", mxu, {{{2, 2, 2}, a, b}});
    sc_core::sc_start();
    vcd.reset();
    first = one.ends;
    second = two.ends;
  }
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  CHECK(std::min(first[0], second[0]) == sc_time(6, SC_NS));
  CHECK(std::max(first[0], second[0]) == sc_time(12, SC_NS));
  const VcdFile file(path);
  CHECK(file.at("mxu.op", 5 * kNs) == 1);
  CHECK(file.at("mxu.op", 6 * kNs) == 2);
  CHECK(file.at("mxu.cycle", 6 * kNs) == 0);
  CHECK(file.at(pe(1, 1, "psum"), 11 * kNs) == 50);
}

TEST_CASE("mxu vcd: size limits and file names are bad input", "[mxu][vcd]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(hw::check_mxu_vcd_size({33, 4, true}, 10, "this op"), Contains("VCD is for small arrays"));
  CHECK_THROWS_WITH(hw::check_mxu_vcd_size({8, 8, true}, hw::kMxuVcdMaxPeCycles / 64 + 1, "this op"),
                    Contains("VCD is for small ops: this op would trace"));
  CHECK_NOTHROW(hw::check_mxu_vcd_size({8, 8, true}, hw::kMxuVcdMaxPeCycles / 64, "this op"));
  // run_mxu_op_to_vcd checks before it writes anything.
  const Scratch scratch;
  const std::string big = scratch / "big.vcd";
  std::vector<bf16> a(1024 * 64), b(64 * 64);  // 4 tiles x 1024 vectors: over 4e6 PE-cycles
  CHECK_THROWS_AS(explain::run_mxu_op_to_vcd(big, {32, 32, true}, {1024, 64, 64}, a, b, sc_time(1, SC_NS)),
                  sim::ConfigError);
  CHECK_FALSE(std::filesystem::exists(big));

  sim::reset_kernel();
  CHECK_THROWS_WITH(hw::MxuVcd(scratch / "wave.txt", {2, 2, true}), Contains("must end in .vcd"));
  CHECK_THROWS_WITH(hw::MxuVcd("/nonexistent-dir/wave.vcd", {2, 2, true}), Contains("cannot write"));
}

}  // namespace test_mxu_vcd
