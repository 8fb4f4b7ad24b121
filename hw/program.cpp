#include "hw/program.h"

namespace hw {

const char* engine_kind_name(EngineKind k) {
  switch (k) {
    case EngineKind::mxu: return "mxu";
    case EngineKind::vector: return "vector";
    case EngineKind::dma: return "dma";
    case EngineKind::ici: return "ici";
    case EngineKind::scalar: return "scalar";
  }
  return "?";
}

}  // namespace hw
