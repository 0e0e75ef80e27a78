// Rank-based inclusion probabilities (traces/rank_inclusion.h) on hand-built lookup streams: counts per
// layer, sorted per layer, averaged by rank, rescaled to sum k; the phase filter; k for batches; the
// user-given list and its errors.
#include "traces/rank_inclusion.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <numeric>

#include "base/error.h"
#include "tests/error_of.h"
#include "traces/ipf.h"

namespace moesim::traces {
namespace {

using test::error_of;

// A stream of invocations given as (layer, phase, experts).
struct Inv {
  uint16_t layer;
  Phase phase;
  std::vector<uint32_t> experts;
};

LookupStream make_stream(uint32_t layers, uint32_t experts, uint32_t top_k, uint32_t batch,
                         const std::vector<Inv>& invs) {
  LookupStream s;
  s.layers = layers;
  s.experts = experts;
  s.top_k = top_k;
  s.batch = batch;
  s.inv_begin.push_back(0);
  for (const Inv& v : invs) {
    s.inv_layer.push_back(v.layer);
    s.inv_phase.push_back(static_cast<uint8_t>(v.phase));
    for (uint32_t e : v.experts) {
      s.key.push_back(v.layer * experts + e);
      s.tokens.push_back(1);
      s.next_use.push_back(kNoNextUse);
    }
    s.inv_begin.push_back(static_cast<uint32_t>(s.key.size()));
  }
  return s;
}

const Phase D = Phase::kDecode, P = Phase::kPrefill;

TEST(RankInclusion, CountsSortsPerLayerAndAveragesByRank) {
  // 2 layers x 5 experts, top-2, 4 decode invocations per layer.
  // Layer 0 counts: e0 4, e1 2, e2 1, e3 1, e4 0 -> sorted 1, .5, .25, .25, 0
  // Layer 1 counts: e4 3, e2 3, e0 2, e1 0, e3 0 -> sorted .75, .75, .5, 0, 0
  const LookupStream s = make_stream(2, 5, 2, 1,
                                     {{0, D, {0, 1}},
                                      {0, D, {0, 1}},
                                      {0, D, {0, 2}},
                                      {0, D, {0, 3}},
                                      {1, D, {4, 2}},
                                      {1, D, {4, 2}},
                                      {1, D, {4, 0}},
                                      {1, D, {2, 0}},
                                      {0, P, {0, 1, 2, 3, 4}}});  // prefill: not counted by default
  const RankInclusion r = rank_inclusion(s);
  EXPECT_EQ(r.k, 2u);
  EXPECT_EQ(r.invocations, 8u);
  EXPECT_EQ(r.layers, 2u);
  EXPECT_DOUBLE_EQ(r.mean_unique, 2.0);
  const std::vector<double> want = {0.875, 0.625, 0.375, 0.125, 0.0};
  ASSERT_EQ(r.measured.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(r.measured[i], want[i]) << i;
  // Already sums to k with every value below the cap: the rescaling leaves it as it is.
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(r.f[i], want[i], 1e-12) << i;
}

TEST(RankInclusion, RescalesToKWithEveryValueBelowTheCap) {
  // Expert 0 appears in every invocation (f = 1): water-filling caps it and spreads the rest.
  const LookupStream s =
      make_stream(1, 4, 2, 1, {{0, D, {0, 1}}, {0, D, {0, 2}}, {0, D, {0, 3}}, {0, D, {0, 1}}});
  const RankInclusion r = rank_inclusion(s);
  EXPECT_DOUBLE_EQ(r.measured[0], 1.0);
  EXPECT_DOUBLE_EQ(r.f[0], kMaxInclusion);
  EXPECT_NEAR(std::accumulate(r.f.begin(), r.f.end(), 0.0), 2.0, 1e-12);
  for (size_t i = 1; i < r.f.size(); ++i) EXPECT_LE(r.f[i], r.f[i - 1]);
  EXPECT_GT(r.f[1], r.measured[1]);  // the capped mass went to the others
}

TEST(RankInclusion, BatchesUseTheRoundedMeanOfUniqueExperts) {
  // Batch 2, top-2: invocations select 3, 4, 3, 4, 4 unique experts: mean 3.6 -> k = 4.
  const LookupStream s = make_stream(1, 8, 2, 2,
                                     {{0, D, {0, 1, 2}},
                                      {0, D, {0, 1, 2, 3}},
                                      {0, D, {0, 4, 5}},
                                      {0, D, {0, 1, 6, 7}},
                                      {0, D, {1, 2, 3, 4}}});
  const RankInclusion r = rank_inclusion(s);
  EXPECT_DOUBLE_EQ(r.mean_unique, 3.6);
  EXPECT_EQ(r.k, 4u);
  EXPECT_NEAR(std::accumulate(r.f.begin(), r.f.end(), 0.0), 4.0, 1e-12);
  EXPECT_NE(r.source.find("batch 2"), std::string::npos);
}

TEST(RankInclusion, PhaseFilterAndEmptyPhase) {
  const LookupStream s = make_stream(1, 6, 2, 1, {{0, P, {0, 1, 2, 3}}, {0, P, {0, 1, 2, 4}}});
  EXPECT_NE(error_of([&] { rank_inclusion(s); }).find("no decode invocations"), std::string::npos);
  const RankInclusion r = rank_inclusion(s, InclusionPhase::kPrefill);
  EXPECT_EQ(r.invocations, 2u);
  EXPECT_EQ(r.k, 4u);  // prefill: the mean of unique experts, not top_k
  EXPECT_DOUBLE_EQ(r.measured[0], 1.0);
  EXPECT_DOUBLE_EQ(r.measured[3], 0.5);
  EXPECT_EQ(parse_inclusion_phase("all"), InclusionPhase::kAll);
  EXPECT_THROW(parse_inclusion_phase("both"), UsageError);
}

TEST(RankInclusion, TooFewSelectedRanksIsAnError) {
  // Only experts 0 and 1 ever selected with top-2: no f below 1 sums to 2.
  const LookupStream s = make_stream(1, 4, 2, 1, {{0, D, {0, 1}}, {0, D, {1, 0}}});
  EXPECT_NE(error_of([&] { rank_inclusion(s); }).find("need at least 3"), std::string::npos);
}

TEST(RankInclusion, GivenValuesAreSortedPaddedAndRescaled) {
  const std::vector<double> v = {0.1, 0.6, 0.3};
  const RankInclusion r = rank_inclusion_from_values(v, 1, 5, "given");
  ASSERT_EQ(r.f.size(), 5u);
  EXPECT_NEAR(r.f[0], 0.6, 1e-12);
  EXPECT_NEAR(r.f[1], 0.3, 1e-12);
  EXPECT_NEAR(r.f[2], 0.1, 1e-12);
  EXPECT_EQ(r.f[4], 0.0);
  const RankInclusion r2 = rank_inclusion_from_values(v, 2, 5, "given");
  EXPECT_DOUBLE_EQ(r2.f[0], kMaxInclusion);  // 2 * 0.6 would exceed 1
  EXPECT_NEAR(std::accumulate(r2.f.begin(), r2.f.end(), 0.0), 2.0, 1e-12);
  const std::vector<double> neg = {0.5, -0.1, 0.2};
  EXPECT_NE(error_of([&] {
              rank_inclusion_from_values(neg, 1, 5, "f.json");
            }).find("f.json: inclusion probability 2"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              rank_inclusion_from_values(v, 1, 2, "f.json");
            }).find("3 inclusion probabilities for 2"),
            std::string::npos);
}

TEST(RankInclusion, ParsesInlineAndFileListsWithClearErrors) {
  EXPECT_EQ(parse_inclusion_list("[0.5, 0.25, 0.25]"), (std::vector<double>{0.5, 0.25, 0.25}));
  EXPECT_NE(error_of([] { parse_inclusion_list("[0.5, \"x\"]"); }).find("[1]: expected a finite number, found the string \"x\""),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_inclusion_list("[]"); }).find("non-empty JSON list"), std::string::npos);
  const std::string path = ::testing::TempDir() + "/rank_inclusion_test.json";
  { std::ofstream(path) << "{\"f\": [0.5]}"; }
  EXPECT_NE(error_of([&] { parse_inclusion_list(path); }).find(path), std::string::npos);
  EXPECT_THROW(parse_inclusion_list(path + ".missing"), Error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace moesim::traces
