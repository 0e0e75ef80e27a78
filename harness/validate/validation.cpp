// `moesim validate`: how far is the simulator from this machine? Runs the trace for real (`moesim exec`,
// --repeat N times), then simulates the same trace and configuration twice, to separate two sources of error:
//   structure  the simulator fed with every op's duration as measured in the exec run of median TPOT
//              (sim/measured_durations.h): only its model of queueing, overlap, priorities and dependencies
//              is under test;
//   cost       the simulator with the hardware profile (--hw, e.g. from `moesim calibrate`): the cost
//              models are under test too; compared with the median of the repeated exec runs.
// --calibrate-on C fits the profile here, from C served N times (`moesim calibrate C --repeat N`, --hw
// then its base), each calibration run followed by one exec run of the validated trace: on a machine whose
// speed drifts over minutes, the profile and the runs it is checked against then come from the same minutes
// (what such pairing leaves, and what it does not remove, is in bench/results/validate.md, "calibration and
// validation interleaved").
// Errors are signed fractions sim/exec - 1 of TPOT (mean), TTFT (mean), and the median and p95 of the
// per-layer makespan; per op kind, the cost model's estimate against every measured op (median and p95 of
// estimate/measured - 1) and the total time it over- or under-estimates. --csv writes them plot-ready.
#include "harness/validate/validation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/median_interval.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/calibrate/trace_calibration.h"
#include "harness/exec_runner.h"
#include "harness/latency_summary.h"
#include "harness/machine.h"
#include "harness/sim_runner.h"
#include "serving/metrics.h"
#include "serving/timeline.h"

namespace moesim::harness {
namespace {

Json num(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}
double rel(double sim, double exec) {
  return exec > 0 ? sim / exec - 1 : std::nan("");
}

Json errors_json(const LatencySummary& sim, const LatencySummary& exec) {
  Json j;
  j["tpot"] = num(rel(sim.tpot, exec.tpot));
  j["ttft"] = num(rel(sim.ttft, exec.ttft));
  j["layer_makespan_median"] = num(rel(sim.layer_median, exec.layer_median));
  j["layer_makespan_p95"] = num(rel(sim.layer_p95, exec.layer_p95));
  j["sim"] = {{"tpot_s", num(sim.tpot)},
              {"ttft_s", num(sim.ttft)},
              {"layer_makespan_median_s", num(sim.layer_median)},
              {"layer_makespan_p95_s", num(sim.layer_p95)}};
  j["exec"] = {{"tpot_s", num(exec.tpot)},
               {"ttft_s", num(exec.ttft)},
               {"layer_makespan_median_s", num(exec.layer_median)},
               {"layer_makespan_p95_s", num(exec.layer_p95)}};
  return j;
}

// The rows of the error table and the CSV, in order (cost_own_plan only where the plan moved;
// cost_reads_whole only with --calibrate-on where the profile models the I/O thread's CPU work per read).
constexpr const char* kChecks[] = {
    "structure", "structure_ops_only", "structure_no_contention", "structure_mean_runtime",
    "cost",      "cost_own_plan",      "cost_reads_whole"};

std::string pct(const Json& v) {
  return v.is_null() ? std::string("-") : strprintf("%+.2f%%", 100 * v.get<double>());
}

// --targets: the limits the output judges the errors by, "check.metric=limit,..." (a limit as a fraction,
// 0.05, or a percentage, 5%): a check of kChecks and a metric of errors_json, or transfer.tpot
// (--calibrate-on with 2 runs or more: calibration.paired's transfer error; judged only where there is one).
struct Target {
  std::string check, metric;
  double limit = 0;
};

std::vector<Target> parse_targets(const std::string& spec) {
  static constexpr const char* kMetrics[] = {"tpot", "ttft", "layer_makespan_median", "layer_makespan_p95"};
  std::vector<Target> out;
  size_t at = 0;
  while (at <= spec.size()) {
    const size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) {
      if (spec.empty()) break;
      throw UsageError("--targets: an empty item in '" + spec + "' (CHECK.METRIC=LIMIT,...)");
    }
    const size_t eq = item.find('='), dot = item.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq)
      throw UsageError("--targets: '" + item + "' is not CHECK.METRIC=LIMIT (e.g. cost.tpot=5%)");
    Target t{item.substr(0, dot), item.substr(dot + 1, eq - dot - 1), 0};
    if (t.check == "transfer" && t.metric != "tpot")
      throw UsageError("--targets: '" + item + "': the transfer error is of TPOT only (transfer.tpot)");
    if (t.check != "transfer" && std::find_if(std::begin(kChecks), std::end(kChecks), [&](const char* c) {
                                   return t.check == c;
                                 }) == std::end(kChecks))
      throw UsageError("--targets: '" + item + "': no check '" + t.check +
                       "' (structure, structure_ops_only, "
                       "structure_no_contention, structure_mean_runtime, cost, cost_own_plan, "
                       "cost_reads_whole, transfer)");
    if (std::find_if(std::begin(kMetrics), std::end(kMetrics),
                     [&](const char* m) { return t.metric == m; }) == std::end(kMetrics))
      throw UsageError("--targets: '" + item + "': no metric '" + t.metric +
                       "' (tpot, ttft, layer_makespan_median, layer_makespan_p95)");
    std::string v = item.substr(eq + 1);
    const bool percent = !v.empty() && v.back() == '%';
    if (percent) v.pop_back();
    char* end = nullptr;
    const double x = v.empty() ? std::nan("") : std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x) || x <= 0)
      throw UsageError("--targets: '" + item + "': the limit must be a positive number (0.05 or 5%)");
    t.limit = percent ? x / 100 : x;
    out.push_back(t);
  }
  return out;
}

