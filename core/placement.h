// Expert placement for the multi-server model (docs/architecture.md §3, docs/placement.md): which GPUs of
// which servers hold a replica of each (layer, expert) -- uniform, redundance, smartmoe, eplb, prism -- the
// proxy objective of Prism (Accelerating Edge Inference for Distributed MoE Models with Latency-Optimized
// Expert Placement), Eq. 2, and its migration rule, Eq. 3-4. The policies are in policies/placement/, one file
// each; the functions declared here are implemented in policies/placement/placement_common.cpp and
// migration.cpp (link moesim_policies).
//
// The model (Prism §III-B): N servers, server n has G_n GPUs, GPU g of server n has mem_{n,g} bytes for
// experts. Every expert of layer l takes expert_bytes[l]. The decision z_{n,g}^e says whether GPU g of server
// n holds expert e. A placement is valid when
//   coverage: every (layer, expert) has at least one replica (Prism's first constraint);
//   memory:   on every GPU, the bytes of the experts it holds <= its memory (the second constraint);
//   distinct: a GPU holds an expert at most once (a second copy on one GPU serves nothing).
// Two GPUs of one server may both hold an expert (EPLB replicates for load, not for locality).
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/registry.h"

namespace moesim {

struct PlacementGpu {
  uint64_t memory_bytes = 0;  // mem_{n,g}: the memory for experts
  double speed = 1;           // relative compute throughput; the load balancers divide load by it
};

struct PlacementServer {
  std::string name;  // for messages
  std::vector<PlacementGpu> gpus;
};

struct PlacementInput {
  uint32_t layers = 0;
  uint32_t experts = 0;                  // per layer (|E_l| = E)
  std::vector<uint64_t> expert_bytes;    // [layers], > 0
  std::vector<PlacementServer> servers;  // >= 1, each with >= 1 GPU
  // load[n][l * experts + e] = f_n^l(e): how often server n's own requests activated expert e of layer l on
  // its profiling window (task skew: every server has its own). Finite, >= 0; any scale (counts or shares).
  std::vector<std::vector<double>> load;
  uint64_t seed = 1;  // the random policies' draws; same seed, same placement

  uint32_t keys() const { return layers * experts; }
  uint32_t gpu_count() const;
};

struct Replica {
  uint32_t server = 0;
  uint32_t gpu = 0;  // index into servers[server].gpus
  auto operator<=>(const Replica&) const = default;
};

struct Placement {
  uint32_t layers = 0;
  uint32_t experts = 0;
  // replicas[l * experts + e]: the GPUs holding expert e of layer l, sorted, distinct, at least one.
  std::vector<std::vector<Replica>> replicas;

  // Whether any GPU of `server` holds the key (Prism: 1_remote(n, e) = 0).
  bool on_server(uint32_t key, uint32_t server) const;
};

// Throws moesim::Error naming the field when the input's shapes or values are wrong (no server, a server
// without GPUs, load of the wrong length, a negative or non-finite load, a zero expert size).
void validate_placement_input(const PlacementInput& input);

// Throws moesim::Error when one replica of every expert cannot fit the GPUs' memory, naming the first layer
// that does not fit and the memory missing, e.g. "layer 7: 12 experts of 3.50 MiB need 42.00 MiB more than
// the 3 servers' free memory". Packs layers in order, each expert onto the GPU with the most free memory:
// exact when every layer's experts have one size; with several sizes a packable instance may be rejected.
void check_coverable(const PlacementInput& input);

// The first broken invariant (coverage, memory, distinct, indices) of `p` for `input`, or "" when valid.
std::string placement_violation(const PlacementInput& input, const Placement& p);

// Prism, Eq. 2: sum over servers n and keys of f_n(key) * 1_remote(n, key) -- the load that server n's requests
// send to other servers. In the load's units (multiply by a remote invocation's cost for seconds).
double proxy_cost(const Placement& p, const std::vector<std::vector<double>>& load);

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  // Validates the input, checks coverability (both throw moesim::Error), places, and checks the result
  // (std::logic_error when a policy breaks the contract above: a bug, never the user's input).
  Placement place(const PlacementInput& input);

 protected:
  virtual Placement do_place(const PlacementInput& input) = 0;
};

using PlacementRegistry = Registry<PlacementPolicy>;

// ---- Migration (Prism, Eq. 3-4) ----

struct MigrationCosts {
  // Seconds one remote invocation costs (the historical mean of its communication and computation, as
  // Prism §IV-A estimates it): turns Eq. 2's load into seconds, so that Eq. 4 compares times.
  double remote_invocation_s = 0;
  // speed_{n,g} of Eq. 3: bytes per second GPU g of server n loads (or frees) an expert at. [servers][gpus]
  std::vector<std::vector<double>> gpu_io_bytes_per_s;
  // Eq. 3 counts every changed z_{n,g}^e, a dropped replica as well as a loaded one. false: loads only.
  bool count_removals = true;
};

struct ExpertMove {
  uint32_t layer = 0;
  uint32_t expert = 0;
  Replica to;             // the GPU that loads (or, for a drop, frees) the expert
  bool has_source = false;
  Replica from;           // a current replica to copy from: one on to.server when there is one, else the lowest
  uint64_t bytes = 0;     // expert_bytes[layer]
  double seconds = 0;     // bytes / speed of `to`: its term of Eq. 3
};

struct MigrationDecision {
  bool migrate = false;    // Eq. 4: cost_new_s + migration_s < cost_current_s
  double cost_current_s = 0;  // C(P): Eq. 2 on the load, times remote_invocation_s
  double cost_new_s = 0;      // C(P')
  double migration_s = 0;     // T_mig(P, P'), Eq. 3
  std::vector<ExpertMove> loads;  // z' = 1, z = 0: load these first, so coverage holds throughout
  std::vector<ExpertMove> drops;  // z' = 0, z = 1: free these after (no source)
  uint64_t bytes_loaded() const;
};

// Pure: compares the current placement with a new plan on the accumulated load (same shapes as
// PlacementInput::load) and says whether to migrate (Eq. 4) and which experts move. Throws moesim::Error when
// the shapes disagree or a speed is not positive.
MigrationDecision decide_migration(const Placement& current, const Placement& plan,
                                   const std::vector<std::vector<double>>& load,
                                   const std::vector<uint64_t>& expert_bytes, const MigrationCosts& costs);

}  // namespace moesim
