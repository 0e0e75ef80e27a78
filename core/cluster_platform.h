// The platform a cluster system runs on (docs/cluster.md): servers under one clock, each a Platform of the
// serving spine (core/platform.h) whose GPUs are the units of ResourceClass::kGpu, and the network between
// them as a resource of its own. Simulated by sim/sim_cluster_platform.h; the emulated cluster's processes
// are the real one. A cluster system (serving/cluster_serving.h; the registry's `prism`) makes every decision
// -- which replica, which GPU, when to migrate -- and hands the platform only ops whose inputs are ready, as
// the single-device pipeline does.
//
// Contract (as Platform's): submit_on() and send() never call the sink synchronously; completions are
// reported from inside run(), which returns when nothing is pending; the sink may submit further work from
// op_done(). Times are seconds since the platform was created.
#pragma once

#include <cstdint>
#include <vector>

#include "core/hardware_profile.h"
#include "core/platform.h"

namespace moesim {

// One server: its dense and expert computations run on its GPUs (kGpu units), one op at a time per GPU, in
// the order they were submitted (FIFO); so does a migration's load of an expert into a GPU (a kTransfer op on
// kGpu, named by its layer and expert). A server may also offer host links, the units of kLink (one per GPU,
// units(kLink) of them; none on a platform without): an expert loaded from host memory into GPU g is a
// kTransfer op on kLink unit g, FIFO on that link, beside the GPU's compute. Platform::submit runs an op on
// the unit that frees first.
class ServerPlatform : public Platform {
 public:
  // Runs `op` on unit `unit` of its resource class (a replica's GPU, chosen by the system).
  virtual void submit_on(uint32_t unit, const Op& op, OpSink* sink, uint32_t token) = 0;
  // When the unit is expected to have run what is queued on it (now() or earlier when idle): the "expected
  // finish" a system chooses replicas by. A real platform answers from what it knows of the unit.
  virtual double unit_free_at(ResourceClass r, uint32_t unit) const = 0;
};

// A GPU job or a hop, for cluster timelines: process = server, or servers + undirected link index; thread =
// GPU (then the server's host links), or link direction (0: a -> b); kind 0 dense, 1 expert, 2 activations,
// 3 migration, 4 an expert's load from host memory.
struct ClusterSlice {
  uint32_t process = 0;
  uint32_t thread = 0;
  double start = 0, end = 0;
  uint8_t kind = 0;
  uint16_t layer = 0;
};

// One expert of a remote invocation: its compute op and the holder's GPU that runs it.
struct RemoteWork {
  uint32_t unit = 0;
  Op op;
};

class ClusterPlatform {
 public:
  virtual ~ClusterPlatform() = default;
  virtual double now() const = 0;
  virtual uint32_t servers() const = 0;
  virtual ServerPlatform& server(uint32_t n) = 0;
  virtual const ServerPlatform& server(uint32_t n) const = 0;
  // A remote invocation (Prism's 1_remote = 1): `bytes` of activations go from server `from` to `to` along
  // the network's route, the works compute on `to`'s units (each queued on its unit), and their results, as
  // many bytes, come back. sink->op_done(token, timing) when they are back: timing.start = sent, end =
  // returned.
  virtual void invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
                      const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) = 0;
  // Sends op.bytes of an expert's weights (op: kTransfer on kLink naming its layer and expert: a migration)
  // from server `from` to `to` along the route; sink->op_done(token, timing) when they have arrived:
  // timing.start = sent, end = arrival.
  virtual void send(uint32_t from, uint32_t to, const Op& op, OpSink* sink, uint32_t token) = 0;
  // The route on idle links: its latency (seconds) and seconds per byte.
  virtual double route_latency(uint32_t from, uint32_t to) const = 0;
  virtual double route_inverse_bandwidth(uint32_t from, uint32_t to) const = 0;
  // sink->op_done(token, {t, t}) at time max(t, now()).
  virtual void wake_at(double t, OpSink* sink, uint32_t token) = 0;
  // Runs until nothing is pending (no op, message or wake-up).
  virtual void run() = 0;
};

// Prism's speed_{n,g} (Eq. 3): the bytes per second a GPU loads an expert at -- over its PCIe link, or at its
// memory bandwidth on a unified-memory machine. The one formula that the system's Eq. 4 and a simulated
// migration's load share.
inline double migration_io_bytes_per_s(const HardwareProfile& hw) {
  return hw.link_kind == "pcie" && hw.link_bandwidth > 0 ? hw.link_bandwidth : hw.gpu_memory_bandwidth;
}

}  // namespace moesim
