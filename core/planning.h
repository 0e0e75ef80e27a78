// Cache-pool planning (docs/architecture.md §3): split a memory budget between the pools of the compression
// states of ZipMoE §3.4 "Hierarchical Cache Planning" -- full tensors (F), compressed experts (C),
// SM-chunks (S) and E-chunks (E) -- by Appendix C: the Poisson-binomial DP of Alg. 2, the makespan estimate
// of Alg. 3 and the grid search of Alg. 4, over selection probabilities q_r fitted to rank-based inclusion
// probabilities f_r by the modified IPF of Appendix D (Eq. (23)-(24), traces/ipf.h). The full-tensor
// offloading baseline needs no planner: its whole budget is the F pool.
//
// The planner works on one MoE layer: the budget is split evenly over the layers (every layer has the same
// experts and the same rank profile f_r), and pool p of a layer holds S_p = floor(gamma_p * layer budget /
// pool_expert_bytes(p)) experts. Ranks are packed F < C < S < E, then the Miss pool M (the tail).
//
// This header is the vocabulary (pools, plans, the planner's input and interface, implemented in
// core/planning.cpp); ZipMoE's algorithms are declared in policies/planning/zipmoe_planner.h and registered
// as the planning policy "zipmoe". docs/planning.md explains the model and its assumptions.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/compression_state.h"
#include "core/platform.h"
#include "core/registry.h"

