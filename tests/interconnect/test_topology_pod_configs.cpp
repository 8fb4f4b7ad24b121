// Every configs/pods file is a valid pod, cites its sources, and wraps only
// where docs/reference/tpu-specs.md#common.wraparound_rules say the machine does.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "interconnect/pod_config.h"

namespace test_topology_pod_configs {

using namespace interconnect;

TEST_CASE("topology: pod configs are valid and follow the wraparound rules", "[topology][configs]") {
  const std::filesystem::path dir = std::filesystem::path(TPUSIM_SOURCE_DIR) / "configs" / "pods";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    INFO(entry.path().filename().string());
    const YAML::Node root = YAML::LoadFile(entry.path().string());
    const YAML::Node pod = root["pod"];
    REQUIRE(pod);
    const std::string chip = root["chip"].as<std::string>();
    PodNetworkConfig p;
    p.topology = parse_topology_kind(pod["topology"].as<std::string>(), "pod.topology");
    p.shape = pod["shape"].as<std::vector<int>>();
    p.wraparound = pod["wraparound"].as<std::vector<bool>>();
    p.link.bandwidth = pod["link_bandwidth"].as<double>();
    p.link.latency = pod["link_latency"].as<double>();
    CHECK_NOTHROW(p.validate());
    // The file name spells the chip and shape: v4-4x4x4.yaml.
    std::string dims;
    for (std::size_t i = 0; i < p.shape.size(); ++i) dims += (i ? "x" : "") + std::to_string(p.shape[i]);
    CHECK(entry.path().filename().string() == chip.substr(4) + "-" + dims + ".yaml");
    for (std::size_t a = 0; a < p.shape.size(); ++a) {
      if (chip == "tpu-v5e") CHECK(p.wraparound[a] == (p.shape[a] == 16));
      if (chip == "tpu-v4") CHECK(p.wraparound[a] == (p.shape[a] % 4 == 0));
    }
    // Every line that sets a number says where the number comes from.
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos || line.find('#') < colon) continue;
      const std::size_t v = line.find_first_not_of(" [", colon + 1);
      const bool sets_number = v != std::string::npos && std::isdigit(static_cast<unsigned char>(line[v]));
      INFO(line);
      CHECK((!sets_number || line.find('#', v) != std::string::npos));
    }
  }
  CHECK(files >= 6);
}

}  // namespace test_topology_pod_configs
