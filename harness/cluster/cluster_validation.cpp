#include "harness/cluster/cluster_validation.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "base/median_interval.h"
#include "base/sample_stats.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/cluster_spec.h"
#include "core/cost_model.h"
#include "exec/exec_cluster_platform.h"
#include "harness/arguments.h"
#include "harness/cluster/call_load.h"
#include "harness/cluster/call_overhead_fit.h"
#include "harness/cluster/cluster_job.h"
#include "harness/cluster/real_cluster.h"
#include "serving/cluster_load.h"
#include "serving/cluster_serving.h"
#include "sim/network.h"
#include "sim/sim_cluster_platform.h"

namespace moesim::harness {
namespace {

struct Calibration {
  std::vector<HardwareProfile> hw;
  double call_overhead_s = 0, invoke_overhead_s = 0, call_overhead_per_inflight_s = 0;
  // The line of the bursts' means over every block (fit_call_overhead_bursts), and the invocation overhead
  // beside it: the report's `errors.cost_burst_means`, not the cost.
  CallOverheadLine burst_means;
  double burst_means_invoke_overhead_s = 0;
  // The line from the paired chain's lead calls (fit_call_overhead_led) and the invocation overhead beside
  // it: the report's `errors.cost_lead_call`, not the cost.
  CallOverheadLine lead_call;
  double lead_call_invoke_overhead_s = 0;
  // A server's hand-off to an idle unit (held in the call overhead), and the invocations' total beyond the
  // links and the peer's work (the cost's call overhead plus its invocation overhead), which a line reported
  // beside the cost keeps.
  double handoff_s = 0, invoke_total_s = 0;
  // The invocation overhead beside a line reported with the cost: what keeps the invocations' total with that
  // line's intercept.
  double invoke_beside(const CallOverheadLine& l) const { return std::max(invoke_total_s - l.fixed, 0.0); }
  // The line from the calibration's short serve (serve_line) and the invocation overhead beside it: the
  // report's `errors.cost_serve`, not the cost.
  CallOverheadLine serve;
  double serve_invoke_overhead_s = 0;
  Json report = Json::object();
};

constexpr uint32_t kTokens[] = {1, 2, 4, 8, 16, 32};
constexpr int kReps = 5;
constexpr int kLoneCallReps = 21;
// Passes of the burst schedule, half before the CPU measurement and half after, alternately in increasing and
// decreasing burst size: the calibration's first calls are slower than its later ones, and the machine's
// speed drifts across its seconds (bench/results/cluster-calls-2026-12-06b.md).
constexpr int kBurstBlocks = 16;
// Steps of the paired chain (paired_chain): a median over them holds to a few percent.
constexpr int kPairSteps = 120;

// The servers' calls as a platform's servers, each estimating with `hw`'s profile (empty: the spec's).
std::vector<exec::ExecClusterServer> exec_servers(
    const serving::ClusterInput& in, const std::vector<std::shared_ptr<exec::ServerCalls>>& calls,
    const std::vector<HardwareProfile>& hw) {
  std::vector<exec::ExecClusterServer> servers;
  for (uint32_t n = 0; n < calls.size(); ++n)
    servers.push_back(
        {in.servers[n].name, hw.empty() ? in.servers[n].hw : hw.at(n), in.servers[n].gpus, calls[n]});
  return servers;
}

// One server's unit work at each token count: the median of kReps calls alone on unit 0.
std::vector<std::pair<double, double>> unit_points(exec::ServerCalls& c, bool dense) {
  std::vector<std::pair<double, double>> pts;
  for (uint32_t t : kTokens) {
    std::vector<double> unit;
    for (int r = 0; r < kReps; ++r) {
      const exec::CallTiming ct = dense ? c.dense(0, 0, t) : c.compute(0, 0, 0, t);
      unit.push_back(ct.end - ct.start);
    }
    pts.emplace_back(t, median_of(unit));
  }
  return pts;
}

// The CPU seconds process `pid` has run so far, its exited threads included (/proc/PID/stat's utime and
// stime, in clock ticks; blind to every other process on the host).
double process_cpu_s(const std::string& pid) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string line;
  std::getline(f, line);
  const size_t close = line.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::atof(field.c_str());
    if (i == 15) stime = std::atof(field.c_str());
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}
// This process's CPU time and its children's (the emulated cluster's servers, spawned by it).
double cluster_cpu_s() {
  double s = process_cpu_s("self");
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream f(t.path() / "children");
    std::string child;
    while (f >> child) s += process_cpu_s(child);
  }
  return s;
}

// The calibration's calls are timed from the platform's records; their replies need no handling.
struct IgnoreReplies : OpSink {
  void op_done(uint32_t, const OpTiming&) override {}
};

