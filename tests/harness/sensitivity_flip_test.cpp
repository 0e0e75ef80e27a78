// The break-even search (harness/sensitivity_flip.h) on rankings of known flips: the bracket it returns holds
// the flip and is within the tolerance; no flip and an input that leaves its range are said as such; the
// evaluations stay within the scan plus the bisection's bound.
#include "harness/sensitivity_flip.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace moesim::harness {
namespace {

const std::vector<size_t> kBase = {0, 1}, kFlipped = {1, 0};

// The ranking flips below `low` and above `high` (factors), and is undefined outside [min_in, max_in].
auto ranking_with(double low, double high, double min_in = 0, double max_in = 1e9) {
  return [=](double f) -> std::optional<std::vector<size_t>> {
    if (f < min_in || f > max_in) return std::nullopt;
    return f < low || f > high ? kFlipped : kBase;
  };
}

TEST(FlipSearch, BracketsEachFlipWithinTheTolerance) {
  FlipSearch s;  // 0.1..10, 1%
  const FlipResult r = find_flip(kBase, ranking_with(0.3, 3.7), s);
  ASSERT_TRUE(r.below.found);
  ASSERT_TRUE(r.above.found);
  EXPECT_LT(r.below.factor, 0.3);
  EXPECT_GE(r.below.unflipped, 0.3);
  EXPECT_LE(r.below.unflipped / r.below.factor, 1.01 + 1e-12);
  EXPECT_GT(r.above.factor, 3.7);
  EXPECT_LE(r.above.unflipped, 3.7);
  EXPECT_LE(r.above.factor / r.above.unflipped, 1.01 + 1e-12);
  EXPECT_EQ(r.above.ranking, kFlipped);
  // Each side: at most 8 scan samples, then log2(bracket ratio / 1.01) bisections (a scan step is x10^(1/8)).
  const double per_side = 8 + std::ceil(std::log2(std::log(std::pow(10.0, 1.0 / 8)) / std::log(1.01)));
  EXPECT_LE(r.evaluations, 2 * per_side);
}

TEST(FlipSearch, SaysNoFlipAndWhereTheRangeEnds) {
  FlipSearch s;
  s.lo = 0.5;
  s.hi = 4;
  FlipResult r = find_flip(kBase, ranking_with(0.01, 100), s);
  EXPECT_FALSE(r.below.found);
  EXPECT_FALSE(r.above.found);
  EXPECT_DOUBLE_EQ(r.below.unflipped, 0.5);  // scanned to the range's end
  EXPECT_DOUBLE_EQ(r.above.unflipped, 4);
  EXPECT_FALSE(r.below.range_end);
  EXPECT_EQ(r.evaluations, 16u);
  // The input is only defined up to x2.5: the upper side ends there, unflipped.
  r = find_flip(kBase, ranking_with(0.01, 100, 0, 2.5), s);
  EXPECT_FALSE(r.above.found);
  ASSERT_TRUE(r.above.range_end);
  EXPECT_GT(*r.above.range_end, 2.5);
  EXPECT_LE(r.above.unflipped, 2.5);
}

TEST(FlipSearch, RefusesABadSearch) {
  FlipSearch s;
  s.lo = 1;
  EXPECT_THROW(find_flip(kBase, ranking_with(0.3, 3), s), UsageError);
  s = FlipSearch{};
  s.hi = 0.9;
  EXPECT_THROW(find_flip(kBase, ranking_with(0.3, 3), s), UsageError);
  s = FlipSearch{};
  s.tolerance = 0;
  EXPECT_THROW(find_flip(kBase, ranking_with(0.3, 3), s), UsageError);
}

}  // namespace
}  // namespace moesim::harness
