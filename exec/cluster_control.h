// A server's control side in the real cluster (exec/cluster_control.proto, docs/cluster-exec.md): what the
// coordinator that runs the cluster system asks a server process to do for its own requests --
//   Dense     a layer's dense part: a BF16 GEMM of the model's dense weights for its tokens
//             (kernels::dense_gemm) on one of the server's units, in the units' FIFO with the experts;
//   Invoke    a remote invocation: real activations of the works' tokens go to a peer's ExpertService over
//             the cluster network, computed there, and the results come back;
//   Push      a migration's copy: the expert's real weights go to a peer (LoadExpert), over the network;
//   Shutdown  the run is over: the server process exits.
// It listens on its own address (the emulated cluster's control link, unshaped, so that the coordinator's
// calls do not cross the links they measure; on real hosts, any address the coordinator reaches), with the
// run's secret (x-moesim-secret, compared in constant time) and the ExpertService's message bound.
//
// Links without kernel latency (tbf, no netem): an invocation or a push waits the route's latency before it
// sends and after its reply arrives (peer_latency_s), the user-space stand-in for propagation delay.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/call_timing.h"
#include "exec/expert_client.h"
#include "exec/expert_service.h"

namespace moesim::exec {

struct ClusterControlOptions {
  std::string address = "127.0.0.1:0";  // host:port of the control service
  std::string secret;
  uint32_t self = 0;
  std::vector<std::string> peers;      // [server] ExpertService addresses (host:port); peers[self] is ours
  std::vector<double> peer_latency_s;  // [server] latency added each way in user space; empty: none
  uint64_t dense_rows = 0, dense_cols = 0;  // a layer's dense weights as one GEMM; 0: no dense part
  uint64_t seed = 1;                        // of the dense weights and the shipped activations
  uint32_t max_tokens = 4096;               // tokens of one call (dense, or an invocation's works together)
  std::function<void()> on_shutdown;        // Shutdown was called (the process's main thread ends the run)
};

class ClusterControl {
 public:
  // Listens; moesim::Error naming the address when it cannot bind, or for an empty secret.
  ClusterControl(ExpertServer& experts, ClusterControlOptions opts);
  ~ClusterControl();  // shutdown()
  ClusterControl(const ClusterControl&) = delete;
  ClusterControl& operator=(const ClusterControl&) = delete;
  std::string address() const;  // host:port bound
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ClusterControlClient {
 public:
  ClusterControlClient(std::string address, std::string secret,
                       uint64_t max_message_bytes = ExpertClient::kDefaultMaxMessageBytes);
  ~ClusterControlClient();
  ClusterControlClient(const ClusterControlClient&) = delete;
  ClusterControlClient& operator=(const ClusterControlClient&) = delete;
  const std::string& address() const { return address_; }
  // Blocking, thread-safe; RpcError with the status and the server's message on failure.
  CallTiming dense(uint32_t unit, uint32_t layer, uint32_t tokens, double timeout_s = 60);
  CallTiming invoke(uint32_t peer, uint32_t layer, const std::vector<RemoteWork>& works,
                    double timeout_s = 60);
  CallTiming push(uint32_t peer, uint32_t layer, uint32_t expert, double timeout_s = 60);
  void shutdown_server(double timeout_s = 10);

 private:
  struct Impl;
  std::string address_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::exec
