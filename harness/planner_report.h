// The planner's expectation beside what the run got, for a system that plans its pools (ZipMoE, Alg. 3 and 4):
// the `planner` object of a run's JSON and its text line (docs/cli-json.md). The planner expects the misses
// of a cache that already holds the profile's most popular ranks; a run starts empty, so its misses of experts
// never loaded before (cold-start) are counted apart.
#pragma once

#include <string>

#include "base/json_io.h"

namespace moesim::harness {

// From the run's config.plan (null: the system plans nothing, and so is the report) and its metrics:
// expected_miss_rate, simulated_miss_rate, simulated_cold_misses, simulated_cold_miss_rate,
// simulated_warm_miss_rate (per lookup, decode lookups where the run has any, as the profile counts them),
// expected_layer_s (Alg. 3: I/O and decompression), simulated_layer_s (the decode layers' mean makespan,
// compute included), lookups, phase, profile.
Json planner_report(const Json& plan, const Json& metrics);
// "planner:     expects ...\n"; "" for a null report.
std::string planner_report_line(const Json& report);

}  // namespace moesim::harness
