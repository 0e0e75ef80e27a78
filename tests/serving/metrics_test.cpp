#include "serving/metrics.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace moesim {
namespace {

TEST(Metrics, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const Distribution d = summarize(v);
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_DOUBLE_EQ(d.p50, 50);
  EXPECT_DOUBLE_EQ(d.p90, 90);
  EXPECT_DOUBLE_EQ(d.p99, 99);
  EXPECT_DOUBLE_EQ(d.max, 100);
  const Distribution small = summarize({3.0, 1.0, 2.0});
  EXPECT_DOUBLE_EQ(small.p50, 2.0);  // ceil(1.5) = 2nd value
  EXPECT_DOUBLE_EQ(small.p99, 3.0);
  EXPECT_EQ(summarize({}).count, 0u);
}

TEST(Metrics, StepsGroupsAndUtilization) {
  PipelineResult r;
  // Batch 2: prefill of A [0,2], prefill of B [2,3], the group decodes [3,4] and [4,6] (A and B), then
  // [6,7] (A alone, the longer sequence).
  r.steps = {{0, 10, 0, 2}, {0, 4, 2, 3}, {1, 2, 3, 4}, {1, 2, 4, 6}, {1, 1, 6, 7}};
  r.sequences = {{0, 4}, {1, 3}};
  r.invocations = {{0, 0, 0, 2}, {0, 1, 2, 3}};
  r.makespan = 7;
  r.resources = {ResourceStats{"ssd", 1, 3.5, 2, 100}, ResourceStats{"cpu_workers", 4, 7, 1, 0}};
  r.cache.lookups = 10;
  r.cache.hits = 4;
  r.cache.decode_lookups = 5;
  r.cache.decode_hits = 3;
  const Json m = metrics_json(r);
  EXPECT_EQ(m["ttft"]["count"], 2);
  EXPECT_DOUBLE_EQ(m["ttft"]["mean_s"].get<double>(), 1.5);  // A: 2, B: 1
  EXPECT_EQ(m["tpot"]["count"], 3);
  EXPECT_DOUBLE_EQ(m["tpot"]["max_s"].get<double>(), 2.0);
  EXPECT_EQ(m["end_to_end"]["count"], 2);
  EXPECT_DOUBLE_EQ(m["end_to_end"]["max_s"].get<double>(), 7.0);  // A: 0 -> 7
  EXPECT_DOUBLE_EQ(m["end_to_end"]["p50_s"].get<double>(), 4.0);  // B: 2 -> 6
  // Generated: 2 first tokens + 2 + 2 + 1 decode tokens = 7 over 7 s; decode: 5 tokens over 4 s.
  EXPECT_EQ(m["generated_tokens"], 7);
  EXPECT_DOUBLE_EQ(m["tokens_per_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m["decode_tokens_per_s"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(m["cache"]["hit_rate"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(m["cache"]["decode_hit_rate"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(m["resources"]["ssd"]["utilization"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["resources"]["cpu_workers"]["utilization"].get<double>(), 0.25);
  EXPECT_EQ(m["layer_makespan_decode"]["count"], 1);
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

TEST(Metrics, WhatWasNotMeasuredIsNull) {
  // A prefill-only run: no decode step, no decode lookup. TTFT is measured; TPOT, decode tokens/s and the
  // decode hit rate are null (docs/cli-json.md), not 0, which would read as a measured zero.
  PipelineResult r;
  r.steps = {StepTiming{0, 4, 0.0, 2.0}};
  r.sequences = {{0, 0}};
  r.makespan = 2.0;
  r.cache.lookups = 8;
  r.cache.hits = 2;
  const Json m = metrics_json(r);
  EXPECT_EQ(m["ttft"]["count"], 1);
  EXPECT_EQ(m["tpot"]["count"], 0);
  EXPECT_TRUE(m["tpot"]["mean_s"].is_null());
  EXPECT_TRUE(m["decode_tokens_per_s"].is_null());
  EXPECT_TRUE(m["cache"]["decode_hit_rate"].is_null());
  EXPECT_DOUBLE_EQ(m["cache"]["hit_rate"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(m["tokens_per_s"].get<double>(), 0.5);
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

// Several sequences without prefill, one after another (batch 1): one end-to-end latency per sequence, from
// its first decode step's start to its last one's end -- not one for the whole run -- and no TTFT, since no
// prompt was simulated.
TEST(Metrics, DecodeOnlySequencesEachHaveTheirEndToEnd) {
  PipelineResult r;
  r.steps = {{1, 1, 0, 1}, {1, 1, 1, 3}, {1, 1, 3, 4}, {1, 1, 4, 7}, {1, 1, 7, 8}};
  r.sequences = {{0, 1}, {2, 3}, {4, 4}};  // [0,3], [3,7], [7,8]
  r.makespan = 8;
  const Json m = metrics_json(r);
  EXPECT_EQ(m["end_to_end"]["count"], 3);
  EXPECT_DOUBLE_EQ(m["end_to_end"]["max_s"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(m["end_to_end"]["p50_s"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(m["end_to_end"]["mean_s"].get<double>(), 8.0 / 3.0);
  EXPECT_EQ(m["ttft"]["count"], 0);
  EXPECT_TRUE(m["ttft"]["mean_s"].is_null());
  EXPECT_EQ(m["tpot"]["count"], 5);
}

// Several prefill-only sequences: each one's TTFT and end-to-end latency is its own prefill's duration.
TEST(Metrics, PrefillOnlySequencesEachHaveTheirTtftAndEndToEnd) {
  PipelineResult r;
  r.steps = {{0, 5, 0, 2}, {0, 3, 2, 3}, {0, 8, 3, 7}};
  r.sequences = {{0, 0}, {1, 1}, {2, 2}};
  r.makespan = 7;
  const Json m = metrics_json(r);
  for (const char* d : {"ttft", "end_to_end"}) {
    EXPECT_EQ(m[d]["count"], 3) << d;
    EXPECT_DOUBLE_EQ(m[d]["max_s"].get<double>(), 4.0) << d;
    EXPECT_DOUBLE_EQ(m[d]["p50_s"].get<double>(), 2.0) << d;
    EXPECT_DOUBLE_EQ(m[d]["mean_s"].get<double>(), 7.0 / 3.0) << d;
  }
  EXPECT_EQ(m["tpot"]["count"], 0);
}

TEST(Metrics, ASequenceOutsideTheRunIsAnError) {
  PipelineResult r;
  r.steps = {{1, 1, 0, 1}};
  r.sequences = {{0, 1}};
  EXPECT_THROW(metrics_json(r), Error);
}

}  // namespace
}  // namespace moesim
