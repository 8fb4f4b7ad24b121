// libFuzzer target over the config loader and validator: every file kind
// (chip, pod, experiment, sweep, `tpusim validate`'s detection) and the
// --set parser, loading only. See fuzz/config_harness.h for the input format
// and the oracle, docs/hardening.md for how to run it.
//   build-fuzz/fuzz/fuzz_config -max_len=16384 CORPUS_DIR
// An input whose outcome is not success, a located sim::ConfigError or a
// sim::SimFailure aborts with the reason, so libFuzzer saves it as a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz/config_harness.h"
#include "sim/log.h"

extern "C" int sc_main(int, char**) { return 0; }  // libsystemc.so needs one; nothing is simulated

namespace {
std::unique_ptr<fuzzing::Scratch> scratch;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  sim::init_logging("off");
  scratch = std::make_unique<fuzzing::Scratch>(TPUSIM_SOURCE_DIR);
  std::atexit([] { scratch.reset(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const fuzzing::Result r = fuzzing::check_input(text, *scratch);
  if (r.outcome == fuzzing::Outcome::violation) {
    std::fprintf(stderr, "tpusim fuzz: %s (loaded as %s)\n", r.message.c_str(), r.kind.c_str());
    std::abort();
  }
  return 0;
}
