#include "sim/quad_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace moesim::sim {
namespace {

struct Item {
  int64_t priority;
  uint64_t seq;
};
bool before(const Item& a, const Item& b) {
  return a.priority < b.priority || (a.priority == b.priority && a.seq < b.seq);
}

TEST(QuadHeap, WorkedExample) {
  std::vector<Item> h;
  quad_heap_push(h, Item{5, 0}, before);
  quad_heap_push(h, Item{1, 1}, before);
  quad_heap_push(h, Item{5, 2}, before);
  quad_heap_push(h, Item{0, 3}, before);
  quad_heap_push(h, Item{1, 4}, before);
  quad_heap_push(h, Item{-2, 5}, before);
  std::vector<uint64_t> order;
  while (!h.empty()) order.push_back(quad_heap_pop(h, before).seq);
  EXPECT_EQ(order, (std::vector<uint64_t>{5, 3, 1, 4, 0, 2}));
}

// Pushes and pops interleaved at random, against a sorted set: every pop is the set's least element, at
// every size (deep heaps with many equal priorities, and the sizes 1 to 5 around the first level).
TEST(QuadHeap, PopsTheLeastElementUnderRandomPushesAndPops) {
  uint64_t x = 99;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  std::vector<Item> h;
  std::set<std::pair<int64_t, uint64_t>> ref;
  uint64_t seq = 0;
  size_t largest = 0;
  for (int step = 0; step < 200000; ++step) {
    // Grow for a while, then drain: both directions at every size.
    const bool grow = (step / 5000) % 2 == 0;
    if (ref.empty() || next() % 8 < (grow ? 5u : 2u)) {
      const Item it{static_cast<int64_t>(next() % 16), seq++};
      quad_heap_push(h, it, before);
      ref.insert({it.priority, it.seq});
    } else {
      const Item got = quad_heap_pop(h, before);
      ASSERT_EQ(std::make_pair(got.priority, got.seq), *ref.begin()) << "step " << step;
      ref.erase(ref.begin());
    }
    ASSERT_EQ(h.size(), ref.size());
    largest = std::max(largest, h.size());
  }
  EXPECT_GT(largest, 1000u);
}

}  // namespace
}  // namespace moesim::sim
