// `moesim weights synth`: options and help; what it does is harness/weights_synth_job.h.
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/summary_json.h"
#include "harness/weights_synth_job.h"

namespace moesim::cli {
namespace weights_synth_cmd {

void setup(CLI::App& app) {
  auto o = std::make_shared<WeightsSynthArgs>();
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
    print_wrote("weights synth", weights_synth(*o), o->json, o->out);
  });
}

}  // namespace weights_synth_cmd
MOESIM_CLI_COMMAND("weights synth", "Write synthetic LLM-like (Gaussian BF16) expert weights as safetensors",
                   weights_synth_cmd::setup);
}  // namespace moesim::cli