// Each target judged: met where |error| <= limit. The cost TPOT error also over the exec median's interval
// (errors.cost.tpot_interval), the transfer error over the pairs' (calibration.paired.transfer_interval):
// "decided" where the whole interval lies on one side of the limit, so that the runs' own noise could not
// have turned the verdict. `paired`: calibration.paired, or null.
Json judge_targets(const std::vector<Target>& targets, const Json& errors, const Json& paired) {
  Json out = Json::array();
  for (const Target& t : targets) {
    const bool transfer = t.check == "transfer";
    if (transfer && paired.is_null()) continue;  // no pairs: nothing to judge, and nothing wrong
    Json j = {{"check", t.check}, {"metric", t.metric}, {"limit", t.limit}};
    const Json e = transfer                   ? paired["transfer_error"]
                   : errors.contains(t.check) ? errors[t.check][t.metric]
                                              : Json(nullptr);
    j["error"] = e;
    j["met"] = e.is_null() ? Json(nullptr) : Json(std::abs(e.get<double>()) <= t.limit);
    const Json interval =
        transfer ? paired["transfer_interval"]
        : t.check == "cost" && t.metric == "tpot" && errors["cost"].contains("tpot_interval")
            ? errors["cost"]["tpot_interval"]
            : Json(nullptr);
    if (!e.is_null() && interval.is_array() && interval.size() == 2 && !interval[0].is_null() &&
        !interval[1].is_null()) {
      const double a = interval[0].get<double>(), b = interval[1].get<double>();
      const bool all_in = std::max(std::abs(a), std::abs(b)) <= t.limit;
      const bool all_out = std::min(a, b) > t.limit || std::max(a, b) < -t.limit;
      j["interval"] = {a, b};
      j["interval_of"] = transfer ? "the paired ratio" : "the exec median";
      j["decided"] = all_in || all_out;
    }
    out.push_back(j);
  }
  return out;
}

// One line per target: "cost TPOT within 5%: met (+1.49%), over the exec median's interval undecided (...)".
std::string targets_text(const Json& verdicts) {
  std::string text;
  for (const Json& v : verdicts) {
    const std::string metric = v["metric"] == "tpot"                    ? "TPOT"
                               : v["metric"] == "ttft"                  ? "TTFT"
                               : v["metric"] == "layer_makespan_median" ? "median layer"
                                                                        : "p95 layer";
    std::string line = strprintf("  %s %s within %g%%: ", v["check"].get<std::string>().c_str(),
                                 metric.c_str(), 100 * v["limit"].get<double>());
    if (v["met"].is_null()) {
      line += "no figure";
    } else {
      line += strprintf("%s (%s)", v["met"].get<bool>() ? "met" : "MISSED", pct(v["error"]).c_str());
      if (v.contains("decided")) {
        const std::string of = v["interval_of"].get<std::string>();
        line +=
            v["decided"].get<bool>()
                ? strprintf(", and over %s's whole interval (%s to %s)", of.c_str(),
                            pct(v["interval"][0]).c_str(), pct(v["interval"][1]).c_str())
                : strprintf(
                      "; undecided over %s's interval (%s to %s): the runs' noise could turn it, more runs "
                      "decide",
                      of.c_str(), pct(v["interval"][0]).c_str(), pct(v["interval"][1]).c_str());
      }
    }
    text += line + "\n";
  }
  return text;
}

void check_args(const ValidateArgs& va, RunArgs& a) {
  if (va.repeat == 0 || va.repeat > 1000) throw UsageError("--repeat must be 1..1000");
  // --timeline PREFIX: the reference exec run, the structure simulation of it and the cost simulation, whole,
  // side by side (PREFIX-exec.json, PREFIX-structure.json, PREFIX-cost.json): where two schedules part is
  // where the error is.
  if (a.timeline_steps_given)
    throw UsageError(
        "--timeline-steps: validate's timelines hold whole runs (every measured op feeds the simulator)");
  const bool interleaved = !va.calibrate_on.empty();
  if (!interleaved &&
      (!va.profile_out.empty() || !va.name.empty() || va.no_pilot || va.pilot_runs > 0 || va.no_gemm_probe))
    throw UsageError(
        "--profile-out, --name, --no-pilot, --pilot-runs and --no-gemm-probe go with --calibrate-on "
        "(validate "
        "then "
        "calibrates too)");
  if (!interleaved && (va.calibrate_batch > 0 || !va.calibrate_budget.empty()))
    throw UsageError(
        "--calibrate-batch and --calibrate-budget go with --calibrate-on (the calibration runs')");
  if (!va.calibrate_budget.empty()) parse_budget_option("--calibrate-budget", va.calibrate_budget);
  if (interleaved && a.store.empty())
    throw UsageError(
        "--calibrate-on: --store is required (the calibration runs read and compute its experts)");
  // The cost check judges the simulator by a profile of this machine: a preset chosen by default (the run's
  // Jetson) would measure the distance between two machines and call it the simulator's error.
  if (!va.hw_given && va.calibrate_on.empty())
    throw UsageError(
        "validate needs this machine's hardware profile: --hw PROFILE.json (from `moesim calibrate`), "
        "or --calibrate-on TRACE to calibrate one here first");
  if (!va.csv.empty()) check_output_writable(va.csv);
  if (!va.profile_out.empty()) check_output_writable(va.profile_out);
}

// The progress of the whole command: the exec runs (unless calibrate's bar counts them) and five simulations.
struct Bar {
  std::optional<Progress> bar;
  uint64_t total = 0, base = 0;
  void set(uint64_t done) {
    if (!bar) bar.emplace("validate", total, "steps");
    bar->set(base + done);
  }
};

// The measured side: the exec runs of the validated trace, and with --calibrate-on the profile fitted to the
// calibration runs served between them.
struct Measured {
  std::vector<serving::RunResult> runs;
  std::vector<exec::ExecCounters> counters;  // per run
  Json exec_config;                          // the first run's configuration
  ExecReport report;                         // the last run's
  HardwareProfile exec_hw;  // the profile the exec runs planned and scheduled with (ZipMoE's planner and Alg.
                            // 1 read the cost model), which the structure check replays
  HardwareProfile hw;       // the profile under test in the cost check
  sim::SimOptions so;       // the simulator's options under hw
  Json calibration;         // --calibrate-on: the fitted profile
  Json reads_whole;         // and its ablation, fitted with each read whole (trace_profile), or null
  std::vector<LatencySummary> figures;  // per run
  size_t ref = 0;                       // the run of median TPOT
  LatencySummary median;                // each figure's median over the runs
  std::vector<double> tpots;            // per run
};

