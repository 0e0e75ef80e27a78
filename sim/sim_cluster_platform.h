// A cluster in simulated time (core/cluster_platform.h): the servers of `moesim cluster` and their network on
// one event clock.
//
//   GPUs       each a FIFO unit (sim/network.h's FifoUnit). An op's duration is its server's cost model's
//              (core/cost_model.h's cluster_op_seconds: the dense and expert rooflines on the server's
//              hardware profile; a migration's load, kTransfer on kGpu, bytes /
//              migration_io_bytes_per_s(hw)).
//   host links one FIFO per GPU, host memory -> that GPU (its PCIe link), the kLink units of a server: an
//              expert loaded from host memory (kTransfer on kLink, unit = the GPU) holds it for bytes /
//              migration_io_bytes_per_s(hw), while the GPU computes on (copies overlap compute, as on a
//              copy engine). Timeline thread: the server's GPUs, then its host links.
//   network    sim/network.h: routes by shortest path over the links, each direction a FIFO, store and
//              forward at every hop, the servers' interfaces as queues of their own where given.
//   invoke     the activations' route there; on arrival each work queued on its GPU at once; when the last
//              one ends, the results' route back.
//
// A job's end is known when it is submitted (FIFO, durations from the model), so a completion is one event at
// that end. Records, when asked, a timeline slice per GPU job and per hop that starts inside the window.
// Deterministic: the same submissions give bit-identical times.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster_platform.h"
#include "core/cluster_spec.h"
#include "core/cost_model.h"
#include "core/hardware_profile.h"
#include "sim/event_queue.h"
#include "sim/network.h"

namespace moesim::sim {

struct SimClusterServer {
  std::string name;
  HardwareProfile hw;
  uint32_t gpus = 1;
  double nic_bandwidth = 0;  // bytes/s each direction; 0: the interface is not a queue of its own
};

struct SimClusterOptions {
  bool record_timeline = false;
  double timeline_from_s = 0, timeline_to_s = std::numeric_limits<double>::infinity();
  // What a real cluster adds around the model, for `validate --cluster` (none in a plain simulation):
  // every server op and every invocation is a call from the coordinator, half of call_overhead_s before the
  // op reaches its unit (or the activations leave), half after it ends (or they are back), on no unit; an
  // invocation costs invoke_overhead_s more (its remote call's fixed cost beyond the links).
  double call_overhead_s = 0, invoke_overhead_s = 0;
  // And a call's overhead grows by this much per other call in flight when it is made (the coordinator's
  // threads and connections are shared: concurrent calls slow each other).
  double call_overhead_per_inflight_s = 0;
  // Servers that share `shared_cores` CPU cores (an emulated cluster on a machine with fewer cores than its
  // servers' units): a unit's work takes its time times max(1, units working at its start / cores). 0: every
  // unit has a core of its own.
  uint32_t shared_cores = 0;
  // Replay (the structure check): durations measured in a real run instead of the model's. An empty hook,
  // or one that answers < 0, leaves the model's. unit_seconds: an op's time on its unit. call_seconds: the
  // call's time before (after = false) or after its op. transfer_seconds: an invocation's way there (back =
  // false) or back, measured with its queueing, so it replaces the links and holds none of them.
  std::function<double(uint32_t server, const Op& op)> unit_seconds;
  std::function<double(uint32_t server, const Op& op, bool after)> call_seconds;
  std::function<double(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes, bool back)>
      transfer_seconds;
};

class SimClusterPlatform : public ClusterPlatform, private EventHandler {
 public:
  // Throws moesim::Error for a server without GPU and, from sim/network.h, a link to an unknown server or a
  // disconnected network.
  SimClusterPlatform(const std::vector<SimClusterServer>& servers, const std::vector<ClusterLinkSpec>& links,
                     const SimClusterOptions& opt = {});
  ~SimClusterPlatform() override;
  // Its servers refer to it: it stays where it was made.
  SimClusterPlatform(const SimClusterPlatform&) = delete;
  SimClusterPlatform& operator=(const SimClusterPlatform&) = delete;

  double now() const override { return engine_.now(); }
  uint32_t servers() const override { return static_cast<uint32_t>(servers_.size()); }
  ServerPlatform& server(uint32_t n) override;
  const ServerPlatform& server(uint32_t n) const override;
  void invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
              const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) override;
  void send(uint32_t from, uint32_t to, const Op& op, OpSink* sink, uint32_t token) override;
  double route_latency(uint32_t from, uint32_t to) const override;
  double route_inverse_bandwidth(uint32_t from, uint32_t to) const override;
  void wake_at(double t, OpSink* sink, uint32_t token) override;
  void run() override;

  const Network& network() const { return net_; }
  uint64_t events() const { return engine_.fired(); }
  std::vector<ClusterSlice>& timeline() { return timeline_; }

 private:
  class Server;
  friend class Server;
  struct Pending {
    OpSink* sink = nullptr;
    uint32_t token = 0;
    OpTiming timing;
    // A message between hops: its route's remaining links.
    uint32_t from = 0, to = 0, hop = 0;
    uint64_t bytes = 0;
    uint16_t layer = 0;
    uint8_t kind = 0;
    enum Stage : uint8_t { kDone, kMessage, kThere, kComputed, kBack, kPost } stage = kDone;
    double post = 0;      // the call's time after its op, before the sink hears of it
    bool direct = false;  // this way was a replayed duration, not the links' hops
    bool call = false;    // a server op or an invocation: counted in calls_in_flight_ until reported
    std::vector<RemoteWork> works;  // an invocation's, computed at `to` when it arrives
  };
  void on_event(uint64_t arg) override;
  void start_route(uint32_t id, double ready);
  double call_seconds(uint32_t server, const Op& op, bool after) const;
  double working_units(double at) const;  // units with work at `at`, plus one
  Pending message(uint32_t from, uint32_t to, uint64_t bytes, uint16_t layer, OpSink* sink,
                  uint32_t token) const;
  uint32_t pend(Pending p);
  double hop(uint32_t link, double ready, uint64_t bytes, uint8_t kind, uint16_t layer);
  void record(uint32_t process, uint32_t thread, double start, double end, uint8_t kind, uint16_t layer);

  SimClusterOptions opt_;
  EventEngine engine_;
  Network net_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<Pending> pending_;
  std::vector<uint32_t> free_;
  std::vector<ClusterSlice> timeline_;
  uint64_t calls_in_flight_ = 0;  // server ops and invocations submitted, not yet reported
};

}  // namespace moesim::sim
