// What a lossy routing policy changed, and how long experts stay resident (the Cache-Conditional Experts
// paper, Table 2): a rewrite that lowers the miss rate must show what it cost in routing fidelity. Shared
// by the serving pipeline (run, compare) and the replay.
//
// RoutingDeviation, per (token, layer) selection -- one token's top-k at one layer:
//   changed        the selection's expert SET differs from the router's (reordering alone is no change);
//   replaced mass  the share of the token's top-k router weight that went to experts the rewrite removed:
//                  sum of their weights / sum of the top-k weights. Weights are the trace's top-k weights,
//                  else the softmax of its logits over the top-k; unknown (mass_known = false) when the
//                  trace has neither. Mean and p95 over all selections (unchanged ones count 0), and the
//                  mean over changed ones;
//   rank histogram the router rank (0 = top-1) of every removed expert (replaced or dropped);
//   dropped        slots left empty (pruning), a subset of the removed experts.
// LifetimeStats: one sample per residency that ended (an expert admitted, then evicted), in tokens: the
// token clock (tokens processed: a prefill pass advances it by its prompt tokens, a decode step by the
// sequences it decodes) at eviction minus the clock at admission. Residencies still open at the end are
// right-censored: counted (`censored`), not sampled.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "base/json_io.h"

namespace moesim {

class InvocationTokens;

struct RoutingDeviation {
  static constexpr uint32_t kMassBins = 10000;  // p95 resolution 1e-4
  uint64_t selections = 0;
  uint64_t changed = 0;
  uint64_t removed = 0;  // experts removed from selections (replaced or dropped)
  uint64_t dropped = 0;
  bool mass_known = true;
  double mass_sum = 0;
  std::vector<uint64_t> rank_hist;  // [top_k]
  std::vector<uint64_t> mass_hist;  // [kMassBins + 1]

  // One invocation: the router's selections (`tokens`) against the rewritten ones (`out`, tokens x top_k).
  void add(const InvocationTokens& tokens, std::span<const uint16_t> out);
  void merge(const RoutingDeviation& o);
  double changed_fraction() const { return selections ? static_cast<double>(changed) / selections : 0.0; }
  double mass_mean() const { return selections ? mass_sum / selections : 0.0; }
  double mass_p95() const;
  Json to_json() const;
};

struct LifetimeStats {
  uint64_t count = 0;     // completed residencies
  uint64_t censored = 0;  // still resident at the end
  double mean = 0, m2 = 0;
  void add(double tokens) {
    ++count;
    const double d = tokens - mean;
    mean += d / static_cast<double>(count);
    m2 += d * (tokens - mean);
  }
  double sd() const { return count > 1 ? std::sqrt(m2 / static_cast<double>(count - 1)) : 0.0; }
  Json to_json() const;
};

// Tracks residencies of keys by the token clock (admit/evict), for LifetimeStats.
class LifetimeTracker {
 public:
  explicit LifetimeTracker(size_t keys = 0) : born_(keys, kNotResident) {}
  void reset(size_t keys) { born_.assign(keys, kNotResident); stats_ = {}; }
  void admit(uint32_t key, uint64_t clock) {
    if (born_[key] == kNotResident) born_[key] = clock;
  }
  void evict(uint32_t key, uint64_t clock) {
    if (born_[key] == kNotResident) return;
    stats_.add(static_cast<double>(clock - born_[key]));
    born_[key] = kNotResident;
  }
  // Counts the residencies still open (call once, at the end).
  LifetimeStats finish() {
    LifetimeStats s = stats_;
    for (uint64_t b : born_) s.censored += b != kNotResident;
    return s;
  }

 private:
  static constexpr uint64_t kNotResident = UINT64_MAX;
  std::vector<uint64_t> born_;
  LifetimeStats stats_;
};

}  // namespace moesim
