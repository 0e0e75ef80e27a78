// Rank-based marginal inclusion probabilities f_r (ZipMoE §3.4 "Rank-Based Workload Modeling"): the input
// of the cache planner (core/planning.h). From a lookup stream built with batch B: for each layer, the
// fraction of its invocations in which each expert appears; sorted descending per layer; averaged across
// layers rank by rank. Identities are forgotten: f_1 is "the most popular expert of a layer", whichever
// it is. The list is then rescaled to sum k (the experts an invocation selects) with every f_r below
// traces::kMaxInclusion, as the IPF of Appendix D needs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "traces/lookup_stream.h"

namespace moesim::traces {

// Which invocations to count. Decode is the default: its invocations are what a decode-time cache serves
// (one token step, or one step of a batch group), while a prefill invocation covers a whole prompt and
// selects far more than k experts.
enum class InclusionPhase : uint8_t { kDecode, kPrefill, kAll };
const char* inclusion_phase_name(InclusionPhase p);             // "decode", "prefill", "all"
InclusionPhase parse_inclusion_phase(const std::string& text);  // throws moesim::UsageError

struct RankInclusion {
  std::vector<double> f;         // [experts] f_r, descending, sum k, each < kMaxInclusion
  std::vector<double> measured;  // [experts] the rank average before rescaling (sum = mean_unique)
  uint32_t k = 0;                // top_k when batch = 1; otherwise round(mean_unique), at least 1
  double mean_unique = 0;        // mean unique experts per counted invocation
  uint64_t invocations = 0;      // invocations counted (all layers)
  uint32_t layers = 0;           // layers with at least one counted invocation
  InclusionPhase phase = InclusionPhase::kDecode;
  std::string source;  // "trace (decode invocations, batch 1)" or "given"
};

// Measures f from `stream`. Throws moesim::Error when the phase has no invocation, or when fewer than
// k + 1 ranks were ever selected (no f with every f_r < 1 sums to k).
RankInclusion rank_inclusion(const LookupStream& stream, InclusionPhase phase = InclusionPhase::kDecode);

// A user-given list (any order; sorted here), rescaled to sum k by water-filling (inclusion_from_weights),
// zero-padded to `experts` ranks. Throws moesim::Error naming `origin` on a negative or non-finite value,
// more values than experts, or too few positive values for k.
RankInclusion rank_inclusion_from_values(std::span<const double> values, uint32_t k, uint32_t experts,
                                         const std::string& origin);

// Parses a JSON list of numbers ("[0.9, 0.5, ...]") given inline or in a file `text_or_path` (text that
// starts with '[' is inline). Errors name the file (or "inline list") and what is wrong.
std::vector<double> parse_inclusion_list(const std::string& text_or_path);

}  // namespace moesim::traces
