// The least-squares fits behind `moesim calibrate` (harness/calibrate/calibrate_fit.h) and the residuals they
// report.
#include "harness/calibrate/calibrate_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
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

TEST(CalibrateFit, ALineKeepsTheMeanSizeOfItsPoints) {
  EXPECT_NEAR(fit_line({1, 2, 4, 8}, {3, 5, 9, 17}, false).x_mean, 3.75, 1e-12);
  EXPECT_NEAR(fit_json(fit_line({1, 3}, {1, 3}, true), "b x")["mean_x"].get<double>(), 2, 1e-12);
}

// A profile with the compute line (gpu.kernel_overhead + bytes / gpu.memory_bandwidth, fitted as
// calibration.fits.compute_bytes over ops of mean size `x`) and a runtime value.
Json profile_with_line(double overhead, double bandwidth, double wake, double x) {
  Json p;
  p["gpu"]["kernel_overhead"] = {{"value", overhead}, {"source", "fit"}};
  p["gpu"]["memory_bandwidth"] = {{"value", bandwidth}, {"source", "fit"}};
  p["runtime"]["wake_latency"] = {{"value", wake}, {"source", "mean"}};
  p["calibration"]["fits"]["compute_bytes"] = {
      {"mean_x", x}, {"points", 10}, {"intercept_s", overhead}, {"slope", 1 / bandwidth}};
  return p;
}

TEST(CalibrateFit, TheMedianOfRunsTakesEachValuesMedianAndKeepsTheRunsFits) {
  const double x = 1.5e6;
  std::vector<Json> own = {profile_with_line(10e-6, 10e9, 3e-6, x), profile_with_line(60e-6, 20e9, 1e-6, x),
                           profile_with_line(40e-6, 8e9, 2e-6, x)};
  own[1]["calibration"]["fits"]["compute_bytes"]["points"] = 11;
  Json prof = profile_with_line(30e-6, 11e9, 2.5e-6, x);
  take_median_of_runs(prof, own);
  EXPECT_DOUBLE_EQ(prof["gpu"]["kernel_overhead"]["value"].get<double>(), 40e-6);
  EXPECT_DOUBLE_EQ(prof["gpu"]["memory_bandwidth"]["value"].get<double>(), 10e9);
  EXPECT_DOUBLE_EQ(prof["runtime"]["wake_latency"]["value"].get<double>(), 2e-6);
  const std::string src = prof["gpu"]["memory_bandwidth"]["source"].get<std::string>();
  EXPECT_NE(src.find("fit; the median of the 3 runs' own fits (the fit over all runs: 1.1e+10)"),
            std::string::npos)
      << src;
  EXPECT_EQ(prof["calibration"]["values_from"], "the median of the 3 runs' own fits");
  // Each run's own fits, in run order: how far the runs' lines lay apart.
  const Json& runs = prof["calibration"]["runs_fits"];
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0]["compute_bytes"]["points"], 10);
  EXPECT_EQ(runs[1]["compute_bytes"]["points"], 11);
  // The runs' lines at the mean op (1.5 MB): 160, 135 and 227.5 us.
  EXPECT_NEAR(prof["calibration"]["runs_spread"]["compute_bytes"].get<double>(), 227.5 / 135 - 1, 1e-9);
}

TEST(CalibrateFit, AValueSomeRunDidNotFitKeepsTheFitOverAllRuns) {
  const double x = 1.5e6;
  std::vector<Json> own = {profile_with_line(10e-6, 10e9, 3e-6, x), profile_with_line(60e-6, 20e9, 1e-6, x),
                           profile_with_line(40e-6, 8e9, 2e-6, x)};
  own[1]["gpu"].erase("memory_bandwidth");
  Json prof = profile_with_line(30e-6, 11e9, 2.5e-6, x);
  take_median_of_runs(prof, own);
  EXPECT_DOUBLE_EQ(prof["gpu"]["kernel_overhead"]["value"].get<double>(), 40e-6);
  EXPECT_DOUBLE_EQ(prof["gpu"]["memory_bandwidth"]["value"].get<double>(), 11e9);
  EXPECT_EQ(prof["gpu"]["memory_bandwidth"]["source"], "fit");
}

}  // namespace
}  // namespace moesim::harness
