// `moesim policies`: every registered policy of every kind with its parameters, defaults and descriptions
// (ARCHITECTURE.md §3). Policies register themselves; this file only reads the registries.
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "core/eviction.h"
#include "core/placement.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/system.h"

namespace moesim::cli {
namespace {

template <typename R>
void list(const char* kind, const R& registry) {
  std::printf("%s:\n", kind);
  if (registry.entries().empty()) std::printf("  (none registered)\n");
  for (const auto& e : registry.entries()) {
    std::printf("  %-16s %s\n", e.name.c_str(), e.description.c_str());
    for (const auto& p : e.params)
      std::printf("  %16s   %s=%s  %s\n", "", p.key.c_str(), p.default_value.c_str(), p.description.c_str());
  }
}

void setup(CLI::App& app) {
  app.callback([] {
    std::printf("Policies are given as name or name:key=value,key=value (defaults below).\n");
    list("eviction (moesim replay --policy, moesim run)", EvictionRegistry::instance());
    list("routing", RoutingRegistry::instance());
    list("scheduling", SchedulingRegistry::instance());
    list("planning", PlanningRegistry::instance());
    list("placement", PlacementRegistry::instance());
    list("prefetch (moesim run --prefetch)", PrefetchRegistry::instance());
    list("system (moesim run --system; flags such as --delta feed the same parameters)",
         SystemRegistry::instance());
  });
}

}  // namespace
MOESIM_CLI_COMMAND("policies", "List every registered policy with its parameters and defaults", setup);
}  // namespace moesim::cli
