// The least-squares fits behind `moesim calibrate` (harness/calibrate/calibrate_fit.h) and the residuals they
// report.
#include "harness/calibrate/calibrate_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace moesim::harness {
namespace {

TEST(CalibrateFit, AnExactLineIsRecoveredWithNoResidual) {
  const std::vector<double> x = {1, 2, 4, 8}, y = {3, 5, 9, 17};  // 1 + 2x
  const Fit f = fit_line(x, y, false);
  EXPECT_NEAR(f.intercept, 1, 1e-12);
  EXPECT_NEAR(f.slope, 2, 1e-12);
  EXPECT_EQ(f.points, 4u);
  EXPECT_NEAR(f.rel_rms, 0, 1e-12);
  EXPECT_NEAR(f.cv_rms, 0, 1e-12);
}

TEST(CalibrateFit, ResidualsOfAWorkedExample) {
  // OLS through (1,1), (2,3), (3,2), (4,4): slope 0.8, intercept 0.5; fitted 1.3, 2.1, 2.9, 3.7.
  const Fit f = fit_line({1, 2, 3, 4}, {1, 3, 2, 4}, false);
  EXPECT_NEAR(f.slope, 0.8, 1e-12);
  EXPECT_NEAR(f.intercept, 0.5, 1e-12);
  // Residuals 0.3, -0.9, 0.9, -0.3: RMS sqrt(0.45) over the mean 2.5.
  EXPECT_NEAR(f.cv_rms, std::sqrt(0.45) / 2.5, 1e-12);
  const double rel = std::sqrt((0.3 * 0.3 / 1 + 0.3 * 0.3 + 0.45 * 0.45 + 0.075 * 0.075) / 4);
  EXPECT_NEAR(f.rel_rms, rel, 1e-12);
}

TEST(CalibrateFit, AnOpMeasuredNearZeroDoesNotBlowUpTheReportedResidual) {
  // A read's device time is its wall time less its CPU phase; one served by a cache below O_DIRECT comes out
  // near 0. Its relative residual is enormous; the residual against the mean op stays what the fit deserves.
  std::vector<double> x, y;
  for (int i = 1; i <= 100; ++i) {
    x.push_back(i);
    y.push_back(10 + i + (i % 2 ? 0.5 : -0.5));
  }
  x.push_back(50);
  y.push_back(1e-12);
  const Fit f = fit_line(x, y, false);
  EXPECT_GT(f.rel_rms, 1e6);
  EXPECT_LT(f.cv_rms, 0.2);
  EXPECT_GT(f.cv_rms, 0.0);
}

TEST(CalibrateFit, AnOffsetIsTheMeanGapAndItsResidualIsAgainstTheMeanOp) {
  const Fit f = fit_offset({1, 1}, {2, 4});
  EXPECT_NEAR(f.intercept, 2, 1e-12);     // mean of 1 and 3
  EXPECT_NEAR(f.cv_rms, 1.0 / 3, 1e-12);  // residuals +1, -1 over the mean 3
  EXPECT_NEAR(f.rel_rms, std::sqrt((0.25 + 0.0625) / 2), 1e-12);
  // Never negative: a model above every measurement gets no fixed cost.
  EXPECT_EQ(fit_offset({5, 5}, {1, 2}).intercept, 0);
}

TEST(CalibrateFit, FallsBackThroughTheOriginWhenTheInterceptComesOutNegative) {
  const Fit f = fit_line_or_origin({1, 2, 3}, {0.5, 2.1, 3.4}, false);
  EXPECT_EQ(f.intercept, 0);
  EXPECT_GT(f.slope, 0);
}

TEST(CalibrateFit, JsonCarriesBothResiduals) {
  const Json j = fit_json(fit_line({1, 2, 3, 4}, {1, 3, 2, 4}, false), "a + b x");
  EXPECT_EQ(j["model"], "a + b x");
  EXPECT_NEAR(j["rms_over_mean"].get<double>(), std::sqrt(0.45) / 2.5, 1e-12);
  EXPECT_TRUE(j["relative_rms"].is_number());
}

}  // namespace
}  // namespace moesim::harness
