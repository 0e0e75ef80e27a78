#include "core/routing.h"

namespace moesim {

std::unique_ptr<RoutingPolicy> make_routing_policy(const std::string& spec, const RoutingSetup& setup) {
  return RoutingRegistry::instance().create(spec, "routing", setup);
}

}  // namespace moesim
