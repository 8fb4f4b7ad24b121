// Every key of every input file is declared once, in a sim::ParamTable, and
// everything that lists keys or words is derived from those tables: the
// loaders, `tpusim explain`, the messages that list workload kinds, and the
// fuzzer's dictionary (checked here against the tables).
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "config_topics.h"
#include "hw/chip_config.h"
#include "interconnect/collective_spec.h"
#include "sim/error.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"
#include "workloads/train/spec.h"
#include "workloads/workload.h"

namespace test_config_keys {

using testing_cli::run_tpusim;

namespace {

using config_topics::topics;
using config_topics::walk;

std::string names_of_kinds() {
  std::string s;
  for (const auto& k : workloads::workload_kinds()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

}  // namespace

TEST_CASE("config keys: the fuzzer's dictionary has every key and every enum word", "[app][config]") {
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/fuzz/config.dict");
  REQUIRE(in);
  std::set<std::string> dict;
  for (std::string line; std::getline(in, line);)
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') dict.insert(line.substr(1, line.size() - 2));
  for (const auto& t : topics()) {
    std::vector<std::string> paths;
    std::set<std::string> words;
    walk(t.keys, "", paths, words);
    for (const auto& w : words) {
      INFO(t.name << ": '" << w << "' is not in fuzz/config.dict");
      CHECK(dict.count(w) == 1);
    }
  }
}

TEST_CASE("config keys: tpusim explain prints every key of every section from its table", "[app][config]") {
  for (const auto& t : topics()) {
    DYNAMIC_SECTION("explain " << t.name) {
      const auto r = run_tpusim("explain " + t.name);
      INFO(r.output);
      REQUIRE(r.status == 0);
      std::vector<std::string> paths;
      std::set<std::string> words;
      walk(t.keys, "", paths, words);
      // kind: hlo reads its program from a file: file, entry, cut_short.
      CHECK(paths.size() >= (t.name == "hlo" ? 3u : 5u));
      for (const auto& p : paths) {
        INFO("key " << p);
        const bool listed = r.output.find("\n  " + p + " (") != std::string::npos ||
                            r.output.find("\n  " + p + ": ") != std::string::npos;
        CHECK(listed);
      }
    }
  }
  const auto experiment = run_tpusim("explain experiment");
  for (const auto& k : workloads::workload_kinds())
    CHECK(experiment.output.find("  " + k.name + ": ") != std::string::npos);
  const auto unknown = run_tpusim("explain experimnt");
  CHECK(unknown.status == 2);
  CHECK(unknown.output.find("did you mean 'experiment'?") != std::string::npos);
}

TEST_CASE("config keys: every list of workload kinds comes from the registry", "[app][config]") {
  REQUIRE(workloads::workload_kinds().size() == 10);
  // An unknown kind, a missing kind: both messages list every kind.
  try {
    workloads::load_experiment_text("chip: tpu-v4\nworkload: {kind: matmull}\n", "kinds.yaml");
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("expected one of: " + names_of_kinds() + "; did you mean 'matmul'?") !=
          std::string::npos);
  }
  try {
    workloads::load_experiment_text("chip: tpu-v4\nworkload: {m: 4}\n", "kinds.yaml");
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(e.key_path() == "workload.kind");
    CHECK(std::string(e.what()).find("missing required key; expected one of: " + names_of_kinds()) !=
          std::string::npos);
  }
  const auto help = run_tpusim("explain --help");
  CHECK(help.output.find(names_of_kinds()) != std::string::npos);
}

TEST_CASE("config keys: enums are parsed once into typed fields and written back as the same words", "[app][config]") {
  const auto exp = workloads::load_experiment_text(R"(chip: tpu-v4
pod: {topology: torus2d, shape: [4, 2], wraparound: [true, false], switching: store_and_forward,
      network_model: packet, packet_bytes: 512, link_bandwidth: 1.0e+10, link_latency: 2.0e-6}
fidelity: pe
replicas: all
workload: {kind: collective, op: all_gather, algorithm: ring, bytes: 65536, axes: x}
)",
                                                   "typed.yaml");
  CHECK(exp.fidelity == hw::Fidelity::pe);
  CHECK(exp.replicas == workloads::Replicas::all);
  CHECK(exp.pod.topology == interconnect::TopologyKind::torus2d);
  CHECK(exp.pod.switching == interconnect::Switching::store_and_forward);
  CHECK(exp.pod.network_model == interconnect::NetworkModel::packet);
  CHECK(exp.pod.wraparound == std::vector<bool>{true, false});
  REQUIRE(exp.pod.link_bandwidth);
  CHECK(*exp.pod.link_bandwidth == 1e10);
  CHECK(exp.chip.ici.link_bandwidth == 1e10);  // the override reaches the chip the run uses
  CHECK(exp.chip.ici.link_latency == 2e-6);
  const auto net = workloads::pod_network_config(exp);
  CHECK(net.topology == interconnect::TopologyKind::torus2d);
  CHECK(net.link.switching == interconnect::Switching::store_and_forward);
  CHECK(net.model == interconnect::NetworkModel::packet);
  CHECK(net.link.packet_bytes == 512);
  const auto pod = workloads::pod_config(exp);
  CHECK(pod.fidelity == hw::Fidelity::pe);
  CHECK(pod.simulate_every_chip);
  // The words go back out as they came in (report.json keeps its strings).
  CHECK(std::string(hw::to_string(exp.fidelity)) == "pe");
  CHECK(std::string(workloads::to_string(exp.replicas)) == "all");
  CHECK(std::string(interconnect::to_string(exp.pod.topology)) == "torus2d");
  CHECK(std::string(interconnect::to_string(exp.pod.switching)) == "store_and_forward");
  CHECK(std::string(interconnect::to_string(exp.pod.network_model)) == "packet");
  // Every spelling of every enum parses back to its value.
  auto round_trip = [](const auto& names) {
    for (const auto& c : names.choices()) {
      INFO(names.what() << " " << c.name);
      CHECK(names.parse(c.name, "k") == c.value);
      CHECK(names.name(c.value) == c.name);
    }
  };
  round_trip(hw::fidelity_names());
  round_trip(workloads::replicas_names());
  round_trip(interconnect::topology_kinds());
  round_trip(interconnect::switching_names());
  round_trip(interconnect::network_model_names());
  round_trip(interconnect::collective_op_names());
  round_trip(interconnect::algorithm_names());
  round_trip(workloads::pipeline_schedule_names());
  round_trip(workloads::optimizer_names());
  round_trip(workloads::elementwise_names());
  round_trip(sweep::scaling_names());
  round_trip(sweep::combine_names());
}

}  // namespace test_config_keys
