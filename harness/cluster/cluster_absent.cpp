// Built instead of harness/cluster/'s exec files without exec (-DMOESIM_EXEC=OFF; harness/exec_absent.cpp
// says why such files exist): the real cluster's entry points refuse with the UsageError of
// refuse_without_exec; the simulated cluster (`cluster`, harness/cluster/cluster_job.h) is unaffected.
#include "harness/cluster/cluster_binary.h"
#include "harness/cluster/cluster_server_job.h"
#include "harness/cluster/cluster_validation.h"
#include "harness/cluster/real_cluster.h"
#include "harness/exec_runner.h"

namespace moesim::harness {

// Without exec there is no moesim-cluster: the entries below refuse instead.
void enter_cluster_binary() {}

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
