// TraceBuilder: canonical order, duplicate cells, missing cells, token counts, next-use index (checked
// against a brute-force forward scan), with_info.
#include "traces/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/rng.h"
#include "tests/error_of.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

using test::error_of;

void add(TraceBuilder& b, uint32_t seq, Phase ph, uint32_t step, uint32_t layer, std::vector<uint32_t> ex,
         uint64_t line) {
  b.add(seq, ph, step, layer, ex, {}, {}, line);
}

// Brute force: the next record in canonical order with the same (layer, expert), as a flat slot index.
std::vector<uint32_t> brute_next_use(const Trace& t) {
  const uint32_t k = t.info().top_k;
  std::vector<uint32_t> out(t.slots(), kNoNextUse);
  for (size_t r = 0; r < t.records(); ++r)
    for (uint32_t s = 0; s < k; ++s) {
      const uint16_t e = t.experts(r)[s];
      for (size_t r2 = r + 1; r2 < t.records() && out[r * k + s] == kNoNextUse; ++r2)
        for (uint32_t s2 = 0; s2 < k; ++s2)
          if (t.layer(r2) == t.layer(r) && t.experts(r2)[s2] == e) {
            out[r * k + s] = static_cast<uint32_t>(r2 * k + s2);
            break;
          }
    }
  return out;
}

Trace small_trace() {
  TraceInfo info;
  info.layers = 2;
  info.experts = 4;
  TraceBuilder b(info, false, false, "small");
  add(b, 0, Phase::kDecode, 1, 0, {1, 2}, 1);
  add(b, 0, Phase::kPrefill, 0, 1, {0, 3}, 2);
  add(b, 0, Phase::kPrefill, 1, 0, {2, 3}, 3);
  add(b, 0, Phase::kPrefill, 0, 0, {0, 1}, 4);
  add(b, 0, Phase::kDecode, 0, 1, {3, 0}, 5);
  add(b, 0, Phase::kDecode, 0, 0, {1, 0}, 6);
  add(b, 1, Phase::kDecode, 0, 0, {2, 1}, 7);
  return std::move(b).finish();
}

TEST(TraceBuilder, SortsIntoCanonicalOrder) {
  const Trace t = small_trace();
  ASSERT_EQ(t.records(), 7u);
  EXPECT_EQ(t.info().top_k, 2u);
  // seq 0 prefill by (layer, step), then seq 0 decode by (step, layer), then seq 1.
  const std::vector<std::tuple<uint32_t, Phase, uint32_t, uint16_t>> want = {
      {0, Phase::kPrefill, 0, 0}, {0, Phase::kPrefill, 1, 0}, {0, Phase::kPrefill, 0, 1},
      {0, Phase::kDecode, 0, 0},  {0, Phase::kDecode, 0, 1},  {0, Phase::kDecode, 1, 0},
      {1, Phase::kDecode, 0, 0}};
  for (size_t r = 0; r < t.records(); ++r)
    EXPECT_EQ(std::make_tuple(t.seq(r), t.phase(r), t.step(r), t.layer(r)), want[r]) << "record " << r;
  EXPECT_EQ(std::vector<uint16_t>(t.experts(0).begin(), t.experts(0).end()), (std::vector<uint16_t>{0, 1}));
  EXPECT_EQ(std::vector<uint16_t>(t.experts(4).begin(), t.experts(4).end()), (std::vector<uint16_t>{3, 0}));
}

TEST(TraceBuilder, CountsMissingCellsAndTokens) {
  const Trace t = small_trace();
  // prefill seq 0: 2 steps x 2 layers - 3; decode seq 0: 2 x 2 - 3; decode seq 1: 1 x 2 - 1.
  EXPECT_EQ(t.info().missing_cells, 3u);
  EXPECT_EQ(t.tokens(Phase::kPrefill), 2u);
  EXPECT_EQ(t.tokens(Phase::kDecode), 3u);
  EXPECT_EQ(t.sequence_ids(), (std::vector<uint32_t>{0, 1}));
}

TEST(TraceBuilder, NextUseMatchesBruteForce) {
  const Trace t = small_trace();
  const auto want = brute_next_use(t);
  EXPECT_EQ(std::vector<uint32_t>(t.columns().next_use.begin(), t.columns().next_use.end()), want);
  // Spot check by hand: record 0 = prefill L0 [0,1]; expert 1 at L0 is next used by record 1? no (2,3);
  // by record 3 (decode step 0, L0: [1,0]) slot 0 -> flat 6.
  EXPECT_EQ(t.next_use(0)[1], 6u);
  EXPECT_EQ(t.next_use(0)[0], 7u);  // expert 0 at L0 -> record 3 slot 1
}

