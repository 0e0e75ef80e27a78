// The caller's side of the cluster's expert RPC (exec/expert_service.h, exec/cluster_rpc.proto): one
// connection to one expert server, sending the run's shared secret with every call. compute_async() lets a
// caller have the calls to several servers (or several to one) in flight at once, as a pass that ships its
// remote experts to every server holding one of them does.
//
// Every message is bounded both ways by max_message_bytes (give the server's: exec/rpc_limits.h's
// max_message_bytes(shape, max_tokens), or PingReply::max_message_bytes); a failed call throws RpcError with
// gRPC's status code and the server's message, e.g. "expert server 10.0.0.2:7000: Compute: INVALID_ARGUMENT:
// work[2].expert: 70 >= 64 experts".
//
// Thread safety: all methods may be called concurrently. The destructor waits for the calls in flight (each
// ends by its deadline at the latest).
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "exec/expert_service.h"

namespace moesim::exec {

// A gRPC status code's name ("UNAVAILABLE"), for messages.
const char* rpc_status_name(int code);

class RpcError : public Error {
 public:
  RpcError(int code, const std::string& what) : Error(what), code_(code) {}
  int code() const { return code_; }  // a grpc::StatusCode

 private:
  int code_;
};

struct RemoteWork {
  uint32_t expert = 0;
  uint32_t unit = 0;  // the server's unit ("gpu") that computes it
  uint32_t tokens = 0;
};

struct ComputeCall {
  uint64_t request_id = 0;
  uint32_t layer = 0;
  std::vector<RemoteWork> works;
  std::vector<float> activations;  // token-major, hidden floats per token, the works' tokens in order
};

struct WorkInterval {
  double start = 0, end = 0;  // CLOCK_MONOTONIC seconds on the server (exec/expert_service.h)
};

struct ComputeResult {
  uint64_t request_id = 0;
  std::vector<float> outputs;  // the activations' layout
  std::vector<WorkInterval> intervals;  // per work, in call order
  double arrived = 0, sent = 0;         // when the server received the request, and replied
};

class ExpertClient {
 public:
  static constexpr uint64_t kDefaultMaxMessageBytes = uint64_t{64} << 20;
  // Connects lazily (the first call); moesim::Error for an empty secret or a bound over 2 GiB.
  ExpertClient(std::string address, std::string secret, uint64_t max_message_bytes = kDefaultMaxMessageBytes);
  ~ExpertClient();
  ExpertClient(const ExpertClient&) = delete;
  ExpertClient& operator=(const ExpertClient&) = delete;

  const std::string& address() const { return address_; }

  // Blocking; RpcError on failure (DEADLINE_EXCEEDED after timeout_s).
  ComputeResult compute(const ComputeCall& call, double timeout_s = 60);
  // Returns at once; the future holds the result or the RpcError. The call's data is copied into the request.
  std::future<ComputeResult> compute_async(const ComputeCall& call, double timeout_s = 60);

  // Installs or replaces an expert's weights on the server (a migration's copy); true when it replaced one.
  bool load_expert(uint32_t layer, uint32_t expert, const ExpertTensors& tensors, double timeout_s = 60);
  bool drop_expert(uint32_t layer, uint32_t expert, double timeout_s = 60);  // false: it was not held

  // Waits until the server answers (a server process starting up), trying again every 50 ms until
  // deadline_s seconds have passed; returns the server's shape and bounds. RpcError when it never answered
  // (the last failure's code) or refused the secret (UNAUTHENTICATED, at once: retrying cannot help).
  cluster::PingReply ping(double deadline_s = 10);

 private:
  struct Impl;
  std::string address_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::exec