Measured measure(const ValidateArgs& va, const RunArgs& a, const PreparedRun& p,
                 const serving::SystemConfig& cfg, const ExecRunOptions& eo, Bar& bar) {
  Measured m;
  m.exec_hw = m.hw = p.hw;
  m.so = sim_options(a, p.hw, eo.workers);
  const uint64_t steps = p.stream.steps();
  if (va.calibrate_on.empty()) {
    for (uint32_t i = 0; i < va.repeat; ++i) {
      m.runs.push_back(run_exec(cfg, p.stream, p.trace.info(), p.costs, p.hw, eo,
                                i == 0 ? &m.exec_config : nullptr, &m.report));
      m.counters.push_back(m.report.counters);
      bar.base += steps;
    }
  } else {
    RunArgs ca = a;  // the same system, model, store, budget and options on the calibration trace
    ca.trace = va.calibrate_on;
    ca.timeline.clear();
    if (va.calibrate_batch > 0) ca.batch = va.calibrate_batch;
    if (!va.calibrate_budget.empty()) ca.budgets = {va.calibrate_budget};
    ca.out =
        va.profile_out.empty() ? std::string("the fitted profile (--profile-out keeps it)") : va.profile_out;
    TraceCalibrationOptions o;
    o.name = va.name;
    o.repeat = va.repeat;
    if (va.no_pilot)
      o.pilot_runs = 0;
    else if (va.pilot_runs > 0)
      o.pilot_runs = va.pilot_runs;
    o.gemm_probe = !va.no_gemm_probe;
    o.between_steps = steps;
    o.between_runs = [&](const HardwareProfile& planner, const std::function<void(uint64_t)>& progress) {
      serving::SystemConfig c = cfg;
      c.on_step = [&progress](uint64_t done, uint64_t) { progress(done); };
      const bool first = m.runs.empty();
      m.runs.push_back(run_exec(c, p.stream, p.trace.info(), p.costs, planner, eo,
                                first ? &m.exec_config : nullptr, &m.report));
      m.counters.push_back(m.report.counters);
      m.exec_hw = planner;
    };
    m.calibration = trace_profile(ca, o, calibration_stamp(), &m.reads_whole);
    m.calibration["measured_on"] = this_machine_json(eo.gpu);
    m.calibration["calibration"]["fields_from"] = "trace";
    m.calibration["calibration"]["build"] = run_header("validate --calibrate-on", Json::object());
    m.hw = hardware_from_json(m.calibration, ca.out);
    m.so = sim_options(a, m.hw, eo.workers);
    if (!va.profile_out.empty()) write_json_file(va.profile_out, m.calibration);
  }
  for (const auto& r : m.runs) m.figures.push_back(latency_summary_of(r.result));
  std::vector<size_t> order(m.runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return m.figures[x].tpot < m.figures[y].tpot; });
  m.ref = order[order.size() / 2];
  std::vector<double> ttft, lm, lp;
  for (const auto& f : m.figures) {
    m.tpots.push_back(f.tpot);
    ttft.push_back(f.ttft);
    lm.push_back(f.layer_median);
    lp.push_back(f.layer_p95);
  }
  m.median =
      LatencySummary{quantile(m.tpots, 0.5), quantile(ttft, 0.5), quantile(lm, 0.5), quantile(lp, 0.5)};
  return m;
}

// The structure checks: the simulator with the reference run's measured ops and runtime costs, and three
// variants that show where its error comes from.
struct StructureChecks {
  serving::RunResult
      structure;             // every op's measured work on the machine's cores, the runtime's measured costs
  serving::RunResult bare;   // structure_ops_only: the same without the runtime's costs
  serving::RunResult flat;   // structure_no_contention: wall times, a core per thread
  serving::RunResult means;  // structure_mean_runtime: the runtime's costs as the run's means
  sim::SimOptions opts;      // structure's
  uint32_t cores = 0;
  OpWork work;                 // per event of the reference run's timeline
  std::vector<size_t> events;  // that timeline's events in order of start
  uint64_t matched = 0, unmatched = 0, plans_matched = 0, plans_unmatched = 0;
};