// Bursts of k one-token expert calls through the run's platform, `calls` calls in all: the CPU time per call
// of the coordinator and the servers together (clock ticks over ~1000 calls: a few percent), the
// coordinator's own, and the median burst's makespan (first submission to last reply taken). For the report:
// what a call costs the host's cores, beside what it costs in wall time.
Json cpu_per_call(exec::ExecClusterPlatform& platform,
                  const std::vector<std::pair<uint32_t, uint32_t>>& units,
                  const std::function<Op(uint32_t)>& expert_op, uint32_t k, uint32_t calls) {
  IgnoreReplies ignore;
  std::vector<double> makespan;
  const double cpu0 = cluster_cpu_s(), self0 = process_cpu_s("self"), t0 = platform.now();
  for (uint32_t b = 0; b < calls / k; ++b) {
    const size_t first = platform.records().size();
    for (uint32_t i = 0; i < k; ++i) {
      const auto [server, unit] = units[i % units.size()];
      platform.server(server).submit_on(unit, expert_op(1), &ignore, i);
    }
    platform.run();
    double last = 0;
    for (size_t c = first; c < platform.records().size(); ++c)
      last = std::max(last, platform.records()[c].returned);
    makespan.push_back(last - platform.records()[first].submitted);
  }
  const double n = static_cast<double>(calls / k * k);
  return {{"calls", calls / k * k},
          {"wall_per_call_s", (platform.now() - t0) / n},
          {"cpu_per_call_s", (cluster_cpu_s() - cpu0) / n},
          {"coordinator_cpu_per_call_s", (process_cpu_s("self") - self0) / n},
          {"makespan_median_s", median_of(makespan)}};
}

// A call of the calibration's bursts: its burst's size, the other calls in flight when it was made (as the
// simulator counts them) and its overhead in seconds.
struct BurstCall {
  uint32_t k = 0;
  double x = 0, y = 0;
};

// A calibration call's overhead: its round trip less its time at the server (the wait for its unit, which the
// simulator's FIFO makes itself, and its work) plus a server's hand-off to an idle unit (h0), which the model
// holds in the call overhead.
double call_overhead(const exec::ExecCallRecord& rec, double h0) {
  return rec.returned - rec.submitted - (rec.timing.end - rec.timing.received) + h0;
}

// One pass of the burst schedule: kLoneCallReps lone calls and kReps bursts of 2, 4, 8 and 16 one-token
// expert calls spread over the units (in decreasing size when `reverse`), each call's overhead
// (call_overhead).
void burst_block(exec::ExecClusterPlatform& platform, const std::vector<std::pair<uint32_t, uint32_t>>& units,
                 const std::function<Op(uint32_t)>& expert_op, double h0, bool reverse,
                 std::vector<BurstCall>& out) {
  IgnoreReplies ignore;
  std::vector<uint32_t> sizes = {1, 2, 4, 8, 16};
  if (reverse) std::reverse(sizes.begin(), sizes.end());
  for (uint32_t k : sizes)
    for (int r = 0; r < (k == 1 ? kLoneCallReps : kReps); ++r) {
      const size_t first = platform.records().size();
      for (uint32_t i = 0; i < k; ++i) {
        const auto [server, unit] = units[i % units.size()];
        platform.server(server).submit_on(unit, expert_op(1), &ignore, i);
      }
      platform.run();
      for (size_t c = first; c < platform.records().size(); ++c) {
        const exec::ExecCallRecord& rec = platform.records()[c];
        out.push_back({k, static_cast<double>(c - first), call_overhead(rec, h0)});
      }
    }
}

// The lone call as a run makes it: a run's pass submits its experts together, so a call with no other in
// flight is, in a run, nearly always the first of a pass's two or more, with the next submitted microseconds
// after it; and it is made from the coordinator's thread as it takes the reply before it. kPairSteps steps,
// each a one-token expert call on the first unit with one call on the next server's first unit submitted
// right after it (another unit of the first server when there is one server), the next step from the callback
// of the step's last reply. The lead calls' overheads (as burst_block's), for the line's intercept
// (fit_call_overhead_led): the calibration's back-to-back lone call, with nothing after it, is 30-40% faster
// than a run's (bench/results/cluster-calls-2026-12-06c.md).
std::vector<double> paired_chain(exec::ExecClusterPlatform& platform,
                                 const std::function<Op(uint32_t)>& expert_op, double h0) {
  const uint32_t S = platform.servers();
  const uint32_t follow_server = S > 1 ? 1 : 0;
  const uint32_t follow_unit = S > 1 ? 0 : std::min(1u, platform.server(0).units(ResourceClass::kGpu) - 1);
  struct Chain : OpSink {
    std::function<void()> step;
    int left = 0, steps = 0;
    void op_done(uint32_t, const OpTiming&) override {
      if (--left == 0 && ++steps < kPairSteps) step();
    }
  } chain;
  const size_t first = platform.records().size();
  chain.step = [&] {
    chain.left = 2;
    platform.server(0).submit_on(0, expert_op(1), &chain, 0);
    platform.server(follow_server).submit_on(follow_unit, expert_op(1), &chain, 1);
  };
  chain.step();
  platform.run();
  std::vector<double> lead;
  for (size_t c = first; c < platform.records().size(); c += 2) {
    const exec::ExecCallRecord& rec = platform.records()[c];
    lead.push_back(call_overhead(rec, h0));
  }
  return lead;
}

std::vector<std::pair<uint32_t, double>> by_size(const std::vector<BurstCall>& calls, size_t from,
                                                 size_t to) {
  std::vector<std::pair<uint32_t, double>> out;
  for (size_t i = from; i < to; ++i) out.emplace_back(calls[i].k, calls[i].y);
  return out;
}

