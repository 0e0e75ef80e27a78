#include "base/median_interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace moesim {
namespace {

TEST(MedianInterval, CoverageIsTheBinomialTailOfTheOrderStatistics) {
  EXPECT_DOUBLE_EQ(median_interval_coverage(3, 1), 0.75);             // 1 - 2 / 2^3
  EXPECT_DOUBLE_EQ(median_interval_coverage(5, 1), 0.9375);           // 1 - 2 / 2^5
  EXPECT_NEAR(median_interval_coverage(9, 2), 1 - 2 * 10.0 / 512, 1e-12);  // C(9,0) + C(9,1) = 10
  EXPECT_NEAR(median_interval_coverage(9, 3), 1 - 2 * 46.0 / 512, 1e-12);  // + C(9,2) = 36
  EXPECT_EQ(median_interval_coverage(9, 0), 0);
  EXPECT_EQ(median_interval_coverage(9, 6), 0);  // past the middle: no interval
  EXPECT_TRUE(std::isfinite(median_interval_coverage(1001, 470)));  // large n stays finite
  EXPECT_GT(median_interval_coverage(1001, 470), 0.9);
}

TEST(MedianInterval, TakesTheNarrowestIntervalThatReachesTheCoverage) {
  const MedianInterval nine = median_interval({70.1, 76.5, 72.4, 83.1, 89.5, 82.2, 85.8, 88.1, 77.5}, 0.9);
  EXPECT_EQ(nine.k, 2u);  // k = 3 covers 82%, short of 90%
  EXPECT_DOUBLE_EQ(nine.lo, 72.4);
  EXPECT_DOUBLE_EQ(nine.hi, 88.1);
  EXPECT_NEAR(nine.coverage, 0.9609375, 1e-12);
  // Too few runs for 90%: min and max, with what they do cover.
  const MedianInterval three = median_interval({3, 1, 2}, 0.9);
  EXPECT_EQ(three.k, 1u);
  EXPECT_DOUBLE_EQ(three.lo, 1);
  EXPECT_DOUBLE_EQ(three.hi, 3);
  EXPECT_DOUBLE_EQ(three.coverage, 0.75);
  const MedianInterval one = median_interval({5}, 0.9);
  EXPECT_DOUBLE_EQ(one.lo, 5);
  EXPECT_DOUBLE_EQ(one.hi, 5);
  EXPECT_EQ(one.coverage, 0);
  const MedianInterval none = median_interval({}, 0.9);
  EXPECT_TRUE(std::isnan(none.lo));
  EXPECT_TRUE(std::isnan(none.hi));
  EXPECT_EQ(none.coverage, 0);
}

// Distribution-free: on a skewed distribution (exponential, median ln 2) the interval holds the median as
// often as it says, over seeded trials.
TEST(MedianInterval, HoldsTheMedianAsOftenAsItSaysOnASkewedDistribution) {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double median = std::log(2.0);
  for (size_t n : {5u, 9u, 15u}) {
    const int trials = 4000;
    int held = 0;
    double nominal = 0;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> xs(n);
      for (double& x : xs) x = -std::log(1 - u(rng));
      const MedianInterval m = median_interval(xs, 0.9);
      nominal = m.coverage;
      held += (m.lo <= median && median <= m.hi) ? 1 : 0;
    }
    const double rate = static_cast<double>(held) / trials;
    const double sd = std::sqrt(nominal * (1 - nominal) / trials);
    EXPECT_NEAR(rate, nominal, 5 * sd) << "n = " << n;
  }
}

}  // namespace
}  // namespace moesim