StructureChecks structure_checks(const Measured& m, const RunArgs& a, const PreparedRun& p,
                                 const serving::SystemConfig& cfg, const ExecRunOptions& eo) {
  StructureChecks s;
  // Each op's work (sim/cpu_cores.h): its wall time, less the share of a core other CPU-bound ops took from
  // it; the simulation's contention model, on the same cores, puts the sharing back where its own schedule
  // overlaps the ops.
  const std::vector<TimelineEvent>& tl = m.runs[m.ref].result.timeline;
  s.cores = machine_cores();
  s.work = op_work(tl, s.cores, eo.gpu, m.report.direct_io);
  s.events.resize(tl.size());
  for (size_t i = 0; i < s.events.size(); ++i) s.events[i] = i;
  std::stable_sort(s.events.begin(), s.events.end(),
                   [&](size_t x, size_t y) { return tl[x].timing.start < tl[y].timing.start; });
  // `wall`: the same with wall times, for the structure_no_contention check.
  sim::MeasuredDurations durations, wall;
  for (size_t i : s.events) {
    const OpTiming& t = tl[i].timing;
    durations.add(tl[i].op, s.work.work[i], t.handoff, t.turnaround, s.work.read_cpu[i]);
    wall.add(tl[i].op, t.end - t.start, t.handoff, t.turnaround);
  }
  const exec::ExecCounters& rc = m.counters[m.ref];
  for (const PlanningTime& pt : rc.planning) {
    durations.add_planning(pt);
    wall.add_planning(pt);
  }
  serving::SystemConfig scfg = cfg;
  scfg.record_timeline = !a.timeline.empty();
  sim::SimOptions& so = s.opts;
  so = m.so;
  so.measured = &durations;
  so.cpu_cores = s.cores;
  so.charge_means();  // the runtime's costs as this run measured them (below), not the profile's
  so.gpu_on_cpu = !eo.gpu;
  // The runtime's own cost per dependency, measured in the same run: part of the structure.
  so.dispatch_latency = rc.handoff_latency;
  for (size_t i = 0; i < kResourceClasses; ++i) so.dispatch[i] = rc.handoff[i];
  so.completion_latency = rc.pipeline_latency;
  so.wake_latency = rc.completion_latency;
  so.plan_latency_per_op = rc.plan_latency_per_op;
  so.plan_latency_fixed = rc.plan_latency_fixed;
  so.plan_tail_per_op = rc.plan_tail_per_op;
  so.plan_tail_fixed = rc.plan_tail_fixed;
  so.measured_handoff = true;     // each op's own hand-off where it found an idle unit in both runs
  so.measured_turnaround = true;  // and its own turnaround where it waited for its unit
  so.measured_planning = true;    // each graph's own planning time; the fits where the runs part
  for (size_t i = 0; i < kResourceClasses; ++i) so.turnaround[i] = rc.turnaround[i];
  s.structure = run_simulated(scfg, p.stream, p.trace.info(), p.costs, m.exec_hw, so);
  s.matched = durations.matched();
  s.unmatched = durations.unmatched();
  s.plans_matched = durations.planning_matched();
  s.plans_unmatched = durations.planning_unmatched();
  if (!a.timeline.empty()) {
    write_chrome_trace(a.timeline + "-exec.json", m.runs[m.ref].result, p.costs.costs,
                       TimelineWriteOptions{});
    write_chrome_trace(a.timeline + "-structure.json", s.structure.result, p.costs.costs,
                       TimelineWriteOptions{});
  }
  scfg.record_timeline = false;
  // Where the structure error comes from: the same run without the runtime's own costs (hand-offs, wake-ups,
  // turnarounds, planning), so the op graph, the queues and the priorities alone.
  durations.rewind();
  sim::SimOptions bare = m.so;  // without any runtime cost, the profile's included
  bare.measured = &durations;
  bare.cpu_cores = s.cores;  // the durations are work: the contention stays
  bare.charge_means();
  bare.gpu_on_cpu = !eo.gpu;
  bare.dispatch_latency = bare.completion_latency = bare.wake_latency = 0;
  for (double& d : bare.dispatch) d = 0;
  bare.plan_latency_per_op = bare.plan_latency_fixed = 0;
  bare.plan_tail_per_op = bare.plan_tail_fixed = 0;
  bare.measured_planning = bare.measured_handoff = bare.measured_turnaround = false;
  for (double& t : bare.turnaround) t = 0;
  s.bare = run_simulated(scfg, p.stream, p.trace.info(), p.costs, m.exec_hw, bare);
  // And what the contention model contributes: the structure check with each op's wall time and a core per
  // thread (the simulator before sim/cpu_cores.h).
  sim::SimOptions flat = so;
  flat.measured = &wall;
  flat.cpu_cores = 0;
  s.flat = run_simulated(scfg, p.stream, p.trace.info(), p.costs, m.exec_hw, flat);
  // And what charging the runtime's costs as means does (the cost check's way: each hand-off, turnaround and
  // planning call its run's mean, not its own): the structure check with those means.
  sim::SimOptions means = so;
  durations.rewind();
  means.measured_handoff = means.measured_turnaround = means.measured_planning = false;
  s.means = run_simulated(scfg, p.stream, p.trace.info(), p.costs, m.exec_hw, means);
  so.measured = nullptr;  // `durations` ends here; the caller reads the runtime's costs only
  return s;
}

// The cost checks: the simulator with the profile, against the median of the exec runs.
struct CostChecks {
  serving::RunResult cost;
  std::string exec_plan;                      // the pools the exec runs were served ("" without pools)
  std::optional<LatencySummary> own_plan;     // cost_own_plan: under the profile's own plan, where it differs
  std::optional<LatencySummary> reads_whole;  // cost_reads_whole: the ablation's profile
  std::vector<std::pair<std::string, LatencySummary>> without;  // cost_without: each term left out
};

// The cost model's terms that a profile may leave out (absent, each falls back to the simpler model: no
// prefill factor, a fresh or a multi-token expert costing like any other, one read line for both phases, no
// CPU contention, no runtime costs), each with the fields that make it: ValidateArgs::term_ablations
// simulates the cost check once without each term the profile has, its other values as fitted.
struct CostTerm {
  const char* name;
  std::vector<std::pair<const char*, const char*>>
      fields;  // (section, field); field nullptr: the whole section
};
const std::vector<CostTerm>& cost_terms() {
  static const std::vector<CostTerm> terms = {
      {"cpu.prefill_slowdown", {{"cpu", "prefill_slowdown"}, {"cpu", "prefill_recover_slowdown"}}},
      {"gpu.fresh_expert_overhead", {{"gpu", "fresh_expert_overhead"}}},
      {"gpu.gemm_overheads",
       {{"gpu", "expert_gemm_overhead"},
        {"gpu", "dense_gemm_overhead"},
        {"gpu", "expert_gemm_flops"},
        {"gpu", "dense_gemm_flops"}}},
      {"ssd.prefill_read",
       {{"ssd", "prefill_read_bandwidth"},
        {"ssd", "prefill_read_latency"},
        {"ssd", "prefill_read_cpu_overhead"},
        {"ssd", "prefill_read_cpu_bandwidth"}}},
      {"runtime.cpu_cores", {{"runtime", "cpu_cores"}}},
      {"runtime", {{"runtime", nullptr}}}};
  return terms;
}

