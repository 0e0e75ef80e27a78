#include "harness/machine.h"

#include <unistd.h>

#include "harness/exec_runner.h"
#include "base/error.h"
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

}  // namespace moesim::harness