namespace moesim {

// The exponent compression ratio rho (compressed exponent bytes / raw exponent bytes) of Gaussian BF16
// weights, used when neither --ratio nor --store gives one. Measured (zstd level 19, K = 4 shards,
// N(0, 0.02^2) weights in DeepSeek-V2-Lite expert shapes, 24 tensors, 132 MiB of BF16) with
//   moesim weights synth --model deepseek-v2-lite --layers 1 --experts 8 --seed 1 -o w.safetensors
//   moesim pack --weights w.safetensors -o s.mst        # default codec zstd:19, --shards 4
//   moesim store info s.mst --json                      # "exponent_ratio": 0.32532212228486035
// i.e. about 2.6 bits per exponent byte, as ZipMoE §2.2 reports for trained weights.
inline constexpr double kGaussianBf16ExponentRatio = 0.3253;
inline constexpr const char* kGaussianBf16ExponentRatioSource =
    "measured: zstd:19, K=4 on Gaussian N(0, 0.02^2) BF16 weights in DeepSeek-V2-Lite expert shapes "
    "(moesim weights synth + pack + store info)";

// rho's range, (0, kMaxExponentRatio]: above 1 compression makes exponents larger (a warning), above 4 the
// value is no exponent codec's. check_exponent_ratio throws moesim::UsageError "NAME must be a number in
// (0, 4] ..., got VALUE" (NaN included), the one check of plan --ratio, run --ratio and a system's e_ratio.
inline constexpr double kMaxExponentRatio = 4;
void check_exponent_ratio(double rho, const std::string& name);
// K, E-chunk shards per tensor: 1..kMaxShards, as a packed store allows (exec/store_writer); check_shards
// throws moesim::UsageError "NAME must be a whole number from 1 to 65536 ..., got VALUE".
inline constexpr uint32_t kMaxShards = 65536;
void check_shards(uint64_t k, const std::string& name);

// The cache hierarchy F < C < S < E of ZipMoE §3.4 (the index is the pool's position in it).
enum class Pool : uint8_t { kF = 0, kC = 1, kS = 2, kE = 3 };
inline constexpr int kPools = 4;
const char* pool_name(Pool p);  // "F", "C", "S", "E"

// The active pool set Lambda, a subset of {F, C, S, E}.
struct PoolSet {
  std::array<bool, kPools> active{};
  bool has(Pool p) const { return active[static_cast<int>(p)]; }
  int size() const;
  std::string str() const;  // "F,C,S,E" in hierarchy order
  // "F,C,S,E" (any order, any subset, case-insensitive). Throws moesim::UsageError naming `option` on an
  // unknown or repeated name or an empty set.
  static PoolSet parse(const std::string& text, const std::string& option = "--pools");
  static PoolSet all() { return PoolSet{{true, true, true, true}}; }
};

// Bytes one expert takes in each pool: F the full tensors, S the SM-chunks, E the compressed E-chunks,
// C both (SM + E). With SM = round(sm_fraction * full) and E = ceil(rho * (full - SM)).
std::array<uint64_t, kPools> pool_expert_bytes(uint64_t expert_bytes, const TensorLayout& layout);

// The profiled delays and shapes of Alg. 3: c one E-chunk decompression, v one E-chunk read, u one
// SM-chunk read (seconds); L decompression threads, K exponent shards per tensor, n tensors per expert.
// `fused`: the E-chunk reads run on the L workers, each fused with its decompression (the prototype of
// ZipMoE §4; the serving system's `io=fused`), not on the I/O thread (§3.3). Then u_dev and v_dev, the
// device's share of an SM-chunk and an E-chunk read (its bytes at the SSD's bandwidth, without the
// per-request latency that reads in flight together overlap), bound what the reads in parallel can gain
// (zipmoe_makespan_estimate, policies/planning/zipmoe_planner.h).
struct PlanDelays {
  double c = 0, v = 0, u = 0;
  uint32_t L = 1, K = 1, n = 1;
  bool fused = false;
  double u_dev = 0, v_dev = 0;
};

// Memory ratios gamma_p (0 for pools outside Lambda; sum 1).
using PoolRatios = std::array<double, kPools>;

// "F=0.2,C=0.5,S=0.3": named pools (case-insensitive, each at most once), values in [0, 1] that sum to 1
// within 1e-9; unnamed pools get 0. Throws moesim::UsageError naming `option` otherwise.
PoolRatios parse_pool_ratios(const std::string& text, const std::string& option = "--pools");
std::string pool_ratios_str(const PoolRatios& r);  // "F=0.2,C=0.5,S=0.3" (pools with gamma > 0)

// The one `--pools` option of `plan` and `run`: either the active set to plan over ("F,C,S,E") or fixed
// ratios ("F=0.2,C=0.5,S=0.3": no planning; the set is the pools it names). Text with '=' is ratios.
struct PoolsOption {
  PoolSet set;
  std::optional<PoolRatios> ratios;
};
PoolsOption parse_pools_option(const std::string& text, const std::string& option = "--pools");

struct PlanningInput {
  uint64_t budget_bytes = 0;  // all layers together; each layer gets budget_bytes / layers
  uint32_t layers = 0;
  uint32_t experts = 0;       // per layer (N)
  uint32_t k = 0;             // experts one invocation selects (the sum of f)
  uint64_t expert_bytes = 0;  // one expert, uncompressed (every tensor)
  TensorLayout layout;        // shards K, SM fraction, rho
  std::vector<double> f;      // [experts] rank-based inclusion probabilities f_r, descending, sum k
  PlanDelays delays;
  PoolSet pools = PoolSet::all();  // Lambda
  double grid = 0.05;              // delta; 1 / delta must be an integer
  uint32_t runners_up = 5;         // other grid points to report, best first
};

struct PoolPlan {
  PoolRatios ratio{};                           // gamma_p
  std::array<uint64_t, kPools> budget_bytes{};  // per layer: floor(gamma_p * layer budget)
  std::array<uint32_t, kPools> experts{};       // S_p per layer
  std::array<uint32_t, kPools> ranks{};         // ranks of the N the pool covers (S_p cut at N, packed)
  std::array<uint64_t, kPools> expert_bytes{};  // pool_expert_bytes
  // Alg. 3's estimate averaged over P(h | sum h = k): I/O and decompression only, per layer invocation.
  double expected_makespan = 0;
  // Expected selected experts found in each pool and in the Miss pool (sums to k).
  std::array<double, kPools> expected_hits{};
  double expected_misses = 0;
  // Bytes used per layer: S_p * expert_bytes[p] (at most budget_bytes[p]).
  uint64_t used_bytes_per_layer() const;
};

// A plan as JSON, the same keys in `moesim plan` and `moesim run --system zipmoe` (docs/cli-json.md):
// ratios, pools {F|C|S|E: ratio, budget_bytes_per_layer, experts_per_layer, ranks_covered,
// bytes_per_expert, expected_hits}, expected_misses, used_bytes_per_layer, expected_makespan_s.
Json pool_plan_json(const PoolPlan& p);

struct PlanResult {
  PoolPlan best;
  std::vector<PoolPlan> runners_up;  // the next best grid points, best first
  std::vector<double> q;             // selection probabilities (zipmoe_selection_probabilities)
  uint64_t grid_points = 0;          // configurations evaluated
};

// Checks an input (layers, experts, k, f, budget, grid, pools). Throws moesim::Error naming the field.
void validate_planning_input(const PlanningInput& in);

class PlanningPolicy {
 public:
  virtual ~PlanningPolicy() = default;
  // Every plan's bytes fit the budget: sum over p of best.used_bytes_per_layer() * layers <= budget.
  virtual PlanResult plan(const PlanningInput& input) = 0;
};

using PlanningRegistry = Registry<PlanningPolicy>;

}  // namespace moesim
