#include "workloads/train/functional.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "workloads/train/train_program.h"

namespace workloads {

namespace {

using hw::bf16;

// splitmix64: the same numbers on every platform and standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t s_;
};

float bf16_value(double v) { return bf16::from_float(static_cast<float>(v)).to_float(); }

std::uint64_t parameter_count(const std::vector<std::uint64_t>& widths) {
  std::uint64_t n = 0;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) n += widths[l] * widths[l + 1] + widths[l + 1];
  return n;
}

// Double-precision SGD step on the whole batch on one "chip": the weights
// after it, per layer w then b, and the largest gradient magnitude.
std::vector<std::vector<double>> reference_step(const FunctionalTrainData& d, double lr, double& max_grad) {
  const std::size_t layers = d.widths.size() - 1;
  const std::uint64_t batch = d.labels.size();
  std::vector<std::vector<double>> act(layers + 1), pre(layers);
  act[0].resize(d.x.size());
  for (std::size_t i = 0; i < d.x.size(); ++i) act[0][i] = d.x[i].to_float();
  for (std::size_t l = 0; l < layers; ++l) {
    const std::uint64_t in = d.widths[l], out = d.widths[l + 1];
    pre[l].assign(batch * out, 0.0);
    for (std::uint64_t r = 0; r < batch; ++r)
      for (std::uint64_t o = 0; o < out; ++o) {
        double s = d.initial.b[l][o];
        for (std::uint64_t k = 0; k < in; ++k) s += act[l][r * in + k] * double(d.initial.w[l][k * out + o]);
        pre[l][r * out + o] = s;
      }
    act[l + 1] = pre[l];
    if (l + 1 < layers)
      for (auto& v : act[l + 1]) v = std::max(v, 0.0);
  }
  const std::uint64_t classes = d.widths.back();
  std::vector<double> dz(batch * classes);
  for (std::uint64_t r = 0; r < batch; ++r) {
    const double* z = &pre[layers - 1][r * classes];
    const double m = *std::max_element(z, z + classes);
    double sum = 0;
    for (std::uint64_t o = 0; o < classes; ++o) sum += std::exp(z[o] - m);
    for (std::uint64_t o = 0; o < classes; ++o)
      dz[r * classes + o] = (std::exp(z[o] - m) / sum - (o == d.labels[r] ? 1.0 : 0.0)) / double(batch);
  }
  std::vector<std::vector<double>> after(layers);
  max_grad = 0;
  for (std::size_t l = layers; l-- > 0;) {
    const std::uint64_t in = d.widths[l], out = d.widths[l + 1];
    std::vector<double> g(in * out + out, 0.0);
    for (std::uint64_t r = 0; r < batch; ++r)
      for (std::uint64_t o = 0; o < out; ++o) {
        const double e = dz[r * out + o];
        for (std::uint64_t k = 0; k < in; ++k) g[k * out + o] += act[l][r * in + k] * e;
        g[in * out + o] += e;
      }
    if (l > 0) {
      std::vector<double> prev(batch * in, 0.0);
      for (std::uint64_t r = 0; r < batch; ++r)
        for (std::uint64_t k = 0; k < in; ++k) {
          if (pre[l - 1][r * in + k] <= 0) continue;
          double s = 0;
          for (std::uint64_t o = 0; o < out; ++o) s += dz[r * out + o] * double(d.initial.w[l][k * out + o]);
          prev[r * in + k] = s;
        }
      dz = std::move(prev);
    }
    after[l].resize(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double w0 = i < in * out ? double(d.initial.w[l][i]) : double(d.initial.b[l][i - in * out]);
      after[l][i] = w0 - lr * g[i];
      max_grad = std::max(max_grad, std::fabs(g[i]));
    }
  }
  return after;
}

