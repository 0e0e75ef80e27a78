// A hand-made workload for pipeline and timeline tests: each step is a list of decode invocations, each the
// unique expert keys it looks up (key = layer * experts + expert; an invocation's layer is its first key's).
// One layer unless `layers` is set before view()/run() (resize_layers). Experts have `tensors` equal tensors
// of expert_bytes in all; next_use is the index of the key's next invocation (what LookupStream computes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serving/classic_residency.h"
#include "serving/pipeline.h"

namespace moesim::test {

struct TinyWorkload {
  ModelCosts costs;
  uint32_t experts = 2;
  uint32_t layers = 1;
  std::vector<uint32_t> step_begin{0}, inv_begin{0}, key, tokens, next_use, step_tokens;
  std::vector<uint8_t> phase, inv_phase;
  std::vector<uint16_t> inv_layer;

  TinyWorkload(const std::vector<std::vector<std::vector<uint32_t>>>& steps,
               const std::vector<std::string>& tensor_names, uint32_t tokens_per_key = 1,
               uint64_t dense_bytes = 0) {
    costs.expert_bytes = {1'000'000};
    costs.tensor_names = tensor_names;
    costs.tensor_share.assign(tensor_names.size(), 1.0 / static_cast<double>(tensor_names.size()));
    costs.dense_bytes = {dense_bytes};
    std::vector<uint32_t> inv_of;  // per lookup, its invocation
    for (const auto& invocations : steps) {
      for (const auto& keys : invocations) {
        for (uint32_t k : keys) {
          key.push_back(k);
          tokens.push_back(tokens_per_key);
          inv_of.push_back(static_cast<uint32_t>(inv_layer.size()));
        }
        inv_begin.push_back(static_cast<uint32_t>(key.size()));
        inv_layer.push_back(0);  // set by set_shape()
        inv_phase.push_back(1);
      }
      phase.push_back(1);
      step_tokens.push_back(1);
      step_begin.push_back(static_cast<uint32_t>(inv_layer.size()));
    }
    next_use.assign(key.size(), 0xFFFFFFFFu);
    for (size_t i = 0; i < key.size(); ++i)
      for (size_t j = i + 1; j < key.size(); ++j)
        if (key[j] == key[i]) {
          next_use[i] = inv_of[j];
          break;
        }
  }

  // `l` layers of `e` experts each; invocations take the layer of their first key.
  void set_shape(uint32_t l, uint32_t e) {
    layers = l;
    experts = e;
    costs.expert_bytes.assign(l, costs.expert_bytes[0]);
    costs.dense_bytes.assign(l, costs.dense_bytes[0]);
    for (size_t i = 0; i + 1 < inv_begin.size(); ++i)
      inv_layer[i] = static_cast<uint16_t>(inv_begin[i] < inv_begin[i + 1] ? key[inv_begin[i]] / e : 0);
  }
  WorkloadView view() const {
    WorkloadView w;
    w.layers = layers;
    w.experts = experts;
    w.top_k = 1;
    w.step_begin = step_begin;
    w.step_phase = phase;
    w.step_tokens = step_tokens;
    w.lookups = LookupView{inv_begin, inv_layer, inv_phase, key, next_use, {}, {}};
    w.tokens = tokens;
    return w;
  }

  // An LRU cache of `capacity_experts` (one full-tensor pool), identity routing, FCFS, on `platform`.
  PipelineResult run(Platform& platform, PipelineOptions po, uint64_t capacity_experts = 1,
                     PrefetchPolicy* prefetch = nullptr) const {
    // Capacity in experts per layer; the cache is global, so it holds capacity_experts * layers experts.
    CacheConfig cc =
        make_cache_config(layers, experts, 1, CacheScope::kGlobal,
                          CacheCapacity{CacheCapacity::Unit::kExperts, capacity_experts}, costs.expert_bytes);
    auto residency =
        serving::make_classic_residency(PolicySpec::parse("lru"), cc, MemoryTier::kUnified, nullptr);
    auto routing = make_routing_policy("identity", RoutingSetup{layers, experts, 1});
    auto sched = make_scheduling_policy("fcfs");
    Pipeline p(costs, po, *residency, *routing, *sched, prefetch);
    return p.run(view(), platform);
  }
};

}  // namespace moesim::test
