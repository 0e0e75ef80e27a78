// identity: the router's choice, unchanged (the default routing "rewrite").
//   rewrite(ctx, demands): return
#include "core/routing.h"

namespace moesim::policies {
namespace {

class Identity final : public RoutingPolicy {
 public:
  void rewrite(const RoutingContext&, std::vector<ExpertDemand>&) override {}
};

}  // namespace

MOESIM_REGISTER(RoutingRegistry, "identity", "the router's choice, unchanged", {},
                        [](const Params&, const RoutingSetup&) -> std::unique_ptr<RoutingPolicy> {
                          return std::make_unique<Identity>();
                        });

}  // namespace moesim::policies
