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

namespace moesim::harness {
namespace {

// Calls of bursts of k, every call of a burst taking fixed + slope * (k - 1) / 2 whatever its place in it,
// as the calibration measured them: the line recovers fixed and slope exactly, and the simulator's charge for
// a burst of k, k * fixed + slope * k (k - 1) / 2, is the burst's measured total.
TEST(CallOverheadBursts, BurstMeansGiveTheLineAndTheBurstTotals) {
  const double fixed = 150e-6, slope = 90e-6;
  std::vector<std::pair<uint32_t, double>> calls;
  for (uint32_t k : {1u, 2u, 4u, 8u, 16u})
    for (int r = 0; r < 3; ++r)
      for (uint32_t i = 0; i < k; ++i) calls.emplace_back(k, fixed + slope * (k - 1) / 2.0);
  const CallOverheadLine l = fit_call_overhead_bursts(calls);
  EXPECT_NEAR(l.fixed, fixed, 1e-12);
  EXPECT_NEAR(l.per_inflight, slope, 1e-12);
  for (uint32_t k : {1u, 2u, 4u, 8u, 16u})
    EXPECT_NEAR(k * l.fixed + l.per_inflight * k * (k - 1) / 2.0, k * (fixed + slope * (k - 1) / 2.0), 1e-12);
  // The anchored line by position reads the same calls differently: the first call of each burst is at x = 0
  // with the lone calls, so its intercept is not the lone call's.
  std::vector<std::pair<double, double>> by_position;
  for (uint32_t k : {1u, 2u, 4u, 8u, 16u})
    for (uint32_t i = 0; i < k; ++i) by_position.emplace_back(i, fixed + slope * (k - 1) / 2.0);
  EXPECT_GT(fit_call_overhead(by_position).fixed, fixed + 1e-6);
}

// Means, not medians: one burst size's calls 100, 100, 130 us weigh in at 110. A stall over four times the
// median is left out.
TEST(CallOverheadBursts, MeanOfEachSizeWithoutStalls) {
  const CallOverheadLine one = fit_call_overhead_bursts({{1, 100e-6}, {1, 100e-6}, {1, 130e-6}});
  EXPECT_NEAR(one.fixed, 110e-6, 1e-12);
  EXPECT_DOUBLE_EQ(one.per_inflight, 0.0);
  const CallOverheadLine stall =
      fit_call_overhead_bursts({{1, 100e-6}, {1, 100e-6}, {1, 130e-6}, {1, 50e-3}});
  EXPECT_NEAR(stall.fixed, 110e-6, 1e-12);
  // Two sizes: the line through their means, (1, 110) and (2, 200) at x = 0 and 0.5.
  const CallOverheadLine two =
      fit_call_overhead_bursts({{1, 100e-6}, {1, 100e-6}, {1, 130e-6}, {2, 190e-6}, {2, 210e-6}});
  EXPECT_NEAR(two.fixed, 110e-6, 1e-12);
  EXPECT_NEAR(two.per_inflight, 180e-6, 1e-12);
}

TEST(CallOverheadBursts, EmptyAndNeverNegative) {
  const CallOverheadLine none = fit_call_overhead_bursts({});
  EXPECT_DOUBLE_EQ(none.fixed, 0.0);
  EXPECT_DOUBLE_EQ(none.per_inflight, 0.0);
  // Larger bursts cheaper per call than lone ones (noise): no negative growth.
  EXPECT_DOUBLE_EQ(fit_call_overhead_bursts({{1, 300e-6}, {2, 200e-6}, {2, 200e-6}}).per_inflight, 0.0);
}

// The lead call's line (reported beside the cost): the lead calls' median as the intercept (a stall does not
// move it, as it would a mean), the bursts' line's slope.
TEST(CallOverheadLed, InterceptIsTheLeadCallsMedianSlopeTheBursts) {
  const CallOverheadLine bursts{150e-6, 90e-6};
  const CallOverheadLine l = fit_call_overhead_led({230e-6, 220e-6, 240e-6, 25e-3, 235e-6}, bursts);
  EXPECT_NEAR(l.fixed, 235e-6, 1e-12);
  EXPECT_NEAR(l.per_inflight, 90e-6, 1e-12);
  // The lead call is the run's lone call, not the bursts' line's intercept.
  EXPECT_GT(l.fixed, bursts.fixed + 50e-6);
}

TEST(CallOverheadLed, WithoutLeadCallsTheBurstsLineNeverNegative) {
  const CallOverheadLine bursts{150e-6, 90e-6};
  const CallOverheadLine none = fit_call_overhead_led({}, bursts);
  EXPECT_DOUBLE_EQ(none.fixed, bursts.fixed);
  EXPECT_DOUBLE_EQ(none.per_inflight, bursts.per_inflight);
  const CallOverheadLine clamped = fit_call_overhead_led({-5e-6, -3e-6, -4e-6}, {0, -1e-6});
  EXPECT_DOUBLE_EQ(clamped.fixed, 0.0);
  EXPECT_DOUBLE_EQ(clamped.per_inflight, 0.0);
}

}  // namespace
}  // namespace moesim::harness

namespace moesim::harness {
namespace {

TEST(CallOverheadTotal, LoneMedianAndTheSlopeThatChargesTheTotal) {
  // Lone calls 100, 200, 300 us; one at 1 in flight, 400; one at 4, a 2.2 ms stall.
  const std::vector<std::pair<double, double>> pts = {
      {0, 100e-6}, {0, 200e-6}, {1, 400e-6}, {0, 300e-6}, {4, 2200e-6}};
  const CallOverheadLine l = fit_call_overhead_total(pts);
  EXPECT_NEAR(l.fixed, 200e-6, 1e-15);
  EXPECT_NEAR(l.per_inflight, 440e-6, 1e-15);  // 5 x 200 + 440 x (1 + 4) = 3200, the points' total
  // Least squares anchored at the same median weighs the crowded call by x squared: another slope.
  EXPECT_GT(fit_call_overhead(pts).per_inflight, 480e-6);
}

TEST(CallOverheadTotal, WithoutLoneCallsTheLeastSquaresLineNeverNegative) {
  const std::vector<std::pair<double, double>> crowded = {{1, 300e-6}, {3, 700e-6}};
  const CallOverheadLine a = fit_call_overhead_total(crowded), b = fit_call_overhead(crowded);
  EXPECT_EQ(a.fixed, b.fixed);
  EXPECT_EQ(a.per_inflight, b.per_inflight);
  // Crowded calls cheaper than the lone ones: slope 0, not negative.
  const CallOverheadLine c = fit_call_overhead_total({{0, 500e-6}, {2, 100e-6}});
  EXPECT_EQ(c.fixed, 500e-6);
  EXPECT_EQ(c.per_inflight, 0);
  EXPECT_EQ(fit_call_overhead_total({}).fixed, 0);
}

}  // namespace
}  // namespace moesim::harness
