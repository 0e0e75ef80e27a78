// The self-describing header every JSON output starts with (docs/architecture.md §7): moesim version and
// commit, build type, date (UTC), host, CPU and GPU, seed, and the full configuration of the run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/json_io.h"

namespace moesim {

Json run_header(const std::string& command, const Json& config, std::optional<uint64_t> seed = std::nullopt);
bool build_is_optimized();
// Prints a warning to stderr once per process when the build is not optimized (timings are meaningless).
void warn_if_unoptimized();
std::string cpu_model_name();
std::string gpu_name();  // from the NVIDIA driver's /proc entries; "none" when there is no GPU

}  // namespace moesim