TEST(TraceBuilder, NextUseMatchesBruteForceOnRandomTraces) {
  Rng rng(12345);
  for (int trial = 0; trial < 20; ++trial) {
    TraceInfo info;
    info.layers = 1 + static_cast<uint32_t>(rng.below(4));
    info.experts = 3 + static_cast<uint32_t>(rng.below(6));
    const uint32_t k = 1 + static_cast<uint32_t>(rng.below(3));
    TraceBuilder b(info, false, false, "random");
    uint64_t line = 0;
    for (uint32_t seq = 0; seq < 2; ++seq)
      for (Phase ph : {Phase::kPrefill, Phase::kDecode})
        for (uint32_t step = 0; step < 4; ++step)
          for (uint32_t l = 0; l < info.layers; ++l) {
            if (rng.below(5) == 0) continue;  // a missing cell
            std::vector<uint32_t> ex;
            while (ex.size() < k) {
              const auto e = static_cast<uint32_t>(rng.below(info.experts));
              if (std::find(ex.begin(), ex.end(), e) == ex.end()) ex.push_back(e);
            }
            add(b, seq, ph, step, l, ex, ++line);
          }
    if (b.records() == 0) continue;
    const Trace t = std::move(b).finish();
    EXPECT_EQ(std::vector<uint32_t>(t.columns().next_use.begin(), t.columns().next_use.end()),
              brute_next_use(t))
        << "trial " << trial;
  }
}

TEST(TraceBuilder, RejectsDuplicateCellsNamingBothLines) {
  TraceBuilder b(TraceInfo{}, false, false, "dup.jsonl");
  add(b, 0, Phase::kDecode, 3, 1, {1, 2}, 4);
  add(b, 0, Phase::kDecode, 3, 1, {2, 3}, 9);
  const std::string m = error_of([&] { (void)std::move(b).finish(); });
  EXPECT_THAT(m, HasSubstr("dup.jsonl:9"));
  EXPECT_THAT(m, HasSubstr("duplicate record"));
  EXPECT_THAT(m, HasSubstr("line 4"));
}

TEST(TraceBuilder, ValidatesRecordsAsTheyArrive) {
  TraceInfo info;
  info.layers = 2;
  info.experts = 4;
  TraceBuilder b(info, true, false, "f");
  const std::vector<uint32_t> ok = {0, 1};
  const std::vector<float> w = {0.5f, 0.5f};
  b.add(0, Phase::kDecode, 0, 0, ok, w, {}, 1);
  EXPECT_THAT(error_of([&] {
                b.add(0, Phase::kDecode, 1, 0, std::vector<uint32_t>{0, 1, 2}, w, {}, 2);
              }),
              HasSubstr("f:2: field 'experts': top-k mismatch"));
  EXPECT_THAT(error_of([&] { b.add(0, Phase::kDecode, 1, 2, ok, w, {}, 3); }),
              HasSubstr("f:3: field 'layer'"));
  EXPECT_THAT(error_of([&] {
                b.add(0, Phase::kDecode, 1, 0, std::vector<uint32_t>{0, 4}, w, {}, 4);
              }),
              HasSubstr("f:4: field 'experts': expert id 4 outside [0, 4)"));
  EXPECT_THAT(error_of([&] {
                b.add(0, Phase::kDecode, 1, 0, std::vector<uint32_t>{1, 1}, w, {}, 5);
              }),
              HasSubstr("appears twice"));
  const std::vector<float> nan = {0.5f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THAT(error_of([&] { b.add(0, Phase::kDecode, 1, 0, ok, nan, {}, 6); }),
              HasSubstr("f:6: field 'weights'"));
  EXPECT_THAT(error_of([&] { b.add(0, Phase::kDecode, 1, 0, ok, {}, {}, 7); }),
              HasSubstr("f:7: field 'weights'"));
  EXPECT_EQ(b.records(), 1u);  // nothing half-added
}

TEST(TraceBuilder, InfersShapeAndRejectsEmpty) {
  TraceBuilder b(TraceInfo{}, false, false, "g");
  add(b, 0, Phase::kDecode, 0, 2, {5, 1}, 1);
  const Trace t = std::move(b).finish();
  EXPECT_EQ(t.info().layers, 3u);
  EXPECT_EQ(t.info().experts, 6u);
  EXPECT_EQ(t.info().missing_cells, 2u);  // layers 0 and 1 of decode step 0
  TraceBuilder empty(TraceInfo{}, false, false, "e");
  EXPECT_THAT(error_of([&] { (void)std::move(empty).finish(); }), HasSubstr("no routing records"));
}

TEST(TraceBuilder, WithInfoWidensShapeAndRechecksIds) {
  const Trace t = small_trace();
  TraceInfo wider = t.info();
  wider.layers = 3;
  wider.experts = 8;
  const Trace w = with_info(t, wider);
  EXPECT_EQ(w.info().layers, 3u);
  EXPECT_EQ(w.info().missing_cells, 3u + 2 + 2 + 1);  // one more layer per step
  TraceInfo narrow = t.info();
  narrow.experts = 3;
  EXPECT_THAT(error_of([&] { (void)with_info(t, narrow); }), HasSubstr("expert id 3"));
}

TEST(CanonicalCompare, OrdersPrefillByLayerThenStepAndDecodeByStepThenLayer) {
  EXPECT_LT(canonical_compare(0, 0, 5, 0, 0, 0, 0, 1), 0);  // prefill: layer first
  EXPECT_GT(canonical_compare(0, 1, 5, 0, 0, 1, 0, 1), 0);  // decode: step first
  EXPECT_LT(canonical_compare(0, 1, 0, 0, 1, 0, 0, 0), 0);  // seq first
  EXPECT_LT(canonical_compare(0, 0, 9, 9, 0, 1, 0, 0), 0);  // prefill before decode
  EXPECT_EQ(canonical_compare(2, 1, 3, 4, 2, 1, 3, 4), 0);
}

}  // namespace
}  // namespace moesim::traces
