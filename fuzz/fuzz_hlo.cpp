// libFuzzer target over the HLO parser and cost model (hlo/): any text
// either parses and costs, or is a sim::ConfigError that names a line of
// the text; anything else (another exception, a crash, a sanitizer report)
// aborts, so libFuzzer saves the input. Seeds: tests/data/hlo, configs/hlo.
//   build-fuzz/fuzz/fuzz_hlo -max_len=65536 CORPUS_DIR
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hlo/cost.h"
#include "hlo/module.h"
#include "sim/error.h"

extern "C" int sc_main(int, char**) { return 0; }  // libsystemc.so needs one; nothing is simulated

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const bool cut_short : {false, true}) {
    try {
      const hlo::Module m = hlo::parse_module(text, "fuzz.hlo", cut_short);
      hlo::CostModel model(m);
      for (const hlo::Computation& c : m.computations)
        for (const auto& step : model.schedule(c)) model.cost(*step.computation, *step.instruction);
    } catch (const sim::ConfigError& e) {
      if (e.where().file != "fuzz.hlo" || e.where().line <= 0) {
        std::fprintf(stderr, "tpusim fuzz_hlo: an error without a location: %s\n", e.what());
        std::abort();
      }
    }
  }
  return 0;
}
