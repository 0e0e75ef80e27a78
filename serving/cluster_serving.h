// The edge cluster of Prism (Accelerating Edge Inference for Distributed MoE Models with Latency-Optimized
// Expert Placement, §III and §IV-C): `moesim cluster` (docs/cluster.md). A cluster system of the registry
// (serving/system.h; serving/systems/prism_system.cpp) serves every server's requests on a ClusterPlatform
// (core/cluster_platform.h): simulated (sim/sim_cluster_platform.h) or the emulated cluster's processes. The
// system decides; the platform runs ops and messages and says when they end.
//
// Servers (ClusterSpec) each receive their own requests: Poisson arrivals with the server's mean interval
// (seeded draws) or replayed timestamps, in [0, duration). A request is one sequence of the server's traces,
// drawn round robin (or at random, seeded). It runs pass after pass: a prefill pass per MoE layer over all
// prompt tokens, then a pass per (decode token, layer). A pass:
//   1. the dense part (attention, router, shared experts) on the server's GPU 0;
//   2. then each routed expert of the pass: placed on the server (Prism's 1_remote = 0) -> computed on the
//      local replica's GPU that frees first; elsewhere -> the tokens' activations (hidden x tokens x dtype
//      bytes) go over the network's route to the replica with the earliest expected finish (idle route there
//      and back, its GPU's queue, its compute estimate), compute there, and the result (as many bytes) comes
//      back. Experts sent to one server travel as one message;
//   3. the pass ends when the slowest expert (local or returned) is done: Prism Eq. 1's max over experts.
// Requests are not batched: each runs on its own, queueing on the platform's shared GPUs and links.
//
// Placement: PlacementRegistry's policy on each server's profile -- the expert activations of the first
// `profile_tokens` tokens of its traces (Prism §IV-A: from historical data). Migration (Eq. 3-4), every
// `migrate_every_s`: the policy plans again on the activations of the run so far (accumulated, as in the
// paper's Fig. 7); decide_migration() prices Eq. 2 with the mean measured remote invocation (round trip of
// its message) since the last placement change; when Eq. 4 holds the moves run -- each new replica's bytes
// over the route from its source, then its load into the target GPU (a kTransfer op on that GPU: bytes /
// migration_io_bytes_per_s in simulation) -- and the new placement serves from when the last move ends.
//
// Not modelled: batching, KV-cache growth (the dense cost does not depend on the context), memory while a
// migration holds both copies. Deterministic on a deterministic platform: same inputs and seed, bit-identical
// results.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/cluster_platform.h"
#include "core/cluster_spec.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/params.h"
#include "core/placement.h"
#include "traces/trace.h"

