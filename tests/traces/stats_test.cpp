// Trace statistics on hand-made traces, every expected value worked out by hand in the comments.
#include "traces/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace moesim::traces {
namespace {

struct Rec {
  uint32_t seq;
  Phase phase;
  uint32_t step, layer;
  std::vector<uint32_t> experts;
};

Trace build(uint32_t layers, uint32_t experts, uint32_t k, const std::vector<Rec>& recs) {
  TraceInfo info;
  info.model = "hand";
  info.layers = layers;
  info.experts = experts;
  info.top_k = k;
  TraceBuilder tb(info, false, false, "hand");
  uint64_t line = 0;
  for (const Rec& r : recs) tb.add(r.seq, r.phase, r.step, r.layer, r.experts, {}, {}, ++line);
  return std::move(tb).finish();
}

// Layer 0: tokens {0,1} {0,2} {0,1} {3,1}; layer 1: {2,3} four times. One sequence, decode only.
Trace decode_trace() {
  const Phase D = Phase::kDecode;
  return build(2, 4, 2,
               {{0, D, 0, 0, {0, 1}},
                {0, D, 0, 1, {2, 3}},
                {0, D, 1, 0, {0, 2}},
                {0, D, 1, 1, {3, 2}},
                {0, D, 2, 0, {0, 1}},
                {0, D, 2, 1, {2, 3}},
                {0, D, 3, 0, {3, 1}},
                {0, D, 3, 1, {2, 3}}});
}

TEST(TraceStats, EntropyAndRankFrequencyByHand) {
  const TraceStats s = compute_stats(decode_trace());
  ASSERT_EQ(s.layers.size(), 2u);
  const LayerStats& l0 = s.layers[0];
  EXPECT_EQ(l0.tokens, 4u);
  EXPECT_EQ(l0.distinct_experts, 4u);
  // Counts 3, 3, 1, 1 over 8 slots: H = 2 (3/8) log2(8/3) + 2 (1/8) log2(8).
  EXPECT_NEAR(l0.entropy_bits, 0.75 * std::log2(8.0 / 3.0) + 0.75, 1e-12);
  EXPECT_EQ(l0.rank_experts, (std::vector<uint32_t>{0, 1, 2, 3}));  // ties broken by id
  EXPECT_EQ(l0.rank_frequency, (std::vector<double>{0.75, 0.75, 0.25, 0.25}));
  const LayerStats& l1 = s.layers[1];
  EXPECT_NEAR(l1.entropy_bits, 1.0, 1e-12);  // experts 2 and 3, half each
  EXPECT_EQ(l1.rank_experts[0], 2u);
  EXPECT_EQ(l1.rank_frequency, (std::vector<double>{1.0, 1.0, 0.0, 0.0}));
  EXPECT_EQ(l1.distinct_experts, 2u);
  EXPECT_NEAR(s.entropy_bits_mean, (l0.entropy_bits + 1.0) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(s.entropy_bits_max, 2.0);
  EXPECT_EQ(s.decode_tokens, 4u);
  EXPECT_EQ(s.sequences, 1u);
}

TEST(TraceStats, RepeatRateByHand) {
  const TraceStats s = compute_stats(decode_trace());
  // Layer 0 consecutive overlaps: {0}, {0}, {1} -> 3 shared of 3 pairs x 2 slots.
  EXPECT_EQ(s.layers[0].repeat_pairs, 3u);
  EXPECT_DOUBLE_EQ(s.layers[0].repeat_rate(), 0.5);
  EXPECT_DOUBLE_EQ(s.layers[1].repeat_rate(), 1.0);
  EXPECT_DOUBLE_EQ(s.repeat_rate, (3.0 + 6.0) / 12.0);
}

TEST(TraceStats, ReuseDistancesByHand) {
  const TraceStats s = compute_stats(decode_trace());
  // Layer 0: expert 0 at invocations 0,1,2 (distances 1, 1); expert 1 at 0,2,3 (2, 1); 2 and 3 once.
  const ReuseStats& r0 = s.layers[0].reuse;
  EXPECT_EQ(r0.lookups, 8u);
  EXPECT_EQ(r0.reused, 4u);
  EXPECT_EQ(r0.never_reused, 4u);  // last uses of 0 and 1, the only uses of 2 and 3
  EXPECT_DOUBLE_EQ(r0.never_reused_fraction(), 0.5);
  // Distances {1, 1, 1, 2}: nearest rank p50 = 2nd = 1, p90 = 4th = 2, p99 = 2.
  EXPECT_EQ(r0.p50, 1u);
  EXPECT_EQ(r0.p90, 2u);
  EXPECT_EQ(r0.p99, 2u);
  const ReuseStats& r1 = s.layers[1].reuse;
  EXPECT_EQ(r1.reused, 6u);
  EXPECT_EQ(r1.p99, 1u);
  // Pooled: 10 distances, nine 1s and one 2 -> p90 = 9th = 1, p99 = 10th = 2.
  EXPECT_EQ(s.reuse.lookups, 16u);
  EXPECT_EQ(s.reuse.p90, 1u);
  EXPECT_EQ(s.reuse.p99, 2u);
}

TEST(TraceStats, CoActivationPairsByHand) {
  StatsOptions o;
  o.top_pairs = 2;
  const TraceStats s = compute_stats(decode_trace(), o);
  const auto& tp = s.layers[0].top_pairs;
  ASSERT_EQ(tp.size(), 2u);
  // (0,1) twice; lift = 2 * 4 / (3 * 3). Then count-1 pairs (0,2) lift 4/3 and (1,3) lift 4/3:
  // tie on lift, smaller ids first -> (0,2).
  EXPECT_EQ(tp[0].a, 0u);
  EXPECT_EQ(tp[0].b, 1u);
  EXPECT_EQ(tp[0].count, 2u);
  EXPECT_NEAR(tp[0].lift, 8.0 / 9.0, 1e-12);
  EXPECT_EQ(tp[1].a, 0u);
  EXPECT_EQ(tp[1].b, 2u);
  EXPECT_NEAR(tp[1].lift, 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(s.layers[1].top_pairs[0].lift, 1.0, 1e-12);  // 2 and 3 always together: 4 * 4 / (4 * 4)
  // The sparse counts behind them: (0,1) x2, (0,2) x1, (1,3) x1, sorted by (a, b).
  const std::vector<PairCount> pc = pair_counts(decode_trace(), 0);
  ASSERT_EQ(pc.size(), 3u);
  EXPECT_EQ(pc[0].a, 0u);
  EXPECT_EQ(pc[0].b, 1u);
  EXPECT_EQ(pc[0].count, 2u);
  EXPECT_EQ(pc[2].a, 1u);
  EXPECT_EQ(pc[2].b, 3u);
  EXPECT_EQ(pair_count(pc, 1, 0), 2u);
  EXPECT_EQ(pair_count(pc, 3, 1), 1u);
  EXPECT_EQ(pair_count(pc, 2, 3), 0u);
}

TEST(TraceStats, PrefillIsOneInvocationAndRepeatsStayInsideASequence) {
  const Phase P = Phase::kPrefill, D = Phase::kDecode;
  // Sequence 0: prompt {0,1} {1,2} at the single layer, then decode {1,3}, {3,0}.
  // Sequence 1: decode {3,0} only -- it must not be compared with sequence 0's last token.
  const Trace t = build(1, 4, 2,
                        {{0, P, 0, 0, {0, 1}},
                         {0, P, 1, 0, {1, 2}},
                         {0, D, 0, 0, {1, 3}},
                         {0, D, 1, 0, {3, 0}},
                         {1, D, 0, 0, {3, 0}}});
  const TraceStats s = compute_stats(t);
  const LayerStats& l = s.layers[0];
  EXPECT_EQ(l.tokens, 5u);
  EXPECT_EQ(s.prefill_tokens, 2u);
  EXPECT_EQ(s.decode_tokens, 3u);
  EXPECT_EQ(l.repeat_pairs, 1u);  // only seq 0's decode 0 -> 1
  EXPECT_DOUBLE_EQ(l.repeat_rate(), 0.5);
  // Invocations: prefill {0,1,2} (one lookup each), d0 {1,3}, d1 {3,0}, seq1 d0 {3,0}: 9 lookups.
  // Distances: 1: 0->1 (1); 0: 0->2 (2), 2->3 (1); 3: 1->2 (1), 2->3 (1). Never reused: 2, 1@1, 3@3, 0@3.
  EXPECT_EQ(l.reuse.lookups, 9u);
  EXPECT_EQ(l.reuse.reused, 5u);
  EXPECT_EQ(l.reuse.never_reused, 4u);
  EXPECT_EQ(l.reuse.p50, 1u);
  EXPECT_EQ(l.reuse.p90, 2u);
  // Counts: 0 x3, 1 x3, 2 x1, 3 x3 over 10 slots.
  EXPECT_NEAR(l.entropy_bits, 3 * 0.3 * std::log2(1 / 0.3) + 0.1 * std::log2(10.0), 1e-12);
}

TEST(TraceStats, JsonStartsWithTheHeaderAndIsDeterministic) {
  const Trace t = decode_trace();
  const Json a = stats_to_json(compute_stats(t), Json{{"command", "x"}}, Json::object());
  const Json b = stats_to_json(compute_stats(t), Json{{"command", "x"}}, Json::object());
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_EQ(a.begin().key(), "header");
  EXPECT_EQ(a["layers"][0]["rank_frequency"]["counts"], Json::parse("[3,3,1,1]"));
  EXPECT_EQ(a["layers"][0]["reuse"]["p90"], 2);
  EXPECT_EQ(a["layers"][1]["repeat"]["rate"], 1.0);
  EXPECT_EQ(a["summary"]["reuse"]["lookups"], 16);
  const std::string text = stats_to_text(compute_stats(t));
  EXPECT_NE(text.find("entropy"), std::string::npos);
  EXPECT_NE(text.find("0+1 (2, 0.89)"), std::string::npos);
}

}  // namespace
}  // namespace moesim::traces
