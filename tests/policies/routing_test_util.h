// One invocation of hand-written tokens for routing-policy unit tests, and a fake residency.
#pragma once

#include <set>
#include <vector>

#include "core/routing.h"

namespace moesim::test {

struct HandTokens {
  uint32_t top_k, experts;
  std::vector<uint16_t> ids;  // [tokens * top_k]
  std::vector<float> weights, logits;
  std::vector<uint32_t> inv_begin, rows;
  TokenRoutingView view;

  HandTokens(uint32_t k, uint32_t e) : top_k(k), experts(e) {}
  void add(const std::vector<uint16_t>& top, const std::vector<float>& z = {}, const std::vector<float>& w = {}) {
    ids.insert(ids.end(), top.begin(), top.end());
    logits.insert(logits.end(), z.begin(), z.end());
    weights.insert(weights.end(), w.begin(), w.end());
  }
  // One invocation of every token added.
  InvocationTokens invocation() {
    rows.clear();
    for (uint32_t r = 0; r < ids.size() / top_k; ++r) rows.push_back(r);
    inv_begin = {0, static_cast<uint32_t>(rows.size())};
    view = TokenRoutingView{top_k, experts, inv_begin, rows, ids, weights, logits};
    return InvocationTokens(view, 0);
  }
};

class SetResidency final : public ResidencyView {
 public:
  explicit SetResidency(std::set<uint16_t> cached) : cached_(std::move(cached)) {}
  ExpertState state(uint32_t, uint32_t e) const override {
    return cached_.count(static_cast<uint16_t>(e)) ? ExpertState::kFull : ExpertState::kMissed;
  }

 private:
  std::set<uint16_t> cached_;
};

// Runs `spec` on the tokens with the cached set; returns the rewritten slots.
inline std::vector<uint16_t> route_tokens(const std::string& spec, HandTokens& h, const std::set<uint16_t>& cached,
                                          uint32_t layers = 1) {
  const InvocationTokens tok = h.invocation();
  auto p = make_routing_policy(spec, RoutingSetup{layers, h.experts, h.top_k, !h.weights.empty(), !h.logits.empty()});
  SetResidency res(cached);
  std::vector<uint16_t> out(h.ids.begin(), h.ids.end());
  p->route(RoutingContext{0, true, h.top_k, &res, &tok}, out);
  return out;
}

}  // namespace moesim::test
