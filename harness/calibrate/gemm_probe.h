// What a batch-1 calibration cannot teach about compute: how a GEMM's time grows with its tokens. A batch-1
// run's dense ops have 1 token (decode: a GEMV) or a prompt's (prefill), never the 2 to 16 of a batch's
// decode step, and the roofline fitted to them under-costs a dense op of 4 tokens by 31-46% on two models
// (bench/results/batch-transfer-2026-12-05.md). So calibrate times the run's own two GEMMs -- the dense op
// of a layer and one routed expert's SwiGLU FFN, at the store's shapes, with exec's kernels
// (kernels/expert_ffn.h) -- at a ladder of token counts on the calibrating thread, and fits each kind a line
// over its FLOPs: seconds = fixed + flops / rate (gpu.dense_gemm_*, gpu.expert_gemm_*;
// core/hardware_profile.h). The probe runs alone, each call on weights out of the core's cache. The lines are
// not scaled to the calibration runs' own ops of 2+ tokens: those are a prefill's, slower beside its bulk
// reads (x1.03 dense, x1.09 expert on the scaled DeepSeek-V2-Lite), and scaled lines over-cost the held-out
// batches' decode GEMMs (experts of 2-4 tokens +12-15% against +3-5% unscaled;
// bench/results/batch-transfer-2026-12-05.md). lines_on_runs reports that ratio and the residuals.
//
// Contract: probe_gemms needs a store holding layer 0's expert 0 gate tensor ([inter, hidden] BF16) and the
// model's dense bytes per layer (the largest layer's is timed). Times are the calling thread's CPU time per
// call (exec's ops are fitted on their work, not wall time), the median of the repeats of each point. It
// allocates the weights it multiplies (zero-valued bits do not change a GEMM's time) and takes about
// `seconds_per_point` per point (at least 3 calls).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/calibrate/calibrate_fit.h"

namespace moesim::harness {

struct GemmProbe {
  struct Point {
    bool expert = false;
    uint32_t tokens = 0;
    double flops = 0;    // as the cost model's ops count them (2 per weight per token)
    double seconds = 0;  // median CPU time of one call
  };
  uint32_t hidden = 0, inter = 0;
  uint64_t dense_rows = 0;  // the dense op's rows x hidden columns (0: the model has no dense weights)
  std::vector<Point> points;
  Fit line[2];  // [0] dense, [1] expert: seconds = intercept + slope x flops, points of 2+ tokens
};

// The token ladder: 2 to `max_tokens` (at least 4), about two points per doubling.
std::vector<uint32_t> gemm_probe_ladder(uint32_t max_tokens);

GemmProbe probe_gemms(const std::string& store, const std::vector<uint64_t>& dense_bytes, uint32_t max_tokens,
                      double seconds_per_point = 0.02);

// Each kind's probed line, with its points and residuals on the calibration runs' ops of that kind of 2+
// tokens (flops, seconds) where there are any (else the probe's own), and `ratio` = sum(measured) /
// sum(line) over those ops (0: none). A kind the probe could not fit is left empty (points 0).
struct GemmOps {
  std::vector<double> flops[2], seconds[2];  // [0] dense, [1] expert
};
struct GemmLines {
  Fit line[2];
  double ratio[2] = {0, 0};
};
GemmLines lines_on_runs(const GemmProbe& probe, const GemmOps& runs);

Json gemm_probe_json(const GemmProbe& probe);

}  // namespace moesim::harness
