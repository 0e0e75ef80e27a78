// One server of the real cluster (docs/cluster-exec.md): the gRPC ExpertService of exec/cluster_rpc.proto
// over the experts this server holds. It is the real counterpart of sim/sim_cluster_platform.h's remote
// invocation: a peer ships the activations of the tokens routed to an expert placed here, the server computes
// the expert's SwiGLU FFN (kernels::expert_ffn) on them and ships the outputs back with the measured
// intervals, so the caller can compare the simulated round trip with the real one.
//
// Units: each "gpu" of the server is one worker thread with a FIFO queue, as the simulator's FifoUnit: a
// request's works go to their units' queues in request order, a server with G units computes G experts at
// once, and the reply is sent when the request's last work is done (Prism Eq. 1's max over experts).
//
// Security (the project rule for anything that listens): the server binds only the address it is given (the
// default is loopback), with SO_REUSEPORT off so no other process can share its port; every call must carry
// the run's shared secret as metadata `x-moesim-secret` (compared in constant time) or gets UNAUTHENTICATED;
// messages over max_message_bytes(shape, max_tokens) are refused by gRPC (RESOURCE_EXHAUSTED), a connection
// has at most max_streams calls in flight and gRPC's 8 KiB metadata bound holds; requests are validated
// (exec/rpc_limits.h) before any field is used. The transport is not encrypted: the secret keeps
// out processes that are not the run's peers, on a network the run trusts.
//
// Thread safety: ExpertWeights may be read and changed concurrently; ExpertServer's methods are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/call_timing.h"  // monotonic_seconds(), the clock of ComputeReply's times
#include "exec/rpc_limits.h"

namespace grpc {
class Server;
}

namespace moesim::exec {

// One expert's BF16 weights as kernels/expert_ffn.h takes them: gate and up [inter, hidden], down [hidden,
// inter], row-major.
struct ExpertTensors {
  std::vector<uint16_t> gate, up, down;
};

using ExpertKey = std::pair<uint32_t, uint32_t>;  // (layer, expert)

// The experts a server holds. A compute keeps the tensors it started with (shared_ptr) while a LoadExpert
// replaces them or a DropExpert removes them.
class ExpertWeights {
 public:
  explicit ExpertWeights(const ModelShape& shape);  // moesim::Error when check_shape() fails
  ExpertWeights(ExpertWeights&& other) noexcept;
  ExpertWeights& operator=(ExpertWeights&&) = delete;

  const ModelShape& shape() const { return shape_; }
  // Installs or replaces; moesim::Error naming the expert and tensor when out of range or of the wrong size.
  // True when the expert was held before.
  bool put(uint32_t layer, uint32_t expert, ExpertTensors tensors);
  bool drop(uint32_t layer, uint32_t expert);                                       // false when not held
  std::shared_ptr<const ExpertTensors> get(uint32_t layer, uint32_t expert) const;  // null when not held
  std::vector<ExpertKey> held() const;                                              // sorted

 private:
  ModelShape shape_;
  mutable std::mutex mu_;
  std::map<ExpertKey, std::shared_ptr<const ExpertTensors>> experts_;
};

// Deterministic synthetic weights for `experts`: values N(0, std^2) rounded to BF16, tensor i = (layer x
// shape.experts + expert) x 3 + {0 gate, 1 up, 2 down} drawing from Rng(seed).split(i), the draw of
// exec/weight_synth.h for a model of that shape's gate/up/down tensors. Same arguments, same bits.
ExpertWeights synth_expert_weights(const ModelShape& shape, const std::vector<ExpertKey>& experts,
                                   uint64_t seed, double std = 0.02);
// Weights read from a store made by `moesim pack` (exec/store_reader.h): tensors gate_proj, up_proj and
// down_proj of each expert, checksummed and decompressed. moesim::Error naming the store and expert when one
// is missing or its shape is not the model's.
ExpertWeights store_expert_weights(const std::string& store_path, const ModelShape& shape,
                                   const std::vector<ExpertKey>& experts);

struct ExpertServerOptions {
  std::string address = "127.0.0.1:0";  // host:port to bind; port 0 picks a free port (see port())
  std::string secret;                   // the run's shared secret; must not be empty
  uint32_t units = 1;                   // worker threads ("gpus"), each with a FIFO queue
  uint32_t max_tokens = 4096;           // tokens per Compute request; sets the message bound
  // Calls in flight per connection (HTTP/2 streams): with the message bound, what one peer connection can
  // make the server hold. A client with more waits for a stream; it gets no error.
  uint32_t max_streams = 64;
  // Called on a unit's thread with the unit's index inside each work's measured interval (after its start
  // is taken, before the compute): tests hold works there to prove that units run at once. Empty in real
  // runs.
  std::function<void(uint32_t unit)> before_compute;
};

class ExpertServer {
 public:
  // Validates the options (moesim::Error: empty secret, no units, a shape too large for a message), starts
  // the unit threads and listens; moesim::Error naming the address when it cannot bind.
  ExpertServer(ExpertWeights weights, ExpertServerOptions opts);
  ~ExpertServer();  // shutdown()
  ExpertServer(const ExpertServer&) = delete;
  ExpertServer& operator=(const ExpertServer&) = delete;

  int port() const;             // the bound port (the chosen one when the address asked for port 0)
  std::string address() const;  // the address's host with port()
  uint64_t max_message_bytes() const;
  uint32_t units() const;
  const ExpertWeights& weights() const;
  // Runs `task` on unit `unit`'s worker, behind what is queued there, and waits for it: the server's other
  // work on its units (a cluster layer's dense part) shares their FIFO queues with the experts. Returns the
  // task's (start, end) on CLOCK_MONOTONIC; moesim::Error for a unit out of range.
  std::pair<double, double> run_on_unit(uint32_t unit, const std::function<void()>& task);
  void wait();      // blocks until shutdown() (a server process's main thread)
  void shutdown();  // stops accepting, finishes the calls in flight, joins the units; idempotent

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::exec