// Invocations between every ordered pair of the `n` servers, made as the calibration's calls: what each takes
// beyond a call's overhead (`call_overhead_s`), the peer's work and the links.
std::vector<double> invoke_residuals(exec::ExecClusterPlatform& platform, const serving::ClusterInput& in,
                                     size_t n, double call_overhead_s,
                                     const std::function<Op(uint32_t)>& expert_op) {
  IgnoreReplies ignore;
  const ModelSpec& m = in.model;
  const sim::Network net(serving::server_names(in), in.links);
  std::vector<double> residual;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const double lat = net.route_latency(a, b), inv = net.route_inverse_bandwidth(a, b);
      for (uint32_t t : {1u, 32u})
        for (int r = 0; r < 3; ++r) {
          RemoteWork w;
          w.op = expert_op(t);
          const double bytes = static_cast<double>(t) * static_cast<double>(m.hidden_size) * sizeof(float);
          platform.invoke(a, b, 0, static_cast<uint64_t>(bytes), {w}, &ignore, 0);
          platform.run();
          const exec::ExecCallRecord& rec = platform.records().back();
          const double rt = rec.returned - rec.submitted;
          const double work =
              rec.timing.works.empty() ? 0 : rec.timing.works[0].second - rec.timing.works[0].first;
          residual.push_back(rt - call_overhead_s - work - 2 * (lat + bytes * inv));
        }
    }
  return residual;
}

