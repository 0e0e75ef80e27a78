// `moesim policies [--json] [-o OUT]`: every registered policy of every kind with its parameters, defaults
// and descriptions (docs/architecture.md). Policies register themselves; this file only reads the registries.
#include <memory>
#include <string>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/eviction.h"
#include "core/placement.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/run_info.h"
#include "core/scheduling.h"
#include "serving/system.h"

namespace moesim::cli {
namespace {

struct Options {
  bool json = false;
  std::string out = "-";
};

// One kind's table (`title` heads it in the text) and its JSON list.
template <typename R>
void list(const char* key, const char* title, const R& registry, std::string& text, Json& json) {
  text += strprintf("%s:\n", title);
  if (registry.entries().empty()) text += "  (none registered)\n";
  Json entries = Json::array();
  for (const auto& e : registry.entries()) {
    text += strprintf("  %-16s %s\n", e.name.c_str(), e.description.c_str());
    Json params = Json::array();
    for (const auto& p : e.params) {
      text += strprintf("  %16s   %s=%s  %s\n", "", p.key.c_str(), p.default_value.c_str(), p.description.c_str());
      params.push_back({{"key", p.key}, {"default", p.default_value}, {"description", p.description}});
    }
    entries.push_back({{"name", e.name}, {"description", e.description}, {"params", params}});
  }
  json[key] = entries;
}

void run(const Options& o) {
  check_output_writable(o.out);
  std::string text = "Policies are given as name or name:key=value,key=value (defaults below).\n";
  Json kinds = Json::object();
  list("eviction", "eviction (moesim replay --policy, moesim run)", EvictionRegistry::instance(), text, kinds);
  list("routing", "routing", RoutingRegistry::instance(), text, kinds);
  list("scheduling", "scheduling", SchedulingRegistry::instance(), text, kinds);
  list("planning", "planning", PlanningRegistry::instance(), text, kinds);
  list("placement", "placement", PlacementRegistry::instance(), text, kinds);
  list("prefetch", "prefetch (moesim run --prefetch)", PrefetchRegistry::instance(), text, kinds);
  list("system", "system (moesim run --system; flags such as --delta feed the same parameters)",
       SystemRegistry::instance(), text, kinds);
  if (!o.json) {
    write_file_atomic(o.out, text);
    return;
  }
  Json j;
  j["header"] = run_header("policies", Json::object());
  j["policies"] = kinds;
  write_json_file(o.out, j);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_flag("--json", o->json, "print JSON (header, policies by kind with their parameters) instead of text");
  app.add_option("-o,--output", o->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([o] { run(*o); });
}

}  // namespace
MOESIM_CLI_COMMAND("policies", "List every registered policy with its parameters and defaults", setup);
}  // namespace moesim::cli
