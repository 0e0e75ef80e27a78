// base/interrupt: a request makes every interrupt point throw Interrupted, on any thread, until cleared; the
// handlers that turn failures into messages (catch std::exception, catch Error) never see it; progress ticks
// are interrupt points; parallel_for stops at it.
#include "base/interrupt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>

#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"

namespace moesim {
namespace {

// Clears a request a test leaves behind, so that no other test of the binary sees it.
struct Cleared {
  Cleared() { clear_interrupt(); }
  ~Cleared() { clear_interrupt(); }
};

TEST(Interrupt, APointIsFreeUntilARequestThenThrowsUntilCleared) {
  Cleared cleared;
  EXPECT_FALSE(interrupt_requested());
  EXPECT_NO_THROW(interrupt_point());
  request_interrupt();
  EXPECT_TRUE(interrupt_requested());
  EXPECT_THROW(interrupt_point(), Interrupted);
  EXPECT_THROW(interrupt_point(), Interrupted);  // it stays until cleared
  clear_interrupt();
  EXPECT_NO_THROW(interrupt_point());
}

TEST(Interrupt, IsNoErrorNorStdException) {
  Cleared cleared;
  request_interrupt();
  bool swallowed = false, reached = false;
  try {
    try {
      interrupt_point();
    } catch (const Error&) {
      swallowed = true;
    } catch (const std::exception&) {
      swallowed = true;
    }
  } catch (const Interrupted&) {
    reached = true;
  }
  EXPECT_FALSE(swallowed);
  EXPECT_TRUE(reached);
}

TEST(Interrupt, AProgressTickIsAnInterruptPoint) {
  Cleared cleared;
  Progress bar("test", 10, "items");
  bar.add(1);
  request_interrupt();
  EXPECT_THROW(bar.add(1), Interrupted);
  EXPECT_THROW(bar.set(5), Interrupted);
}

TEST(Interrupt, ParallelForStopsStartingItemsAndRethrowsIt) {
  Cleared cleared;
  std::atomic<size_t> ran{0};
  EXPECT_THROW(parallel_for(10000, 4,
                            [&](size_t i) {
                              if (i == 10) request_interrupt();
                              interrupt_point();
                              ++ran;
                            }),
               Interrupted);
  EXPECT_LT(ran.load(), 10000u);
}

}  // namespace
}  // namespace moesim
