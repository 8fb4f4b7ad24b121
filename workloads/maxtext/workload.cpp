#include "workloads/maxtext/workload.h"
#include "workloads/validation.h"

#include <algorithm>
#include <string>
#include <utility>

#include "workloads/maxtext/config.h"
#include "workloads/maxtext/keys.h"
#include "workloads/maxtext/to_train.h"
#include "workloads/train/workload.h"

namespace workloads {

namespace {

class MaxTextWorkload : public Workload {
 public:
  MaxTextWorkload(MaxTextConfig cfg, MaxTextTrain train) : cfg_(std::move(cfg)), train_(std::move(train)) {}
  std::string kind() const override { return "maxtext"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override;

 private:
  MaxTextConfig cfg_;
  MaxTextTrain train_;
};

MaxTextSection section_of(const MaxTextConfig& cfg, const MaxTextTrain& train) {
  MaxTextSection s;
  s.model_name = cfg.model.name;
  s.remat_policy = remat_policy_names().name(cfg.remat_policy);
  s.mesh = train.mesh;
  for (const ListedKey& k : cfg.ignored_keys) s.ignored_keys.push_back({k.key, k.value, k.where, k.why});
  for (const ListedKey& k : cfg.approximations) s.approximations.push_back({k.key, k.value, k.where, k.why});
  return s;
}

RunOutput MaxTextWorkload::run(const Experiment& exp, const RunOptions& opts) const {
  // The training step on MaxText's mesh, each op's VMEM within the
  // compiler's scoped limit (xla_tpu_scoped_vmem_limit_kib).
  Experiment step = experiment_settings(exp);
  step.mesh = train_.mesh;
  step.pod.dcn_axes = train_.dcn_axes;
  if (cfg_.xla.scoped_vmem_limit_kib > 0)
    step.chip.vmem = std::min<std::uint64_t>(step.chip.vmem, cfg_.xla.scoped_vmem_limit_kib * 1024);
  const MaxTextSection section = section_of(cfg_, train_);
  // Validated as what it is (a training step on exp's chip): `step` carries
  // no workload, from which report_for would read the kind.
  RunOutput out = run_train(step, train_.spec, opts, [&](Report& r) {
    r.result.maxtext = section;
    r.validation = validation_for(exp);
  });
  std::string mesh;
  for (const auto& [axis, size] : train_.mesh) mesh += (mesh.empty() ? "" : ", ") + axis + " " + std::to_string(size);
  out.table += "  MaxText: " + cfg_.model.name + ", remat_policy " + section.remat_policy + ", mesh " + mesh + "; " +
               std::to_string(section.ignored_keys.size()) + " keys without effect, " +
               std::to_string(section.approximations.size()) + " approximations (report.json)\n";
  return out;
}

}  // namespace

const sim::ParamTable<MaxTextWorkloadKeys>& maxtext_workload_params() {
  static const sim::ParamTable<MaxTextWorkloadKeys> t = [] {
    sim::ParamTable<MaxTextWorkloadKeys> p("workload.maxtext",
                                           "a MaxText training run as published: MaxText's keys and XLA flags");
    p.custom(
         "config", {"mapping", "", "", ""},
         "MaxText's keys as a recipe passes them (model_name and key: value overrides of base.yml; tpusim explain "
         "maxtext lists every key and whether it is modelled, ignored or unmodelled)",
         [](const sim::YamlNode&, MaxTextWorkloadKeys&) {}, true)
        .text("xla_flags", &MaxTextWorkloadKeys::xla_flags, "",
              "the recipe's LIBTPU_INIT_ARGS: --flag=value words (each modelled, ignored or unmodelled)")
        .flag("allow_unmodelled", &MaxTextWorkloadKeys::allow_unmodelled, false,
              "run even when a key or flag changes performance in a way tpusim does not model; each is listed in "
              "result.approximations")
        .informational("it changes which inputs run, not how: an unmodelled key's effect is left out and listed")
        .flag("simulate_anyway", &MaxTextWorkloadKeys::simulate_anyway, false,
              "run even when the step does not fit in HBM (result.memory.fits is then false)")
        .allow("kind");
    return p;
  }();
  return t;
}

nlohmann::json maxtext_workload_keys() {
  nlohmann::json j = maxtext_workload_params().describe();
  // config's keys as explain prints any table's: each MaxText key with its
  // class (modelled, ignored, unmodelled) before its meaning.
  nlohmann::json keys = nlohmann::json::array();
  const nlohmann::json table = maxtext_keys().describe();
  for (const auto& k : table["params"]) {
    const std::string cls = k["class"];
    keys.push_back({{"name", k["name"]},
                    {"type", k.value("type", std::string("as MaxText reads it"))},
                    {"unit", k.value("unit", std::string())},
                    {"default", k.value("neutral", std::string("base.yml's"))},
                    {"range", k.value("range", std::string())},
                    {"description", "[" + cls + "] " + k["description"].get<std::string>()}});
  }
  for (auto& p : j["params"])
    if (p["name"] == "config") p["params"] = keys;
  return j;
}

std::unique_ptr<Workload> load_maxtext_workload(const sim::YamlNode& node, const Experiment& exp) {
  MaxTextWorkloadKeys keys;
  maxtext_workload_params().load(node, keys);
  if (exp.pod.devices_per_chip > 1)
    node.fail("kind: maxtext counts one JAX device per chip (v4, v5e, v5p, v6e); " + exp.chip_ref + " has " +
              std::to_string(exp.pod.devices_per_chip) + " per chip");
  const sim::YamlNode config = node["config"];
  const sim::YamlNode flags = node["xla_flags"];
  MaxTextConfig cfg = load_maxtext_config(config, flags.present() ? &flags : nullptr, exp.pod.devices(), exp.pod.slices,
                                          keys.allow_unmodelled);
  MaxTextTrain train = maxtext_to_train(cfg, config, flags.present() ? &flags : nullptr, exp);
  train.spec.simulate_anyway = keys.simulate_anyway;
  return std::make_unique<MaxTextWorkload>(std::move(cfg), std::move(train));
}

}  // namespace workloads
