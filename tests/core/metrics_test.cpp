#include "core/metrics.h"

#include <gtest/gtest.h>

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
  // Group 1: prefill [0,2], decode [2,3], [3,5]; group 2: prefill [5,6], decode [6,7] for 2 sequences.
  r.steps = {{0, 10, 0, 2}, {1, 1, 2, 3}, {1, 1, 3, 5}, {0, 4, 5, 6}, {1, 2, 6, 7}};
  r.invocations = {{0, 0, 0, 2}, {0, 1, 2, 3}};
  r.makespan = 7;
  r.resources = {ResourceStats{"ssd", 1, 3.5, 2, 100}, ResourceStats{"cpu_workers", 4, 7, 1, 0}};
  r.cache.lookups = 10;
  r.cache.hits = 4;
  r.cache.decode_lookups = 5;
  r.cache.decode_hits = 3;
  const Json m = metrics_json(r);
  EXPECT_EQ(m["ttft"]["count"], 2);
  EXPECT_DOUBLE_EQ(m["ttft"]["mean_s"].get<double>(), 1.5);
  EXPECT_EQ(m["tpot"]["count"], 3);
  EXPECT_DOUBLE_EQ(m["tpot"]["max_s"].get<double>(), 2.0);
  EXPECT_EQ(m["end_to_end"]["count"], 2);
  EXPECT_DOUBLE_EQ(m["end_to_end"]["max_s"].get<double>(), 5.0);  // group 1: 0 -> 5
  EXPECT_DOUBLE_EQ(m["end_to_end"]["p50_s"].get<double>(), 2.0);  // group 2: 5 -> 7
  // Generated: 2 first tokens + 1 + 1 + 2 decode tokens = 6 over 7 s; decode: 4 tokens over 4 s.
  EXPECT_EQ(m["generated_tokens"], 6);
  EXPECT_DOUBLE_EQ(m["tokens_per_s"].get<double>(), 6.0 / 7.0);
  EXPECT_DOUBLE_EQ(m["decode_tokens_per_s"].get<double>(), 1.0);
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
