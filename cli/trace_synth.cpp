// `moesim trace synth`: generates a synthetic trace (traces/synth.h, docs/synth.md) -- independent Zipf
// per layer, or fitted to a real trace -- and writes it as .mtr (atomically). Synthetic traces are
// labelled synthetic in their header and in every result computed from them.
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/trace_options.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/model_spec.h"
#include "core/progress.h"
#include "traces/logits_for.h"
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
  std::string trace;  // --trace / positional: the same as --fit
  std::string logits_for;  // attach synthetic logits to this real trace (traces/logits_for.h)
  uint32_t sequences = 1;
  uint32_t prompt_tokens = 0;
  bool logits = false;
  uint32_t pairs = 8;
  bool no_temporal = false;
  std::string out;
  bool json = false;
  traces::LoadOptions load;  // how --fit's and --logits-for's trace is read (--format, --fields, ...)
};

// Out-of-range values are usage errors naming the option, before any work.
void validate(const Args& a) {
  if (a.zipf && !(std::isfinite(*a.zipf) && *a.zipf >= 0))
    throw UsageError("--zipf: alpha must be a finite number >= 0, got " + std::to_string(*a.zipf));
  if (a.sequences == 0) throw UsageError("--sequences must be at least 1");
  if (a.tokens == 0 && a.prompt_tokens == 0)
    throw UsageError("--tokens and --prompt-tokens are both 0: nothing to generate");
  // Token indices are 32-bit: a sequence's prompt and decode tokens together must fit.
  if (uint64_t{a.tokens} + a.prompt_tokens > UINT32_MAX)
    throw UsageError("--tokens + --prompt-tokens must stay below 2^32 per sequence");
  if (a.pairs > 4096)
    throw UsageError("--pairs must be at most 4096 per layer, got " + std::to_string(a.pairs));
  if (!a.fit.empty() && !a.trace.empty())
    throw UsageError("--fit and --trace name the same input: give one of them");
}

// --logits-for: the real trace's routing unchanged, synthetic logits attached (traces/logits_for.h).
void run_logits_for(const Args& a) {
  if (a.zipf || !a.fit.empty() || !a.trace.empty() || a.tokens != 0 || a.prompt_tokens != 0 || a.logits)
    throw UsageError("--logits-for keeps the real trace's routing: it takes no --zipf, --fit, --tokens, "
                     "--prompt-tokens or --logits");
  check_output_writable(a.out);
  const traces::Trace real = traces::load_trace(a.logits_for, a.load);
  const traces::Trace t = traces::attach_synthetic_logits(real, a.seed, a.logits_for);
  traces::save_mtr(t, a.out);
  if (a.json)
    return print_summary_json("trace synth", {{"path", a.out}, {"synthetic", true}, {"routing", "real"},
                                              {"routing_from", a.logits_for}, {"seed", a.seed},
                                              {"records", t.records()}, {"layers", t.info().layers},
                                              {"experts", t.info().experts}, {"top_k", t.info().top_k}});
  std::fprintf(stderr,
               "moesim: wrote %s: the REAL routing of %s with SYNTHETIC logits (seed %llu), labelled synthetic; "
               "%zu records, %u layers x %u experts, top-%u\n",
               a.out.c_str(), a.logits_for.c_str(), static_cast<unsigned long long>(a.seed), t.records(),
               t.info().layers, t.info().experts, t.info().top_k);
}

void run(const Args& args) {
  using namespace traces;
  if (!args.logits_for.empty()) return run_logits_for(args);
  validate(args);
  Args a = args;
  if (a.fit.empty()) a.fit = a.trace;
  if (a.zipf.has_value() == !a.fit.empty())
    throw UsageError("trace synth: give exactly one of --zipf ALPHA or --fit REAL_TRACE");
  check_output_writable(a.out);
  SynthModel m;
  if (a.zipf) {
    if (a.model.empty())
      throw Error("trace synth --zipf: --model is required (it gives layers, experts, top-k)");
    m = zipf_model(shape_from_model(load_model(a.model)), *a.zipf, a.seed);
  } else {
    const Trace real = load_trace(a.fit, a.load);
    SynthShape shape{real.info().model, real.info().layers, real.info().experts, real.info().top_k,
                     real.info().expert_bytes};
    // With --model: its shape, top_k and expert sizes. Other layers or experts than the trace's make a
    // reshaped fit (docs/synth.md, "Fitting a model of another shape"), said in the provenance.
    if (!a.model.empty()) shape = shape_from_model(load_model(a.model));
    FitOptions fo;
    fo.pairs = a.pairs;
    fo.temporal = !a.no_temporal;
    Progress bar("synth: fitting", shape.layers, "layers");
    m = fit_model(real, shape, fo, a.seed, a.fit, &bar);
    bar.finish();
  }
  SynthOptions so;
  so.seed = a.seed;
  so.sequences = a.sequences;
  so.prompt_tokens = a.prompt_tokens;
  so.decode_tokens = a.tokens;
  so.logits = a.logits;
  Progress bar("synth: generating", uint64_t{so.sequences} * m.shape.layers, "sequence-layers");
  const Trace t = generate_trace(m, so, &bar);
  bar.finish();
  save_mtr(t, a.out);
  std::string how = m.provenance["generator"].get<std::string>();
  if (m.provenance.contains("reshape")) {
    const Json& from = m.provenance["reshape"]["from"];
    how += ", RESHAPED from " + a.fit + " (" + std::to_string(from["layers"].get<uint32_t>()) + " layers x " +
           std::to_string(from["experts"].get<uint32_t>()) + " experts, top-" +
           std::to_string(from["top_k"].get<uint32_t>()) + ")";
  }
  if (a.json)
    return print_summary_json("trace synth", {{"path", a.out}, {"synthetic", true}, {"generator", how},
                                              {"seed", a.seed}, {"records", t.records()},
                                              {"sequences", t.sequence_ids().size()}, {"layers", t.info().layers},
                                              {"experts", t.info().experts}, {"top_k", t.info().top_k}});
  std::fprintf(
      stderr,
      "moesim: wrote SYNTHETIC trace %s (%s, seed %llu): %zu records, %u layers x %u experts, top-%u\n",
      a.out.c_str(), how.c_str(), static_cast<unsigned long long>(a.seed), t.records(), t.info().layers,
      t.info().experts, t.info().top_k);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option(
      "--model", a->model,
      "Model preset or JSON (required for --zipf; with --fit it sets the shape: the trace's layers and "
      "experts keep the real expert ids, another shape is a reshaped fit, docs/synth.md)");
  app.add_option("--tokens", a->tokens, "Generated (decode) tokens per sequence (not with --logits-for)");
  app.add_option("--seed", a->seed, "Random seed (same seed => bit-identical trace)")->required();
  app.add_option("--logits-for", a->logits_for,
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
    run(*a);
  });
}

}  // namespace
MOESIM_CLI_COMMAND("trace synth", "Generate a synthetic trace (Zipf, or fitted to a real trace)", setup);
}  // namespace moesim::cli
