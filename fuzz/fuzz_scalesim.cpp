// libFuzzer target over SCALE-Sim's readers (workloads/scalesim.h): each
// input is read both as a config file (.cfg) and as a topology CSV; either
// it parses, or it is a sim::ConfigError naming a line of the text. Anything
// else (another exception, a crash, a sanitizer report) aborts, so libFuzzer
// saves the input. Nothing is simulated. Seeds: configs/scalesim and the
// SCALE-Sim cases of tests/data/bad; dictionary: fuzz/scalesim.dict.
//   build-check/fuzz/fuzz_scalesim -dict=fuzz/scalesim.dict CORPUS_DIR
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/error.h"
#include "workloads/scalesim.h"

extern "C" int sc_main(int, char**) { return 0; }  // libsystemc.so needs one; nothing is simulated

namespace {

template <typename Parse>
void expect_parse_or_located(const char* origin, Parse parse) {
  try {
    parse();
  } catch (const sim::ConfigError& e) {
    if (e.where().file != origin || e.where().line <= 0) {
      std::fprintf(stderr, "tpusim fuzz_scalesim: an error without a location: %s\n", e.what());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  expect_parse_or_located("fuzz.cfg", [&] { workloads::parse_scalesim_config(text, "fuzz.cfg"); });
  expect_parse_or_located("fuzz.csv", [&] { workloads::parse_scalesim_topology(text, "fuzz.csv"); });
  return 0;
}
