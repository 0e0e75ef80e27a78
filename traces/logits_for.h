// Synthetic router logits for a real trace (`moesim trace synth --logits-for T`), so that logit-based
// routing (Cache-Prior, Cumsum, Max-Rank beyond the top-k) runs on real routing decisions.
//
// Per record (token, layer) with recorded top-k S (rank order) and weights w (when the trace has them):
//   * every other expert e gets  log f_l(e) + Gumbel     f_l(e) = how often layer l chose e in this trace
//     (at least half a token), so popular experts sit higher -- what trace synth does for its own logits;
//   * the recorded experts sit above all of those, in their recorded order:
//       with weights:    z(S_r) = log w_r + c, c placing z(S_k) above the highest other logit by a gap
//                        E/k (E ~ Exp(1): the spacing of the top order statistics of Gumbel-perturbed
//                        logits, Renyi's representation), so softmax over S gives back exactly the
//                        recorded renormalised weights;
//       without weights: z(S_r) = z(S_{r+1}) + E_r / r  (the same spacing, as trace synth does).
//   The top-k of the logits is therefore the recorded selection in the recorded order: identity routing is
//   unchanged, and lambda = 0 / M = K reproduce the plain routing exactly.
// What is not kept: the probability mass outside the top-k (unknown in a trace of renormalised weights).
// The result is labelled synthetic (TraceInfo::synthetic, provenance.synthetic_part = "logits"), so every
// result computed from it says so. Deterministic: the same seed gives a bit-identical trace.
#pragma once

#include <cstdint>
#include <string>

#include "traces/trace.h"

namespace moesim::traces {

Trace attach_synthetic_logits(const Trace& real, uint64_t seed, const std::string& source);

}  // namespace moesim::traces
