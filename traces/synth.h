// Synthetic trace generators (`moesim trace synth`, docs/synth.md). Every draw comes from moesim::Rng
// seeded by the user's seed, one split stream per (sequence, layer), so a seed gives a bit-identical trace.
//
// Both generators are a per-layer SynthModel: target inclusion probabilities f_e (sum_e f_e = top_k,
// every f_e < 1) fitted to a maximum-entropy distribution over top-k subsets (traces/ipf.h,
// ZipMoE Appendix D, Eq. (23)-(24)), optionally with disjoint pair factors for strong co-activations.
// A token's experts at a layer are drawn as:
//   * the first token of a sequence (and every token without temporal reuse): an exact draw S ~ pi, the
//     fitted distribution (traces/conditional_poisson.h);
//   * fitted models, every later token: the reuse kernel of its phase (ReuseKernel below; docs/synth.md,
//     "how reuse is modelled"): copies of experts of the last 64 tokens, first uses, and a draw from pi
//     conditioned on containing those. Fitted to the real last-use-distance profile, so that caches see
//     the real reuse (LRU hit rates within 3 points on the bundled traces, tests/traces/synth_longtest.cpp);
//     marginals are kept approximately;
//   * a model with `keep` > 0 and no kernel, every later decode token: each expert of the previous token is
//     kept with probability `keep` and the rest drawn from pi conditioned on the kept set. This chain has pi
//     as its stationary distribution (docs/synth.md), so marginals and pair probabilities are exact.
//
// The order of the experts in a record (rank order) is a Plackett-Luce order by f_e (Gumbel keys
// log f_e + G); with logits, the logits are built to agree with it (see synth.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/model_spec.h"
#include "traces/ipf.h"
#include "traces/trace.h"

namespace moesim {
class Progress;
}

namespace moesim::traces {

struct SynthShape {
  std::string model;
  uint32_t layers = 0, experts = 0, top_k = 0;
  std::vector<uint64_t> expert_bytes;  // per layer; may be empty
};
SynthShape shape_from_model(const ModelSpec& m);

// Last-use-distance bins of the reuse kernel: bin b holds distances [kReuseBinLo[b], kReuseBinLo[b+1]);
// a profile has two more entries: reuse beyond the last bin, and first uses in the sequence.
inline constexpr uint32_t kReuseBins = 7;
inline constexpr uint32_t kReuseBinLo[kReuseBins + 1] = {1, 2, 3, 5, 9, 17, 33, 65};
inline constexpr uint32_t kReuseBinCount = kReuseBins + 2;
inline constexpr uint32_t kReuseDepth = kReuseBinLo[kReuseBins] - 1;  // 64: the kernel's reach

// How a token after a sequence's first reuses the sequence's earlier tokens at its layer: each of its k
// slots copies, with probability copy[d-1], an expert (uniformly chosen) of the token d earlier
// (d = 1..64); each slot left is, with probability `novel`, an expert not used before in the sequence
// (drawn from pi restricted to those); the rest is drawn from pi conditioned on containing the others.
struct ReuseKernel {
  std::vector<double> copy;  // empty: no kernel
  double novel = 0;
  std::vector<double> target;  // the real last-use-distance profile fitted (kReuseBinCount entries)
  double residual = 0;         // max |model - real| over the profile after calibration
};

struct SynthLayer {
  std::vector<double> f;          // target inclusion probability per expert
  std::vector<PairTarget> pairs;  // modelled co-activations (disjoint)
  std::vector<CpUnit> units;      // the fitted distribution pi
  double keep = 0;                // probability of keeping each expert of the previous decode token
  // Reuse kernels (fit; they replace `keep` when present), [0] for prompt tokens, [1] for decode tokens;
  // see ReuseKernel and docs/synth.md, "how reuse is modelled".
  std::array<ReuseKernel, 2> reuse;
  bool has_reuse() const { return !reuse[1].copy.empty(); }
  double target_repeat = -1;  // measured next-token repeat rate (fit only; -1 = none)
  double ipf_residual = 0;
  uint32_t ipf_iterations = 0;
  uint32_t dropped_pairs = 0;  // pair targets no distribution could meet (see fit_layer in synth.cpp)
};

struct SynthModel {
  SynthShape shape;
  std::vector<SynthLayer> layers;
  Json provenance = Json::object();  // generator, parameters, seed, source
};

// Zipf: per layer a random permutation ranks the experts; popularity of rank r is 1 / r^alpha; f_e are the
// inclusion probabilities proportional to popularity (capped below 1, traces/ipf.h water-filling).
// No temporal reuse, no pair structure. alpha >= 0 (0 = uniform).
SynthModel zipf_model(const SynthShape& shape, double alpha, uint64_t seed);

struct FitOptions {
  uint32_t pairs = 8;           // co-activated pairs modelled per layer (0 = none)
  uint32_t min_pair_count = 3;  // a modelled pair was co-activated at least this often in the real trace
  bool temporal = true;         // fit the reuse kernel to the real last-use-distance profile
  uint32_t calibration_steps = 2000;  // simulated tokens per calibration round
  uint32_t calibration_rounds = 6;
};

// Fits a SynthModel to a real trace. `shape` gives the output shape. With the trace's layers and experts
// (same shape), top_k may differ (the f_e are rescaled to sum to the new top_k, pair lifts are kept).
// With other layers or experts (a reshaped fit, docs/synth.md "Fitting a model of another shape"), the
// model's layer l is fitted to the real layer reshape_source_layer(l, ...) and carries over what does not
// depend on the shape: the rank-frequency curve by relative rank, the last-use-distance profile, and the
// strongest pairs' phi coefficients; the provenance gets a "reshape" entry (from, to, layer map).
// `source` names the fitted file in the provenance. Throws moesim::Error when a (source) layer has no
// record or top_k is not in [1, experts). `progress`, when given, advances by one per layer fitted.
SynthModel fit_model(const Trace& real, const SynthShape& shape, const FitOptions& opt, uint64_t seed,
                     const std::string& source, Progress* progress = nullptr);

// The real layer a reshaped fit uses for the model's layer `layer`: round(layer * real_layers /
// model_layers) (half up), at most real_layers - 1.
uint32_t reshape_source_layer(uint32_t layer, uint32_t model_layers, uint32_t real_layers);

// Gini coefficient of a popularity (or inclusion-probability) vector: 0 = uniform.
double popularity_gini(const std::vector<double>& p);

struct SynthOptions {
  uint64_t seed = 0;
  uint32_t sequences = 1;
  uint32_t prompt_tokens = 0;  // per sequence
  uint32_t decode_tokens = 0;  // per sequence
  bool logits = false;         // also write router logits and the softmax-renormalised top-k weights
};

// Generates the trace: TraceInfo.synthetic = true, provenance = model.provenance plus the options.
// `progress`, when given, advances by one per (sequence, layer) generated.
Trace generate_trace(const SynthModel& model, const SynthOptions& opt, Progress* progress = nullptr);

}  // namespace moesim::traces
