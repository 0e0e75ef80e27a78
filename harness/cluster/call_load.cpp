#include "harness/cluster/call_load.h"

#include <algorithm>
#include <map>
#include <string>

namespace moesim::harness {
namespace call_load_detail {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Whether call `c`, in flight at `t`, uses a CPU then: in its hand-offs (before the server took it, after
// its work) or its work; not while it waits for its unit or (an invocation) for the network and the peer.
bool active_at(const CallSpan& c, double t) {
  if (t < c.received || t >= c.end) return true;
  return c.kind <= 1 && t >= c.start;
}

}  // namespace call_load_detail

Json overhead_by_concurrency(const std::vector<CallSpan>& calls) {
  using call_load_detail::active_at;
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return calls[a].submitted < calls[b].submitted; });
  double longest = 0;
  for (const CallSpan& c : calls) longest = std::max(longest, c.returned - c.submitted);
  constexpr int kTop = 8;
  // [kind][0 in flight, 1 active][count] -> overheads
  std::map<int, std::vector<double>> at[2][2];
  for (size_t k = 0; k < order.size(); ++k) {
    const CallSpan& c = calls[order[k]];
    if (c.kind > 1) continue;
    int in_flight = 0, active = 0;
    // Only calls made up to `longest` before can still be in flight.
    for (size_t j = k; j-- > 0;) {
      const CallSpan& o = calls[order[j]];
      if (o.submitted < c.submitted - longest) break;
      if (o.returned <= c.submitted) continue;
      ++in_flight;
      active += active_at(o, c.submitted) ? 1 : 0;
    }
    for (size_t j = k + 1; j < order.size() && calls[order[j]].submitted == c.submitted; ++j) {
      ++in_flight;
      ++active;
    }
    const double overhead = (c.received - c.submitted) + (c.returned - c.end);
    at[c.kind][0][std::min(in_flight, kTop)].push_back(overhead);
    at[c.kind][1][std::min(active, kTop)].push_back(overhead);
  }
  Json out = Json::object();
  static const char* kKinds[] = {"dense", "expert"};
  static const char* kBy[] = {"by_inflight", "by_active"};
  for (int kind = 0; kind < 2; ++kind)
    for (int by = 0; by < 2; ++by)
      for (const auto& [x, v] : at[kind][by])
        out[kKinds[kind]][kBy[by]][std::to_string(x)] = {{"calls", v.size()},
                                                         {"median_s", call_load_detail::median_of(v)}};
  return out;
}

// Hands the system's completions on after counting them out.
class CountedCluster::Sinks : public OpSink {
 public:
  uint32_t add(OpSink* sink, uint32_t token) {
    uint32_t id;
    if (free_.empty()) {
      id = static_cast<uint32_t>(entries_.size());
      entries_.push_back({sink, token});
    } else {
      id = free_.back();
      free_.pop_back();
      entries_[id] = {sink, token};
    }
    ++in_flight_;
    return id;
  }
  void op_done(uint32_t id, const OpTiming& timing) override {
    const auto [sink, token] = entries_[id];
    free_.push_back(id);
    --in_flight_;
    sink->op_done(token, timing);
  }
  uint64_t in_flight() const { return in_flight_; }

 private:
  std::vector<std::pair<OpSink*, uint32_t>> entries_;
  std::vector<uint32_t> free_;
  uint64_t in_flight_ = 0;
};

class CountedCluster::Server : public ServerPlatform {
 public:
  Server(ServerPlatform& inner, uint32_t index, Sinks& sinks, CallObserver& observer)
      : inner_(inner), index_(index), sinks_(sinks), observer_(observer) {}
  double now() const override { return inner_.now(); }
  void submit(const Op& op, OpSink* sink, uint32_t token) override {
    uint32_t best = 0;
    for (uint32_t g = 1; g < inner_.units(ResourceClass::kGpu); ++g)
      if (inner_.unit_free_at(ResourceClass::kGpu, g) < inner_.unit_free_at(ResourceClass::kGpu, best))
        best = g;
    submit_on(best, op, sink, token);
  }
  void submit_on(uint32_t unit, const Op& op, OpSink* sink, uint32_t token) override {
    observer_.before(sinks_.in_flight());
    inner_.submit_on(unit, op, &sinks_, sinks_.add(sink, token));
    observer_.after(index_, unit);
  }
  double unit_free_at(ResourceClass r, uint32_t unit) const override { return inner_.unit_free_at(r, unit); }
  void run_until_idle() override { inner_.run_until_idle(); }
  std::vector<ResourceStats> resource_stats() const override { return inner_.resource_stats(); }
  std::string describe() const override { return inner_.describe(); }
  double estimate(const Op& op) const override { return inner_.estimate(op); }
  uint32_t units(ResourceClass r) const override { return inner_.units(r); }

 private:
  ServerPlatform& inner_;
  uint32_t index_;
  Sinks& sinks_;
  CallObserver& observer_;
};

CountedCluster::CountedCluster(ClusterPlatform& inner, CallObserver& observer)
    : inner_(inner), observer_(observer), sinks_(std::make_unique<Sinks>()) {
  for (uint32_t n = 0; n < inner.servers(); ++n)
    servers_.push_back(std::make_unique<Server>(inner.server(n), n, *sinks_, observer_));
}

CountedCluster::~CountedCluster() = default;

ServerPlatform& CountedCluster::server(uint32_t n) {
  return *servers_.at(n);
}
const ServerPlatform& CountedCluster::server(uint32_t n) const {
  return *servers_.at(n);
}

void CountedCluster::invoke(uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes,
                            const std::vector<RemoteWork>& works, OpSink* sink, uint32_t token) {
  observer_.before(sinks_->in_flight());
  inner_.invoke(from, to, layer, bytes, works, sinks_.get(), sinks_->add(sink, token));
  observer_.after(from, UINT32_MAX);
}

}  // namespace moesim::harness
