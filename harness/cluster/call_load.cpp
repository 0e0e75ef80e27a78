#include "harness/cluster/call_load.h"

#include <algorithm>
#include <map>
#include <string>

#include "base/sample_stats.h"
#include "harness/cluster/call_overhead_fit.h"

namespace moesim::harness {
namespace call_load_detail {

// Whether call `c`, in flight at `t`, uses a CPU then: in its hand-offs (before the server took it, after
// its work) or its work; not while it waits for its unit or (an invocation) for the network and the peer.
bool active_at(const CallSpan& c, double t) {
  if (t < c.received || t >= c.end) return true;
  return c.kind <= 1 && t >= c.start;
}

// The calls' indices in the order they were submitted (ties in their given order), and the longest a call
// was in flight: only calls made up to that long before a call can still be in flight when it is made.
std::vector<size_t> by_submission(const std::vector<CallSpan>& calls) {
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return calls[a].submitted < calls[b].submitted; });
  return order;
}
double longest_flight(const std::vector<CallSpan>& calls) {
  double longest = 0;
  for (const CallSpan& c : calls) longest = std::max(longest, c.returned - c.submitted);
  return longest;
}

}  // namespace call_load_detail

Json overhead_by_concurrency(const std::vector<CallSpan>& calls) {
  using call_load_detail::active_at;
  // A call submitted together with others counts them all, whichever comes first in this order.
  const std::vector<size_t> order = call_load_detail::by_submission(calls);
  const double longest = call_load_detail::longest_flight(calls);
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
        out[kKinds[kind]][kBy[by]][std::to_string(x)] = {
            {"calls", v.size()}, {"median_s", median_of(v)}, {"mean_s", mean_of(v)}};
  return out;
}

std::vector<std::pair<double, double>> overhead_points(const std::vector<CallSpan>& calls, double handoff_s) {
  const std::vector<size_t> order = call_load_detail::by_submission(calls);
  const double longest = call_load_detail::longest_flight(calls);
  std::vector<std::pair<double, double>> out;
  for (size_t k = 0; k < order.size(); ++k) {
    const CallSpan& c = calls[order[k]];
    if (c.kind > 1) continue;
    int in_flight = 0;
    // Only calls made up to `longest` before can still be in flight.
    for (size_t j = k; j-- > 0;) {
      const CallSpan& o = calls[order[j]];
      if (o.submitted < c.submitted - longest) break;
      in_flight += o.returned > c.submitted ? 1 : 0;
    }
    out.emplace_back(in_flight, (c.received - c.submitted) + (c.returned - c.end) + handoff_s);
  }
  return out;
}

}  // namespace moesim::harness
