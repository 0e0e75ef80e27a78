#include "harness/policies_job.h"

#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "core/eviction.h"
#include "core/placement.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/run_info.h"
#include "core/scheduling.h"
#include "harness/arguments.h"
#include "serving/system.h"

namespace moesim::harness {
namespace {

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
      // What the registry accepts, after the description: "(a real in [0, 1])"; free text says nothing.
      const std::string accepts = p.type == ParamType::kText ? "" : " (" + p.requirement() + ")";
      text += strprintf("  %16s   %s=%s  %s%s\n", "", p.key.c_str(), p.default_value.c_str(),
                        p.description.c_str(), accepts.c_str());
      Json param = {{"key", p.key},
                    {"default", p.default_value},
                    {"description", p.description},
                    {"type", param_type_name(p.type)},
                    {"range", p.range.bounded() ? Json(p.range.to_string()) : Json(nullptr)}};
      if (p.type == ParamType::kChoice) param["choices"] = p.choices;
      params.push_back(param);
    }
    entries.push_back({{"name", e.name}, {"description", e.description}, {"params", params}});
  }
  json[key] = entries;
}

}  // namespace

std::string policies_output(bool json) {
  std::string text = "Policies are given as name or name:key=value,key=value (defaults below).\n";
  Json kinds = Json::object();
  list("eviction", "eviction (moesim replay --policy, moesim run)", EvictionRegistry::instance(), text,
       kinds);
  std::string all;
  for (const auto& spec : all_eviction_specs())
    if (spec.find(':') != std::string::npos) all += (all.empty() ? "" : ", ") + spec;
  text += "  (--policy all: every eviction policy above with its defaults, and " + all + ")\n";
  list("routing", "routing", RoutingRegistry::instance(), text, kinds);
  list("scheduling", "scheduling", SchedulingRegistry::instance(), text, kinds);
  list("planning", "planning", PlanningRegistry::instance(), text, kinds);
  list("placement", "placement", PlacementRegistry::instance(), text, kinds);
  list("prefetch", "prefetch (moesim run --prefetch)", PrefetchRegistry::instance(), text, kinds);
  list("system", "system (moesim run --system; flags such as --delta feed the same parameters)",
       SystemRegistry::instance(), text, kinds);
  if (!json) return text;
  Json j;
  j["header"] = run_header("policies", Json::object());
  j["policies"] = kinds;
  return j.dump(2) + "\n";
}

}  // namespace moesim::harness