namespace cluster_validation_detail {
Calibration calibrate(const serving::ClusterInput& in,
                      const std::vector<std::shared_ptr<exec::ServerCalls>>& calls) {
  Calibration cal;
  const ModelSpec& m = in.model;
  const double expert_flops = serving::cluster_compute_op(m, OpKind::kExpertCompute, 0, 1).flops;
  const double dense_flops = serving::cluster_compute_op(m, OpKind::kDenseCompute, 0, 1).flops;
  for (uint32_t n = 0; n < calls.size(); ++n) {
    const auto [ea, eb] = least_squares_line(unit_points(*calls[n], false));
    const auto dense_pts = unit_points(*calls[n], true);
    HardwareProfile hw = in.servers[n].hw;
    hw.name += "-calibrated";
    // The line's cost per token as the FLOP rate, and the weights' reads folded into it (a CPU's expert FFN
    // widens each weight once per call whatever the tokens: its 1-token time is the fixed cost plus one
    // token's): a bandwidth no op reaches, so the roofline is the line.
    hw.gpu_bf16_flops = eb > 0 ? expert_flops / eb : hw.gpu_bf16_flops;
    hw.gpu_memory_bandwidth = 1e15;
    hw.gpu_expert_overhead = hw.gpu_expert_gemm_overhead = std::max(ea, 0.0);
    hw.gpu_fresh_expert_overhead = -1;
    std::vector<double> dense_fixed;
    for (const auto& [t, y] : dense_pts) dense_fixed.push_back(y - t * dense_flops / hw.gpu_bf16_flops);
    hw.gpu_kernel_overhead = hw.gpu_dense_gemm_overhead = std::max(median_of(dense_fixed), 0.0);
    cal.report["servers"][in.servers[n].name] = {{"expert_fixed_s", ea},
                                                 {"expert_per_token_s", eb},
                                                 {"dense_fixed_s", hw.gpu_kernel_overhead},
                                                 {"flops_per_s", hw.gpu_bf16_flops}};
    cal.hw.push_back(hw);
  }
  // Calls in flight together slow each other (the coordinator's threads and connections, the machine's
  // cores). The calls are made the way a run makes them: through an ExecClusterPlatform over the same
  // servers, so that each one's overhead holds what the run's hold -- the hand-off to a pool thread, the
  // gRPC round trip, the wake-up of the coordinator's thread that takes the reply, one reply at a time.
  // Bursts of k one-token expert calls, k = 1 .. 16, in kBurstBlocks passes, then the paired chain. The
  // cost's line is the first pass's, anchored at its lone calls (harness/cluster/call_overhead_fit.h); the
  // line of the bursts' means over every pass and the paired chain's (its lead call with the bursts' slope)
  // are reported beside it: each was tried as the cost and, on the same runs, was further from them
  // (bench/results/cluster-calls-2026-12-06b.md, -06c.md).
  std::vector<std::pair<uint32_t, uint32_t>> units;  // (server, unit)
  for (uint32_t g = 0; g < 8; ++g)
    for (uint32_t n = 0; n < calls.size(); ++n)
      if (g < in.servers[n].gpus) units.emplace_back(n, g);
  std::vector<double> idle_handoff;
  for (uint32_t n = 0; n < calls.size(); ++n)
    for (int r = 0; r < kReps; ++r) {
      const exec::CallTiming ct = calls[n]->compute(0, 0, 0, 1);
      idle_handoff.push_back(ct.start - ct.received);
    }
  const double h0 = std::max(median_of(idle_handoff), 0.0);
  exec::ExecClusterPlatform platform(exec_servers(in, calls, {}), in.links);
  const auto expert_op = [](uint32_t tokens) {  // expert 0 of layer 0, as the calls above
    Op op;
    op.kind = OpKind::kExpertCompute;
    op.resource = ResourceClass::kGpu;
    op.layer = op.expert = 0;
    op.tokens = tokens;
    return op;
  };
  std::vector<BurstCall> bursts;
  std::vector<size_t> block_end;
  for (int b = 0; b < kBurstBlocks; ++b) {
    if (b == kBurstBlocks / 2)
      for (uint32_t k : {1u, 2u, 4u, 16u})
        cal.report["cpu_by_burst"][std::to_string(k)] = cpu_per_call(platform, units, expert_op, k, 960);
    burst_block(platform, units, expert_op, h0, b % 2 == 1, bursts);
    block_end.push_back(bursts.size());
    const CallOverheadLine l =
        fit_call_overhead_bursts(by_size(bursts, b ? block_end[b - 1] : 0, bursts.size()));
    cal.report["call_overhead_block_lines_s"].push_back({l.fixed, l.per_inflight});
  }
  cal.burst_means = fit_call_overhead_bursts(by_size(bursts, 0, bursts.size()));
  std::vector<std::pair<double, double>> first_pts;
  for (size_t i = 0; i < block_end[0]; ++i) first_pts.emplace_back(bursts[i].x, bursts[i].y);
  const CallOverheadLine line = fit_call_overhead(first_pts);
  cal.call_overhead_s = line.fixed;
  cal.call_overhead_per_inflight_s = line.per_inflight;
  const std::vector<double> lead = paired_chain(platform, expert_op, h0);
  cal.lead_call = fit_call_overhead_led(lead, cal.burst_means);
  cal.report["lead_call_s"] = {
      {"calls", lead.size()}, {"median_s", median_of(lead)}, {"mean_s", mean_of(lead)}};
  for (const auto& [x, y] : call_overhead_medians(first_pts))
    cal.report["call_overhead_median_by_inflight_s"][std::to_string(x)] = y;
  std::map<uint32_t, std::vector<double>> at_size;
  for (const BurstCall& c : bursts) at_size[c.k].push_back(c.y);
  for (const auto& [k, v] : at_size)
    cal.report["call_overhead_by_burst_s"][std::to_string(k)] = {
        {"calls", v.size()}, {"mean_s", mean_of(v)}, {"median_s", median_of(v)}};
  const double residual_median =
      median_of(invoke_residuals(platform, in, calls.size(), cal.call_overhead_s, expert_op));
  cal.invoke_overhead_s = std::max(residual_median, 0.0);
  // A line reported beside the cost keeps the invocations' total: what the cost's line leaves to the
  // invocation overhead, less what that line's own intercept takes more.
  cal.handoff_s = h0;
  cal.invoke_total_s = residual_median + cal.call_overhead_s;
  cal.burst_means_invoke_overhead_s = cal.invoke_beside(cal.burst_means);
  cal.lead_call_invoke_overhead_s = cal.invoke_beside(cal.lead_call);
  cal.report["call_overhead_s"] = cal.call_overhead_s;
  cal.report["call_overhead_per_inflight_s"] = cal.call_overhead_per_inflight_s;
  cal.report["invoke_overhead_s"] = cal.invoke_overhead_s;
  cal.report["burst_means"] = {{"call_overhead_s", cal.burst_means.fixed},
                               {"call_overhead_per_inflight_s", cal.burst_means.per_inflight},
                               {"invoke_overhead_s", cal.burst_means_invoke_overhead_s}};
  cal.report["lead_call"] = {{"call_overhead_s", cal.lead_call.fixed},
                             {"call_overhead_per_inflight_s", cal.lead_call.per_inflight},
                             {"invoke_overhead_s", cal.lead_call_invoke_overhead_s}};
  return cal;
}
}  // namespace cluster_validation_detail

// A call's time on the coordinator's side: from its submission until the server took it (an invocation:
// until it began to send), and from its work's end (an invocation's results back) until the coordinator took
// the reply.
double before_server(const exec::ExecCallRecord& c) {
  return (c.kind == 2 ? c.timing.start : c.timing.received) - c.submitted;
}
double after_server(const exec::ExecCallRecord& c) {
  return c.returned - c.timing.end;
}

std::vector<CallSpan> call_spans(const std::vector<exec::ExecCallRecord>& records) {
  std::vector<CallSpan> out;
  for (const exec::ExecCallRecord& c : records)
    if (c.kind <= 2)
      out.push_back({c.kind, c.submitted, c.kind == 2 ? c.timing.start : c.timing.received, c.timing.start,
                     c.timing.end, c.returned});
  return out;
}

