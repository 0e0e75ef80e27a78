// The queue-depth curve's fit (harness/calibrate/ssd_curve_fit.h) on synthetic reads made from known
// parameters.
#include "harness/calibrate/ssd_curve_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/rng.h"

namespace moesim::harness {
namespace {

// A standard normal draw (Box-Muller) from the seeded stream.
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Reads at sizes 4 KiB .. 4 MiB and every depth of `truth`, each time latency + d x bytes / bandwidth with a
// relative Gaussian noise of `noise` (the spread of a microbenchmark's means).
std::vector<DepthSample> synthetic(const std::vector<SsdDepthPoint>& truth, double noise, uint64_t seed) {
  Rng rng(seed);
  std::vector<DepthSample> out;
  for (const SsdDepthPoint& p : truth)
    for (uint64_t bytes = 4096; bytes <= (4u << 20); bytes *= 4) {
      const double t = p.latency + p.depth * static_cast<double>(bytes) / p.bandwidth;
      out.push_back(DepthSample{bytes, static_cast<uint32_t>(p.depth), t * (1 + noise * normal(rng))});
    }
  return out;
}

// An NVMe-like curve: latency grows with depth, the aggregate bandwidth saturates.
const std::vector<SsdDepthPoint> kTruth = {{1, 80e-6, 1.0e9},  {2, 90e-6, 1.8e9},   {4, 100e-6, 2.8e9},
                                           {8, 120e-6, 3.2e9}, {16, 160e-6, 3.4e9}, {32, 250e-6, 3.5e9}};

TEST(SsdCurveFit, ExactMeasurementsGiveBackTheCurve) {
  const DepthCurveFit f = fit_queue_depth_curve(synthetic(kTruth, 0, 1));
  ASSERT_EQ(f.curve.size(), kTruth.size());
  for (size_t i = 0; i < kTruth.size(); ++i) {
    EXPECT_EQ(f.curve[i].depth, kTruth[i].depth);
    EXPECT_NEAR(f.curve[i].latency, kTruth[i].latency, 1e-9 * kTruth[i].latency + 1e-15);
    EXPECT_NEAR(f.curve[i].bandwidth, kTruth[i].bandwidth, 1e-9 * kTruth[i].bandwidth);
  }
}

// With 2% noise per measured mean, every depth's bandwidth within 5% and latency within 10% of the truth, for
// several seeds (a tolerance that holds for one lucky draw only would not say the fit works).
TEST(SsdCurveFit, NoisyMeasurementsRecoverTheParametersWithinTolerance) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(seed);
    const DepthCurveFit f = fit_queue_depth_curve(synthetic(kTruth, 0.02, seed));
    ASSERT_EQ(f.curve.size(), kTruth.size());
    for (size_t i = 0; i < kTruth.size(); ++i) {
      SCOPED_TRACE(kTruth[i].depth);
      EXPECT_NEAR(f.curve[i].bandwidth, kTruth[i].bandwidth, 0.05 * kTruth[i].bandwidth);
      EXPECT_NEAR(f.curve[i].latency, kTruth[i].latency, 0.10 * kTruth[i].latency);
    }
  }
}

TEST(SsdCurveFit, DepthsWithOneSizeOrNoGrowthAreLeftOut) {
  std::vector<DepthSample> s = {{4096, 1, 100e-6},
                                {1 << 20, 1, 1100e-6},  // depth 1: two sizes
                                {4096, 2, 120e-6},      // depth 2: one size
                                {4096, 4, 300e-6},
                                {1 << 20, 4, 200e-6}};  // depth 4: faster when larger
  const DepthCurveFit f = fit_queue_depth_curve(s);
  ASSERT_EQ(f.curve.size(), 1u);
  EXPECT_EQ(f.curve[0].depth, 1);
}

}  // namespace
}  // namespace moesim::harness