// Which dense layer each collective reduces the gradients of (pure data
// parallelism: every collective is one; the builder names them
// "stage0 <layer> gradients all-reduce over <axes>").
std::vector<std::size_t> gradient_layers(const TrainProgram& program, const std::vector<std::uint64_t>& widths) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < program.pod.collectives.size(); ++c) {
    const std::string& name = program.pod.collective_names[c];
    std::size_t found = widths.size();
    for (std::size_t l = 0; l + 1 < widths.size(); ++l)
      if (name.rfind("stage0 dense" + std::to_string(l) + " gradients all-reduce", 0) == 0) found = l;
    if (found == widths.size() || program.collective_purpose[c] != CollectivePurpose::gradients)
      throw std::logic_error("functional training: collective '" + name + "' is not a layer's gradient all-reduce");
    const std::uint64_t elements = widths[found] * widths[found + 1] + widths[found + 1];
    if (program.pod.collectives[c].bytes != hw::kBf16Bytes * elements)
      throw std::logic_error("functional training: collective '" + name + "' moves " +
                             std::to_string(program.pod.collectives[c].bytes) + " bytes, the layer has " +
                             std::to_string(elements) + " BF16 gradients");
    out.push_back(found);
  }
  return out;
}

}  // namespace

void load_functional_training(const sim::YamlNode& node, const Experiment& exp, TrainSpec& spec) {
  FunctionalTraining& f = spec.functional;
  f.enabled = exp.functional;
  for (const char* key : {"steps", "learning_rate", "seed"})
    if (node[key].present() && !exp.functional)
      node[key].fail("only used by functional training (set functional: true at the top of the experiment)");
  if (!exp.functional) return;  // steps, learning_rate and seed are read by train_params()

  const sim::YamlNode model = node["model"];
  if (spec.model.type != "mlp")
    model["type"].fail("functional training runs MLPs only (type: mlp), got '" + spec.model.type + "'");
  if (spec.model.mlp.activation != "relu")
    model["activation"].fail("functional training implements relu only, got '" + spec.model.mlp.activation + "'");
  const TrainParallelism& p = spec.parallelism;
  const sim::YamlNode par = node["parallelism"];
  if (p.tensor.degree > 1)
    par["tensor"].fail("functional training runs pure data parallelism; tensor parallelism of " +
                       std::to_string(p.tensor.degree) + " is not supported");
  if (p.pipeline.degree > 1)
    par["pipeline"].fail("functional training runs pure data parallelism; pipeline parallelism of " +
                         std::to_string(p.pipeline.degree) + " is not supported");
  if (spec.precision.params != Dtype::bf16 || spec.precision.optimizer != Dtype::fp32 ||
      spec.precision.matmul != hw::NumberFormat::bf16)
    node["precision"].fail(
        "functional training runs the default precision (bfloat16 parameters and matmuls, float32 optimizer)");
  if (p.fsdp.degree > 1 || p.zero != 0)
    (p.zero != 0 ? par["zero"] : par["fsdp"])
        .fail(
            "functional training runs pure data parallelism; sharded weights or optimizer state (fsdp, zero) are "
            "not supported");
  if (spec.optimizer.kind != Optimizer::sgd)
    (node["optimizer"].present() ? node["optimizer"] : node)
        .fail("functional training updates the weights with SGD; set optimizer: sgd (got " + spec.optimizer.name + ")");
  const double work = double(parameter_count(spec.model.mlp.widths)) * double(spec.global_batch);
  if (work > 1e8)
    model.fail("functional training computes every value on the host; keep parameters x global_batch <= 1e8 (got " +
               std::to_string(static_cast<std::uint64_t>(work)) + ")");
  const auto& widths = spec.model.mlp.widths;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l)
    if (double(widths[l] * widths[l + 1] + widths[l + 1]) * double(p.data.degree) > double(std::uint64_t{1} << 27))
      model.fail("functional collectives hold every chip's buffer: dense" + std::to_string(l) + "'s gradients x " +
                 std::to_string(p.data.degree) + " chips exceed 2^27 values");
}