// The short serve: kServeSeconds of arrivals on the calibration's servers, the calls made through an
// ExecClusterPlatform as a run makes them, of other requests than the validated ones (each server serves the
// next server's traces, its arrivals drawn from another seed; one server: its own traces, other arrivals).
// A run's calls cost more than the calibration's bursts and chains make them (a pass's calls overlap each
// other and the coordinator's own work: bench/results/cluster-calls-2026-12-06c.md); its calls' overheads,
// measured as the calibration measures its own, against the calls in flight at their submission as the
// simulator counts them, give the line reported beside the cost (fit_call_overhead_total: the lone calls'
// median, and the slope that charges the serve's calls their total), with the invocations' total kept.
constexpr double kServeSeconds = 4;
constexpr uint64_t kServeSeedOffset = 7919;
void serve_line(const serving::ClusterInput& in, const serving::ClusterOptions& opt,
                const std::vector<std::shared_ptr<exec::ServerCalls>>& calls, Calibration& cal) {
  serving::ClusterInput other = in;
  const size_t S = in.servers.size();
  for (size_t n = 0; n < S; ++n) {
    other.servers[n].traces = in.servers[(n + 1) % S].traces;
    other.servers[n].trace_paths = in.servers[(n + 1) % S].trace_paths;
  }
  serving::ClusterOptions o = opt;
  o.duration_s = std::min(opt.duration_s, kServeSeconds);
  o.seed = opt.seed + kServeSeedOffset;
  o.record_timeline = false;
  o.on_progress = nullptr;
  exec::ExecClusterPlatform platform(exec_servers(in, calls, cal.hw), in.links);
  const auto t0 = std::chrono::steady_clock::now();
  const serving::ClusterResult r = serving::serve_cluster(other, o, platform);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<std::pair<double, double>> points =
      overhead_points(call_spans(platform.records()), cal.handoff_s);
  // No call in the serve (a spec whose arrivals all come later): the cost's line, so that the report holds
  // no line of nothing.
  cal.serve = points.empty() ? CallOverheadLine{cal.call_overhead_s, cal.call_overhead_per_inflight_s}
                             : fit_call_overhead_total(points);
  cal.serve_invoke_overhead_s = cal.invoke_beside(cal.serve);
  Json& j = cal.report["serve"];
  j = {{"duration_s", o.duration_s},
       {"seed", o.seed},
       {"requests", r.requests.size()},
       {"calls", points.size()},
       {"wall_s", wall},
       {"call_overhead_s", cal.serve.fixed},
       {"call_overhead_per_inflight_s", cal.serve.per_inflight},
       {"invoke_overhead_s", cal.serve_invoke_overhead_s}};
  for (const auto& [x, y] : call_overhead_medians(points))
    j["call_overhead_median_by_inflight_s"][std::to_string(x)] = y;
}

double mean_latency(const serving::ClusterResult& r) {
  std::vector<double> v;
  for (const auto& q : r.requests) v.push_back(q.end - q.arrival);
  return mean_of(v);
}

// The figure a validation compares: the mean latency, or, when the real runs were overloaded
// (serving/cluster_load.h), the time per request served (1 / throughput), the steady-state figure an unstable
// queue has (its mean latency grows with the run's length).
double figure(const serving::ClusterResult& r, bool per_served) {
  if (!per_served) return mean_latency(r);
  const serving::LoadStats s = serving::load_stats(r, UINT32_MAX);
  return s.throughput_rps > 0 ? 1 / s.throughput_rps : 0;
}

std::vector<sim::SimClusterServer> sim_servers(const serving::ClusterInput& in,
                                               const std::vector<HardwareProfile>& hw) {
  std::vector<sim::SimClusterServer> out;
  for (uint32_t n = 0; n < in.servers.size(); ++n)
    out.push_back({in.servers[n].name, hw.at(n), in.servers[n].gpus, in.servers[n].nic_bandwidth});
  return out;
}

