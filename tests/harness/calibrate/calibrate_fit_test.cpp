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

TEST(CalibrateFit, AFusedReadGivesTheReadLineAPointOnlyInAnODirectRunWithItsCpuClock) {
  EXPECT_TRUE(fused_read_on_read_line(17849, 60e-6, true));
  EXPECT_FALSE(fused_read_on_read_line(17849, 60e-6, false));  // buffered: the page cache's copy
  EXPECT_FALSE(fused_read_on_read_line(17849, 0, true));       // no CPU clock: no device time split off
  EXPECT_FALSE(fused_read_on_read_line(0, 60e-6, true));       // not a fused read
}

TEST(CalibrateFit, FusedReadsOfAnotherSizeSeparateTheDisksLatencyFromItsRate) {
  // A disk of 120 us per request + 2 GB/s. The I/O thread reads SM parts of one size (240 KB): through them
  // alone the line goes through the origin and a 18 KB E-chunk read costs 18 KB's share of a 240 KB read's
  // time. With the fused reads' device times on the line (as calibrate adds them in an O_DIRECT run) the
  // latency and the rate come back.
  auto t = [](double bytes) { return 120e-6 + bytes / 2e9; };
  std::vector<double> x, y;
  for (int i = 0; i < 4; ++i) {
    x.push_back(240e3);
    y.push_back(t(240e3));
  }
  const Fit sm_only = fit_line_or_origin(x, y, true);
  EXPECT_LT(sm_only.slope * 18e3, 0.2 * t(18e3));
  for (int i = 0; i < 4; ++i) {
    if (!fused_read_on_read_line(18000, 50e-6, true)) continue;
    x.push_back(18e3);
    y.push_back(t(18e3));
  }
  const Fit both = fit_line_or_origin(x, y, false);
  EXPECT_NEAR(both.intercept, 120e-6, 1e-9);
  EXPECT_NEAR(1 / both.slope, 2e9, 1e3);
}

TEST(CalibrateFit, FusedReadsTailsGiveTheReadCpuLineTheSizeItLacks) {
  // Decompressions the I/O thread read for take 1 ns per decompressed byte; a fused op's CPU clock holds its
  // decompression and its read's CPU tail (here 12 us + 1 ns per read byte). The tail left after the plain
  // line comes back; the I/O thread's SM reads (242 kB, 254 us of tail) alone give a line without slope, so
  // an 18 kB E-chunk read took 254 us, where with the fused tails on the line it takes 30 us.
  auto tail = [](double read_bytes) { return 12e-6 + read_bytes * 1e-9; };
  const std::vector<double> px = {40e3, 45e3, 50e3}, py = {40e-6, 45e-6, 50e-6};
  const std::vector<double> fx = {45e3, 50e3}, fy = {45e-6 + tail(18e3), 50e-6 + tail(18e3)};
  const std::vector<double> tails = fused_read_tails(px, py, fx, fy);
  ASSERT_EQ(tails.size(), 2u);
  EXPECT_NEAR(tails[0], tail(18e3), 1e-12);
  EXPECT_NEAR(tails[1], tail(18e3), 1e-12);
  std::vector<double> rx(4, 242e3), ry(4, tail(242e3));
  rx.insert(rx.end(), 2, 18e3);
  ry.insert(ry.end(), tails.begin(), tails.end());
  const Fit both = fit_line_or_origin(rx, ry, false);
  EXPECT_NEAR(both.intercept + both.slope * 18e3, tail(18e3), 1e-12);
  EXPECT_NEAR(both.intercept + both.slope * 242e3, tail(242e3), 1e-12);
  // A clock below the plain line gives a zero tail, not a negative one; without a plain line, no tails.
  EXPECT_EQ(fused_read_tails(px, py, {45e3}, {30e-6}), std::vector<double>{0.0});
  EXPECT_TRUE(fused_read_tails({45e3}, {45e-6}, fx, fy).empty());
}

}  // namespace
}  // namespace moesim::harness
