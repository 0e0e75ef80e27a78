// A serving run in simulated time: a fresh SimPlatform for the hardware profile, handed to serving::run (the
// CLI, the tests and the benchmarks share this wiring; serving/ itself never sees sim/). `reads`, when given,
// gets the profile's quantities the run read.
#pragma once

#include "core/hardware_profile.h"
#include "core/profile_reads.h"
#include "serving/system.h"
#include "sim/sim_platform.h"

namespace moesim::harness {

inline serving::RunResult run_simulated(const serving::SystemConfig& cfg, const traces::LookupStream& stream,
                                        const traces::TraceInfo& info, const serving::SourcedCosts& costs,
                                        const HardwareProfile& hw, const sim::SimOptions& sim = {},
                                        Json* config = nullptr, HwReads* reads = nullptr) {
  serving::SystemConfig c = cfg;
  c.unified_memory = hw.unified_memory;
  sim::SimPlatform platform(hw, sim);
  serving::RunResult r = serving::run(c, stream, info, costs, platform);
  if (reads) reads->merge(platform.reads());
  if (config) {
    *config = serving::config_json(c, r, costs, info, stream.batch, platform);
    (*config)["hardware"] = hw.name;
    (*config)["hardware_origin"] = hw.origin;
    // A buffered run's page cache (sim/page_cache.h): its DRAM and the reads it served (hits) or sent to the
    // SSD.
    if (sim.buffered_io || sim.dense_mmap) {
      const sim::PageCache& pc = platform.page_cache();
      (*config)["page_cache"] = {
          {"capacity_bytes", pc.capacity()}, {"hits", pc.hits()}, {"misses", pc.misses()}};
    }
    // Mmapped dense weights: the major faults their evictions cost (the engine log's majflt counts the same).
    if (sim.dense_mmap) {
      (*config)["page_cache"]["major_faults"] = platform.major_faults();
      (*config)["page_cache"]["decode_major_faults"] = platform.decode_major_faults();
      (*config)["page_cache"]["fault_bytes"] = platform.fault_bytes();
    }
  }
  return r;
}

// A run's rests_on (core/profile_reads.h): the assumption-marked fields behind what it read, and behind the
// simulator options it ran with (`sim`: the runtime section's fields; none for a real run).
inline Json rests_on(const HardwareProfile& hw, const HwReads& reads, const sim::SimOptions* sim = nullptr) {
  return rests_on_json(hw, fields_read(hw, reads, sim ? sim->profile_fields : std::vector<std::string>{}));
}

}  // namespace moesim::harness
