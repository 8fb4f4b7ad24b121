#include "hw/program.h"

#include "hw/mxu_config.h"

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

OpWork op_work(const Op& op) {
  if (const auto* mm = std::get_if<MatmulOp>(&op.payload))
    return {double(mm->m) * double(mm->k) * double(mm->n), mxu_vmem_bytes({mm->m, mm->k, mm->n}), 0.0};
  if (const auto* d = std::get_if<DmaOp>(&op.payload)) return {0.0, 0.0, double(d->bytes)};
  if (const auto* k = std::get_if<KernelOp>(&op.payload))
    return {double(k->macs), k->vmem_bytes, double(k->read_bytes + k->written_bytes)};
  return {};
}

}  // namespace hw
