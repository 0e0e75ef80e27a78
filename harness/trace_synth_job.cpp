#include "harness/trace_synth_job.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/progress.h"
#include "core/model_spec.h"
#include "harness/arguments.h"
#include "traces/logits_for.h"
#include "traces/synth.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

// Out-of-range values are usage errors naming the option, before any work.
void validate(const TraceSynthArgs& a) {
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
Wrote run_logits_for(const TraceSynthArgs& a) {
  if (a.zipf || !a.fit.empty() || !a.trace.empty() || a.tokens != 0 || a.prompt_tokens != 0 || a.logits)
    throw UsageError(
        "--logits-for keeps the real trace's routing: it takes no --zipf, --fit, --tokens, "
        "--prompt-tokens or --logits");
  check_output_writable(a.out);
  const traces::Trace real = traces::load_trace(a.logits_for, a.load);
  const traces::Trace t = traces::attach_synthetic_logits(real, a.seed, a.logits_for);
  traces::save_mtr(t, a.out);
  Wrote w;
  w.summary = {{"path", a.out},
               {"synthetic", true},
               {"routing", "real"},
               {"routing_from", a.logits_for},
               {"seed", a.seed},
               {"records", t.records()},
               {"layers", t.info().layers},
               {"experts", t.info().experts},
               {"top_k", t.info().top_k}};
  w.text = strprintf(
      "moesim: wrote %s: the REAL routing of %s with SYNTHETIC logits (seed %llu), labelled synthetic; "
      "%zu records, %u layers x %u experts, top-%u\n",
      a.out.c_str(), a.logits_for.c_str(), static_cast<unsigned long long>(a.seed), t.records(),
      t.info().layers, t.info().experts, t.info().top_k);
  return w;
}

}  // namespace

Wrote synth_trace(const TraceSynthArgs& args) {
  using namespace traces;
  if (!args.logits_for.empty()) return run_logits_for(args);
  validate(args);
  TraceSynthArgs a = args;
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
  Wrote w;
  w.summary = {{"path", a.out},
               {"synthetic", true},
               {"generator", how},
               {"seed", a.seed},
               {"records", t.records()},
               {"sequences", t.sequence_ids().size()},
               {"layers", t.info().layers},
               {"experts", t.info().experts},
               {"top_k", t.info().top_k}};
  w.text = strprintf(
      "moesim: wrote SYNTHETIC trace %s (%s, seed %llu): %zu records, %u layers x %u experts, top-%u\n",
      a.out.c_str(), how.c_str(), static_cast<unsigned long long>(a.seed), t.records(), t.info().layers,
      t.info().experts, t.info().top_k);
  return w;
}

}  // namespace moesim::harness
