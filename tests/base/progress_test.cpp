// base/progress: what a bar shows (label, percent, counts with their unit, rate, ETA) and when it shows
// nothing (not a terminal, or --quiet).
#include "base/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace moesim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Progress, RenderShowsLabelPercentCountsAndEta) {
  Progress p("replay", 10, "replays");
  p.add(4);
  const std::string line = p.render(2.0);  // 40% in 2 s: 3 s to go
  EXPECT_THAT(line, HasSubstr("replay ["));
  EXPECT_THAT(line, HasSubstr(" 40% "));
  EXPECT_THAT(line, HasSubstr("4/10"));
  EXPECT_THAT(line, HasSubstr("ETA 3s"));
  p.add(6);
  EXPECT_THAT(p.render(5.0), HasSubstr("100% 10/10 replays, 2 replays/s, ETA 0s"));
}

TEST(Progress, EtaInMinutesAndUnknownBeforeAnyWork) {
  Progress p("compare", 100, "steps");
  EXPECT_THAT(p.render(1.0), HasSubstr("ETA ?"));
  p.set(10);
  EXPECT_THAT(p.render(10.0), HasSubstr("ETA 1m30s"));
}

TEST(Progress, UnknownTotalShowsCountAndRate) {
  Progress p("scan", 0, "tokens");
  p.add(50);
  EXPECT_THAT(p.render(2.0), HasSubstr("scan 50 tokens done, 25 tokens/s"));
}

TEST(Progress, BytesAreShownWithUnits) {
  Progress p("pack", 0, Progress::kBytes);
  p.set_total(4ull << 30);
  p.set(1ull << 30);
  const std::string line = p.render(2.0);
  EXPECT_THAT(line, HasSubstr("1.00 GiB/4.00 GiB, 512.00 MiB/s"));
  EXPECT_THAT(line, HasSubstr(" 25% "));
  EXPECT_THAT(line, Not(HasSubstr("bytes")));
}

TEST(Progress, NamesItsUnitAndShowsARate) {
  Progress p("sweep", 40, "points");
  p.add(10);
  const std::string line = p.render(4.0);
  EXPECT_THAT(line, HasSubstr("10/40 points"));
  EXPECT_THAT(line, HasSubstr("2.5 points/s"));
  p.set_total(100000);
  p.set(6520);
  EXPECT_THAT(p.render(4.0), HasSubstr("6520/100000 points, 1630 points/s"));  // no "1.63e+03"
}

TEST(Progress, SetNeverGoesBackwards) {
  Progress p("x", 10, "steps");
  p.set(7);
  p.set(5);  // a slower worker thread reporting an older total
  EXPECT_THAT(p.render(1.0), HasSubstr("7/10"));
}

// Runs a bar long enough to pass the half-second threshold and returns what reached stderr.
std::string drawn(bool force_terminal, bool enabled) {
  if (force_terminal)
    ::setenv("MOESIM_PROGRESS", "1", 1);
  else
    ::unsetenv("MOESIM_PROGRESS");
  set_progress_enabled(enabled);
  testing::internal::CaptureStderr();  // stderr becomes a file: not a terminal
  {
    Progress p("work", 4, "steps");
    p.add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    p.add(1);
    p.finish();
  }
  std::string out = testing::internal::GetCapturedStderr();
  ::unsetenv("MOESIM_PROGRESS");
  set_progress_enabled(true);
  return out;
}

TEST(Progress, DrawsWhenForcedAndClearsTheLine) {
  const std::string out = drawn(true, true);
  EXPECT_THAT(out, HasSubstr("work ["));
  EXPECT_THAT(out, HasSubstr(" 50% 2/4"));
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");  // finish() erased it
}

TEST(Progress, SilentWhenNotATerminal) {
  EXPECT_EQ(drawn(false, true), "");
}

TEST(Progress, SilentWhenQuietEvenIfForced) {
  EXPECT_EQ(drawn(true, false), "");
}

TEST(Progress, NestedBarStaysSilent) {
  ::setenv("MOESIM_PROGRESS", "1", 1);
  testing::internal::CaptureStderr();
  {
    Progress outer("outer", 2, "steps");
    Progress inner("inner", 2, "steps");
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    inner.add(1);
    outer.add(1);
  }
  const std::string out = testing::internal::GetCapturedStderr();
  ::unsetenv("MOESIM_PROGRESS");
  EXPECT_THAT(out, HasSubstr("outer ["));
  EXPECT_THAT(out, Not(HasSubstr("inner")));
}

}  // namespace
}  // namespace moesim

namespace moesim {
namespace {

struct Recorder : ProgressObserver {
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> calls;
  void report(uint64_t done, uint64_t total, const std::string& unit) override {
    calls.emplace_back(done, total, unit);
  }
};

}  // namespace

// The Python module's progress= callback: the outermost bar reports every 1% and its last count, counts going up.
TEST(Progress, ObserverGetsTheOutermostBarEveryPercentUpToTheTotal) {
  Recorder r;
  ProgressObserverScope scope(&r);
  {
    Progress bar("run", 1000, "steps");
    Progress nested("inner", 5, "replays");  // a point's own bar inside a sweep: not reported
    for (int i = 0; i < 1000; ++i) bar.add(1);
    nested.add(5);
  }
  ASSERT_EQ(r.calls.size(), 100u);
  EXPECT_EQ(r.calls.front(), std::make_tuple(uint64_t{10}, uint64_t{1000}, std::string("steps")));
  EXPECT_EQ(r.calls.back(), std::make_tuple(uint64_t{1000}, uint64_t{1000}, std::string("steps")));
  {
    Progress next("sweep", 3, "points");  // the first bar has finished: the next one reports
    next.set(2);
    next.set(1);  // never backwards
    next.set(3);
  }
  EXPECT_EQ(r.calls.size(), 102u);
  EXPECT_EQ(std::get<0>(r.calls.back()), 3u);
  EXPECT_EQ(std::get<2>(r.calls.back()), "points");
}

TEST(Progress, AnObserverThatThrowsStopsTheAdd) {
  struct Thrower : ProgressObserver {
    void report(uint64_t, uint64_t, const std::string&) override { throw std::runtime_error("stop"); }
  } t;
  ProgressObserverScope scope(&t);
  Progress bar("run", 2, "steps");
  EXPECT_THROW(bar.add(1), std::runtime_error);
}

TEST(Progress, NoObserverOutsideItsScopeOrOnOtherThreads) {
  Recorder r;
  {
    ProgressObserverScope scope(&r);
    std::thread([] { Progress other("other", 1, "steps"); other.add(1); }).join();
  }
  Progress after("after", 1, "steps");
  after.add(1);
  EXPECT_TRUE(r.calls.empty());
}

}  // namespace moesim
