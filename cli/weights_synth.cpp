// `moesim weights synth (--model M [--layers N] [--experts N] | --size BYTES) --std S
//  [--std-per-tensor gate_proj=S,...] --seed S -o OUT.safetensors`: writes LLM-like synthetic expert
// weights (Gaussian, BF16) named so that `moesim pack` recognises them (exec/weight_synth.h). The output is
// labelled synthetic in its __metadata__ and depends only on the arguments.
#include <cstdio>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/model_spec.h"
#include "core/progress.h"
#include "core/units.h"
#include "exec/weight_synth.h"

namespace moesim::cli {
namespace {

struct Options {
  std::string model, size, std_per_tensor, out;
  uint32_t layers = 0, experts = 0;
  double std = 0.02;
  uint64_t seed = 0;
  bool json = false;
};

std::map<std::string, double> parse_std_map(const std::string& text) {
  std::map<std::string, double> m;
  if (text.empty()) return m;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--std-per-tensor '" + item + "': expected name=std (e.g. down_proj=0.01)");
    const std::string role = item.substr(0, eq);
    if (role != "gate_proj" && role != "up_proj" && role != "down_proj")
      throw UsageError("--std-per-tensor '" + item +
                       "': tensor name must be gate_proj, up_proj or down_proj");
    try {
      size_t used = 0;
      const double v = std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1 || !(v > 0)) throw std::invalid_argument("x");
      m[role] = v;
    } catch (const std::exception&) {
      throw UsageError("--std-per-tensor '" + item + "': std must be a positive number");
    }
  }
  return m;
}

void run(const Options& o) {
  if (o.model.empty() == o.size.empty()) throw UsageError("give exactly one of --model and --size");
  check_output_writable(o.out);
  std::vector<exec::SynthTensor> tensors;
  Json meta = {{"generator", "moesim weights synth"},
               {"synthetic", "true"},
               {"distribution", "gaussian"},
               {"std", std::to_string(o.std)},
               {"seed", std::to_string(o.seed)}};
  if (!o.model.empty()) {
    const ModelSpec m = load_model(o.model);
    tensors = exec::synth_layout_for_model(m, o.layers, o.experts);
    meta["model"] = m.name;
  } else {
    if (o.layers || o.experts) throw UsageError("--layers and --experts go with --model, not --size");
    tensors = exec::synth_layout_for_size(parse_bytes(o.size));
  }
  exec::SynthOptions so;
  so.std = o.std;
  so.std_per_role = parse_std_map(o.std_per_tensor);
  so.seed = o.seed;
  if (!o.std_per_tensor.empty()) meta["std_per_tensor"] = o.std_per_tensor;
  Progress bar("weights synth", 0, Progress::kBytes);
  exec::write_synth_weights(o.out, tensors, so, meta, [&bar](uint64_t done, uint64_t total) {
    bar.set_total(total);
    bar.set(done);
  });
  bar.finish();
  uint64_t elements = 0;
  for (const auto& t : tensors) {
    uint64_t n = 1;
    for (auto d : t.shape) n *= d;
    elements += n;
  }
  if (o.json)
    return print_summary_json("weights synth", {{"path", o.out}, {"tensors", tensors.size()},
                                                {"bf16_bytes", elements * 2}, {"std", o.std}, {"seed", o.seed}});
  // With "-o -" the weights went to stdout: the summary goes to stderr so it does not corrupt them.
  std::fprintf(o.out == "-" ? stderr : stdout,
               "wrote %zu synthetic expert tensors (%s BF16, Gaussian std %g, seed %llu) to %s\n",
               tensors.size(), format_bytes(elements * 2).c_str(), o.std,
               static_cast<unsigned long long>(o.seed), o.out.c_str());
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("--model", o->model, "Model preset (data/models) whose expert shapes to use");
  app.add_option("--layers", o->layers, "MoE layers to write (default: all of the model's)");
  app.add_option("--experts", o->experts, "Experts per layer to write (default: all of the model's)");
  app.add_option("--size", o->size, "Total BF16 bytes instead of a model (multiple of 2 KiB, e.g. 64MiB)");
  app.add_option("--std", o->std, "Standard deviation of the Gaussian")
      ->capture_default_str()
      ->check(positive_number());
  app.add_option("--std-per-tensor", o->std_per_tensor,
                 "Per-tensor overrides, e.g. down_proj=0.01,gate_proj=0.03");
  app.add_option("--seed", o->seed, "Random seed")->required();
  app.add_option("-o,--output", o->out, "Output .safetensors file ('-' = standard output)")->required();
  add_summary_json_flag(app, o->json);
  app.callback([o] {
    check_summary_json(o->json, o->out);
    run(*o);
  });
}

}  // namespace
MOESIM_CLI_COMMAND("weights synth", "Write synthetic LLM-like (Gaussian BF16) expert weights as safetensors",
                   setup);
}  // namespace moesim::cli
