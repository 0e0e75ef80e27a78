// The call-overhead line of `validate --cluster`'s calibration (harness/cluster/call_overhead_fit.h):
// anchored at the lone calls' median, the slope least squares through that anchor.
#include "harness/cluster/call_overhead_fit.h"

#include <gtest/gtest.h>

namespace moesim::harness {
namespace {

TEST(CallOverheadFit, ExactLineIsRecovered) {
  std::vector<std::pair<double, double>> pts;
  for (double x : {0.0, 0.0, 0.0, 1.0, 3.0, 7.0, 15.0}) pts.emplace_back(x, 300e-6 + 60e-6 * x);
  const CallOverheadLine l = fit_call_overhead(pts);
  EXPECT_NEAR(l.fixed, 300e-6, 1e-12);
  EXPECT_NEAR(l.per_inflight, 60e-6, 1e-12);
}

// The case the anchor is for: lone calls agree, the crowded points scatter. A free least-squares line puts
// its intercept where the crowded points' scatter takes it (here 100 us below every lone call); the anchored
// line keeps the lone calls' median.
TEST(CallOverheadFit, InterceptIsTheLoneCallsMedianNotAnExtrapolation) {
  const std::vector<std::pair<double, double>> pts = {{0, 300e-6}, {0, 310e-6}, {0, 305e-6}, {0, 900e-6},
                                                      {1, 330e-6}, {3, 500e-6}, {7, 800e-6}, {15, 1400e-6}};
  const CallOverheadLine l = fit_call_overhead(pts);
  EXPECT_DOUBLE_EQ(l.fixed, 307.5e-6);  // the median: one outlier among the lone calls moves it little
  // Through the anchor: sum x (y - fixed) / sum x^2 over the crowded points.
  const double sxy =
      1 * (330e-6 - 307.5e-6) + 3 * (500e-6 - 307.5e-6) + 7 * (800e-6 - 307.5e-6) + 15 * (1400e-6 - 307.5e-6);
  EXPECT_NEAR(l.per_inflight, sxy / (1 + 9 + 49 + 225), 1e-15);
}

TEST(CallOverheadFit, NeverNegative) {
  // Crowded calls cheaper than lone ones (noise): no negative growth.
  const CallOverheadLine l = fit_call_overhead({{0, 400e-6}, {1, 300e-6}, {3, 200e-6}});
  EXPECT_DOUBLE_EQ(l.fixed, 400e-6);
  EXPECT_DOUBLE_EQ(l.per_inflight, 0.0);
  EXPECT_DOUBLE_EQ(fit_call_overhead({{0, -1e-6}}).fixed, 0.0);
}

TEST(CallOverheadFit, WithoutLoneCallsItIsTheLeastSquaresLine) {
  const CallOverheadLine l = fit_call_overhead({{1, 3.0}, {2, 5.0}, {3, 7.0}});
  EXPECT_NEAR(l.fixed, 1.0, 1e-12);
  EXPECT_NEAR(l.per_inflight, 2.0, 1e-12);
  const CallOverheadLine one_x = fit_call_overhead({{2, 4.0}, {2, 6.0}});
  EXPECT_DOUBLE_EQ(one_x.fixed, 5.0);
  EXPECT_DOUBLE_EQ(one_x.per_inflight, 0.0);
  EXPECT_DOUBLE_EQ(fit_call_overhead({}).fixed, 0.0);
}

}  // namespace
}  // namespace moesim::harness

namespace moesim::harness {
namespace {

TEST(CallOverheadMedians, MedianAtEachCallsInFlight) {
  const std::vector<std::pair<double, double>> pts = {{0, 3.0}, {0, 1.0}, {0, 2.0},
                                                      {1, 5.0}, {1, 7.0}, {3, 9.0}};
  EXPECT_EQ(call_overhead_medians(pts), (std::map<int, double>{{0, 2.0}, {1, 6.0}, {3, 9.0}}));
  EXPECT_TRUE(call_overhead_medians({}).empty());
}

}  // namespace
}  // namespace moesim::harness

namespace moesim::harness {
namespace {

TEST(LeastSquaresLine, FitsAndDegeneratesToTheMean) {
  const auto [a, b] = least_squares_line({{1, 3.0}, {2, 5.0}, {4, 9.0}});
  EXPECT_NEAR(a, 1.0, 1e-12);
  EXPECT_NEAR(b, 2.0, 1e-12);
  EXPECT_EQ(least_squares_line({{2, 4.0}, {2, 6.0}}), (std::pair<double, double>{5.0, 0.0}));
  EXPECT_EQ(least_squares_line({}), (std::pair<double, double>{0.0, 0.0}));
}

}  // namespace
}  // namespace moesim::harness
