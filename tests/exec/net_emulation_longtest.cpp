// exec/net_emulation.h at the sizes of a cluster run: a 12-server full mesh where every ordered pair connects,
// and a 6-server line whose ends talk over 5 hops. Long tier: they fork a few hundred ip and tc commands
// and a child per transfer.
#include <string>

#include <gtest/gtest.h>

#include "tests/exec/net_emulation_test_util.h"

namespace moesim::exec {
namespace {

using NetEmulationLong = testing::NetEmulationFixture;

TEST_F(NetEmulationLong, TwelveServerMeshConnectsEveryOrderedPair) {
  const std::string run = new_run();
  EmulatedNetwork net = EmulatedNetwork::create(testing::full_mesh(12, run));
  EXPECT_EQ(EmulatedNetwork::list_namespaces(run + "-").size(), 12u);
  for (uint32_t a = 0; a < 12; ++a)
    for (uint32_t b = 0; b < 12; ++b)
      if (a != b) {
        EXPECT_EQ(testing::transfer(net, a, b, 1000).received, 1000u) << a << " -> " << b;
      }
  net.teardown();
  expect_nothing_left(run);
}

TEST_F(NetEmulationLong, LineEndsTalkOverFiveHops) {
  const std::string run = new_run();
  EmulatedNetwork net = EmulatedNetwork::create(testing::line(6, run));
  EXPECT_EQ(testing::transfer(net, 0, 5, 100000).received, 100000u);
  EXPECT_EQ(testing::transfer(net, 5, 0, 100000).received, 100000u);
  EXPECT_EQ(testing::transfer(net, 2, 4, 100000).received, 100000u);
  net.teardown();
  expect_nothing_left(run);
}

}  // namespace
}  // namespace moesim::exec
