// A serving run in simulated time: a fresh SimPlatform for the hardware profile, handed to serving::run (the
// CLI, the tests and the benchmarks share this wiring; serving/ itself never sees sim/). `reads`, when given,
// gets the profile's quantities the run read.
#pragma once

#include "core/hardware_profile.h"
#include "core/profile_reads.h"
#include "serving/system.h"
#include "sim/sim_platform.h"

namespace moesim::harness {

// Whether a run modelled the dequantization of its experts (core/cost_model.h), and from what: the time per
// element the profile gives each of the experts' storage types on the resource they compute on.
inline Json dequantization_json(const HardwareProfile& hw, const ModelCosts& costs,
                                ResourceClass compute_on) {
  const bool cpu = compute_on == ResourceClass::kCpu;
  const auto& rates = cpu ? hw.cpu_dequant_time_per_element : hw.gpu_dequant_time_per_element;
  const std::string field = std::string(cpu ? "cpu" : "gpu") + ".dequant_time_per_element";
  if (costs.expert_storage.empty())
    return {{"modelled", false},
            {"why", "the experts' storage types are not known (sizes from the trace; --model gives them)"}};
  Json used = Json::object();
  for (const auto& layer : costs.expert_storage)
    for (const auto& [type, elements] : layer)
      if (auto r = rates.find(type); r != rates.end()) used[type] = r->second;
  if (used.empty())
    return {{"modelled", false},
            {"why", hw.name + " gives no " + field +
                        " for the experts' types (absent: 0, or already in its compute rates)"}};
  return {{"modelled", true}, {"field", field}, {"seconds_per_element", used}};
}

inline serving::RunResult run_simulated(const serving::SystemConfig& cfg, const traces::LookupStream& stream,
                                        const traces::TraceInfo& info, const serving::SourcedCosts& costs,
                                        const HardwareProfile& hw, const sim::SimOptions& sim = {},
                                        Json* config = nullptr, HwReads* reads = nullptr) {
  serving::SystemConfig c = cfg;
  c.unified_memory = hw.unified_memory;
  sim::SimPlatform platform(hw, sim);
  platform.set_expert_storage(costs.costs.expert_storage);
  serving::RunResult r = serving::run(c, stream, info, costs, platform);
  if (reads) reads->merge(platform.reads());
  if (config) {
    *config = serving::config_json(c, r, costs, info, stream.batch, platform);
    (*config)["hardware"] = hw.name;
    (*config)["hardware_origin"] = hw.origin;
    (*config)["dequantization"] = dequantization_json(hw, costs.costs, c.compute_on);
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