// A run's measured durations, each popped by the simulator in its own order where it asks for the same thing
// (a key), else the mean of its class.
class Replay {
 public:
  explicit Replay(const std::vector<exec::ExecCallRecord>& records) {
    // A server's hand-off from a call's arrival to its work's start when the unit was idle (its worker
    // wakes): the median over the works that found their unit idle, per server. Queued works start when the
    // one before them ends, which the simulator's FIFO does itself.
    struct Work {
      double arrived, start, end;
    };
    std::map<std::pair<uint32_t, uint32_t>, std::vector<Work>> by_unit;
    for (const exec::ExecCallRecord& c : records) {
      if (c.kind <= 1)
        by_unit[{c.server, c.unit}].push_back({c.timing.received, c.timing.start, c.timing.end});
      if (c.kind == 2)
        for (size_t i = 0; i < c.works.size() && i < c.timing.works.size(); ++i)
          by_unit[{c.peer, c.works[i][1]}].push_back(
              {c.timing.peer_arrived, c.timing.works[i].first, c.timing.works[i].second});
    }
    std::map<uint32_t, std::vector<double>> handoffs;
    for (auto& [unit, works] : by_unit) {
      std::sort(works.begin(), works.end(), [](const Work& a, const Work& b) { return a.start < b.start; });
      for (size_t i = 0; i < works.size(); ++i)
        if (i == 0 || works[i - 1].end <= works[i].arrived)
          handoffs[unit.first].push_back(works[i].start - works[i].arrived);
    }
    std::map<uint32_t, double> handoff;
    for (auto& [server, v] : handoffs) handoff[server] = std::max(median_of(v), 0.0);
    for (const exec::ExecCallRecord& c : records) {
      if (c.kind <= 2) {
        add(pre_, {c.server, c.kind, c.layer}, before_server(c) + (c.kind <= 1 ? handoff[c.server] : 0));
        add(post_, {c.server, c.kind, c.layer}, after_server(c));
      }
      if (c.kind <= 1)
        add(unit_, {c.server, c.kind, c.layer, c.expert, c.tokens}, c.timing.end - c.timing.start);
      if (c.kind == 2) {
        for (size_t i = 0; i < c.works.size() && i < c.timing.works.size(); ++i)
          add(unit_, {c.peer, 1, c.layer, c.works[i][0], c.works[i][2]},
              c.timing.works[i].second - c.timing.works[i].first);
        add(there_, {c.server, c.peer, c.layer, c.bytes},
            c.timing.peer_arrived - c.timing.start + handoff[c.peer]);
        add(back_, {c.server, c.peer, c.layer, c.bytes}, c.timing.end - c.timing.peer_sent);
      }
    }
  }
  sim::SimClusterOptions hooks() {
    sim::SimClusterOptions o;
    o.unit_seconds = [this](uint32_t server, const Op& op) {
      const uint8_t kind = op.kind == OpKind::kDenseCompute ? 0 : 1;
      return pop(unit_, {server, kind, op.layer, kind ? op.expert : 0xFFFFu, op.tokens});
    };
    o.call_seconds = [this](uint32_t server, const Op& op, bool after) {
      const uint8_t kind = op.kind == OpKind::kDenseCompute ? 0 : op.kind == OpKind::kExpertCompute ? 1 : 2;
      return pop(after ? post_ : pre_, {server, kind, op.layer});
    };
    o.transfer_seconds = [this](uint32_t from, uint32_t to, uint16_t layer, uint64_t bytes, bool back) {
      return pop(back ? back_ : there_, {from, to, layer, bytes});
    };
    return o;
  }

 private:
  using Key = std::vector<uint64_t>;
  struct Table {
    std::map<Key, std::deque<double>> exact;
    std::map<Key, std::pair<double, uint64_t>> cls;  // the key less its last field: sum, count
  };
  static void add(Table& t, Key k, double v) {
    t.exact[k].push_back(v);
    k.pop_back();
    auto& [sum, n] = t.cls[k];
    sum += v;
    ++n;
  }
  static double pop(Table& t, Key k) {
    if (auto it = t.exact.find(k); it != t.exact.end() && !it->second.empty()) {
      const double v = it->second.front();
      it->second.pop_front();
      return v;
    }
    k.pop_back();
    const auto it = t.cls.find(k);
    return it != t.cls.end() && it->second.second > 0
               ? it->second.first / static_cast<double>(it->second.second)
               : -1;
  }
  Table unit_, pre_, post_, there_, back_;
};

// Where a run's time went, per kind of call (dense, expert, invoke): means of the coordinator's time before
// the server took the call, the wait for the unit, the work, and the time after it until the coordinator
// took the reply; and what the calibrated model predicts for the same calls' work.
Json breakdown(const std::vector<exec::ExecCallRecord>& records, const std::vector<HardwareProfile>& hw,
               const ModelSpec& m) {
  static const char* kNames[] = {"dense", "expert", "invoke"};
  Json out = Json::object();
  for (uint8_t kind = 0; kind < 3; ++kind) {
    std::vector<double> pre, wait, work, post, model;
    for (const exec::ExecCallRecord& c : records) {
      if (c.kind != kind) continue;
      pre.push_back(before_server(c));
      post.push_back(after_server(c));
      if (kind == 2) {
        work.push_back(c.timing.end - c.timing.start);
        continue;
      }
      wait.push_back(c.timing.start - c.timing.received);
      work.push_back(c.timing.end - c.timing.start);
      const Op op = serving::cluster_compute_op(m, kind == 0 ? OpKind::kDenseCompute : OpKind::kExpertCompute,
                                                c.layer, c.tokens);
      model.push_back(CostModel(hw.at(c.server)).duration(op));
    }
    if (pre.empty()) continue;
    out[kNames[kind]] = {{"calls", pre.size()},          {"before_s", mean_of(pre)},
                         {"unit_wait_s", mean_of(wait)}, {"work_s", mean_of(work)},
                         {"after_s", mean_of(post)},     {"model_work_s", mean_of(model)}};
  }
  return out;
}

std::string verdict(const std::vector<double>& errors, double target) {
  size_t in = 0;
  for (double e : errors) in += std::fabs(e) <= target ? 1 : 0;
  return in == errors.size() ? "met" : in == 0 ? "missed" : "inconclusive";
}

Json error_json(const std::vector<double>& errors) {
  const MedianInterval mi = median_interval(errors);
  return {{"latency_mean", median_of(errors)},
          {"runs", errors},
          {"interval", {mi.lo, mi.hi}},
          {"interval_coverage", mi.coverage}};
}

