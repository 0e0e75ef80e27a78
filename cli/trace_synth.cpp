// `moesim trace synth`: generates a synthetic trace (traces/synth.h, docs/synth.md) -- independent Zipf
// per layer, or fitted to a real trace -- and writes it as .mtr (atomically). Synthetic traces are
// labelled synthetic in their header and in every result computed from them.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "core/error.h"
#include "core/model_spec.h"
#include "traces/synth.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace {

struct Args {
  std::string model;
  uint32_t tokens = 0;
  uint64_t seed = 0;
  std::optional<double> zipf;
  std::string fit;
  uint32_t sequences = 1;
  uint32_t prompt_tokens = 0;
  bool logits = false;
  uint32_t pairs = 8;
  bool no_temporal = false;
  std::string out;
};

void run(const Args& a) {
  using namespace traces;
  if (a.zipf.has_value() == !a.fit.empty())
    throw Error("trace synth: give exactly one of --zipf ALPHA or --fit REAL_TRACE");
  SynthModel m;
  if (a.zipf) {
    if (a.model.empty())
      throw Error("trace synth --zipf: --model is required (it gives layers, experts, top-k)");
    m = zipf_model(shape_from_model(load_model(a.model)), *a.zipf, a.seed);
  } else {
    const Trace real = load_trace(a.fit);
    SynthShape shape{real.info().model, real.info().layers, real.info().experts, real.info().top_k,
                     real.info().expert_bytes};
    if (!a.model.empty()) {
      // The model overrides the shape only consistently: same layers and experts (fit_model checks),
      // its own top_k and expert sizes.
      shape = shape_from_model(load_model(a.model));
    }
    FitOptions fo;
    fo.pairs = a.pairs;
    fo.temporal = !a.no_temporal;
    m = fit_model(real, shape, fo, a.seed, a.fit);
  }
  SynthOptions so;
  so.seed = a.seed;
  so.sequences = a.sequences;
  so.prompt_tokens = a.prompt_tokens;
  so.decode_tokens = a.tokens;
  so.logits = a.logits;
  const Trace t = generate_trace(m, so);
  save_mtr(t, a.out);
  std::fprintf(
      stderr,
      "moesim: wrote SYNTHETIC trace %s (%s, seed %llu): %zu records, %u layers x %u experts, top-%u\n",
      a.out.c_str(), m.provenance["generator"].get<std::string>().c_str(),
      static_cast<unsigned long long>(a.seed), t.records(), t.info().layers, t.info().experts,
      t.info().top_k);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model,
                 "Model preset or JSON (required for --zipf; with --fit it must match the trace's layers and "
                 "experts and sets top-k)");
  app.add_option("--tokens", a->tokens, "Generated (decode) tokens per sequence")->required();
  app.add_option("--seed", a->seed, "Random seed (same seed => bit-identical trace)")->required();
  app.add_option("--zipf", a->zipf, "Independent Zipf popularity per layer with this exponent (>= 0)");
  app.add_option("--fit", a->fit,
                 "Real trace to fit: rank-frequency, next-token reuse, strongest co-activations");
  app.add_option("--sequences", a->sequences, "Sequences")->capture_default_str();
  app.add_option("--prompt-tokens", a->prompt_tokens, "Prompt (prefill) tokens per sequence")
      ->capture_default_str();
  app.add_flag("--logits", a->logits, "Also write synthetic router logits and softmax top-k weights");
  app.add_option("--pairs", a->pairs, "--fit: co-activated pairs modelled per layer")->capture_default_str();
  app.add_flag("--no-temporal", a->no_temporal, "--fit: independent tokens (no next-token reuse)");
  app.add_option("-o,--output", a->out, "Output .mtr file")->required();
  app.callback([a] { run(*a); });
}

}  // namespace
MOESIM_CLI_COMMAND("trace synth", "Generate a synthetic trace (Zipf, or fitted to a real trace)", setup);
}  // namespace moesim::cli