// The cost check again without each term the profile has, under the plan the cost check simulated.
void cost_without_terms(CostChecks& c, const Measured& m, const RunArgs& a, const PreparedRun& p,
                        const serving::SystemConfig& scfg, const ExecRunOptions& eo) {
  for (const CostTerm& t : cost_terms()) {
    Json raw = m.hw.raw;
    bool had = false;
    for (const auto& [section, field] : t.fields) {
      if (!raw.contains(section)) continue;
      if (!field)
        had = raw.erase(section) > 0 || had;
      else if (raw[section].is_object())
        had = raw[section].erase(field) > 0 || had;
    }
    if (!had) continue;
    const HardwareProfile h = hardware_from_json(raw, m.hw.origin + " without " + t.name);
    serving::SystemConfig wc = scfg;
    wc.record_timeline = false;
    if (c.own_plan) wc.system = serving::with_system_param(wc.system, "pools", c.exec_plan, "", true);
    c.without.emplace_back(
        t.name,
        latency_summary_of(
            run_simulated(wc, p.stream, p.trace.info(), p.costs, h, sim_options(a, h, eo.workers)).result));
  }
}

CostChecks cost_checks(const Measured& m, const RunArgs& a, const PreparedRun& p,
                       const serving::SystemConfig& cfg, const ExecRunOptions& eo, bool interleaved,
                       bool ablate) {
  CostChecks c;
  serving::SystemConfig scfg = cfg;
  scfg.record_timeline = !a.timeline.empty();
  c.exec_plan = plan_ratios(m.runs[m.ref].plan);
  // --calibrate-on: the exec runs were planned with the last pilot run's fit. If the fitted profile plans
  // ZipMoE's pools otherwise, the cost check simulates the exec runs' plan (the pools fixed to it), so that
  // it compares the cost model on the ops exec made; the error under the profile's own plan is kept beside.
  ServedPlanRun r = simulate_served_plan(scfg, p, m.hw, m.so, interleaved ? c.exec_plan : std::string());
  c.cost = std::move(r.run);
  c.own_plan = r.own_plan;
  if (c.own_plan)
    warn("validate --calibrate-on: the fitted profile plans ZipMoE's pools as " + r.profile_plan +
         ", but the exec "
         "runs were planned " +
         c.exec_plan + " (with " + m.exec_hw.origin + "): the cost check simulates " + c.exec_plan +
         " (errors.cost_own_plan: under " + r.profile_plan + ")");
  // --hw: a calibrated profile says what plan its own runs were served with. If the exec runs here were
  // served another one (a fit near a tie between two plans, ZipMoE Alg. 4), its cost model was fitted on
  // another mix of ops than these runs make.
  if (!interleaved && !c.exec_plan.empty() && m.hw.raw.contains("calibration") &&
      m.hw.raw.at("calibration").is_object()) {
    const Json& cal = m.hw.raw.at("calibration");
    const std::string fitted_under = cal.contains("in_sample") && cal["in_sample"].is_object()
                                         ? cal["in_sample"].value("runs_plan", std::string())
                                         : "";
    if (!fitted_under.empty() && fitted_under != c.exec_plan)
      warn("validate: the exec runs were served ZipMoE's pools " + c.exec_plan +
           ", but the profile's calibration "
           "runs were served " +
           fitted_under +
           ": its cost model was fitted on another mix of ops than these runs "
           "make (validate --calibrate-on keeps the two on one plan)");
  }
  // The ablation: the cost check with the profile the same runs give when each read is fitted whole (no
  // ssd.read_cpu_*), under the same plan: what modelling the I/O thread's CPU work changes here.
  if (!m.reads_whole.is_null()) {
    const HardwareProfile wh = hardware_from_json(m.reads_whole, "the profile fitted with each read whole");
    serving::SystemConfig wc = scfg;
    wc.record_timeline = false;
    if (c.own_plan) wc.system = serving::with_system_param(wc.system, "pools", c.exec_plan, "", true);
    c.reads_whole = latency_summary_of(
        run_simulated(wc, p.stream, p.trace.info(), p.costs, wh, sim_options(a, wh, eo.workers)).result);
  }
  if (ablate) cost_without_terms(c, m, a, p, scfg, eo);
  return c;
}

// Per op kind: the cost model's estimate against every measured op of the reference run.
struct KindErr {
  std::vector<double> rel;
  double measured = 0, estimated = 0;
};

std::map<std::string, KindErr> op_kind_errors(const Measured& m, const StructureChecks& s) {
  const sim::SimPlatform estimator(m.hw, m.so);
  const std::vector<TimelineEvent>& tl = m.runs[m.ref].result.timeline;
  std::map<std::string, KindErr> kinds;
  // Against the measured work when the profile models contention (its estimates are work), else wall time.
  for (size_t i : s.events) {
    const TimelineEvent* e = &tl[i];
    // A read's: its device time where the profile models the I/O thread's CPU work apart, else its wall time.
    // A fused read's whole wall time, as its estimate is (its work is split in two, exec_runner.h).
    const bool as_work =
        m.so.cpu_cores > 0 && !e->op.fused_read() && (e->op.kind != OpKind::kSsdRead || m.hw.has_read_cpu());
    const double measured = as_work ? s.work.work[i] : e->timing.end - e->timing.start;
    const double est = estimator.estimate(e->op);
    KindErr& ke = kinds[op_kind_label(e->op)];
    if (measured > 0) ke.rel.push_back(est / measured - 1);
    ke.measured += measured;
    ke.estimated += est;
    // A read's CPU work after the device (the I/O thread's), where exec measured it or the profile models it.
    if (e->op.kind == OpKind::kSsdRead && m.so.cpu_cores > 0 &&
        (s.work.read_cpu[i] > 0 || m.hw.has_read_cpu())) {
      KindErr& kc = kinds[op_kind_label(e->op) + " (cpu)"];
      const double mc = s.work.read_cpu[i], ec = m.hw.read_cpu(e->op.bytes, e->op.prefill);
      if (mc > 0) kc.rel.push_back(ec / mc - 1);
      kc.measured += mc;
      kc.estimated += ec;
    }
  }
  return kinds;
}

