// The GEMM probe's ladder and how its lines meet the calibration runs' ops (harness/calibrate/gemm_probe.h);
// the probe itself runs end to end in ExecCli.CalibrateWritesAProfileThatRunAndValidateLoad.
#include "harness/calibrate/gemm_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace moesim::harness {
namespace {

TEST(GemmProbe, TheLadderClimbsByHalvesToItsTop) {
  EXPECT_EQ(gemm_probe_ladder(32), (std::vector<uint32_t>{2, 3, 4, 6, 9, 13, 19, 28, 32}));
  EXPECT_EQ(gemm_probe_ladder(16), (std::vector<uint32_t>{2, 3, 4, 6, 9, 13, 16}));
  EXPECT_EQ(gemm_probe_ladder(1), (std::vector<uint32_t>{2, 3, 4}));  // at least to 4
}

TEST(GemmProbe, LinesKeepTheProbedShapeAndReportTheRunsRatio) {
  GemmProbe p;
  p.line[0] = Fit{1e-3, 1e-10, 9, 0, 0};  // dense: 1 ms + 10 GFLOP/s
  p.line[1] = Fit{2e-4, 5e-11, 9, 0, 0};  // expert: 200 us + 20 GFLOP/s
  GemmOps runs;
  // Dense ops 10% slower than the line (a prefill's); no expert of 2+ tokens ran.
  for (double flops : {1e7, 2e7}) {
    runs.flops[0].push_back(flops);
    runs.seconds[0].push_back(1.1 * (1e-3 + 1e-10 * flops));
  }
  const GemmLines g = lines_on_runs(p, runs);
  // Not scaled: the probe's line, its residuals on the runs' ops (all +10% under it).
  EXPECT_DOUBLE_EQ(g.line[0].intercept, 1e-3);
  EXPECT_DOUBLE_EQ(g.line[0].slope, 1e-10);
  EXPECT_EQ(g.line[0].points, 2u);
  EXPECT_NEAR(g.ratio[0], 1.1, 1e-12);
  EXPECT_NEAR(g.line[0].rel_rms, 0.1 / 1.1, 1e-12);
  // The expert line stands as probed, with no ratio.
  EXPECT_DOUBLE_EQ(g.line[1].intercept, 2e-4);
  EXPECT_EQ(g.line[1].points, 9u);
  EXPECT_EQ(g.ratio[1], 0);
  // A kind the probe could not fit stays empty.
  p.line[1].points = 1;
  EXPECT_EQ(lines_on_runs(p, runs).line[1].points, 0u);
}

}  // namespace
}  // namespace moesim::harness
