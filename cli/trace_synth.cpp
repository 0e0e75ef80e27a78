// `moesim trace synth`: options and help; what it does is harness/trace_synth_job.h.
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "harness/trace_synth_job.h"

namespace moesim::cli {
namespace trace_synth_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<TraceSynthArgs>();
  app.add_option(
      "--model", a->model,
      "Model preset or JSON (required for --zipf; with --fit it sets the shape: the trace's layers and "
      "experts keep the real expert ids, another shape is a reshaped fit, docs/synth.md)");
  app.add_option("--tokens", a->tokens, "Generated (decode) tokens per sequence (not with --logits-for)");
  app.add_option("--seed", a->seed, "Random seed (same seed => bit-identical trace)")->required();
  app.add_option(
      "--logits-for", a->logits_for,
      "Real trace: keep its routing and attach synthetic router logits consistent with its recorded "
      "top-k order and weights (labelled synthetic); for Cache-Prior, Cumsum, Max-Rank");
  app.add_option("--zipf", a->zipf, "Independent Zipf popularity per layer with this exponent (>= 0)");
  app.add_option(
      "--fit", a->fit,
      "Real trace to fit: rank-frequency, reuse over the last 64 tokens, strongest co-activations");
  add_trace_input(app, a->trace, "real trace to fit (same as --fit)");
  app.add_option("--sequences", a->sequences, "Sequences")->capture_default_str();
  app.add_option("--prompt-tokens", a->prompt_tokens, "Prompt (prefill) tokens per sequence")
      ->capture_default_str();
  app.add_flag("--logits", a->logits, "Also write synthetic router logits and softmax top-k weights");
  app.add_option("--pairs", a->pairs, "--fit: co-activated pairs modelled per layer")->capture_default_str();
  app.add_flag("--no-temporal", a->no_temporal, "--fit: independent tokens (no temporal reuse)");
  add_trace_format_options(app, a->load);
  app.add_option("-o,--output", a->out, "Output .mtr file")->required();
  add_summary_json_flag(app, a->json);
  app.callback([a] {
    check_summary_json(a->json, a->out);
    print_wrote("trace synth", synth_trace(*a), a->json, a->out, /*to_stderr=*/true);
  });
}

}  // namespace trace_synth_cmd
MOESIM_CLI_COMMAND("trace synth", "Generate a synthetic trace (Zipf, or fitted to a real trace)",
                   trace_synth_cmd::setup);
}  // namespace moesim::cli
