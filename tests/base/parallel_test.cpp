#include "base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(ParallelFor, VisitsEveryIndexOnce) {
  for (unsigned threads : {0u, 1u, 2u, 7u}) {
    std::vector<std::atomic<int>> seen(100);
    moesim::parallel_for(seen.size(), threads, [&](size_t i) { seen[i]++; });
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i].load(), 1) << i << " threads " << threads;
  }
  moesim::parallel_for(0, 4, [](size_t) { FAIL(); });
}

TEST(ParallelFor, RethrowsTheLowestIndexException) {
  for (unsigned threads : {1u, 3u}) {
    try {
      moesim::parallel_for(50, threads, [](size_t i) {
        if (i == 5 || i == 6 || i == 40) throw std::runtime_error("item " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      // One thread stops at 5; several may also have started 6 (and thrown), never an index below 5.
      EXPECT_EQ(std::string(e.what()), "item 5") << threads;
    }
  }
}

// The other items take 20 us each (2 s in all): on a loaded machine the thread that throws at 0 may be
// descheduled between its item and setting the stop flag, and trivial items then all ran before it resumed.
TEST(ParallelFor, StopsHandingOutWorkAfterAnException) {
  std::atomic<size_t> ran{0};
  EXPECT_THROW(moesim::parallel_for(100000, 2,
                                    [&](size_t i) {
                                      ran++;
                                      if (i == 0) throw std::runtime_error("first");
                                      std::this_thread::sleep_for(std::chrono::microseconds(20));
                                    }),
               std::runtime_error);
  EXPECT_LT(ran.load(), 100000u);
}

}  // namespace
