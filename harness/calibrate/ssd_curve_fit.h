// The SSD's queue-depth curve (HardwareProfile::ssd_queue_depth_curve) fitted on reads measured by size and
// queue depth (`moesim calibrate --micro`, exec/microbench.h). Pure: no I/O, testable on synthetic points.
//
// The model per depth d is the one the rest of the read fits use: with d reads in flight, each read takes
// latency(d) + d x bytes / bandwidth(d) (d transfers share the device's bandwidth). Each depth measured at
// two or more sizes gets its own least-squares line of time against d x bytes (relative weights, as the other
// microbenchmark fits: every size counts alike), refitted through the origin where the intercept comes out
// negative (a latency is never negative).
#pragma once

#include <cstdint>
#include <vector>

#include "core/hardware_profile.h"
#include "harness/calibrate/calibrate_fit.h"

namespace moesim::harness {

struct DepthSample {
  uint64_t bytes = 0;
  uint32_t depth = 0;
  double time_s = 0;  // mean time per read, submit to completion, at that depth
};

struct DepthCurveFit {
  std::vector<SsdDepthPoint> curve;  // in increasing depth; depths without a usable fit left out
  std::vector<Fit> fits;             // parallel to curve
};

// Depths with fewer than two sizes, or whose time does not grow with size (non-positive slope), are left out.
DepthCurveFit fit_queue_depth_curve(const std::vector<DepthSample>& samples);

// The curve as the profile field's value: [{"depth": D, "latency": seconds, "bandwidth": bytes/s}, ...].
Json depth_curve_json(const std::vector<SsdDepthPoint>& curve);

}  // namespace moesim::harness
