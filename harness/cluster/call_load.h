// How a call's overhead in an emulated cluster depends on what else is running on the host, for
// `validate --cluster` (harness/cluster/cluster_validation.cpp):
//
//   measure   from a run's calls, the coordinator's overhead of each server op (its time before the server
//   took
//             it and after its work until the coordinator took the reply) against the other calls in flight
//             when it was made, and against those of them that were using a CPU then (in their hand-offs or
//             their work; a call waiting for its unit or for the network uses none).
//   model     CountedCluster: a cluster platform (the simulator's) seen through a counter of the calls in
//             flight, so that a call's overhead can be priced by what was in flight when it was made without
//             the simulator knowing of the model (its call_seconds hook reads the counter).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/json_io.h"
#include "core/cluster_platform.h"

namespace moesim::harness {

// One call of a run on the coordinator's clock. kind 0 dense, 1 expert, 2 invoke (others are not calls of the
// model). received: when the server took it (an invocation: when it began to send); start, end: its work on
// the unit (an invocation: the whole remote part); returned: when the coordinator took the reply.
struct CallSpan {
  uint8_t kind = 0;
  double submitted = 0, received = 0, start = 0, end = 0, returned = 0;
};

// Per kind (dense, expert) and per count of other calls (0 .. 7, and "8" for 8 or more): the median overhead
// (received - submitted) + (returned - end) and the number of calls, by calls in flight ("by_inflight") and
// by those of them using a CPU ("by_active"): {"expert": {"by_inflight": {"0": {"calls": n, "median_s":
// s}}}}.
Json overhead_by_concurrency(const std::vector<CallSpan>& calls);

// What CountedCluster tells of each call (a server op or an invocation): before() just before it is forwarded
// to the inner platform, with the others in flight, so that the inner platform's hooks, asked during the
// forward, can price it; after() once it was, with its server (an invocation's caller) and unit (UINT32_MAX
// for an invocation), whose expected free time is then its work's end.
class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void before(uint64_t in_flight) = 0;
  virtual void after(uint32_t server, uint32_t unit) = 0;
};

// A ClusterPlatform that forwards everything to `inner` and counts the calls in flight as the simulator does
// (server ops and invocations, from submission until their sink hears of them; migrations and wake-ups are
// not calls), telling `observer` of each. A server's submit() goes to the unit that frees first, as the
// simulator's.
class CountedCluster : public ClusterPlatform {
 public:
  CountedCluster(ClusterPlatform& inner, CallObserver& observer);
  ~CountedCluster() override;
  double now() const override { return inner_.now(); }
  uint32_t servers() const override { return inner_.servers(); }
  ServerPlatform& server(uint32_t n) override;
  const ServerPlatform& server(uint32_t n) const override;
  void invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
              const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) override;
  void send(uint32_t from, uint32_t to, const Op& op, OpSink* sink, uint32_t token) override {
    inner_.send(from, to, op, sink, token);
  }
  double route_latency(uint32_t from, uint32_t to) const override { return inner_.route_latency(from, to); }
  double route_inverse_bandwidth(uint32_t from, uint32_t to) const override {
    return inner_.route_inverse_bandwidth(from, to);
  }
  void wake_at(double t, OpSink* sink, uint32_t token) override { inner_.wake_at(t, sink, token); }
  void run() override { inner_.run(); }

 private:
  class Server;
  class Sinks;
  ClusterPlatform& inner_;
  CallObserver& observer_;
  std::unique_ptr<Sinks> sinks_;
  std::vector<std::unique_ptr<Server>> servers_;
};

}  // namespace moesim::harness
