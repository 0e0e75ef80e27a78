// BuddyMoE's offline profile (BuddyMoE, §3.2-3.3; `moesim buddy profile`): per MoE layer, from a profiling
// trace,
//   A(i)          tokens that chose expert i;
//   M_bin(i, j)   tokens that chose both i and j (binary co-activation);
//   M_prob(i, j)  sum over those tokens of min(p~(i), p~(j)), p~ = the top-k weights renormalised (or the
//                 softmax of the logits over the top-k; 1/k each when the trace has neither);
//   q_{j|i}       = M(i, j) / sum_j' M(i, j') over j' != i, after Laplace smoothing M <- M + epsilon (Eq. 4;
//                 M = M_bin or M_prob, `weighting`), q_{i|i} = 0;
//   B(i; alpha)   the CFT buddy list (Eq. 5-6): peers by q_{j|i} descending (ties: lower id), the shortest
//                 prefix whose q sum reaches alpha, capped at k_max; at least one buddy for an expert with
//                 any activity, none for an expert never chosen;
//   TAE percentiles: the per-layer distribution of Token Activating Entropy (Eq. 1), TAE = -sum p~ log p~ /
//                 log k, at percentiles 0..100, for the percentile calibration of tau (§3.1 (iii)).
// Written as JSON (docs/cli-json.md, "buddy profile"); read back by the buddy routing policy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace.h"

namespace moesim::traces {

struct BuddyOptions {
  double alpha = 0.9;
  uint32_t k_max = 8;
  double epsilon = 1e-3;
  bool probability_weighted = false;  // q from M_prob instead of M_bin
};

struct BuddyLayer {
  std::vector<uint64_t> activations;                  // [experts]
  std::vector<std::vector<uint16_t>> buddies;         // [experts] CFT lists
  std::vector<std::vector<double>> buddy_q;           // q_{j|i} of each listed buddy
  std::vector<double> tae_percentiles;                // [101]
  std::vector<std::vector<uint64_t>> coact_bin;       // [experts][experts]
  std::vector<std::vector<double>> coact_prob;        // [experts][experts]
};

struct BuddyProfile {
  uint32_t layers = 0, experts = 0, top_k = 0;
  BuddyOptions options;
  std::string source;
  std::vector<BuddyLayer> layer;
};

// The renormalised top-k probabilities of one token (see above) into `p` (ids.size() entries): from its
// top-k weights `w` when given, else from the softmax of its logits `z` over the top-k, else 1/k each.
void topk_probabilities(std::span<const uint16_t> ids, std::span<const float> w, std::span<const float> z,
                        std::vector<double>& p);
// TAE of Eq. 1 from renormalised probabilities (k = p.size(); 0 when k = 1).
double token_activating_entropy(const std::vector<double>& p);

BuddyProfile build_buddy_profile(const Trace& t, const BuddyOptions& opt, const std::string& source);
Json to_json(const BuddyProfile& p);
// Parses and validates (shape, ids in range, no expert its own buddy); errors name `origin`. Keeps the
// lists and percentiles (co-activation matrices are not needed at runtime and are not read back).
BuddyProfile buddy_profile_from_json(const Json& j, const std::string& origin);

}  // namespace moesim::traces
