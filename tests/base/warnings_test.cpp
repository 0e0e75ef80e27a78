// base/warnings: recorded in order, printed with the prefix unless muted, listed as JSON, and a visible
// progress bar is erased before a warning is printed.
#include "base/warnings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/progress.h"

namespace moesim {
namespace {

using ::testing::HasSubstr;

class Warnings : public ::testing::Test {
 protected:
  void SetUp() override { clear_warnings(); }
  void TearDown() override {
    clear_warnings();
    set_warnings_printed(true);
  }
};

TEST_F(Warnings, RecordedInOrderAndPrintedWithPrefix) {
  testing::internal::CaptureStderr();
  warn("first thing");
  warn("second thing");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "moesim: warning: first thing\nmoesim: warning: second thing\n");
  EXPECT_EQ(warnings(), (std::vector<std::string>{"first thing", "second thing"}));
  EXPECT_EQ(warnings_json().dump(), R"(["first thing","second thing"])");
  clear_warnings();
  EXPECT_TRUE(warnings().empty());
  EXPECT_EQ(warnings_json().dump(), "[]");
}

TEST_F(Warnings, MutedStillRecords) {
  set_warnings_printed(false);
  testing::internal::CaptureStderr();
  warn("quiet one");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(warnings(), std::vector<std::string>{"quiet one"});
}

TEST_F(Warnings, ThreadSafe) {
  set_warnings_printed(false);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([] {
      for (int i = 0; i < 250; ++i) warn("w");
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(warnings().size(), 1000u);
}

// What moesim sweep relies on: a point's warnings are its own, whichever thread ran it and whatever ran
// beside it; nothing is printed or added to the process-wide list meanwhile.
TEST_F(Warnings, ThreadScopeKeepsEachThreadsOwn) {
  set_warnings_printed(false);
  warn("before");
  std::vector<std::vector<std::string>> seen(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([t, &seen] {
      ThreadWarningScope scope;
      for (int i = 0; i <= t; ++i) warn("thread " + std::to_string(t));
      EXPECT_EQ(warnings(), scope.items());
      EXPECT_EQ(warnings_json().size(), static_cast<size_t>(t + 1));
      seen[static_cast<size_t>(t)] = scope.items();
    });
  for (auto& t : ts) t.join();
  for (size_t t = 0; t < 4; ++t)
    EXPECT_EQ(seen[t], std::vector<std::string>(t + 1, "thread " + std::to_string(t)));
  EXPECT_EQ(warnings(), std::vector<std::string>{"before"});
  {
    // A sweep's point run on the thread of a Python call that captures the sweep's warnings: the point's are
    // its own, and the call's scope gets the later ones.
    ThreadWarningScope outer;
    warn("call");
    {
      ThreadWarningScope point;
      warn("point");
      EXPECT_EQ(point.items(), std::vector<std::string>{"point"});
    }
    warn("summary");
    EXPECT_EQ(outer.items(), (std::vector<std::string>{"call", "summary"}));
  }
  warn("after");  // the scope is gone: back to the process-wide list
  EXPECT_EQ(warnings(), (std::vector<std::string>{"before", "after"}));
}

TEST_F(Warnings, ErasesAProgressBarFirst) {
  ::setenv("MOESIM_PROGRESS", "1", 1);
  testing::internal::CaptureStderr();
  {
    Progress p("long", 10, "steps");
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    p.add(1);  // draws
    warn("mid-run");
  }
  const std::string out = testing::internal::GetCapturedStderr();
  ::unsetenv("MOESIM_PROGRESS");
  const size_t bar = out.find("long [");
  const size_t w = out.find("moesim: warning: mid-run\n");
  ASSERT_NE(bar, std::string::npos) << out;
  ASSERT_NE(w, std::string::npos) << out;
  EXPECT_EQ(out.substr(w - 4, 4), "\r\033[K");  // the bar's line was cleared, the warning starts clean
}

}  // namespace
}  // namespace moesim
