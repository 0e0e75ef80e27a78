#include "sim/cpu_cores.h"

#include <algorithm>
#include <limits>

namespace moesim::sim {

namespace {
// Work left below this counts as done (the completion event's time is rounded).
constexpr double kDoneEps = 1e-12;
}  // namespace

CpuCores::CpuCores(EventEngine& engine, uint32_t cores) : engine_(engine), cores_(std::max(cores, 1u)) {}

double CpuCores::rate() const {
  const auto n = static_cast<uint32_t>(jobs_.size());
  return n <= cores_ ? 1.0 : static_cast<double>(cores_) / static_cast<double>(n);
}

void CpuCores::advance() {
  const double now = engine_.now();
  if (!jobs_.empty() && now > last_) {
    const double done = (now - last_) * rate();
    for (Job& j : jobs_) j.remaining -= done;
  }
  last_ = now;
}

void CpuCores::reschedule() {
  ++generation_;
  if (jobs_.empty()) return;
  double least = std::numeric_limits<double>::infinity();
  for (const Job& j : jobs_) least = std::min(least, j.remaining);
  engine_.schedule(engine_.now() + std::max(0.0, least) / rate(), this, generation_);
}

void CpuCores::start(EventHandler* done, uint64_t arg, double work) {
  advance();
  jobs_.push_back(Job{done, arg, std::max(0.0, work)});
  reschedule();
}

void CpuCores::on_event(uint64_t generation) {
  if (generation != generation_) return;  // a later start or completion moved the next completion
  advance();
  double least = std::numeric_limits<double>::infinity();
  for (const Job& j : jobs_) least = std::min(least, j.remaining);
  // The op this event was scheduled for, and any that end within rounding of it, in the order they started.
  finished_.clear();
  size_t kept = 0;
  for (const Job& j : jobs_) {
    if (j.remaining <= std::max(least, 0.0) + kDoneEps)
      finished_.push_back(j);
    else
      jobs_[kept++] = j;
  }
  jobs_.resize(kept);
  reschedule();
  // Report after the bookkeeping: a handler may start the next op right away (start() does not touch
  // finished_, and this runs only from the engine, never inside a handler).
  for (const Job& j : finished_) j.done->on_event(j.arg);
}

std::vector<double> cpu_work(const std::vector<std::pair<double, double>>& intervals, uint32_t cores) {
  cores = std::max(cores, 1u);
  struct Edge {
    double t;
    int delta;
  };
  std::vector<Edge> edges;
  edges.reserve(2 * intervals.size());
  for (const auto& [s, e] : intervals) {
    if (!(e > s)) continue;
    edges.push_back({s, +1});
    edges.push_back({e, -1});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  // F(t): the integral of min(1, cores / n) from the first edge, at every distinct edge time.
  std::vector<double> times, integral;
  times.reserve(edges.size());
  integral.reserve(edges.size());
  int64_t open = 0;
  double f = 0;
  for (size_t i = 0; i < edges.size();) {
    const double t = edges[i].t;
    if (!times.empty()) {
      const double share = open <= static_cast<int64_t>(cores) ? 1.0 : static_cast<double>(cores) / static_cast<double>(open);
      f += (t - times.back()) * share;
    }
    times.push_back(t);
    integral.push_back(f);
    for (; i < edges.size() && edges[i].t == t; ++i) open += edges[i].delta;
  }
  auto at = [&](double t) {
    const auto it = std::lower_bound(times.begin(), times.end(), t);
    return integral[static_cast<size_t>(it - times.begin())];
  };
  std::vector<double> work;
  work.reserve(intervals.size());
  for (const auto& [s, e] : intervals) work.push_back(e > s ? at(e) - at(s) : 0.0);
  return work;
}

}  // namespace moesim::sim
