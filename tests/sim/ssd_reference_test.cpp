// The SSD model (sim/resources.h, Ssd) against a reference: the model as it was before its shortcuts (the
// idle SSD's and the one transfer's paths written out), kept here as a plain copy that rereads every slot
// on every event and schedules every completion as a new engine event, the replaced ones firing stale.
// Random programs (queue depths 1 to 70, with and without a queue-depth curve and a bulk rate, requests
// submitted on a coarse time grid so that times tie, and from inside completions as the I/O thread does)
// run on both; every completion (job, start, end, slot), the end clock and the statistics must agree to
// the bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sim/resources.h"

namespace moesim::sim {
namespace {

// The reference: Ssd's model, one general path for every case.
class RefSsd final : public EventHandler {
 public:
  RefSsd(EventEngine& engine, double bandwidth, double latency, uint32_t queue_depth, JobListener* listener)
      : engine_(engine),
        bandwidth_(bandwidth),
        latency_(latency),
        bulk_latency_(latency),
        listener_(listener),
        slots_(std::max(queue_depth, 1u)) {}
  void set_bulk_rate(double bandwidth, double latency) {
    bulk_scale_ = bandwidth_ / bandwidth;
    bulk_latency_ = latency;
  }
  void set_depth_curve(std::vector<SsdDepthPoint> curve) {
    curve_ = std::move(curve);
    at_depth_ = curve_.empty() ? SsdDepthPoint{} : ssd_curve_at(curve_, 0);
  }
  void submit(uint32_t job, int64_t priority, uint64_t bytes, bool bulk) {
    ++ops_;
    const double amount = static_cast<double>(bytes) * (bulk ? bulk_scale_ : 1.0);
    queue_.push(priority, job, amount, 0, bulk);
    peak_requests_ = std::max(peak_requests_, in_service_ + queue_.size());
    if (curve_.empty()) return admit();
    advance();
    const uint32_t before = in_service_;
    admit();
    if (in_service_ != before) reschedule();
  }
  void on_event(uint64_t arg) override {
    advance();
    if (arg & kLatency) {
      Slot& s = slots_[arg & ~kLatency];
      s.phase = kTransfer;
      ++transferring_;
      return reschedule();
    }
    if (arg != generation_) return;  // stale
    double least = std::numeric_limits<double>::infinity();
    for (const Slot& s : slots_)
      if (s.phase == kTransfer) least = std::min(least, s.remaining);
    std::vector<std::pair<uint32_t, OpTiming>> done;
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (s.phase != kTransfer || s.remaining > least + 1e-3) continue;
      done.push_back({s.job, OpTiming{s.start, engine_.now(), i}});
      s.phase = kFree;
      --transferring_;
      set_in_service(-1);
    }
    admit();
    reschedule();
    for (const auto& [job, t] : done) listener_->job_done(job, t);
  }
  double busy() const { return busy_time_ + (in_service_ > 0 ? engine_.now() - busy_since_ : 0); }
  size_t peak_requests() const { return peak_requests_; }
  uint32_t peak_in_service() const { return peak_in_service_; }

 private:
  static constexpr uint64_t kLatency = 1ull << 63;
  enum Phase { kFree, kLatencyPhase, kTransfer };
  struct Slot {
    Phase phase = kFree;
    uint32_t job = 0;
    double start = 0, remaining = 0;
  };
  double bandwidth_now() const { return curve_.empty() ? bandwidth_ : at_depth_.bandwidth; }
  void set_in_service(int delta) {
    if (in_service_ == 0 && delta > 0) busy_since_ = engine_.now();
    in_service_ = static_cast<uint32_t>(static_cast<int>(in_service_) + delta);
    if (!curve_.empty()) at_depth_ = ssd_curve_at(curve_, in_service_);
    peak_in_service_ = std::max(peak_in_service_, in_service_);
    if (in_service_ == 0 && delta < 0) busy_time_ += engine_.now() - busy_since_;
  }
  void admit() {
    for (uint32_t i = 0; i < slots_.size() && !queue_.empty(); ++i) {
      if (slots_[i].phase != kFree) continue;
      const JobQueue::Item it = queue_.pop();
      slots_[i] = Slot{kLatencyPhase, it.job, engine_.now(), it.amount};
      set_in_service(+1);
      const double latency = it.bulk ? bulk_latency_ : curve_.empty() ? latency_ : at_depth_.latency;
      engine_.schedule(engine_.now() + latency, this, kLatency | i);
    }
  }
  void advance() {
    const double dt = engine_.now() - last_update_;
    last_update_ = engine_.now();
    if (transferring_ == 0 || dt <= 0) return;
    const double progressed = dt * bandwidth_now() / transferring_;
    for (Slot& s : slots_)
      if (s.phase == kTransfer) s.remaining -= progressed;
  }
  void reschedule() {
    ++generation_;
    if (transferring_ == 0) return;
    double least = std::numeric_limits<double>::infinity();
    for (const Slot& s : slots_)
      if (s.phase == kTransfer) least = std::min(least, s.remaining);
    engine_.schedule(engine_.now() + std::max(least, 0.0) * transferring_ / bandwidth_now(), this,
                     generation_);
  }

