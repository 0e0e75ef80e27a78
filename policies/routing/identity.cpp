// identity: the router's choice, unchanged (the default routing). Callers never call route(): identity()
// keeps their lookup-stream fast path.
//   route(ctx, out): return
#include "core/routing.h"

namespace moesim::policies {
namespace {

class Identity final : public RoutingPolicy {
 public:
  bool identity() const override { return true; }
  bool cache_dependent() const override { return false; }
  void route(const RoutingContext&, std::span<uint16_t>) override {}
};

}  // namespace

MOESIM_REGISTER(
    RoutingRegistry, "identity", "the router's choice, unchanged", {},
    [](const Params&, const RoutingSetup&) -> std::unique_ptr<RoutingPolicy> {
      return std::make_unique<Identity>();
    },
    PolicyNeeds{}, PolicyTraits{.no_op = true});

}  // namespace moesim::policies
