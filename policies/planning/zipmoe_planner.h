// ZipMoE's hierarchical cache planner (ZipMoE §3.4, Appendix C Alg. 2-4, Appendix D Eq. (23)-(24)), over the
// vocabulary of core/planning.h. Registered as the planning policy "zipmoe" (PlanningRegistry); the functions
// below are its steps, exposed for `moesim plan`, the zipmoe system's wiring and the tests.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/planning.h"
#include "core/platform.h"

namespace moesim {

// Asks `estimator` for the expected durations of representative ops of one tensor of `tensor_bytes`:
// u = kSsdRead of the SM-chunk (round(sm_fraction * tensor_bytes)), v = kSsdRead of one E-chunk
// (ceil(rho * E_raw / K), E_raw = tensor_bytes - SM), c = kDecompress of one shard's output (E_raw / K).
// `fused` (the E-chunk reads on the workers, PlanDelays::fused): also u_dev = u - r0 and v_dev = v - r0,
// r0 the estimate of a read of no bytes (the per-request latency). Throws moesim::Error when L, K or n is 0.
PlanDelays zipmoe_plan_delays(const OpEstimator& estimator, uint64_t tensor_bytes, const TensorLayout& layout,
                              uint32_t L, uint32_t tensors, bool fused = false);

// Alg. 2, as printed: Phi_S(h) for h = 0..|S|, the probability that exactly h of the independent Bernoulli
// trials with probabilities q (the partial list P_S) succeed.
std::vector<double> hit_distribution(std::span<const double> q);

// Alg. 3, as printed: the makespan of one sparse layer with cache hit pattern h = (hF, hC, hS, hE) of k
// selected experts: max(T_I/O, T_decomp) with T_I/O = n_SM u + n_E v and T_decomp = (n_E v + n_D c) / L.
// Sums I/O and decompression only: token execution (expert compute) is excluded, as in the paper.
//
// With d.fused (ZipMoE §4's prototype: each E-chunk read is its worker's, fused with the decompression),
// the same counts n_SM, n_E, n_D spread over three resources, and the estimate is the busiest one's load:
//   T_I/O    = n_SM u                     the I/O thread reads only SM-chunks
//   T_decomp = (n_E v + n_D c) / L        a fused op holds its worker for v + c, a cached E-chunk's for c:
//                                         Alg. 3's own penalty of a decompression by its read, now literal
//   T_SSD    = n_SM u_dev + n_E v_dev     the device: reads in flight together overlap their latencies but
//                                         share its bandwidth
//   estimate = max(T_I/O, T_decomp, T_SSD)
// Where the serial I/O thread is the bottleneck (T_I/O of Alg. 3 above T_decomp), this is less by up to
// n_E v: the E-chunk reads leave the I/O thread for the L workers.
double zipmoe_makespan_estimate(uint32_t k, const std::array<uint32_t, kPools>& h, const PlanDelays& d);

// The selection probabilities q_r of Appendix D: weights w_r of the IPF fit of Eq. (24) to f (sum f = k,
// every f_r in [0, 1)), rescaled by the one factor s with sum s w_r / (1 + s w_r) = k, then
// q_r = s w_r / (1 + s w_r). Any scale gives the same distribution conditioned on k selections (Eq. (22));
// this one keeps q close to f and Phi_N(k) far from underflow. Throws moesim::Error on invalid f.
std::vector<double> zipmoe_selection_probabilities(std::span<const double> f, uint32_t k);

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

}  // namespace moesim
