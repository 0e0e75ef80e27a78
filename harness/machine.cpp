#include "harness/machine.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/exec_runner.h"
#include "base/error.h"
#include "base/units.h"
#include "core/run_info.h"
#include "base/warnings.h"
#include "kernels/bf16_cuda.h"

namespace moesim::harness {
namespace {

std::string host_name() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
}

}  // namespace

Json this_machine_json(bool gpu) {
  std::string device = "none";
  if (gpu) {
    try {
      device = kernels::cuda_device_description();
    } catch (const Error&) {
      device = "a CUDA GPU (no description)";
    }
  }
  return {{"host", host_name()}, {"cpu_model", cpu_model_name()}, {"cores", machine_cores()}, {"gpu", device}};
}

void warn_if_measured_elsewhere(const HardwareProfile& hw, const std::string& command) {
  if (!hw.measured_on) return;
  const MeasuredOn& then = *hw.measured_on;
  const Json now = this_machine_json(false);
  std::string diff;
  const auto differs = [&](const char* key, const std::string& there, const std::string& here) {
    if (there.empty() || there == here) return;  // empty: not recorded
    diff += std::string(diff.empty() ? "" : ", ") + key + " " + there + " there, " + here + " here";
  };
  differs("host", then.host, now["host"].get<std::string>());
  differs("cpu_model", then.cpu_model, now["cpu_model"].get<std::string>());
  if (then.cores) differs("cores", std::to_string(then.cores), std::to_string(now["cores"].get<uint32_t>()));
  if (!diff.empty())
    warn(command + ": the profile " + hw.origin + " was measured on another machine (" + diff +
         "): its costs are that machine's, so the errors include the difference between the machines; "
         "calibrate here (`moesim calibrate`, or --calibrate-on) to judge the simulator on this one");
}

uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string key;
    uint64_t kib = 0;
    if (f >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

void warn_if_store_fits_page_cache(const std::string& store) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(store, ec);
  const uint64_t free = available_memory_bytes();
  if (ec || free == 0 || size > free) return;
  const std::string message =
      "buffered reads (--io buffered): the store " + store + " (" + format_bytes(size) + ") fits in this machine's available memory (" +
      format_bytes(free) + "): after the first read of each expert exec reads it from the page cache (DRAM), not "
      "from the disk, and a run after another starts with the store cached; to time the disk use --io direct, or "
      "drop the page cache before each run (as root: sync; echo 1 > /proc/sys/vm/drop_caches)";
  const auto seen = warnings();
  if (std::find(seen.begin(), seen.end(), message) == seen.end()) warn(message);
}

}  // namespace moesim::harness
