#include "models/linear.h"

#include <stdexcept>

namespace models {

namespace {

// Which dimension of the forward, dX and dW matmul a TP role splits (see linear.h).
struct Splits {
  Dim forward, data, weight;
};

Splits splits_for(TpRole tp) {
  switch (tp) {
    case TpRole::column: return {Dim::n, Dim::k, Dim::n};
    case TpRole::row: return {Dim::k, Dim::n, Dim::m};
    case TpRole::replicated: return {Dim::none, Dim::none, Dim::none};
    case TpRole::heads: break;
  }
  throw std::logic_error("add_linear: a linear layer is column, row or replicated, not heads");
}

MatmulSpec matmul(std::string name, Pass pass, std::uint64_t m, std::uint64_t k, std::uint64_t n, const Linear& lin,
                  Operand weight_operand, Dim split, std::string output, std::vector<std::string> after) {
  MatmulSpec s;
  s.name = std::move(name);
  s.kind = MatmulKind::linear;
  s.pass = pass;
  s.m = m;
  s.k = k;
  s.n = n;
  s.weight = lin.weight;
  s.weight_operand = weight_operand;
  s.tp = lin.tp;
  s.tp_split = split;
  s.tp_units = lin.tp_units;
  s.output = std::move(output);
  s.after = std::move(after);
  return s;
}

}  // namespace

void add_linear(LayerSpec& layer, const Linear& lin) {
  if (lin.m == 0 || lin.k == 0 || lin.n == 0) throw std::invalid_argument("add_linear: zero dimension in " + lin.name);
  const Splits sp = splits_for(lin.tp);
  layer.forward.push_back(
      matmul(lin.name, Pass::forward, lin.m, lin.k, lin.n, lin, Operand::b, sp.forward, lin.output, lin.after_forward));
  if (!lin.input_grad.empty())
    layer.backward.push_back(matmul(lin.name + ".dX", Pass::backward_data, lin.m, lin.n, lin.k, lin, Operand::b,
                                    sp.data, lin.input_grad, lin.after_backward));
  layer.backward.push_back(matmul(lin.name + ".dW", Pass::backward_weight, lin.k, lin.m, lin.n, lin, Operand::none,
                                  sp.weight, lin.weight + ".grad", lin.after_backward));
}

}  // namespace models
