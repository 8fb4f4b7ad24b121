#include "workloads/train/train_program.h"

namespace workloads {

const char* to_string(CollectivePurpose p) {
  switch (p) {
    case CollectivePurpose::tensor_parallel: return "tensor_parallel";
    case CollectivePurpose::gradients: return "gradients";
    case CollectivePurpose::weights: return "weights";
    case CollectivePurpose::context: return "context";
    case CollectivePurpose::experts: return "experts";
  }
  return "?";
}

bool is_task_work(const hw::Op& op) { return op.engine.kind != hw::EngineKind::ici || op.engine.index == kIciTensor; }

}  // namespace workloads
