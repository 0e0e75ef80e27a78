// base/sample_stats.h: the mean and the median of measured times, 0 for none.
#include "base/sample_stats.h"

#include <gtest/gtest.h>

namespace moesim {
namespace {

TEST(SampleStats, MeanAndMedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(mean_of({1, 2, 6}), 3.0);
  EXPECT_DOUBLE_EQ(median_of({6, 1, 2}), 2.0);
  // An even count's median is the mean of the two middle values, not either of them.
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 10}), 3.5);
  EXPECT_DOUBLE_EQ(mean_of({4, 1, 3, 10}), 4.5);
}

TEST(SampleStats, NoSampleIsZero) {
  EXPECT_EQ(mean_of({}), 0.0);
  EXPECT_EQ(median_of({}), 0.0);
}

}  // namespace
}  // namespace moesim
