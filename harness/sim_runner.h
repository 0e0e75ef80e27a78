// A serving run in simulated time: a fresh SimPlatform for the hardware profile, handed to serving::run (the
// CLI, the tests and the benchmarks share this wiring; serving/ itself never sees sim/).
#pragma once

#include "core/hardware_profile.h"
#include "serving/system.h"
#include "sim/sim_platform.h"

namespace moesim::harness {

inline serving::RunResult run_simulated(const serving::SystemConfig& cfg, const traces::LookupStream& stream,
                                        const traces::TraceInfo& info, const serving::SizedCosts& costs,
                                        const HardwareProfile& hw, const sim::SimOptions& sim = {},
                                        Json* config = nullptr) {
  serving::SystemConfig c = cfg;
  c.unified_memory = hw.unified_memory;
  sim::SimPlatform platform(hw, sim);
  serving::RunResult r = serving::run(c, stream, info, costs, platform);
  if (config) {
    *config = serving::config_json(c, r, costs, info, stream.batch, platform);
    (*config)["hardware"] = hw.name;
    (*config)["hardware_origin"] = hw.origin;
  }
  return r;
}

}  // namespace moesim::harness