// The simulator's figures: with the calibrated model, without the calls' overheads, and with each line
// reported beside the cost's in its place: the bursts' means (Calibration::burst_means), the paired chain's
// lead call with the bursts' slope (Calibration::lead_call), the cost's intercept with the bursts' slope, and
// the short serve's line (Calibration::serve).
struct CostFigures {
  double cost = 0, bare = 0, burst_means = 0, lead_call = 0, bursts_slope = 0, serve = 0;
};
CostFigures cost_figures(const serving::ClusterInput& in, const serving::ClusterOptions& opt,
                         const Calibration& cal, const sim::SimClusterOptions& co, bool per_served) {
  const auto with = [&](const sim::SimClusterOptions& o) {
    sim::SimClusterPlatform p(sim_servers(in, cal.hw), in.links, o);
    return figure(serving::serve_cluster(in, opt, p), per_served);
  };
  CostFigures f;
  f.cost = with(co);
  f.bare = with(sim::SimClusterOptions{});
  const auto line = [&](const CallOverheadLine& l, double invoke) {
    sim::SimClusterOptions o = co;
    o.call_overhead_s = l.fixed;
    o.call_overhead_per_inflight_s = l.per_inflight;
    o.invoke_overhead_s = invoke;
    return with(o);
  };
  f.burst_means = line(cal.burst_means, cal.burst_means_invoke_overhead_s);
  f.lead_call = line(cal.lead_call, cal.lead_call_invoke_overhead_s);
  // The cost's intercept with the bursts' slope (its invocation overhead: the intercept is the cost's).
  f.bursts_slope = line({cal.call_overhead_s, cal.burst_means.per_inflight}, cal.invoke_overhead_s);
  f.serve = line(cal.serve, cal.serve_invoke_overhead_s);
  return f;
}

// The text report, from the JSON's figures.
std::string summary_text(const ClusterValidateArgs& a, const Json& j, double duration_s,
                         const char* compared) {
  const auto lo_hi = [](const Json& v) {
    const std::vector<double> x = v.get<std::vector<double>>();
    return std::pair{*std::min_element(x.begin(), x.end()), *std::max_element(x.begin(), x.end())};
  };
  const auto pct = [&](const char* k) { return 100 * j["errors"][k]["latency_mean"].get<double>(); };
  const auto verdict_of = [&](const char* k) { return j["verdicts"][k].get<std::string>(); };
  const auto [elo, ehi] = lo_hi(j["exec"]["latency_mean_s"]);
  const auto [slo, shi] = lo_hi(j["errors"]["structure"]["runs"]);
  const auto [clo, chi] = lo_hi(j["errors"]["cost"]["runs"]);
  const Json& c = j["calibration"];
  return strprintf(
      "validate --cluster: %s, placement %s, %u exec runs of %s; compared: %s\n"
      "exec figure           %.4f s (runs %.4f .. %.4f)\n"
      "structure error       %+.2f%% (runs %+.2f%% .. %+.2f%%): %s (target %.0f%%)\n"
      "cost error            %+.2f%% (runs %+.2f%% .. %+.2f%%): %s (target %.0f%%)\n"
      "cost without the calls' overheads %+.2f%%\n"
      "beside the cost: the bursts' slope %+.2f%% (%s), the short serve's line %+.2f%% (%s)\n"
      "calibration: call overhead %.1f us, invocation overhead %.1f us; short serve %.1f s\n",
      a.spec.c_str(), a.placement.c_str(), a.repeat, format_seconds(duration_s).c_str(), compared,
      j["exec"]["median"].get<double>(), elo, ehi, pct("structure"), 100 * slo, 100 * shi,
      verdict_of("structure").c_str(), 100 * a.structure_target, pct("cost"), 100 * clo, 100 * chi,
      verdict_of("cost").c_str(), 100 * a.cost_target, pct("cost_without_overheads"),
      pct("cost_bursts_slope"), verdict_of("cost_bursts_slope").c_str(), pct("cost_serve"),
      verdict_of("cost_serve").c_str(), 1e6 * c.value("call_overhead_s", 0.0),
      1e6 * c.value("invoke_overhead_s", 0.0), c.contains("serve") ? c["serve"].value("wall_s", 0.0) : 0.0);
}

}  // namespace

