// `moesim validate --log` (harness/validate/log_validation.h).
#include "harness/validate/log_validation.h"

#include <cmath>

#include "base/error.h"
#include "base/units.h"
#include "harness/arguments.h"

namespace moesim::harness {

LogValidationOutput validate_log(LogValidateArgs& va) {
  RunArgs& a = *va.run;
  require_trace_input(a.trace);
  if (a.hw.empty())
    throw UsageError("validate --log needs --hw P.json (a profile, e.g. from `moesim calibrate --from-log`)");
  LogRun r = load_log_run(a, va.log, va.log_fields);
  const LogErrors e = log_errors(r, r.prepared.hw);
  LogValidationOutput out;
  out.json = e.json();
  out.json["log_file"] = va.log;
  out.json["trace"] = a.trace;
  out.json["hardware"] = r.prepared.hw.name;
  out.json["targets"] = {{"cost.tpot", va.target_tpot}, {"cost.ttft", va.target_ttft}};
  const bool tpot_ok = std::fabs(e.tpot()) <= va.target_tpot, ttft_ok = std::fabs(e.ttft()) <= va.target_ttft;
  out.json["met"] = {{"cost.tpot", tpot_ok}, {"cost.ttft", ttft_ok}};
  out.text = "moesim validate --log " + va.log + " on " + a.trace + " with " + r.prepared.hw.name + "\n" +
             strprintf("  %-6s %12s %12s %9s  target\n", "", "simulated", "log", "error") +
             strprintf("  %-6s %9.1f ms %9.1f ms %+8.1f%%  %.0f%% %s\n", "TPOT", 1e3 * e.sim_tpot,
                       1e3 * e.log_tpot, 100 * e.tpot(), 100 * va.target_tpot, tpot_ok ? "met" : "MISSED") +
             strprintf("  %-6s %9.3f s  %9.3f s  %+8.1f%%  %.0f%% %s\n", "TTFT", e.sim_ttft, e.log_ttft,
                       100 * e.ttft(), 100 * va.target_ttft, ttft_ok ? "met" : "MISSED") +
             strprintf("  %-6s %9.1f ms %9.1f ms  (per token: time not computing, waiting for reads)\n",
                       "stall", 1e3 * e.sim_stall, 1e3 * e.log_stall);
  return out;
}

}  // namespace moesim::harness
