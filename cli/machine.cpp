#include "cli/machine.h"

#include <unistd.h>

#include <fstream>

#include "cli/exec_run.h"
#include "core/error.h"
#include "core/warnings.h"
#include "kernels/bf16_cuda.h"

namespace moesim::cli {
namespace {

std::string host_name() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    // x86: "model name"; many ARM kernels: "Model" or "Hardware" only.
    for (const char* key : {"model name", "Model", "Hardware"}) {
      if (line.rfind(key, 0) != 0) continue;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t b = line.find_first_not_of(" \t", colon + 1);
      if (b != std::string::npos) return line.substr(b);
    }
  }
  return "unknown";
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
  return {{"host", host_name()}, {"cpu_model", cpu_model()}, {"cores", machine_cores()}, {"gpu", device}};
}

void warn_if_measured_elsewhere(const HardwareProfile& hw, const std::string& command) {
  if (!hw.raw.is_object() || !hw.raw.contains("measured_on") || !hw.raw["measured_on"].is_object()) return;
  const Json& then = hw.raw["measured_on"];
  const Json now = this_machine_json(false);
  std::string diff;
  for (const char* k : {"host", "cpu_model", "cores"}) {
    if (!then.contains(k) || then[k] == now[k]) continue;
    const auto text = [](const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    diff += std::string(diff.empty() ? "" : ", ") + k + " " + text(then[k]) + " there, " + text(now[k]) + " here";
  }
  if (!diff.empty())
    warn(command + ": the profile " + hw.origin + " was measured on another machine (" + diff +
         "): its costs are that machine's, so the errors include the difference between the machines; "
         "calibrate here (`moesim calibrate`, or --calibrate-on) to judge the simulator on this one");
}

}  // namespace moesim::cli
