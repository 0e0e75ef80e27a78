// `moesim policies` called directly (harness/policies_job.h): the JSON lists every registered policy of
// every kind, each with its parameters, defaults, types and ranges exactly as its registry holds them, the
// text names each of them with what it accepts.
#include "harness/policies_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/eviction.h"
#include "core/placement.h"
#include "core/planning.h"
#include "core/prefetch.h"
#include "core/routing.h"
#include "core/scheduling.h"
#include "serving/system.h"

namespace moesim::harness {
namespace {

using ::testing::HasSubstr;

// The JSON list of `kind` holds the registry's entries in its order, with their parameters.
template <typename R>
void expect_listed(const Json& policies, const char* kind, const R& registry, const std::string& text) {
  SCOPED_TRACE(kind);
  ASSERT_TRUE(policies.contains(kind));
  const Json& list = policies[kind];
  ASSERT_EQ(list.size(), registry.entries().size());
  EXPECT_FALSE(list.empty());
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& e = registry.entries()[i];
    EXPECT_EQ(list[i]["name"], e.name);
    EXPECT_EQ(list[i]["description"], e.description);
    ASSERT_EQ(list[i]["params"].size(), e.params.size()) << e.name;
    for (size_t p = 0; p < e.params.size(); ++p) {
      EXPECT_EQ(list[i]["params"][p]["key"], e.params[p].key);
      const ParamDef& d = e.params[p];
      const Json& jp = list[i]["params"][p];
      EXPECT_EQ(jp["default"], d.default_value);
      EXPECT_EQ(jp["type"], param_type_name(d.type));
      EXPECT_EQ(jp["range"], d.range.bounded() ? Json(d.range.to_string()) : Json(nullptr));
      EXPECT_EQ(jp.contains("choices"), d.type == ParamType::kChoice);
      EXPECT_THAT(text, HasSubstr(d.key + "=" + d.default_value));
      if (d.type != ParamType::kText) {
        EXPECT_THAT(text, HasSubstr(d.description + " (" + d.requirement() + ")"));
      }
    }
    EXPECT_THAT(text, HasSubstr("  " + e.name + " "));
  }
}

TEST(PoliciesJob, EveryRegisteredPolicyIsListedWithItsParameters) {
  const Json j = Json::parse(policies_output(true));
  const std::string text = policies_output(false);
  EXPECT_EQ(j["header"]["command"], "policies");
  const Json& p = j["policies"];
  EXPECT_EQ(p.size(), 7u);
  expect_listed(p, "eviction", EvictionRegistry::instance(), text);
  expect_listed(p, "routing", RoutingRegistry::instance(), text);
  expect_listed(p, "scheduling", SchedulingRegistry::instance(), text);
  expect_listed(p, "planning", PlanningRegistry::instance(), text);
  expect_listed(p, "placement", PlacementRegistry::instance(), text);
  expect_listed(p, "prefetch", PrefetchRegistry::instance(), text);
  expect_listed(p, "system", SystemRegistry::instance(), text);
  // Names every system of the papers the simulator models.
  std::string systems;
  for (const Json& s : p["system"]) systems += s["name"].get<std::string>() + " ";
  EXPECT_THAT(systems, HasSubstr("offload "));
  EXPECT_THAT(systems, HasSubstr("zipmoe "));
  EXPECT_THAT(text, HasSubstr("--policy all: every eviction policy above"));
  // A worked line of each form: a range, and a choice (JSON and text).
  EXPECT_THAT(text,
              HasSubstr("history=0  1: counts survive evictions (perfect LFU); 0: in-cache counts (a whole "
                        "number in [0, 1])"));
  for (const Json& s : p["system"])
    if (s["name"] == "zipmoe")
      for (const Json& q : s["params"])
        if (q["key"] == "io") {
          EXPECT_EQ(q["choices"], Json::array({"fused", "thread"}));
        }
}

}  // namespace
}  // namespace moesim::harness
