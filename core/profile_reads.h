// What a result rests on (docs/cli-json.md, "rests_on"): the hardware profile's quantities a run read,
// recorded by whoever reads them -- the cost model for every op it costs or estimates (core/cost_model.h),
// the simulated platform for the reads its SSD model serves, for the SSD's queue depth once two requests were
// at the device together, and for cpu.cores when ops ran on workers the profile counted (sim/sim_platform.h)
// -- and, of the fields behind them, those the profile marks "assumption". A field nobody read cannot move
// the result; a field read can (`moesim sensitivity` measures by how much).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/hardware_profile.h"

namespace moesim {

// The quantities read, one bit per HwParam. Marking is safe from several threads (an exec run's threads ask
// for estimates; compare's cells share one record) and costs a load once a bit is set.
class HwReads {
 public:
  HwReads() = default;
  HwReads(const HwReads& o) : bits_(o.bits()) {}
  HwReads& operator=(const HwReads& o) {
    bits_.store(o.bits(), std::memory_order_relaxed);
    return *this;
  }
  void mark(HwParam p) const {
    const uint64_t b = uint64_t{1} << static_cast<unsigned>(p);
    if (!(bits_.load(std::memory_order_relaxed) & b)) bits_.fetch_or(b, std::memory_order_relaxed);
  }
  void merge(const HwReads& o) const { bits_.fetch_or(o.bits(), std::memory_order_relaxed); }
  bool has(HwParam p) const { return (bits() >> static_cast<unsigned>(p)) & 1; }
  uint64_t bits() const { return bits_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> bits_{0};
};

// The profile fields behind the quantities in `reads` (HardwareProfile::field_of), then `more` (fields read
// by name), each once, in that order.
std::vector<std::string> fields_read(const HardwareProfile& hw, const HwReads& reads,
                                     const std::vector<std::string>& more = {});
// The runtime section's scalar fields present in the profile: a simulated run applies every one
// (harness/run_setup.h apply_runtime_section), so it rests on each.
std::vector<std::string> runtime_fields_read(const HardwareProfile& hw);
// Of `fields`, those the profile marks "assumption": [{"field", "value" (as the profile writes it),
// "assumption"}], in the order of `fields`.
Json rests_on_json(const HardwareProfile& hw, const std::vector<std::string>& fields);
// "rests on assumptions: ssd.read_latency, gpu.kernel_overhead\n", or "" for an empty list.
std::string rests_on_line(const Json& rests_on);

// The profile with `field` ("section.key", a scalar quantity it has) multiplied by `factor`, reloaded (so
// that the members defaulting to it follow it). Whole-number fields (ssd.queue_depth, cpu.cores,
// runtime.cpu_cores) are rounded, at least 1. `*value` gets the scaled value in the field's SI unit.
// Throws moesim::Error naming the field when the profile lacks it or it is not a scalable number.
HardwareProfile scaled_profile(const HardwareProfile& hw, const std::string& field, double factor,
                               double* value);

}  // namespace moesim
