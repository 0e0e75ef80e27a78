// Cache-pool planning policies (ARCHITECTURE.md §3): split a memory budget between the pools of the
// compression states (ZipMoE §3.4, Alg. 2-4 and the IPF of Appendix D): full
// tensors (F), compressed experts (C), SM-chunks (S) and E-chunks (E). Implementations go in
// policies/planning/, one file each. The full-tensor offloading baseline needs no planner: its whole
// budget is the F pool.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/compression_state.h"
#include "core/registry.h"

namespace moesim {

struct PoolPlan {
  uint64_t full_bytes = 0;        // F
  uint64_t compressed_bytes = 0;  // C (E-chunks + SM-chunks of the same experts)
  uint64_t sm_bytes = 0;          // S
  uint64_t e_bytes = 0;           // E
  uint64_t total() const { return full_bytes + compressed_bytes + sm_bytes + e_bytes; }
};

struct PlanningInput {
  uint64_t budget_bytes = 0;
  uint32_t layers = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;
  std::vector<uint64_t> expert_bytes;       // [layers], uncompressed
  TensorLayout layout;                      // shards K, SM fraction, compression ratio rho
  std::span<const uint64_t> key_frequency;  // [layers * experts] lookups per key (the skew model's input)
};

class PlanningPolicy {
 public:
  virtual ~PlanningPolicy() = default;
  // Must return a plan with total() <= input.budget_bytes.
  virtual PoolPlan plan(const PlanningInput& input) = 0;
};

using PlanningRegistry = Registry<PlanningPolicy>;

}  // namespace moesim
