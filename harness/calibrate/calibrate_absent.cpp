// Built instead of harness/calibrate/'s exec files without exec (-DMOESIM_EXEC=OFF; harness/exec_absent.cpp
// says why such files exist): calibrating from a trace or with --micro refuses with the UsageError of
// refuse_without_exec; calibrate --from-log, which simulates only, is unaffected.
#include "harness/calibrate/calibration.h"
#include "harness/exec_runner.h"

namespace moesim::harness {

Json calibrate(CalibrateArgs&) {
  refuse_without_exec("calibrate from a trace or --micro runs the store's experts for real");
}

}  // namespace moesim::harness
