// A run's latency summary, what `moesim validate` and `moesim calibrate` compare between a measured and a
// simulated run of one trace: TPOT and TTFT (means over the decode and prefill steps) and the per-layer makespan
// (median, p95).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "serving/pipeline.h"

namespace moesim::harness {

// The q-quantile of v by linear interpolation between order statistics; NaN when v is empty.
double quantile(std::vector<double> v, double q);

struct LatencySummary {
  double tpot = std::nan(""), ttft = std::nan(""), layer_median = std::nan(""), layer_p95 = std::nan("");
};

LatencySummary latency_summary_of(const PipelineResult& r);

// An op's kind as validate's and calibrate's per-kind tables name it: "decompress", ..., and for reads the part
// read, "ssd_read sm", "ssd_read e", "ssd_read whole".
std::string op_kind_label(const Op& op);

// A ZipMoE run's pool ratios ("F=0.8,E=0.2", as --pools takes them) from its plan (serving::RunResult::plan);
// "" for a system that plans no pools.
std::string plan_ratios(const Json& plan);

}  // namespace moesim::harness
