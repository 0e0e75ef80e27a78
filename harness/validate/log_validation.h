// `moesim validate --log METRICS --trace ROUTE --hw P.json [run options]`: a real engine's per-token log
// (traces/engine_log.h) against the simulator, on the route trace the same run recorded (the replay and its
// checks: harness/log_replay.h).
#pragma once

#include <memory>
#include <string>

#include "base/json_io.h"
#include "harness/log_replay.h"

namespace moesim::harness {

struct LogValidateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  std::string log, log_fields;
  double target_tpot = 0.05, target_ttft = 0.10;
};
struct LogValidationOutput {
  Json json;
  std::string text;
};
// `moesim validate --log`: checks the arguments (UsageError), simulates and reports (docs/engine-logs.md).
LogValidationOutput validate_log(LogValidateArgs& va);

}  // namespace moesim::harness