// errors.structure's extra keys: what the structure check matched and the runtime's costs it charged.
void structure_details(Json& j, const StructureChecks& s, const exec::ExecCounters& rc, bool gpu) {
  j["ops_matched"] = s.matched;
  j["ops_unmatched"] = s.unmatched;
  j["planning_matched"] = s.plans_matched;
  j["planning_unmatched"] = s.plans_unmatched;
  j["cpu_cores"] = s.cores;
  j["gpu_stream_on_cpu"] = !gpu;
  j["dispatch_latency_s"] = s.opts.dispatch_latency;
  for (size_t i = 0; i < kResourceClasses; ++i)
    j[std::string("dispatch_latency_") + resource_class_name(static_cast<ResourceClass>(i)) + "_s"] =
        s.opts.dispatch[i];
  j["pipeline_latency_s"] = s.opts.completion_latency;
  j["wake_latency_s"] = s.opts.wake_latency;
  j["plan_latency_per_op_s"] = s.opts.plan_latency_per_op;
  j["plan_latency_fixed_s"] = s.opts.plan_latency_fixed;
  j["plan_tail_per_op_s"] = s.opts.plan_tail_per_op;
  j["plan_tail_fixed_s"] = s.opts.plan_tail_fixed;
  for (size_t i = 0; i < kResourceClasses; ++i)
    j["turnaround_s"][resource_class_name(static_cast<ResourceClass>(i))] = rc.turnaround[i];
}

// " at batch 1" / " at budget 64MiB": where the calibration runs differed from the validated one.
std::string transfer_note(const ValidateArgs& va) {
  std::string s;
  if (va.calibrate_batch > 0) s += " at batch " + std::to_string(va.calibrate_batch);
  if (!va.calibrate_budget.empty()) s += (s.empty() ? " at budget " : ", budget ") + va.calibrate_budget;
  return s;
}

// --calibrate-on: the "calibration" section (the in-sample error, the cost error net of it, the paired
// ratios).
Json calibration_json(const ValidateArgs& va, const Measured& m, const Json& errors,
                      const LatencySummary& cost) {
  const Json& in = m.calibration["calibration"]["in_sample"];
  Json c = {{"trace", va.calibrate_on},
            {"runs", va.repeat},
            {"batch", m.calibration["calibration"]["batch"]},
            {"interleaved", true},
            {"values_from", m.calibration["calibration"]["values_from"]},
            {"in_sample_tpot_error", in["tpot_error"]},
            {"exec_tpot_median_s", in["exec_tpot_median_s"]},
            {"exec_tpot_spread", in["exec_tpot_spread"]}};
  // The cost error net of the in-sample one, (1 + cost) / (1 + in sample) - 1: what moved between the
  // calibration trace and the validated one (the model's error on another trace, and this machine's drift).
  const Json& ce = errors["cost"]["tpot"];
  c["beyond_in_sample"] = ce.is_null() || in["tpot_error"].is_null()
                              ? Json(nullptr)
                              : num((1 + ce.get<double>()) / (1 + in["tpot_error"].get<double>()) - 1);
  if (in.contains("runs_plan")) {
    c["runs_plan"] = in["runs_plan"];
    c["profile_plan"] = in["profile_plan"];
  }
  // Paired: calibration run i and exec run i of the validated trace ran back to back, so the ratio of their
  // TPOTs cancels whatever this machine did slower than a pair lasts; its median (and distribution-free
  // interval) against the simulator's ratio of the two traces' TPOTs is the model's error in carrying a
  // profile from one trace to the other, with the pairs' drift taken out.
  const std::vector<double> cal_tpots = in["runs_tpot_s"].get<std::vector<double>>();
  if (cal_tpots.size() == m.tpots.size() && m.tpots.size() >= 2 && in["sim_tpot_s"].is_number() &&
      in["sim_tpot_s"].get<double>() > 0) {
    std::vector<double> ratios;
    for (size_t i = 0; i < m.tpots.size(); ++i)
      if (cal_tpots[i] > 0) ratios.push_back(m.tpots[i] / cal_tpots[i]);
    const MedianInterval ri = median_interval(ratios, 0.9);
    const double sim_ratio = cost.tpot / in["sim_tpot_s"].get<double>(), med = quantile(ratios, 0.5);
    if (ratios.size() >= 2 && std::isfinite(sim_ratio))
      c["paired"] = {{"ratios", ratios},
                     {"ratio_median", num(med)},
                     {"ratio_interval", {num(ri.lo), num(ri.hi)}},
                     {"coverage", ri.coverage},
                     {"sim_ratio", num(sim_ratio)},
                     {"transfer_error", num(sim_ratio / med - 1)},
                     {"transfer_interval", {num(sim_ratio / ri.hi - 1), num(sim_ratio / ri.lo - 1)}}};
  }
  return c;
}

std::string errors_csv(const Json& errors, const std::map<std::string, KindErr>& kinds) {
  std::string csv = "check,metric,sim_s,exec_s,error\n";
  auto cell = [](const Json& v) { return v.is_null() ? std::string() : strprintf("%.9g", v.get<double>()); };
  for (const char* check : kChecks) {
    if (!errors.contains(check)) continue;
    const Json& e = errors[check];
    for (const char* metric : {"tpot", "ttft", "layer_makespan_median", "layer_makespan_p95"}) {
      const std::string key = std::string(metric) + "_s";
      csv += strprintf("%s,%s,%s,%s,%s\n", check, metric, cell(e["sim"][key]).c_str(),
                       cell(e["exec"][key]).c_str(), cell(e[metric]).c_str());
    }
  }
  for (const auto& [k, ke] : kinds)
    csv += strprintf("cost,op:%s,%.9g,%.9g,%.9g\n", k.c_str(), ke.estimated, ke.measured,
                     ke.measured > 0 ? ke.estimated / ke.measured - 1 : 0.0);
  return csv;
}

