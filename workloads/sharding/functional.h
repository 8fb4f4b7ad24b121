#pragma once
// Real BF16 values for a sharded matmul (functional mode): every chip's
// shards of A and B, cut from host matrices by the chip's mesh coordinates;
// the buffers each collective reads and fills; and the final check of every
// chip's C shard against a host GEMM of the whole problem.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/bf16.h"
#include "kernels/matmul_kernel.h"
#include "runtime/pod_run.h"
#include "workloads/experiment.h"
#include "workloads/sharding/planner.h"

namespace workloads {

struct ShardedMatmulSpec;

class ShardedMatmulData {
 public:
  // Throws sim::ConfigError (at `where`) for plans it cannot follow with values.
  ShardedMatmulData(const Experiment& exp, const ShardedMatmulSpec& spec, std::uint64_t seed,
                    const sim::YamlNode& where);

  // Hooks for the plan's gathers before the matmul (in plan order) and its
  // reductions / output gathers after it.
  runtime::CollectiveData before(std::size_t step);
  runtime::CollectiveData after(std::size_t step);
  // The local matmul's operands on a chip.
  kernels::MatmulData local(int chip);
  // Collective matmul: step j's operands on a chip, and permute j's hooks.
  kernels::MatmulData split_step(int chip, std::uint64_t j);
  runtime::CollectiveData permute(std::uint64_t j);

  struct Check {
    bool matches = true;
    double max_abs_error = 0;
  };
  Check check() const;

 private:
  struct Matrix {
    std::uint64_t rows = 0, cols = 0;
    std::vector<std::string> axes[2];  // how each dimension is split at this point
    std::vector<double> v;             // row-major
  };
  struct Chip {
    std::vector<Matrix> a, b, c;  // versions: initial shard, then after each step
    std::vector<hw::bf16> a_local, b_local;
    std::vector<float> y;
    std::vector<std::vector<hw::bf16>> shards;  // collective matmul: operand shard held at step j
  };

  std::uint64_t coord(int chip, const std::string& axis) const;
  std::uint64_t index(int chip, const std::vector<std::string>& axes) const;  // mixed radix, major first
  std::vector<int> group(int chip, const std::vector<std::string>& axes) const;
  Matrix slice(const std::vector<double>& full, std::uint64_t rows, std::uint64_t cols,
               const std::vector<std::string>& row_axes, const std::vector<std::string>& col_axes, int chip) const;
  runtime::CollectiveData gather(std::vector<Matrix> Chip::*tensor, int dim, const std::vector<std::string>& axes);
  void finish_operands();

  const Experiment& exp_;
  const ShardedMatmulSpec& spec_;
  std::vector<std::vector<std::uint64_t>> mesh_coords_;  // chip -> coordinate per mesh axis
  std::vector<double> a_full_, b_full_;
  std::vector<Chip> chips_;
  std::vector<runtime::CollectiveData> before_, after_;
};

}  // namespace workloads
