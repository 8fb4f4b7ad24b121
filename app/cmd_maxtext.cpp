// `tpusim maxtext --chip tpu-v6e --pod 16x16 [--slices N] WORD...`: a pasted
// MaxText launch (LIBTPU_INIT_ARGS="..." python3 -m MaxText.train base.yml
// model_name=... key=value ...) run as the kind: maxtext experiment it
// describes (docs/maxtext.md, "From a command line"). The experiment is
// written beside the report as experiment.yaml, so `tpusim run` repeats it
// and `--set` changes it; errors in a key=value word are located at
// "command line:N:column", the Nth such word.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <iostream>

#include "app/cli.h"
#include "app/run_experiment.h"
#include "app/run_folder.h"
#include "plan/slice.h"
#include "sim/output.h"
#include "workloads/experiment.h"
#include "workloads/maxtext/command_line.h"

namespace app {

namespace {

const char* kMaxTextHelp =
    "usage: tpusim maxtext --chip NAME (--pod AxB[xC] | --chips N) [--slices N] [--out DIR] WORD...\n"
    "\n"
    "Runs a MaxText launch as pasted, e.g.\n"
    "  tpusim maxtext --chip tpu-v6e --pod 16x16 LIBTPU_INIT_ARGS=\"--xla_...\" python3 -m MaxText.train \\\n"
    "      MaxText/configs/base.yml model_name=llama3.1-70b per_device_batch_size=2 ici_fsdp_parallelism=-1\n"
    "\n"
    "  --chip NAME     the chip (configs/chips/)\n"
    "  --pod AxB[xC]   one slice's physical axes (wraparound by the chip's rules)\n"
    "  --chips N       or its chip count (the squarest slice of the chip's topology)\n"
    "  --slices N      slices over the data-center network (default 1)\n"
    "  --out DIR       output folder (default runs/<name>/): report.json and experiment.yaml\n"
    "WORD: key=value (MaxText's keys), LIBTPU_INIT_ARGS=... or XLA_FLAGS=..., and the launcher's words\n";

struct MaxTextOptions {
  std::string chip, pod, out_dir;
  std::uint32_t chips = 0, slices = 1;
  std::vector<std::string> words;
};

std::uint32_t positive_count(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const unsigned long v = std::stoul(text, &used);
    if (used == text.size() && v >= 1 && v <= 1u << 20) return static_cast<std::uint32_t>(v);
  } catch (const std::exception&) {
  }
  throw UsageError(flag + ": expected a whole number from 1 to 1048576, got '" + text + "'");
}

// tpusim's options are taken wherever they stand; every other word is the
// launch's (MaxText's launcher has options of its own, such as python3's -m).
MaxTextOptions parse_maxtext_options(const std::vector<std::string>& args, bool& help) {
  MaxTextOptions o;
  help = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return o;
    }
    const bool ours = a == "--chip" || a == "--pod" || a == "--chips" || a == "--slices" || a == "--out";
    if (!ours) {
      o.words.push_back(a);
      continue;
    }
    if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--chip") o.chip = v;
    if (a == "--pod") o.pod = v;
    if (a == "--out") o.out_dir = v;
    if (a == "--chips") o.chips = positive_count(a, v);
    if (a == "--slices") o.slices = positive_count(a, v);
  }
  if (o.chip.empty()) throw UsageError("maxtext needs --chip NAME (configs/chips/)");
  if (o.pod.empty() == (o.chips == 0)) throw UsageError("maxtext needs one of --pod AxB[xC] and --chips N");
  if (o.words.empty()) throw UsageError("maxtext needs the launch's key=value words (model_name=... ...)");
  return o;
}

std::vector<std::uint32_t> pod_shape(const std::string& text) {
  std::vector<std::uint32_t> shape;
  std::size_t start = 0;
  for (;;) {
    const std::size_t x = text.find('x', start);
    shape.push_back(
        positive_count("--pod", text.substr(start, x == std::string::npos ? std::string::npos : x - start)));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (shape.size() > 3) throw UsageError("--pod: at most three axes (AxBxC), got '" + text + "'");
  return shape;
}

// The experiment the command line describes, as a document whose config
// keeps the command line's places.
YAML::Node experiment_document(const MaxTextOptions& o, const workloads::MaxTextCommandLine& cl) {
  const sim::YamlNode chip_ref(YAML::Node(o.chip), "--chip", "chip");
  const std::string chip_file = workloads::resolve_named_file(chip_ref, "command line", "chips", "chip");
  const hw::ChipConfig chip = hw::load_chip(sim::YamlNode::load_file(chip_file));
  // The pod as given, or the squarest slice, as the planner lays one out.
  const plan::Slice s =
      o.pod.empty() ? plan::squarest_slice(chip, o.chips) : plan::slice_of_shape(chip, pod_shape(o.pod));
  const YAML::Node slice = YAML::Load(s.pod_yaml);
  const std::string model = cl.config["model_name"].present() ? cl.config["model_name"].scalar() : "default";
  YAML::Node doc;
  doc["name"] = "maxtext-" + model + "-" + o.chip;
  doc["chip"] = o.chip;
  if (o.slices > 1) {
    doc["pod"]["slices"] = o.slices;
    doc["pod"]["slice"] = slice;
  } else {
    doc["pod"] = slice;
  }
  doc["workload"]["kind"] = "maxtext";
  doc["workload"]["config"] = cl.config.raw();
  if (cl.has_xla_flags) doc["workload"]["xla_flags"] = cl.xla_flags;
  return doc;
}

std::string document_text(const YAML::Node& doc, const std::vector<std::string>& args) {
  std::string command = "tpusim maxtext";
  for (const std::string& a : args) command += " " + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  for (char& c : command)  // one comment line
    if (c == '\n' || c == '\r') c = ' ';
  YAML::Emitter out;
  out << doc;
  return "# " + command + "\n# (tpusim run this file to repeat it; --set to change it)\n" + out.c_str() + "\n";
}

}  // namespace

int cmd_maxtext(const std::vector<std::string>& args) {
  bool help = false;
  const MaxTextOptions o = parse_maxtext_options(args, help);
  if (help) {
    std::cout << kMaxTextHelp;
    return 0;
  }
  const workloads::MaxTextCommandLine cl = workloads::parse_maxtext_command_line(o.words);
  const YAML::Node doc = experiment_document(o, cl);
  workloads::Experiment exp = workloads::load_experiment_node(sim::YamlNode(doc, "command line", ""), "command line");
  workloads::RunOptions ro;
  ro.out_dir = o.out_dir.empty() ? default_run_folder(exp.name) : o.out_dir;
  // Written before the run, so a step that does not fit can be changed
  // with --set on it (the advice names this file's keys).
  prepare_output_dir(ro.out_dir, {"experiment.yaml"}, o.out_dir.empty() ? "output folder" : "--out");
  const std::string file = (std::filesystem::path(ro.out_dir) / "experiment.yaml").string();
  sim::write_file_atomic(file, document_text(doc, args));
  exp.config_path = file;
  const workloads::RunOutput out = run_experiment(exp, ro, o.out_dir.empty() ? "output folder" : "--out");
  std::cout << out.table << "report: " << (std::filesystem::path(ro.out_dir) / "report.json").string()
            << "\nexperiment: " << file << "\n";
  return 0;
}

}  // namespace app
