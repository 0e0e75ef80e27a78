// MOESIM_REGISTER (core/registry.h): one variadic macro registers a plug-in of any kind, including one whose
// braced parameter list contains commas (two parameters), which the old four-argument per-kind macros split.
#include "core/registry.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/routing.h"

namespace moesim {
namespace {

class ScaleRouting final : public RoutingPolicy {
 public:
  ScaleRouting(double lambda, int64_t j) : lambda_(lambda), j_(j) {}
  void route(const RoutingContext&, std::span<uint16_t>) override {}
  double lambda_;
  int64_t j_;
};

MOESIM_REGISTER(RoutingRegistry, "test-two-params", "registry test: a policy with two parameters",
                {{"lambda", "0.5", "a weight", ParamType::kReal}, {"J", "2", "a count", ParamType::kInt}},
                [](const Params& p, const RoutingSetup&) -> std::unique_ptr<RoutingPolicy> {
                  return std::make_unique<ScaleRouting>(p.get_double("lambda"), p.get_int("J"));
                });

TEST(Registry, VariadicMacroKeepsEveryParameter) {
  const auto& e = RoutingRegistry::instance().find("test-two-params", "routing");
  ASSERT_EQ(e.params.size(), 2u);
  EXPECT_EQ(e.params[0].key, "lambda");
  EXPECT_EQ(e.params[1].key, "J");
  auto p = make_routing_policy("test-two-params:lambda=0.25,J=3", RoutingSetup{});
  auto* s = dynamic_cast<ScaleRouting*>(p.get());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->lambda_, 0.25);
  EXPECT_EQ(s->j_, 3);
  EXPECT_EQ(RoutingRegistry::instance().params("test-two-params", "routing").canonical(),
            "test-two-params:lambda=0.5,J=2");
  EXPECT_THROW(make_routing_policy("test-two-params:mu=1", RoutingSetup{}), Error);
}

TEST(Registry, RegisteringANameTwiceIsAnError) {
  EXPECT_THROW(RoutingRegistry::instance().add({"test-two-params", "again", {}, nullptr}), Error);
}

}  // namespace
}  // namespace moesim