std::string result_text(const ValidateArgs& va, const RunArgs& a, const Measured& m, const StructureChecks& s,
                        const ExecRunOptions& eo, const Json& out, const MedianInterval& mi,
                        const std::map<std::string, KindErr>& kinds) {
  const Json& errors = out["errors"];
  const exec::ExecCounters& rc = m.counters[m.ref];
  std::string text = strprintf("moesim validate --system %s: %s against the simulator (%s)\n",
                               a.system.text().c_str(), m.report.platform.c_str(), m.hw.display_name.c_str());
  if (out.contains("calibration")) {
    const Json& c = out["calibration"];
    text += strprintf(
        "calibrated: on %s%s, %u run%s, each followed by one exec run of this trace%s; in sample %s "
        "(spread %.1f%%)%s\n",
        va.calibrate_on.c_str(), transfer_note(va).c_str(), va.repeat, va.repeat > 1 ? "s" : "",
        c.contains("runs_plan") ? (", all planned " + c["runs_plan"].get<std::string>()).c_str() : "",
        pct(c["in_sample_tpot_error"]).c_str(), 100 * c["exec_tpot_spread"].get<double>(),
        va.profile_out.empty() ? "" : (" -> " + va.profile_out).c_str());
    if (c.contains("paired")) {
      const Json& pr = c["paired"];
      text += strprintf(
          "paired:    exec / calibration TPOT per pair %.3f median (%.0f%% interval %.3f to %.3f, %zu "
          "pairs), simulated %.3f: transfer error %s (%s to %s)\n",
          pr["ratio_median"].get<double>(), 100 * pr["coverage"].get<double>(),
          pr["ratio_interval"][0].get<double>(), pr["ratio_interval"][1].get<double>(), pr["ratios"].size(),
          pr["sim_ratio"].get<double>(), pct(pr["transfer_error"]).c_str(),
          pct(pr["transfer_interval"][0]).c_str(), pct(pr["transfer_interval"][1]).c_str());
    }
  }
  text += strprintf(
      "exec:      %u run%s; TPOT %s median (min %s, max %s, spread %.1f%%); %s\n", va.repeat,
      va.repeat > 1 ? "s" : "", format_seconds(m.median.tpot).c_str(),
      format_seconds(quantile(m.tpots, 0)).c_str(), format_seconds(quantile(m.tpots, 1)).c_str(),
      100 * out["exec"]["tpot_spread"].get<double>(),
      m.report.counters.chunks_verified == m.report.counters.chunks_read ? "lossless" : "NOT VERIFIED");
  if (const std::string cpu = thread_cpu_text(m.report.counters); !cpu.empty())
    text += "           CPU time by thread (the last run): " + cpu + "\n";
  text += strprintf("\n  %-23s %10s %10s %12s %12s\n", "error", "TPOT", "TTFT", "layer p50", "layer p95");
  for (const char* check : kChecks) {
    if (!errors.contains(check)) continue;
    const Json& e = errors[check];
    text += strprintf("  %-23s %10s %10s %12s %12s\n", check, pct(e["tpot"]).c_str(), pct(e["ttft"]).c_str(),
                      pct(e["layer_makespan_median"]).c_str(), pct(e["layer_makespan_p95"]).c_str());
  }
  if (errors["cost"].contains("tpot_interval"))
    text += strprintf(
        "  (cost TPOT over the exec median's %.0f%% interval, %s to %s from %zu runs by order statistics: "
        "%s to %s)\n",
        100 * mi.coverage, format_seconds(mi.lo).c_str(), format_seconds(mi.hi).c_str(), m.tpots.size(),
        pct(errors["cost"]["tpot_interval"][0]).c_str(), pct(errors["cost"]["tpot_interval"][1]).c_str());
  text += strprintf(
      "  (structure: %llu ops with their measured durations, %llu fell back to the cost model; %llu of "
      "%llu graphs with their measured planning time;\n"
      "   the runtime's measured costs: hand-off ssd/cpu/gpu/link %s/%s/%s/%s, wake-up %s, pipeline %s per "
      "op, planning %s + %s "
      "per op (then busy %s + %s per op), turnaround ssd/cpu/gpu/link %s/%s/%s/%s;\n"
      "   CPU contention: the CPU workers%s share %u cores, each op replayed as its work on them;\n"
      "   structure_ops_only: the same without the runtime's costs; structure_no_contention: wall times, a "
      "core per thread;\n"
      "   structure_mean_runtime: the runtime's costs as this run's means, as a profile without their "
      "distributions charges them)\n",
      static_cast<unsigned long long>(s.matched), static_cast<unsigned long long>(s.unmatched),
      static_cast<unsigned long long>(s.plans_matched),
      static_cast<unsigned long long>(s.plans_matched + s.plans_unmatched),
      format_seconds(rc.handoff[0]).c_str(), format_seconds(rc.handoff[1]).c_str(),
      format_seconds(rc.handoff[2]).c_str(), format_seconds(rc.handoff[3]).c_str(),
      format_seconds(rc.completion_latency).c_str(), format_seconds(rc.pipeline_latency).c_str(),
      format_seconds(rc.plan_latency_fixed).c_str(), format_seconds(rc.plan_latency_per_op).c_str(),
      format_seconds(rc.plan_tail_fixed).c_str(), format_seconds(rc.plan_tail_per_op).c_str(),
      format_seconds(rc.turnaround[0]).c_str(), format_seconds(rc.turnaround[1]).c_str(),
      format_seconds(rc.turnaround[2]).c_str(), format_seconds(rc.turnaround[3]).c_str(),
      eo.gpu ? "" : " and the GPU stream's thread", s.cores);
  if (errors.contains("cost_reads_whole"))
    text +=
        "  (cost_reads_whole: the cost check with the profile the same calibration runs give with each read "
        "fitted\n"
        "   whole, the I/O thread's CPU work per read (ssd.read_cpu_*) not modelled)\n";
  if (!out["targets"].empty()) text += "\ntargets:\n" + targets_text(out["targets"]);
  text +=
      strprintf("\nwhere the cost error comes from (estimate / measured - 1 per op; time over all ops%s):\n",
                m.so.cpu_cores > 0 ? "; CPU-bound ops: their work, the profile models the contention" : "");
  text += strprintf("  %-16s %8s %10s %10s %12s %12s\n", "op kind", "ops", "median", "p95", "measured",
                    "estimated");
  for (const auto& [k, ke] : kinds)
    text += strprintf("  %-16s %8zu %10s %10s %12s %12s\n", k.c_str(), ke.rel.size(),
                      pct(num(quantile(ke.rel, 0.5))).c_str(), pct(num(quantile(ke.rel, 0.95))).c_str(),
                      format_seconds(ke.measured).c_str(), format_seconds(ke.estimated).c_str());
  return text;
}

}  // namespace