ClusterValidationOutput validate_cluster(const ClusterValidateArgs& a) {
  if (a.placement.empty()) throw UsageError("validate --cluster: --placement is required");
  if (a.repeat == 0) throw UsageError("--repeat must be at least 1");
  const ClusterSpec spec = load_cluster_spec(a.spec);
  refuse_outputs_over_spec_files(spec, {{a.out, "-o"}});
  const serving::ClusterInput in = serving::load_cluster_input(spec);
  serving::ClusterOptions opt;
  opt.placement = a.placement;
  opt.duration_s = parse_duration(a.duration);
  warn_arrivals_after_duration(spec, opt.duration_s, a.duration);
  if (!a.migrate_every.empty()) opt.migrate_every_s = parse_duration(a.migrate_every);
  opt.seed = a.seed;
  opt.activation_bytes = sizeof(float);  // as the servers ship them
  RealClusterArgs ra;
  ra.launch = a.launch;
  ra.rendezvous = a.rendezvous;
  ra.secret_file = a.secret_file;
  ra.store = a.store;
  ra.weight_seed = a.seed;

  Calibration cal;
  ra.before_serving = [&](const std::vector<std::shared_ptr<exec::ServerCalls>>& calls) {
    const auto t0 = std::chrono::steady_clock::now();
    cal = cluster_validation_detail::calibrate(in, calls);
    const auto t1 = std::chrono::steady_clock::now();
    serve_line(in, opt, calls, cal);
    cal.report["wall_s"] = std::chrono::duration<double>(t1 - t0).count();
  };
  ra.serve = false;
  Json platform = run_real_cluster(a.spec, in, opt, ra).platform;
  ra.before_serving = nullptr;
  ra.serve = true;
  ra.hw = cal.hw;

  std::vector<double> exec_mean, struct_mean, struct_err, cost_err, bare_err, means_err, lead_err, slope_err,
      serve_err;
  Json first_breakdown, calls_by_run = Json::array();
  sim::SimClusterOptions co;
  co.call_overhead_s = cal.call_overhead_s;
  co.invoke_overhead_s = cal.invoke_overhead_s;
  co.call_overhead_per_inflight_s = cal.call_overhead_per_inflight_s;
  // Servers on fewer cores than they have units share them, in the real run and so in the model.
  if (platform.value("cores_shared", false))
    co.shared_cores = static_cast<uint32_t>(platform["cpus"][0].size());
  // The real runs first: whether they kept up decides the figure every comparison uses.
  std::vector<RealClusterRun> runs;
  bool per_served = false;
  for (uint32_t r = 0; r < a.repeat; ++r) {
    runs.push_back(run_real_cluster(a.spec, in, opt, ra));
    if (runs.back().result.requests.empty())
      throw Error("validate --cluster: exec run " + std::to_string(r + 1) + " served no request");
    if (serving::load_stats(runs.back().result, UINT32_MAX).overloaded) {
      if (!per_served)
        for (const std::string& w : serving::overload_warnings(in, runs.back().result))
          warn("exec run " + std::to_string(r + 1) + ": " + w);
      per_served = true;
    }
  }
  const char* compared =
      per_served ? "time per request served (1 / throughput; the runs were overloaded)" : "mean latency";
  const CostFigures cf = cost_figures(in, opt, cal, co, per_served);
  for (uint32_t r = 0; r < a.repeat; ++r) {
    const RealClusterRun& run = runs[r];
    const double e = figure(run.result, per_served);
    if (!(e > 0)) throw Error("validate --cluster: exec run " + std::to_string(r + 1) + " served no request");
    if (r == 0) first_breakdown = breakdown(run.records, cal.hw, in.model);
    calls_by_run.push_back(overhead_by_concurrency(call_spans(run.records)));
    Replay replay(run.records);
    sim::SimClusterPlatform structure(sim_servers(in, cal.hw), in.links, replay.hooks());
    const double s = figure(serving::serve_cluster(in, opt, structure), per_served);
    exec_mean.push_back(e);
    struct_mean.push_back(s);
    struct_err.push_back((s - e) / e);
    cost_err.push_back((cf.cost - e) / e);
    bare_err.push_back((cf.bare - e) / e);
    means_err.push_back((cf.burst_means - e) / e);
    lead_err.push_back((cf.lead_call - e) / e);
    slope_err.push_back((cf.bursts_slope - e) / e);
    serve_err.push_back((cf.serve - e) / e);
  }

  ClusterValidationOutput out;
  Json& j = out.json;
  j["config"] = {{"spec", a.spec}, {"placement", a.placement}, {"duration_s", opt.duration_s},
                 {"seed", a.seed}, {"repeat", a.repeat},       {"launch", a.launch}};
  j["platform"] = platform;
  j["compared"] = per_served ? "time_per_request_served_s" : "latency_mean_s";
  j["calibration"] = cal.report;
  const MedianInterval ei = median_interval(exec_mean);
  j["exec"] = {{"latency_mean_s", exec_mean}, {"median", median_of(exec_mean)}, {"interval", {ei.lo, ei.hi}}};
  j["structure"] = {{"latency_mean_s", struct_mean}};
  j["breakdown"] = first_breakdown;
  j["calls_by_concurrency"] = calls_by_run;
  j["cost"] = {{"latency_mean_s", cf.cost}, {"without_overheads_s", cf.bare}};
  j["errors"]["structure"] = error_json(struct_err);
  j["errors"]["cost"] = error_json(cost_err);
  j["errors"]["cost_without_overheads"] = error_json(bare_err);
  j["errors"]["cost_burst_means"] = error_json(means_err);
  j["errors"]["cost_lead_call"] = error_json(lead_err);
  j["errors"]["cost_bursts_slope"] = error_json(slope_err);
  j["errors"]["cost_serve"] = error_json(serve_err);
  j["targets"] = {{"structure", a.structure_target}, {"cost", a.cost_target}};
  j["verdicts"] = {{"structure", verdict(struct_err, a.structure_target)},
                   {"cost", verdict(cost_err, a.cost_target)},
                   {"cost_bursts_slope", verdict(slope_err, a.cost_target)},
                   {"cost_serve", verdict(serve_err, a.cost_target)}};
  j["warnings"] = warnings_json();
  out.text = summary_text(a, j, opt.duration_s, compared);
  return out;
}

}  // namespace moesim::harness
