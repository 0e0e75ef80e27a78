// The microbenchmarks of `moesim calibrate --micro` (exec/microbench.h: reads against size and queue depth,
// decompression per codec and recovery against size and threads, expert compute against tokens, their
// interference), fitted by least squares into the hardware profile's fields (docs/exec.md).
#pragma once

#include <string>

#include "base/json_io.h"
#include "core/hardware_profile.h"
#include "exec/microbench.h"
#include "harness/calibrate/calibrate_fit.h"
#include "harness/calibrate/ssd_curve_fit.h"
#include "harness/run_setup.h"

namespace moesim::harness {

struct MicroFits {
  Fit ssd, ssd_depth1;
  Fit read_cpu;  // O_DIRECT: the I/O threads' CPU time per request; ssd then fits each request's time less it
  uint32_t queue_depth = 1;
  DepthCurveFit depth_curve;  // every depth measured: ssd.queue_depth_curve
  std::string dec_codec;      // the codec whose fit at L threads fills cpu.decompress_bandwidth_per_core
  Fit dec, rec, cbytes, cflops, gemm;
  Json json;  // the profile's "micro" section
};

// The fits of the microbenchmarks' points (and the profile's "micro" section in MicroFits::json).
MicroFits micro_fits(const exec::MicroResults& m, const exec::MicroOptions& mo);
// The profile's fields the microbenchmarks measure (where a field exists for them). `gpu`: exec runs on a
// CUDA device, whose compute the CPU microbenchmarks do not measure (the gpu section stays as it is).
void apply_micro(Json& prof, const MicroFits& f, const exec::MicroOptions& mo, bool gpu,
                 const CalibrationStamp& st);
// A profile from the microbenchmarks alone (no trace): the base profile's memory section, and for a GPU its
// gpu and link sections, which the CPU microbenchmarks do not measure. `name` "" names it calibrated-HOST.
Json micro_skeleton(const std::string& name, const RunArgs& run, const HardwareProfile& hw, bool gpu,
                    const CalibrationStamp& st);
// One line of what the fits found, for standard error.
std::string micro_summary(const MicroFits& f);

}  // namespace moesim::harness