namespace moesim::serving {

struct ClusterServer {
  std::string name;
  HardwareProfile hw;
  uint32_t gpus = 1;
  uint64_t gpu_memory = 0;               // bytes for experts per GPU
  std::vector<std::string> trace_paths;  // for messages; may be empty
  std::vector<traces::Trace> traces;
  ArrivalSpec arrival;
  double nic_bandwidth = 0;  // bytes/s each direction; 0: the interface is not a queue of its own
};

struct ClusterInput {
  ModelSpec model;
  std::vector<ClusterServer> servers;
  std::vector<ClusterLinkSpec> links;  // ClusterSpec::topology()
};

// The servers' names, in order (for sim/network.h and messages).
std::vector<std::string> server_names(const ClusterInput& in);

// Loads the model, the hardware profiles and the traces a spec names. Throws moesim::Error naming the spec
// and the server for a trace of another model (its layers or experts differ from the model's) or a trace
// without sequences.
ClusterInput load_cluster_input(const ClusterSpec& spec);
// The cluster's model: the spec's "model", else the preset the first server's first trace names by its model
// (as `moesim run` finds one); a moesim::Error naming the spec, the trace and the command that makes a model
// when there is none.
ModelSpec cluster_model(const ClusterSpec& spec);

struct ClusterOptions {
  PolicySpec system{"prism", {}};   // a cluster system of SystemRegistry (serving/system.h)
  std::string placement = "prism";  // a PlacementRegistry spec ("eplb:groups=2")
  double duration_s = 1800;         // arrivals in [0, duration_s); the run ends when the last request does
  double migrate_every_s = 0;       // 0: never re-plan
  uint64_t seed = 1;
  uint64_t profile_tokens = 1000;  // per server, from the start of its traces
  uint32_t activation_bytes = 0;   // bytes of one shipped activation value; 0: the model's dtype (a real
                                   // cluster that ships FP32 activations sets 4)
  double bucket_s = 60;            // width of the local compute ratio's time buckets
  bool random_draw = false;        // requests draw their sequence at random instead of round robin
  bool record_timeline = false;
  // With record_timeline: only slices that start in [timeline_from_s, timeline_to_s] are kept (a whole run
  // records about 30 bytes of memory and 100 bytes of file per expert invocation).
  double timeline_from_s = 0, timeline_to_s = std::numeric_limits<double>::infinity();
  std::function<void(double now_s)> on_progress;  // called at each arrival; may be empty
};

struct RequestRecord {
  uint32_t server = 0;  // where it arrived (a redirected request is reported by it, not where it ran)
  double arrival = 0, first_token = 0, end = 0;
  uint32_t tokens_after_first = 0;  // tokens produced after the first (TPOT's divisor)
};

struct MigrationRecord {
  bool migrated = false;  // Eq. 4 held
  double time_s = 0;      // the check that decided it
  double done_s = 0;      // when the last move ended and the new placement took over
  uint32_t experts_loaded = 0, experts_dropped = 0;
  uint64_t bytes = 0;
  double cost_current_s = 0, cost_new_s = 0, migration_s = 0;  // Eq. 4's terms
};

struct ClusterResult {
  std::vector<RequestRecord> requests;  // in arrival order (by time, then server)
  std::vector<uint64_t> local_invocations,
      remote_invocations;  // [server]: expert invocations of its requests
  // [server]: its requests' layer passes, and those that invoked an expert on another server.
  std::vector<uint64_t> passes, remote_passes;
  // Where its requests' time went: their dense and local expert ops on its own GPUs (start to end), and their
  // remote invocations' round trips (sent to returned: the network both ways, the peer's queue and work).
  std::vector<double> local_compute_s, remote_round_trip_s;
  std::vector<std::vector<uint64_t>> bucket_local, bucket_total;  // [server][bucket]
  double bucket_s = 60;
  double proxy_cost = 0;          // Eq. 2, token-weighted, under the placement in force at each activation
  double proxy_cost_initial = 0;  // Eq. 2 of the initial placement on the whole run's activations
  struct Link {
    uint32_t from = 0, to = 0;
    uint64_t bytes = 0, messages = 0;
    double busy_s = 0;
  };
  std::vector<Link> links;  // directed; the platform's
  struct Nic {
    double bandwidth = 0;  // bytes/s
    uint64_t out_bytes = 0, in_bytes = 0;
    double out_busy_s = 0, in_busy_s = 0;
  };
  std::vector<Nic>
      nics;  // [server], only when some server's interface is a queue (ClusterServer::nic_bandwidth)
  // [server], only from a system that serves each request on one server with its experts offloaded to host
  // memory (moe-infinity): its GPUs' expert caches, and the requests it served for other servers.
  struct Offload {
    uint64_t lookups = 0, hits = 0;      // expert lookups of the passes it served (one per expert per pass)
    uint64_t loads = 0, load_bytes = 0;  // experts loaded host -> GPU (a lookup that waits for a load in
                                         // flight is a hit and loads nothing)
    uint64_t served = 0;                 // requests it served (its own and redirected ones)
    uint64_t redirected = 0;             // its requests served by another server
  };
  std::vector<Offload> offload;
  std::vector<MigrationRecord> migrations;  // the checks where Eq. 4 held
  std::vector<MigrationRecord> decisions;   // every check that compared a plan (not while one is loading)
  uint32_t migration_checks = 0;
  Placement initial_placement, final_placement;
  double end_s = 0;                    // when the last request ended
  uint64_t events = 0;                 // the simulated platform's event count
  std::vector<ClusterSlice> timeline;  // the platform's (record_timeline)
};

// A cluster system (serving/systems/; System::cluster()).
class ClusterSystem {
 public:
  virtual ~ClusterSystem() = default;
  // Serves the servers' requests on `platform` (fresh: its clock at 0) until the last request ends. Fills the
  // result but for what only the platform knows (links, nics, events, timeline: the caller adds them).
  // Throws moesim::Error for a placement that cannot cover every expert (naming the layer and the memory
  // missing, core/placement.h); moesim::UsageError for an unknown placement.
  virtual ClusterResult serve(const ClusterInput& in, const ClusterOptions& opt,
                              ClusterPlatform& platform) const = 0;
};

// A cluster's compute op on one of a server's GPUs (kGpu): an expert's (OpKind::kExpertCompute: its weights
// read once, 2 FLOPs per weight per token) or a layer's dense part (kDenseCompute: the model's dense bytes, 2
// FLOPs per dense weight per token), labelled with its layer and expert. The one description that the system,
// its platforms' estimates and `validate --cluster` share.
Op cluster_compute_op(const ModelSpec& model, OpKind kind, uint16_t layer, uint32_t tokens,
                      uint16_t expert = kNoLabel);

class System;
// A cluster system of the registry from its spec. Throws moesim::UsageError for an unknown system, a bad spec
// or a system of one device (naming the cluster systems).
std::unique_ptr<System> make_cluster_system(const PolicySpec& spec);
// opt.system's serve(). Throws moesim::UsageError for an unknown system or one that serves no cluster.
ClusterResult serve_cluster(const ClusterInput& in, const ClusterOptions& opt, ClusterPlatform& platform);

// The result as `moesim cluster --json` writes it (docs/cluster.md lists the keys).
Json cluster_result_json(const ClusterInput& input, const ClusterOptions& options, const ClusterResult& r);
// Chrome trace events (Perfetto): a process per server (a thread per GPU) and per link (a thread per
// direction), one event per line, written to `path` atomically as they are formatted ("-" = stdout). Warns
// (base/warnings.h) before writing a file estimated above 100 MB.
void write_cluster_timeline(const std::string& path, const ClusterInput& input, const ClusterResult& r);

}  // namespace moesim::serving
