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
// Declared here, implemented in policies/planning/zipmoe_planner.cpp (it needs traces/ipf.h, which core may
// not include); link moesim_policies to use it. docs/planning.md explains the model and its assumptions.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/compression_state.h"
#include "core/json_io.h"
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
struct PlanDelays {
  double c = 0, v = 0, u = 0;
  uint32_t L = 1, K = 1, n = 1;
};

// Asks `estimator` for the expected durations of representative ops of one tensor of `tensor_bytes`:
// u = kSsdRead of the SM-chunk (round(sm_fraction * tensor_bytes)), v = kSsdRead of one E-chunk
// (ceil(rho * E_raw / K), E_raw = tensor_bytes - SM), c = kDecompress of one shard's output (E_raw / K).
// Throws moesim::Error when L, K or n is 0.
PlanDelays zipmoe_plan_delays(const OpEstimator& estimator, uint64_t tensor_bytes, const TensorLayout& layout,
                              uint32_t L, uint32_t tensors);

// Alg. 2, as printed: Phi_S(h) for h = 0..|S|, the probability that exactly h of the independent Bernoulli
// trials with probabilities q (the partial list P_S) succeed.
std::vector<double> hit_distribution(std::span<const double> q);

// Alg. 3, as printed: the makespan of one sparse layer with cache hit pattern h = (hF, hC, hS, hE) of k
// selected experts: max(T_I/O, T_decomp) with T_I/O = n_SM u + n_E v and T_decomp = (n_E v + n_D c) / L.
// Sums I/O and decompression only: token execution (expert compute) is excluded, as in the paper.
double zipmoe_makespan_estimate(uint32_t k, const std::array<uint32_t, kPools>& h, const PlanDelays& d);

// The selection probabilities q_r of Appendix D: weights w_r of the IPF fit of Eq. (24) to f (sum f = k,
// every f_r in [0, 1)), rescaled by the one factor s with sum s w_r / (1 + s w_r) = k, then
// q_r = s w_r / (1 + s w_r). Any scale gives the same distribution conditioned on k selections (Eq. (22));
// this one keeps q close to f and Phi_N(k) far from underflow. Throws moesim::Error on invalid f.
std::vector<double> zipmoe_selection_probabilities(std::span<const double> f, uint32_t k);

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

// Alg. 4: the grid search over gamma (sum over Lambda = 1, step delta) minimising the expected makespan;
// ties keep the earliest grid point (the enumeration is lexicographic in (gamma_F, gamma_C, gamma_S,
// gamma_E), each from 0 up).
PlanResult zipmoe_plan(const PlanningInput& in);

// The same PoolPlan for ratios given by the user (no search): sizes, ranks and the expected makespan.
PoolPlan zipmoe_evaluate(const PlanningInput& in, const PoolRatios& ratios);

// The same expectation as zipmoe_evaluate's expected_makespan, by the literal four-deep loop of Alg. 4
// lines 16-29 over h_p = 0..S_p (with its break). Exponential in the pools' sizes: a test oracle for the
// bounded enumeration, not for use.
double zipmoe_expected_makespan_literal(const PlanningInput& in, const PoolRatios& ratios);

class PlanningPolicy {
 public:
  virtual ~PlanningPolicy() = default;
  // Every plan's bytes fit the budget: sum over p of best.used_bytes_per_layer() * layers <= budget.
  virtual PlanResult plan(const PlanningInput& input) = 0;
};

using PlanningRegistry = Registry<PlanningPolicy>;

}  // namespace moesim
