// Built instead of harness/'s exec files when moesim is built without exec (-DMOESIM_EXEC=OFF: see
// harness/CMakeLists.txt and docs/build.md): the entry points the rest of harness/ and cli/ call into exec
// with, each refusing with the UsageError of refuse_without_exec (harness/exec_runner.h) and what it needed
// exec for. Simulated commands never reach them; a command or option that needs exec ends here (or earlier,
// in require_exec) instead of failing to link. One such file per room, each standing in for its own room's
// exec files (this one for the top level's; harness/calibrate/calibrate_absent.cpp,
// harness/cluster/cluster_absent.cpp), so that no room includes another's headers for it.
#include "harness/exec_runner.h"

namespace moesim::harness {

serving::RunResult run_exec(const serving::SystemConfig&, const traces::LookupStream&,
                            const traces::TraceInfo&, const serving::SourcedCosts&, const HardwareProfile&,
                            const ExecRunOptions&, Json*, ExecReport*, HwReads*) {
  refuse_without_exec(
      "a real run on an expert store (--platform exec, validate, calibrate from a trace) needs it");
}

}  // namespace moesim::harness
