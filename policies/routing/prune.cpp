// prune (h): the pruning baseline of Mixture of Cache-Conditional Experts, §2.3 and §4.1: each token drops
// its experts ranked >= h (1-based; 1 < h <= k keeps the top h-1), whatever the cache holds.
//   for each token: slots h-1 .. k-1 := none
// Not cache-dependent: its rewritten routing is known in advance (oracle caches see it exactly). Miss rates
// are normalised by the router's lookups (the paper's "normalized using k"), see replay/routing_replay.h.
#include "base/error.h"
#include "core/routing.h"

namespace moesim::policies {
namespace {

class Prune final : public RoutingPolicy {
 public:
  explicit Prune(uint32_t keep) : keep_(keep) {}
  bool cache_dependent() const override { return false; }
  void route(const RoutingContext& ctx, std::span<uint16_t> out) override {
    const uint32_t K = ctx.top_k;
    for (size_t t = 0; t < out.size() / K; ++t)
      for (uint32_t s = keep_; s < K; ++s) out[t * K + s] = kNoExpert;
  }

 private:
  uint32_t keep_;
};

}  // namespace

MOESIM_REGISTER(RoutingRegistry, "prune",
                "pruning baseline (Cache-Conditional Experts, §2.3): drop experts ranked >= h (1-based)",
                {{"h", "2", "first dropped rank, 1-based (h > k drops nothing)", ParamType::kWhole,
                  ParamRange::at_least(2)}},
                [](const Params& p, const RoutingSetup&) -> std::unique_ptr<RoutingPolicy> {
                  const uint64_t h = p.get_uint("h");
                  return std::make_unique<Prune>(
                      static_cast<uint32_t>(std::min<uint64_t>(h - 1, UINT32_MAX)));
                });

}  // namespace moesim::policies
