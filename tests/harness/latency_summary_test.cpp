// The latency summary validate and calibrate compare (harness/latency_summary.h), on worked examples: the
// quantile interpolates between order statistics, TPOT and TTFT are the means of the decode and prefill
// steps, the layer figures the median and p95 of the invocations; an op's kind label names the part read.
#include "harness/latency_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace moesim::harness {
namespace {

TEST(LatencySummary, TheQuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> v = {4, 1, 3, 2};  // unsorted: sorted 1 2 3 4
  EXPECT_DOUBLE_EQ(quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 1), 4);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);    // position 1.5
  EXPECT_DOUBLE_EQ(quantile(v, 0.95), 3.85);  // position 2.85: 3 + 0.85 x (4 - 3)
  EXPECT_DOUBLE_EQ(quantile(v, 1.0 / 3), 2);  // position 1 exactly
  EXPECT_DOUBLE_EQ(quantile({7}, 0.95), 7);
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(LatencySummary, StepsAndInvocationsGiveTpotTtftAndTheLayerFigures) {
  PipelineResult r;
  // Two prefill steps of 0.5 s and 1.5 s; three decode steps of 0.1, 0.2 and 0.6 s.
  r.steps = {{0, 8, 0.0, 0.5}, {0, 8, 0.5, 2.0}, {1, 1, 2.0, 2.1}, {1, 1, 2.1, 2.3}, {1, 1, 2.3, 2.9}};
  // Invocations of 1, 2, 3, 4 and 10 ms.
  for (double ms : {3.0, 1.0, 10.0, 2.0, 4.0}) r.invocations.push_back({0, 1, 0, 1.0, 1.0 + ms / 1000});
  const LatencySummary s = latency_summary_of(r);
  EXPECT_NEAR(s.ttft, 1.0, 1e-12);
  EXPECT_NEAR(s.tpot, 0.3, 1e-12);
  EXPECT_NEAR(s.layer_median, 0.003, 1e-12);
  EXPECT_NEAR(s.layer_p95, 0.004 + 0.8 * 0.006, 1e-12);  // position 3.8 of 1 2 3 4 10 ms
}

TEST(LatencySummary, ARunWithoutDecodeStepsHasNoTpot) {
  PipelineResult r;
  r.steps = {{0, 4, 0.0, 0.25}};
  const LatencySummary s = latency_summary_of(r);
  EXPECT_DOUBLE_EQ(s.ttft, 0.25);
  EXPECT_TRUE(std::isnan(s.tpot));
  EXPECT_TRUE(std::isnan(s.layer_median));
  EXPECT_TRUE(std::isnan(s.layer_p95));
}

TEST(LatencySummary, AnOpsKindLabelNamesThePartReadAndAFusedRead) {
  Op read;
  read.kind = OpKind::kSsdRead;
  read.part = TensorPart::kE;
  EXPECT_EQ(op_kind_label(read), "ssd_read e");
  read.part = TensorPart::kWhole;
  EXPECT_EQ(op_kind_label(read), "ssd_read whole");
  Op dec;
  dec.kind = OpKind::kDecompress;
  EXPECT_EQ(op_kind_label(dec), "decompress");
  dec.read_bytes = 4096;
  EXPECT_EQ(op_kind_label(dec), "decompress + read e");
  Op compute;
  compute.kind = OpKind::kExpertCompute;
  compute.part = TensorPart::kSm;  // only a read names its part
  EXPECT_EQ(op_kind_label(compute), "expert_compute");
}

TEST(LatencySummary, PlanRatiosAreThePlansOrNothing) {
  EXPECT_EQ(plan_ratios(Json{{"ratios", "F=0.8,E=0.2"}, {"k", 8}}), "F=0.8,E=0.2");
  EXPECT_EQ(plan_ratios(Json(nullptr)), "");
  EXPECT_EQ(plan_ratios(Json{{"k", 8}}), "");
}

}  // namespace
}  // namespace moesim::harness