void check_targets(const std::string& targets) {
  (void)parse_targets(targets);
}

ValidationOutput validate(ValidateArgs& va) {
  RunArgs& a = *va.run;
  a.exec = true;
  check_args(va, a);
  const std::vector<Target> targets = parse_targets(va.targets);  // before the runs: a typo fails at once
  const bool interleaved = !va.calibrate_on.empty();
  PreparedRun p;
  prepare_run(a, p);
  if (!interleaved) warn_if_measured_elsewhere(p.hw, "validate");
  serving::SystemConfig cfg = p.cfg;
  cfg.record_timeline = true;  // every op's measured duration
  const ExecRunOptions eo = exec_options(a, p.hw);

  // Interleaved, the exec runs report to calibrate's bar and this one counts the five simulations only.
  const uint64_t steps = p.stream.steps();
  Bar bar;
  bar.total = static_cast<uint64_t>((interleaved ? 0 : va.repeat) + 5) * steps;
  cfg.on_step = [&bar](uint64_t done, uint64_t) { bar.set(done); };

  const Measured m = measure(va, a, p, cfg, eo, bar);
  const StructureChecks s = structure_checks(m, a, p, cfg, eo);
  bar.base += steps;
  const CostChecks c = cost_checks(m, a, p, cfg, eo, interleaved, va.term_ablations);
  if (bar.bar) bar.bar->finish();
  if (!a.timeline.empty())
    write_chrome_trace(a.timeline + "-cost.json", c.cost.result, p.costs.costs, TimelineWriteOptions{});
  const std::map<std::string, KindErr> kinds = op_kind_errors(m, s);

  const LatencySummary ref = m.figures[m.ref], cf = latency_summary_of(c.cost.result);
  Json out;
  Json config = m.exec_config;
  config["trace"] = a.trace;
  config["model"] = a.load.model.empty() ? Json(nullptr) : Json(a.load.model);
  config["repeat"] = va.repeat;
  config["profile"] = m.hw.origin;
  if (interleaved) {
    config["calibrated_on"] = va.calibrate_on;
    // Where the profile was fitted at another batch or budget, the errors are its transfer to this one.
    config["calibrated_at"] = {{"batch", va.calibrate_batch > 0 ? va.calibrate_batch : a.batch},
                               {"budget", va.calibrate_budget.empty() ? p.budget : va.calibrate_budget}};
    config["base_profile"] = p.hw.origin;
    config["profile_out"] = va.profile_out.empty() ? Json(nullptr) : Json(va.profile_out);
  }
  out["header"] = run_header("validate", config);
  Json errors;
  errors["structure"] = errors_json(latency_summary_of(s.structure.result), ref);
  structure_details(errors["structure"], s, m.counters[m.ref], eo.gpu);
  errors["structure_ops_only"] = errors_json(latency_summary_of(s.bare.result), ref);
  errors["structure_no_contention"] = errors_json(latency_summary_of(s.flat.result), ref);
  errors["structure_mean_runtime"] = errors_json(latency_summary_of(s.means.result), ref);
  errors["cost"] = errors_json(cf, m.median);
  if (c.own_plan) errors["cost_own_plan"] = errors_json(*c.own_plan, m.median);
  if (c.reads_whole) errors["cost_reads_whole"] = errors_json(*c.reads_whole, m.median);
  for (const auto& [term, summary] : c.without) errors["cost_without"][term] = errors_json(summary, m.median);
  Json per_kind = Json::object();
  for (const auto& [k, ke] : kinds)
    per_kind[k] = {{"ops", ke.rel.size()},
                   {"median", num(quantile(ke.rel, 0.5))},
                   {"p95", num(quantile(ke.rel, 0.95))},
                   {"measured_s", ke.measured},
                   {"estimated_s", ke.estimated}};
  errors["cost"]["op_kinds"] = per_kind;
  // How far the runs' noise alone moves the cost error: the exec median's distribution-free interval (order
  // statistics, at least 90% where there are runs enough), and the cost TPOT error at its two ends.
  const MedianInterval mi = median_interval(m.tpots, 0.9);
  if (m.tpots.size() >= 2)
    errors["cost"]["tpot_interval"] = {num(rel(cf.tpot, mi.hi)), num(rel(cf.tpot, mi.lo))};
  out["errors"] = errors;
  Json spread;
  spread["tpot_s"] = m.tpots;
  spread["tpot_median_s"] = num(quantile(m.tpots, 0.5));
  spread["tpot_min_s"] = num(quantile(m.tpots, 0));
  spread["tpot_max_s"] = num(quantile(m.tpots, 1));
  spread["tpot_spread"] =
      num(m.median.tpot > 0 ? (quantile(m.tpots, 1) - quantile(m.tpots, 0)) / m.median.tpot : std::nan(""));
  if (m.tpots.size() >= 2)
    spread["tpot_median_interval"] = {
        {"lo_s", num(mi.lo)}, {"hi_s", num(mi.hi)}, {"coverage", mi.coverage}, {"order_statistic", mi.k}};
  out["exec"] = spread;
  out["exec"]["report"] = exec_report_json(m.report);
  if (interleaved) out["calibration"] = calibration_json(va, m, errors, cf);
  out["targets"] = judge_targets(
      targets, errors,
      interleaved && out["calibration"].contains("paired") ? out["calibration"]["paired"] : Json(nullptr));
  out["warnings"] = warnings_json();

  ValidationOutput result;
  if (!va.csv.empty()) result.csv = errors_csv(errors, kinds);
  if (!a.json) result.text = result_text(va, a, m, s, eo, out, mi, kinds);
  result.json = std::move(out);
  return result;
}

}  // namespace moesim::harness
