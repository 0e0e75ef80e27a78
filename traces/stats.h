// Trace statistics (`moesim trace stats`, schema in docs/trace-stats.md). Every number is a pure,
// deterministic function of the trace. Definitions (per MoE layer l, T_l = records at layer l = tokens
// that went through layer l, k = top_k):
//   * usage count c_e: (record, slot) pairs of layer l naming expert e; sum_e c_e = k T_l.
//   * activation entropy: -sum_e p_e log2 p_e with p_e = c_e / (k T_l); at most log2(experts).
//   * rank-frequency curve: counts sorted descending (ties by expert id); the marginal inclusion probability
//     of rank r is f_r = c_(r) / T_l (the fraction of tokens that used that expert; sum_r f_r = k).
//   * reuse distance: on the batch-1 lookup stream (traces/lookup_stream.h), for each lookup that has a
//     previous lookup of the same expert, the number of invocations of layer l between them (1 = the
//     previous invocation of that layer used it too). Quantiles are nearest-rank (the smallest d with at
//     least a fraction p of the distances <= d). "never reused" = lookups with no later lookup of the same
//     expert, over all lookups.
//   * next-token repeat rate: over decode records whose sequence has a record at the same layer for the
//     previous decode step, |E_t intersect E_{t-1}| / k, averaged over those pairs.
//   * co-activation: c_ab = tokens of layer l that chose both a and b; lift = P(a,b) / (P(a) P(b))
//     = c_ab T_l / (c_a c_b). Top pairs are ranked by c_ab (ties: larger lift, then smaller ids).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "traces/trace.h"

namespace moesim::traces {

struct ReuseStats {
  uint64_t lookups = 0;
  uint64_t reused = 0;                    // lookups with a previous use (distances counted)
  uint64_t never_reused = 0;              // lookups with no next use
  std::optional<uint32_t> p50, p90, p99;  // empty when no distance was counted
  double never_reused_fraction() const { return lookups ? static_cast<double>(never_reused) / lookups : 0.0; }
};

struct PairStat {
  uint32_t a = 0, b = 0;  // a < b
  uint64_t count = 0;
  double lift = 0;
};

struct LayerStats {
  uint32_t layer = 0;
  uint32_t top_k = 0;
  uint64_t tokens = 0;  // records at this layer
  uint32_t distinct_experts = 0;
  double entropy_bits = 0;
  std::vector<uint64_t> counts;        // per expert id
  std::vector<uint32_t> rank_experts;  // expert ids by descending count
  std::vector<double> rank_frequency;  // counts[rank_experts[r]] / tokens
  ReuseStats reuse;
  uint64_t repeat_pairs = 0;   // (token, previous decode token) pairs compared
  uint64_t repeat_hits = 0;    // experts shared over those pairs
  double repeat_rate() const;  // hits / (pairs * k); 0 when no pair
  std::vector<PairStat> top_pairs;
};

struct TraceStats {
  TraceInfo info;
  uint64_t records = 0;
  uint64_t sequences = 0;
  uint64_t prefill_tokens = 0;
  uint64_t decode_tokens = 0;
  double entropy_bits_mean = 0;  // mean over layers with tokens
  double entropy_bits_max = 0;   // log2(experts)
  double repeat_rate = 0;        // pooled over layers
  uint64_t repeat_pairs = 0;
  ReuseStats reuse;  // pooled over layers
  std::vector<LayerStats> layers;
};

struct StatsOptions {
  uint32_t top_pairs = 10;  // per layer
};

TraceStats compute_stats(const Trace& trace, const StatsOptions& opt = {});

// Co-activation counts of one layer: every pair (a < b) chosen together by at least one token, with its
// count, sorted by (a, b). Sparse, so memory follows the trace, not experts^2.
struct PairCount {
  uint32_t a = 0, b = 0;
  uint32_t count = 0;
};
std::vector<PairCount> pair_counts(const Trace& trace, uint32_t layer);
// The count of (a, b) (either order) in a pair_counts() result; 0 when absent.
uint32_t pair_count(const std::vector<PairCount>& pc, uint32_t a, uint32_t b);

// JSON (docs/trace-stats.md): {"header": header, "trace": ..., "summary": ..., "layers": [...]}.
// `trace` is the common trace description (traces/trace_summary.h), written under "trace".
Json stats_to_json(const TraceStats& s, Json header, Json trace);
// The human-readable report: a summary and one table row per layer.
std::string stats_to_text(const TraceStats& s);

}  // namespace moesim::traces
