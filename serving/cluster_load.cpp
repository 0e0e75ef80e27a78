#include "serving/cluster_load.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace moesim::serving {

namespace {

constexpr uint64_t kMinBacklog = 25;
constexpr double kBacklogShare = 0.05, kMinTrend = 0.75;

double mean_of(const std::vector<double>& v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return to > from ? s / static_cast<double>(to - from) : 0;
}

Json stats_json(const LoadStats& s) {
  return {{"requests", s.requests},
          {"tokens", s.tokens},
          {"arrival_rate_per_s", s.arrival_rate},
          {"throughput_requests_per_s", s.throughput_rps},
          {"throughput_tokens_per_s", s.throughput_tps},
          {"service_s", s.service_s},
          {"service_from_idle_arrivals", s.idle_arrivals},
          {"utilisation", s.utilisation},
          {"latency_trend", s.trend},
          {"latency_first_third_s", s.latency_first_s},
          {"latency_last_third_s", s.latency_last_s},
          {"latency_growth", s.growth},
          {"latency_slope_s_per_s", s.slope},
          {"backlog_at_last_arrival", s.backlog},
          {"overloaded", s.overloaded}};
}

}  // namespace

LoadStats load_stats(const ClusterResult& r, uint32_t server) {
  std::vector<const RequestRecord*> q;
  for (const RequestRecord& x : r.requests)
    if (server == UINT32_MAX || x.server == server) q.push_back(&x);
  std::stable_sort(q.begin(), q.end(),
                   [](const RequestRecord* a, const RequestRecord* b) { return a->arrival < b->arrival; });
  LoadStats s;
  s.requests = q.size();
  if (q.empty()) return s;
  double last_end = 0;
  for (const RequestRecord* x : q) {
    s.tokens += 1 + x->tokens_after_first;
    last_end = std::max(last_end, x->end);
  }
  const double first = q.front()->arrival, span = q.back()->arrival - first;
  s.arrival_rate = span > 0 ? static_cast<double>(q.size() - 1) / span : 0;
  if (last_end > first) {
    s.throughput_rps = static_cast<double>(q.size()) / (last_end - first);
    s.throughput_tps = static_cast<double>(s.tokens) / (last_end - first);
  }
  // Unloaded service: requests that found nothing of theirs in flight (a server's own, or the cluster's).
  std::vector<double> latency, idle;
  double busy_until = -std::numeric_limits<double>::infinity();
  double smallest = std::numeric_limits<double>::infinity();
  for (const RequestRecord* x : q) {
    const double l = x->end - x->arrival;
    latency.push_back(l);
    smallest = std::min(smallest, l);
    if (x->arrival >= busy_until) idle.push_back(l);
    busy_until = std::max(busy_until, x->end);
  }
  s.idle_arrivals = idle.size();
  if (!idle.empty()) {
    std::nth_element(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(idle.size() / 2), idle.end());
    s.service_s = idle[idle.size() / 2];
  } else {
    s.service_s = smallest;
  }
  const size_t n = q.size(), third = n / 3;
  s.latency_first_s = mean_of(latency, 0, std::max<size_t>(third, 1));
  s.latency_last_s = mean_of(latency, n - std::max<size_t>(third, 1), n);
  s.growth = s.latency_first_s > 0 ? s.latency_last_s / s.latency_first_s : 1;
  double mt = 0, ml = 0;
  for (size_t i = 0; i < n; ++i) {
    mt += q[i]->arrival;
    ml += latency[i];
  }
  mt /= static_cast<double>(n);
  ml /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (q[i]->arrival - mt) * (latency[i] - ml);
    sxx += (q[i]->arrival - mt) * (q[i]->arrival - mt);
  }
  s.slope = sxx > 0 ? sxy / sxx : 0;
  const double last_arrival = q.back()->arrival;
  for (const RequestRecord* x : q) s.backlog += x->arrival < last_arrival && x->end > last_arrival;
  s.utilisation = s.throughput_rps > 0 ? s.arrival_rate / s.throughput_rps : 0;
  s.trend = ml > 0 ? s.slope * span / ml : 0;
  s.overloaded = s.backlog >= std::max<double>(kMinBacklog, kBacklogShare * static_cast<double>(n)) &&
                 s.trend >= kMinTrend;
  return s;
}

Json load_json(const ClusterInput& in, const ClusterResult& r) {
  Json j;
  j["overall"] = stats_json(load_stats(r, UINT32_MAX));
  j["per_server"] = Json::object();
  for (uint32_t n = 0; n < in.servers.size(); ++n)
    j["per_server"][in.servers[n].name] = stats_json(load_stats(r, n));
  return j;
}

std::vector<std::string> overload_warnings(const ClusterInput& in, const ClusterResult& r) {
  std::vector<std::string> out;
  auto say = [&](const std::string& who, const LoadStats& s) {
    if (!s.overloaded) return;
    char buf[600];
    std::snprintf(
        buf, sizeof buf,
        "%s is overloaded: %.3g requests/s arrive, %.3g/s are served (utilisation %.2f); latency grows "
        "%.1fx from the first third of arrivals to the last (%.3g s to %.3g s, +%.3g s per s of run), %llu "
        "requests in flight at the last arrival; its mean latency is no steady-state figure: read its "
        "throughput (%.3g requests/s, %.3g tokens/s) and its unloaded service time (%.3g s) instead",
        who.c_str(), s.arrival_rate, s.throughput_rps, s.utilisation, s.growth, s.latency_first_s,
        s.latency_last_s, s.slope, static_cast<unsigned long long>(s.backlog), s.throughput_rps,
        s.throughput_tps, s.service_s);
    out.push_back(buf);
  };
  for (uint32_t n = 0; n < in.servers.size(); ++n) say("server " + in.servers[n].name, load_stats(r, n));
  if (in.servers.size() > 1) say("the cluster", load_stats(r, UINT32_MAX));
  return out;
}

}  // namespace moesim::serving