FunctionalTrainData make_functional_train_data(const TrainSpec& spec) {
  FunctionalTrainData d;
  d.widths = spec.model.mlp.widths;
  const std::uint64_t batch = spec.global_batch, in = d.widths.front(), classes = d.widths.back();
  Rng rng(spec.functional.seed);
  d.x.resize(batch * in);
  for (auto& v : d.x) v = bf16::from_float(static_cast<float>(rng.uniform(-1, 1)));
  std::vector<double> teacher(in * classes);
  for (auto& t : teacher) t = rng.uniform(-1, 1);
  d.labels.resize(batch);
  for (std::uint64_t r = 0; r < batch; ++r) {
    double best = -1e300;
    for (std::uint64_t o = 0; o < classes; ++o) {
      double s = 0;
      for (std::uint64_t k = 0; k < in; ++k) s += double(d.x[r * in + k].to_float()) * teacher[k * classes + o];
      if (s > best) best = s, d.labels[r] = static_cast<std::uint32_t>(o);
    }
  }
  for (std::size_t l = 0; l + 1 < d.widths.size(); ++l) {
    const std::uint64_t fan_in = d.widths[l], fan_out = d.widths[l + 1];
    const double a = std::sqrt(6.0 / double(fan_in + fan_out));
    d.initial.w.emplace_back(fan_in * fan_out);
    for (auto& w : d.initial.w.back()) w = bf16_value(rng.uniform(-a, a));
    d.initial.b.emplace_back(fan_out, 0.0f);
  }
  return d;
}

LocalStep functional_local_step(const FunctionalTrainData& d, const MlpWeights& weights, std::uint64_t begin,
                                std::uint64_t end) {
  const std::size_t layers = d.widths.size() - 1;
  const std::uint64_t n = end - begin;
  // The matmuls read BF16 copies of the FP32 master weights.
  std::vector<std::vector<bf16>> w(layers);
  for (std::size_t l = 0; l < layers; ++l) {
    w[l].resize(weights.w[l].size());
    for (std::size_t i = 0; i < w[l].size(); ++i) w[l][i] = bf16::from_float(weights.w[l][i]);
  }
  // Forward: z = X W (MXU) + b (FP32); the next layer reads relu(z) as BF16.
  std::vector<std::vector<bf16>> act(layers);
  std::vector<std::vector<float>> z(layers);
  act[0].assign(d.x.begin() + static_cast<std::ptrdiff_t>(begin * d.widths[0]),
                d.x.begin() + static_cast<std::ptrdiff_t>(end * d.widths[0]));
  for (std::size_t l = 0; l < layers; ++l) {
    const std::uint64_t in = d.widths[l], out = d.widths[l + 1];
    z[l].assign(n * out, 0.0f);
    for (std::uint64_t r = 0; r < n; ++r)
      for (std::uint64_t o = 0; o < out; ++o) {
        float acc = 0.0f;
        for (std::uint64_t k = 0; k < in; ++k)
          acc = hw::mxu_add(acc, hw::mxu_mul(act[l][r * in + k], w[l][k * out + o]));
        z[l][r * out + o] = acc + weights.b[l][o];
      }
    if (l + 1 < layers) {
      act[l + 1].resize(n * out);
      for (std::size_t i = 0; i < z[l].size(); ++i) act[l + 1][i] = bf16::from_float(std::max(z[l][i], 0.0f));
    }
  }
  // Softmax cross-entropy (FP32), mean over the shard; its gradient in BF16.
  LocalStep out;
  const std::uint64_t classes = d.widths.back();
  std::vector<bf16> dz(n * classes);
  double loss = 0;
  for (std::uint64_t r = 0; r < n; ++r) {
    const float* logits = &z[layers - 1][r * classes];
    const float m = *std::max_element(logits, logits + classes);
    float sum = 0.0f;
    for (std::uint64_t o = 0; o < classes; ++o) sum += std::exp(logits[o] - m);
    const std::uint32_t label = d.labels[begin + r];
    loss += double(std::log(sum)) + double(m) - double(logits[label]);
    for (std::uint64_t o = 0; o < classes; ++o) {
      const float p = std::exp(logits[o] - m) / sum;
      dz[r * classes + o] = bf16::from_float((p - (o == label ? 1.0f : 0.0f)) / static_cast<float>(n));
    }
  }
  out.loss = loss / double(n);
  // Backward: dW = X^T dZ, db = sum dZ (FP32, samples in order), dX = dZ W^T
  // masked by relu', each gradient stored as BF16.
  out.grads.resize(layers);
  for (std::size_t l = layers; l-- > 0;) {
    const std::uint64_t in = d.widths[l], out_w = d.widths[l + 1];
    std::vector<float> g(in * out_w + out_w, 0.0f);
    for (std::uint64_t r = 0; r < n; ++r)
      for (std::uint64_t k = 0; k < in; ++k)
        for (std::uint64_t o = 0; o < out_w; ++o)
          g[k * out_w + o] = hw::mxu_add(g[k * out_w + o], hw::mxu_mul(act[l][r * in + k], dz[r * out_w + o]));
    for (std::uint64_t r = 0; r < n; ++r)
      for (std::uint64_t o = 0; o < out_w; ++o)
        g[in * out_w + o] = hw::mxu_add(g[in * out_w + o], dz[r * out_w + o].to_float());
    out.grads[l].resize(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) out.grads[l][i] = bf16::from_float(g[i]);
    if (l == 0) break;
    std::vector<bf16> prev(n * in);
    for (std::uint64_t r = 0; r < n; ++r)
      for (std::uint64_t k = 0; k < in; ++k) {
        float acc = 0.0f;
        for (std::uint64_t o = 0; o < out_w; ++o)
          acc = hw::mxu_add(acc, hw::mxu_mul(dz[r * out_w + o], w[l][k * out_w + o]));
        prev[r * in + k] = bf16::from_float(z[l - 1][r * in + k] > 0.0f ? acc : 0.0f);
      }
    dz = std::move(prev);
  }
  return out;
}

