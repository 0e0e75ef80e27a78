// `moesim buddy profile --trace T -o buddies.json`: BuddyMoE's offline profile (traces/buddy_profile.h):
// per-layer co-activation counts (binary and probability-weighted), Laplace smoothing, q_{j|i}, CFT buddy
// lists B(i; alpha) capped at k_max, and the TAE percentiles that calibrate tau. The runtime reads it with
// `--routing buddy:profile=buddies.json`. Written atomically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "traces/buddy_profile.h"
#include "traces/trace_io.h"

namespace moesim::harness {

struct BuddyProfileArgs {
  std::string trace, out = "-";      // out: the profile's JSON file, or "-" for standard output
  std::string weighting = "binary";  // binary or probability (prob): which co-activation counts give q_{j|i}
  traces::LoadOptions load;
  traces::BuddyOptions opt;  // its probability_weighted is set from `weighting`
};

struct BuddyProfileResult {
  traces::BuddyProfile profile;
  size_t lists = 0;        // experts with at least one buddy
  size_t buddies = 0;      // in all lists together
  bool synthetic = false;  // profiled on a synthetic trace
};

// Checks the options (UsageError: weighting, alpha in (0, 1], k_max >= 1, epsilon finite >= 0), builds the
// profile of the trace and writes it as JSON to a.out.
BuddyProfileResult buddy_profile(const BuddyProfileArgs& a);

}  // namespace moesim::harness