  EventEngine& engine_;
  double bandwidth_, latency_;
  std::vector<SsdDepthPoint> curve_;
  SsdDepthPoint at_depth_{};
  double bulk_scale_ = 1, bulk_latency_;
  JobListener* listener_;
  std::vector<Slot> slots_;
  uint32_t in_service_ = 0, transferring_ = 0, peak_in_service_ = 0;
  double last_update_ = 0, busy_since_ = 0, busy_time_ = 0;
  uint64_t generation_ = 0, ops_ = 0;
  size_t peak_requests_ = 0;
  JobQueue queue_;
};

struct Config {
  uint32_t depth;
  bool curve, bulk_rate;
  uint64_t seed;
};

struct Outcome {
  std::vector<std::tuple<uint32_t, double, double, uint32_t>> done;  // job, start, end, slot
  double end_clock = 0, busy = 0;
  size_t peak_requests = 0;
  uint32_t peak_in_service = 0;
  bool operator==(const Outcome&) const = default;
};

// One random program: 300 requests, some submitted at grid times, some from inside a completion (the next
// read of a blocking I/O thread), at most 64 in flight.
template <typename S>
Outcome run_program(const Config& c) {
  EventEngine e;
  Outcome out;
  std::mt19937_64 rng(c.seed);
  struct Listener : JobListener {
    Outcome* out;
    std::mt19937_64* rng;
    EventEngine* e;
    S* ssd;
    uint32_t next_job = 0;
    void submit_one() {
      if (next_job >= 300) return;
      const uint64_t bytes = 1000 * (1 + (*rng)() % 8) + ((*rng)() % 4 == 0 ? (*rng)() % 997 : 0);
      ssd->submit(next_job++, static_cast<int64_t>((*rng)() % 3), bytes, (*rng)() % 5 == 0);
    }
    void job_done(uint32_t job, const OpTiming& t) override {
      out->done.emplace_back(job, t.start, t.end, t.unit);
      if ((*rng)() % 2 == 0) submit_one();
    }
  } l;
  S ssd(e, 1e6, c.curve ? 1e-3 : 2e-3, c.depth, &l);
  if (c.bulk_rate) ssd.set_bulk_rate(2e6, 1.5e-3);
  if (c.curve) ssd.set_depth_curve({{1, 1e-3, 1e6}, {3, 3e-3, 1.7e6}, {8, 4e-3, 2.1e6}});
  l.out = &out;
  l.rng = &rng;
  l.e = &e;
  l.ssd = &ssd;
  for (int k = 0; k < 200; ++k) {
    const double t = 1e-3 * static_cast<double>(rng() % 400);  // a coarse grid: ties with events
    e.schedule_fn(t, [&l] { l.submit_one(); });
  }
  e.run();
  out.end_clock = e.now();
  if constexpr (std::is_same_v<S, Ssd>) {
    out.busy = ssd.stats().busy_time;
  } else {
    out.busy = ssd.busy();
  }
  out.peak_requests = ssd.peak_requests();
  out.peak_in_service = ssd.peak_in_service();
  return out;
}

TEST(SsdReference, RandomProgramsAgreeToTheBit) {
  int programs = 0;
  for (const uint32_t depth : {1u, 2u, 4u, 12u, 70u})
    for (const bool curve : {false, true})
      for (const bool bulk_rate : {false, true})
        for (uint64_t seed = 1; seed <= 6; ++seed) {
          const Config c{depth, curve, bulk_rate, seed * 7919 + depth};
          const Outcome want = run_program<RefSsd>(c);
          const Outcome got = run_program<Ssd>(c);
          ASSERT_EQ(want.done.size(), got.done.size()) << "depth " << depth << " curve " << curve;
          for (size_t k = 0; k < want.done.size(); ++k)
            ASSERT_EQ(want.done[k], got.done[k]) << "completion " << k << ", depth " << depth << " curve "
                                                 << curve << " bulk " << bulk_rate << " seed " << seed;
          EXPECT_EQ(want.end_clock, got.end_clock) << "depth " << depth << " curve " << curve;
          EXPECT_EQ(want.busy, got.busy) << "depth " << depth << " curve " << curve;
          EXPECT_EQ(want.peak_requests, got.peak_requests);
          EXPECT_EQ(want.peak_in_service, got.peak_in_service);
          ++programs;
        }
  EXPECT_EQ(programs, 120);
}

}  // namespace
}  // namespace moesim::sim