FunctionalTrainResult run_train_functional(const Experiment& exp, const TrainSpec& spec, const TrainLayout& layout,
                                           TrainProgram& program) {
  const FunctionalTrainData data = make_functional_train_data(spec);
  const std::uint32_t chips = layout.chips();
  const std::size_t layers = data.widths.size() - 1;
  const std::uint64_t shard = spec.replica_batch();
  const double replicas = spec.parallelism.data.degree;
  const bool sync = spec.parallelism.data.degree > 1 && spec.parallelism.sync_gradients;
  const float lr = static_cast<float>(spec.functional.learning_rate);

  // What the hooks read and fill, per chip and layer.
  struct State {
    std::vector<LocalStep> local;
    std::vector<std::vector<std::vector<double>>> reduced;
    std::vector<std::vector<char>> received;
  };
  auto state = std::make_shared<State>();
  const std::vector<std::size_t> layer_of = gradient_layers(program, data.widths);
  program.pod.collective_data.clear();
  for (const std::size_t l : layer_of) {
    runtime::CollectiveData h;
    h.input = [state, l](int chip) {
      const auto& g = state->local.at(static_cast<std::size_t>(chip)).grads.at(l);
      std::vector<double> v(g.size());
      for (std::size_t i = 0; i < g.size(); ++i) v[i] = g[i].to_float();
      return v;
    };
    h.output = [state, l](int chip, const std::vector<double>& v) {
      state->reduced.at(static_cast<std::size_t>(chip)).at(l) = v;
      state->received[static_cast<std::size_t>(chip)][l] = 1;
    };
    program.pod.collective_data.push_back(std::move(h));
  }
  program.pod.buffers = state;

  auto shard_begin = [&](std::uint32_t c) { return std::uint64_t(layout.roles[c].data) * shard; };
  FunctionalTrainResult res;
  res.steps = spec.functional.steps;
  std::vector<MlpWeights> w(chips, data.initial);
  for (std::uint32_t step = 0; step < spec.functional.steps; ++step) {
    state->local.assign(chips, {});
    state->reduced.assign(chips, std::vector<std::vector<double>>(layers));
    state->received.assign(chips, std::vector<char>(layers, 0));
    double loss = 0;
    for (std::uint32_t c = 0; c < chips; ++c) {
      state->local[c] = functional_local_step(data, w[c], shard_begin(c), shard_begin(c) + shard);
      loss += state->local[c].loss;
    }
    res.loss_per_step.push_back(loss / chips);
    res.last_run = runtime::run_pod(pod_config(exp), program.pod, false);
    for (std::uint32_t c = 0; c < chips; ++c)
      for (std::size_t l = 0; l < layers; ++l) {
        std::vector<float> g(state->local[c].grads[l].size());
        if (sync) {
          if (!state->received[c][l])
            throw std::logic_error("functional training: chip " + std::to_string(c) +
                                   " never received the all-reduced gradients of dense" + std::to_string(l));
          const auto& sum = state->reduced[c][l];
          if (sum.size() != g.size()) throw std::logic_error("functional training: all-reduce output size");
          for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(sum[i] / replicas);
        } else {
          for (std::size_t i = 0; i < g.size(); ++i) g[i] = state->local[c].grads[l][i].to_float();
        }
        auto& wl = w[c].w[l];
        auto& bl = w[c].b[l];
        for (std::size_t i = 0; i < wl.size(); ++i) wl[i] = wl[i] - lr * g[i];
        for (std::size_t i = 0; i < bl.size(); ++i) bl[i] = bl[i] - lr * g[wl.size() + i];
      }
    if (step == 0) res.first_step = w[0];
  }
  double final_loss = 0;
  for (std::uint32_t c = 0; c < chips; ++c)
    final_loss += functional_local_step(data, w[c], shard_begin(c), shard_begin(c) + shard).loss;
  res.final_loss = final_loss / chips;

  for (std::size_t l = 0; l < layers; ++l)
    for (int part = 0; part < 2; ++part) {
      const std::size_t size = part == 0 ? w[0].w[l].size() : w[0].b[l].size();
      for (std::size_t i = 0; i < size; ++i) {
        float lo = INFINITY, hi = -INFINITY;
        for (const auto& cw : w) {
          const float v = part == 0 ? cw.w[l][i] : cw.b[l][i];
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        res.replicas_max_weight_diff = std::max(res.replicas_max_weight_diff, double(hi) - double(lo));
      }
    }
  res.weights = std::move(w);

  if (sync || chips == 1) {
    double max_grad = 0;
    const auto ref = reference_step(data, spec.functional.learning_rate, max_grad);
    res.reference_checked = true;
    res.reference_bound = 0x1.0p-4 * spec.functional.learning_rate * max_grad;
    for (std::size_t l = 0; l < layers; ++l) {
      const std::size_t nw = res.first_step.w[l].size();
      for (std::size_t i = 0; i < ref[l].size(); ++i) {
        const double got = i < nw ? res.first_step.w[l][i] : res.first_step.b[l][i - nw];
        res.reference_max_abs_diff = std::max(res.reference_max_abs_diff, std::fabs(got - ref[l][i]));
      }
    }
    res.matches_reference = res.reference_max_abs_diff <= res.reference_bound;
  }
  return res;
}

TrainFunctional functional_train_report(const FunctionalTrainResult& r, const TrainSpec& spec) {
  TrainFunctional f;
  f.steps = r.steps;
  f.learning_rate = spec.functional.learning_rate;
  f.seed = spec.functional.seed;
  f.sync_gradients = spec.parallelism.sync_gradients;
  f.loss_per_step = r.loss_per_step;
  f.final_loss = r.final_loss;
  f.replicas_max_weight_diff = r.replicas_max_weight_diff;
  if (r.reference_checked) {
    f.reference_step1 = TrainFunctional::Reference{r.reference_max_abs_diff, r.reference_bound, r.matches_reference};
    f.matches_reference = r.matches_reference;
  }
  return f;
}

}  // namespace workloads
