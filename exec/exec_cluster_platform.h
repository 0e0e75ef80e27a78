// A cluster in real time (core/cluster_platform.h): every op the cluster system submits runs on a real server
// process -- the emulated cluster's, one per network namespace, or one per host -- and its completion is
// reported when the process says it is done. The system (the registry's prism) is the simulator's, unchanged.
//
//   submit_on     expert compute: a Compute call to the server's own process (the expert's real SwiGLU FFN on
//                 the unit's FIFO worker); dense compute: a Dense call (a BF16 GEMM of the layer's dense size
//                 on the same worker); a migration's load (kTransfer on kGpu): done when submitted, the
//                 weights having been installed by the Push that carried them.
//   invoke        an Invoke call to server `from`, which ships real activations to `to` over the network,
//                 where they are computed on the named units, and returns when the results are back.
//   send          (a migration) a Push call to `from`, which ships the expert's real weights to `to`.
//
// Each call runs on a thread of a pool and posts its completion; run() hands completions and due wake-ups
// to their sinks on the calling thread, one at a time, so the system sees the same single-threaded contract
// as in simulation. Times: seconds since construction on CLOCK_MONOTONIC, the clock the servers report in
// (one host; across hosts only the coordinator's own times are comparable).
//
// Expected durations (estimate(), unit_free_at()) come from the cost model of each server's hardware
// profile, as the simulator's; a unit's expected free time is the coordinator's own book of what it queued
// there. Every call's timings are kept (records()) for `validate --cluster`. The routes it answers
// route_latency() and route_inverse_bandwidth() from are the simulated network's (core/cluster_routes.h), and
// its estimates the cost model's (core/cost_model.h): both in core/, so that this platform lives in exec/
// with the rest of the real cluster's pieces and includes nothing of sim/.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "core/cluster_platform.h"
#include "core/cluster_routes.h"
#include "core/cluster_spec.h"
#include "core/hardware_profile.h"
#include "exec/call_timing.h"

namespace moesim::exec {

// What the coordinator asks of one server process: blocking calls, safe to call from several threads at
// once. Implemented over gRPC (exec/expert_client.h) for real runs, in process by tests.
class ServerCalls {
 public:
  virtual ~ServerCalls() = default;
  virtual CallTiming compute(uint32_t unit, uint32_t layer, uint32_t expert, uint32_t tokens) = 0;
  virtual CallTiming dense(uint32_t unit, uint32_t layer, uint32_t tokens) = 0;
  // works: (expert, unit on the peer, tokens).
  virtual CallTiming invoke(uint32_t peer, uint32_t layer,
                            const std::vector<std::array<uint32_t, 3>>& works) = 0;
  virtual CallTiming push(uint32_t peer, uint32_t layer, uint32_t expert) = 0;
};

struct ExecClusterServer {
  std::string name;
  HardwareProfile hw;  // for estimates
  uint32_t gpus = 1;
  std::shared_ptr<ServerCalls> calls;
};

// One call as it happened, for validation: kind 0 dense, 1 expert, 2 invoke, 3 push, 4 load.
struct ExecCallRecord {
  uint8_t kind = 0;
  uint32_t server = 0, peer = 0, unit = 0;
  uint16_t layer = 0;
  uint16_t expert = 0xFFFF;                    // expert compute, push
  std::vector<std::array<uint32_t, 3>> works;  // invoke: (expert, unit on the peer, tokens)
  uint32_t tokens = 0;
  uint64_t bytes = 0;
  double submitted = 0, returned = 0;  // the coordinator's clock (platform seconds)
  CallTiming timing;                   // the server's, converted to platform seconds
};

class ExecClusterPlatform : public ClusterPlatform {
 public:
  // Throws moesim::Error for a server without GPU or calls, or a link to an unknown server.
  ExecClusterPlatform(std::vector<ExecClusterServer> servers, const std::vector<ClusterLinkSpec>& links,
                      uint32_t call_threads = 64);
  ~ExecClusterPlatform() override;
  ExecClusterPlatform(const ExecClusterPlatform&) = delete;
  ExecClusterPlatform& operator=(const ExecClusterPlatform&) = delete;

  double now() const override;
  uint32_t servers() const override { return static_cast<uint32_t>(servers_.size()); }
  ServerPlatform& server(uint32_t n) override;
  const ServerPlatform& server(uint32_t n) const override;
  void invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
              const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) override;
  void send(uint32_t from, uint32_t to, const Op& op, OpSink* sink, uint32_t token) override;
  double route_latency(uint32_t from, uint32_t to) const override;
  double route_inverse_bandwidth(uint32_t from, uint32_t to) const override;
  void wake_at(double t, OpSink* sink, uint32_t token) override;
  // Throws moesim::Error naming the server when one of its calls failed (a server process died, say).
  void run() override;

  const std::vector<ExecCallRecord>& records() const { return records_; }
  double clock_origin() const { return t0_; }  // CLOCK_MONOTONIC seconds at construction

 private:
  class Server;
  friend class Server;
  struct Done {
    OpSink* sink = nullptr;
    uint32_t token = 0;
    OpTiming timing;
    size_t record = SIZE_MAX;
    CallTiming call;  // the server's times (CLOCK_MONOTONIC)
    std::string error;
  };
  struct Timer {
    double t;
    uint64_t seq;
    OpSink* sink;
    uint32_t token;
    bool operator>(const Timer& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  // Runs `call` on the pool; its result completes (sink, token) with record `record`.
  void launch(OpSink* sink, uint32_t token, size_t record, std::function<CallTiming()> call);
  void worker();

  double t0_ = 0;
  std::vector<std::unique_ptr<Server>> servers_;
  ClusterRoutes routes_;                 // the routes the system prices its choices with
  std::vector<ExecCallRecord> records_;  // the calling thread's only; workers report through Done

  std::mutex mu_;
  std::condition_variable cv_, work_cv_;
  std::deque<Done> done_;
  std::deque<std::function<void()>> work_;
  bool stopping_ = false;
  uint64_t inflight_ = 0;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  uint64_t timer_seq_ = 0;
  std::vector<std::thread> pool_;
};

}  // namespace moesim::exec
