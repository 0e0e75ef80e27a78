// Routing-rewrite policies (docs/architecture.md §3 and §9): lossy policies that change which experts each
// token uses (promote/Max-Rank, Cumulative-Probability-Threshold, Cache-Prior, pruning, BuddyMoE).
// Implementations live in policies/routing/, one file each; `identity` (policies/routing/identity.cpp)
// changes nothing.
//
// Token-level view. A policy sees, for one layer invocation, every token the invocation serves: its top-k
// experts in rank order, their router weights and the full router logits when the trace has them
// (InvocationTokens). It rewrites each token's selection in place (RoutingPolicy::route). The caller --
// the serving pipeline (serving/pipeline.cpp) or the replay (replay/routing_replay.h) -- then derives the
// invocation's unique-expert lookups from the rewritten selections (derive_demands, with the lookup
// semantics of traces/lookup_stream.h: first appearance, token order then slot order), measures the
// deviation (core/routing_metrics.h), and looks the experts up. Oracle information (next use, whole-trace
// frequencies) follows the rewritten routing: see replay/routing_replay.h for how.
//
// Rewrite contract (route):
//   * `out` holds tokens x top_k slots, filled with the router's choice (slot s of a token = its rank-s
//     expert). The policy writes, per token, the experts it keeps and the ones it brings in; an emptied
//     slot is kNoExpert (pruning). A token never holds the same expert twice (the caller checks and throws).
//   * Slot order is lookup order within a token. Policies keep an untouched expert in its slot and put a
//     replacement in the slot of the expert it displaces, so an LRU underneath orders an invocation's
//     experts by router weight (the Cache-Conditional Experts paper, §4.1: "removing experts with higher
//     router weights first").
//   * Policies read residency through ResidencyView only (never change it) and keep their own state
//     (running averages, counters) between invocations; a fresh instance per run.
//   * Identity policies (identity() == true) are never called: callers keep the lookup stream's fast path.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/compression_state.h"
#include "base/json_io.h"
#include "core/registry.h"

namespace moesim {

inline constexpr uint16_t kNoExpert = 0xFFFF;

struct ExpertDemand {
  uint16_t expert = 0;
  uint32_t tokens = 0;    // tokens of the invocation routed to it
  uint32_t next_use = 0;  // next invocation using the same (layer, expert), for oracle caches
};

// What a policy may ask about the cache without touching it.
class ResidencyView {
 public:
  virtual ~ResidencyView() = default;
  virtual ExpertState state(uint32_t layer, uint32_t expert) const = 0;
  // "In cache" for cache-aware routing: any part of the expert is resident (F, C, S or E; for a classic
  // cache, resident). A ZipMoE C/S/E expert still costs a partial load, but far less than a miss.
  bool cached(uint32_t layer, uint32_t expert) const { return state(layer, expert) != ExpertState::kMissed; }
};

// The token-level routing of a whole workload (spans into the trace's columns; built by
// traces/token_routing.h). Invocation i serves the trace rows rows[inv_begin[i] .. inv_begin[i+1]), in the
// order the lookup stream met them.
struct TokenRoutingView {
  uint32_t top_k = 0;
  uint32_t experts = 0;
  std::span<const uint32_t> inv_begin;  // [invocations + 1] into rows; empty: no token view
  std::span<const uint32_t> rows;       // trace row of each token
  std::span<const uint16_t> ids;        // [trace rows * top_k], rank order
  std::span<const float> weights;       // [trace rows * top_k] or empty
  std::span<const float> logits;        // [trace rows * experts] or empty
  bool empty() const { return inv_begin.empty(); }
  size_t invocations() const { return inv_begin.empty() ? 0 : inv_begin.size() - 1; }
};

// One invocation's tokens.
class InvocationTokens {
 public:
  InvocationTokens(const TokenRoutingView& v, uint32_t invocation)
      : v_(&v), begin_(v.inv_begin[invocation]), end_(v.inv_begin[invocation + 1]) {}
  uint32_t size() const { return end_ - begin_; }
  uint32_t top_k() const { return v_->top_k; }
  uint32_t experts() const { return v_->experts; }
  bool has_weights() const { return !v_->weights.empty(); }
  bool has_logits() const { return !v_->logits.empty(); }
  std::span<const uint16_t> ids(uint32_t t) const { return v_->ids.subspan(row(t) * v_->top_k, v_->top_k); }
  std::span<const float> weights(uint32_t t) const {
    return has_weights() ? v_->weights.subspan(row(t) * v_->top_k, v_->top_k) : std::span<const float>{};
  }
  std::span<const float> logits(uint32_t t) const {
    return has_logits() ? v_->logits.subspan(row(t) * v_->experts, v_->experts) : std::span<const float>{};
  }

 private:
  size_t row(uint32_t t) const { return v_->rows[begin_ + t]; }
  const TokenRoutingView* v_;
  uint32_t begin_, end_;
};

struct RoutingContext {
  uint32_t layer = 0;
  bool decode = false;
  uint32_t top_k = 0;
  const ResidencyView* residency = nullptr;
  const InvocationTokens* tokens = nullptr;
};

struct RoutingSetup {
  uint32_t layers = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;
  bool has_weights = false;  // the trace has router weights of the top-k
  bool has_logits = false;   // the trace has full router logits
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  // True for the policy that never changes anything (callers keep their fast path).
  virtual bool identity() const { return false; }
  // Whether the rewrite reads the cache (pruning does not: its rewritten routing is known in advance).
  virtual bool cache_dependent() const { return true; }
  // Rewrites `out` (tokens x top_k, see the header comment).
  virtual void route(const RoutingContext& ctx, std::span<uint16_t> out) = 0;
  // The policy's own counters (BuddyMoE: how often each gate stopped a replacement); an object.
  virtual Json counters() const { return Json::object(); }
};

using RoutingRegistry = Registry<RoutingPolicy, const RoutingSetup&>;
std::unique_ptr<RoutingPolicy> make_routing_policy(const std::string& spec, const RoutingSetup& setup);
std::string routing_canonical_name(const std::string& spec);

// The invocation's unique experts after a rewrite, in first-appearance order (token order, then slot
// order; kNoExpert slots skipped), with their token counts; next_use is left kNeverUsedAgain-free (0) for
// the caller to fill. Throws moesim::Error when a token holds an expert twice or an id >= experts.
// `pos` is scratch of `experts` entries, all kNoSlot on entry and on return.
inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
void derive_demands(std::span<const uint16_t> out, uint32_t top_k, uint32_t experts, std::vector<uint32_t>& pos,
                    std::vector<ExpertDemand>& demands);

}  // namespace moesim
