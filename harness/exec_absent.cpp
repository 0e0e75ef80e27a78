// Built instead of harness/'s exec files when moesim is built without exec (-DMOESIM_EXEC=OFF: see
// harness/CMakeLists.txt and docs/build.md): the entry points the rest of harness/ and cli/ call into exec
// with, each refusing with the UsageError of refuse_without_exec (harness/exec_runner.h) and what it needed
// exec for. Simulated commands never reach them; a command or option that needs exec ends here (or earlier,
// in require_exec) instead of failing to link.
#include "harness/calibration.h"
#include "harness/cluster_server_job.h"
#include "harness/cluster_validation.h"
#include "harness/exec_runner.h"
#include "harness/real_cluster.h"

namespace moesim::harness {

serving::RunResult run_exec(const serving::SystemConfig&, const traces::LookupStream&,
                            const traces::TraceInfo&, const serving::SourcedCosts&, const HardwareProfile&,
                            const ExecRunOptions&, Json*, ExecReport*, HwReads*) {
  refuse_without_exec(
      "a real run on an expert store (--platform exec, validate, calibrate from a trace) needs it");
}

Json calibrate(CalibrateArgs&) {
  refuse_without_exec("calibrate from a trace or --micro runs the store's experts for real");
}

RealClusterRun run_real_cluster(const std::string&, const serving::ClusterInput&, serving::ClusterOptions,
                                const RealClusterArgs&) {
  refuse_without_exec(
      "the real cluster (cluster --platform exec, validate --cluster) runs server processes over gRPC");
}

ClusterValidationOutput validate_cluster(const ClusterValidateArgs&) {
  refuse_without_exec("validate --cluster measures the real cluster's server processes");
}

void run_cluster_server(const ClusterServerArgs&) {
  refuse_without_exec("cluster-server serves experts over gRPC");
}

}  // namespace moesim::harness
