#include "core/routing.h"

#include "base/error.h"

namespace moesim {

std::unique_ptr<RoutingPolicy> make_routing_policy(const std::string& spec, const RoutingSetup& setup) {
  return RoutingRegistry::instance().create(spec, "routing", setup);
}

std::string routing_canonical_name(const std::string& spec) {
  return RoutingRegistry::instance().params(spec, "routing").canonical();
}

void derive_demands(std::span<const uint16_t> out, uint32_t top_k, uint32_t experts, std::vector<uint32_t>& pos,
                    std::vector<ExpertDemand>& demands) {
  demands.clear();
  const size_t tokens = top_k == 0 ? 0 : out.size() / top_k;
  for (size_t t = 0; t < tokens; ++t) {
    const size_t first = demands.size();
    for (uint32_t s = 0; s < top_k; ++s) {
      const uint16_t e = out[t * top_k + s];
      if (e == kNoExpert) continue;
      if (e >= experts) {
        for (const auto& d : demands) pos[d.expert] = kNoSlot;
        throw Error("routing policy chose expert " + std::to_string(e) + ", outside the layer's " +
                    std::to_string(experts) + " experts");
      }
      if (pos[e] == kNoSlot) {
        pos[e] = static_cast<uint32_t>(demands.size());
        demands.push_back(ExpertDemand{e, 1, 0});
        continue;
      }
      // Seen before: in an earlier token (a shared expert) or -- a bug -- in this one.
      if (pos[e] >= first || [&] {
            for (uint32_t s2 = 0; s2 < s; ++s2)
              if (out[t * top_k + s2] == e) return true;
            return false;
          }()) {
        for (const auto& d : demands) pos[d.expert] = kNoSlot;
        throw Error("routing policy gave a token expert " + std::to_string(e) + " twice");
      }
      ++demands[pos[e]].tokens;
    }
  }
  for (const auto& d : demands) pos[d.expert] = kNoSlot;
}

}  // namespace moesim
