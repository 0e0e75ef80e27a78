// The machine this process runs on, as a calibrated profile records it ("measured_on": host, CPU model,
// cores, GPU), and the check that a profile measured on one machine is being used on another (a profile's
// costs are that machine's: on another, validate's errors measure the difference between machines too).
#pragma once

#include <cstdint>
#include <string>

#include "core/hardware_profile.h"
#include "base/json_io.h"

namespace moesim::harness {

// {"host", "cpu_model", "cores", "gpu"}: the host name, /proc/cpuinfo's model name ("unknown" where there is
// none), the CPUs this process may run on (machine_cores()), and the CUDA device exec used ("none" without).
Json this_machine_json(bool gpu);

// Warns (base/warnings.h) when `hw` records a "measured_on" whose host, CPU model or cores differ from this
// machine's, naming each difference; nothing for a profile without one (the bundled presets).
void warn_if_measured_elsewhere(const HardwareProfile& hw, const std::string& command);

// The memory this machine could give the page cache now (/proc/meminfo's MemAvailable), in bytes; 0 where
// it does not say.
uint64_t available_memory_bytes();

// exec with buffered reads (--io buffered, --buffered): warns once when the store fits in the memory available,
// since after its first read each expert comes out of the page cache, and exec then times DRAM copies where the
// simulation (which starts with an empty page cache) times the disk's first reads.
void warn_if_store_fits_page_cache(const std::string& store);

}  // namespace moesim::harness
