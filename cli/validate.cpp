// `moesim validate`: how far is the simulator from this machine? Runs the trace for real (`moesim exec`,
// --repeat N times), then simulates the same trace and configuration twice, to separate two sources of error:
//   structure  the simulator fed with every op's duration as measured in the exec run of median TPOT
//              (sim/measured_durations.h): only its model of queueing, overlap, priorities and dependencies
//              is under test;
//   cost       the simulator with the hardware profile (--profile, e.g. from `moesim calibrate`): the cost
//              models are under test too; compared with the median of the repeated exec runs.
// --calibrate-on C fits the profile here, from C served N times (`moesim calibrate C --repeat N`, --profile
// then its base), each calibration run followed by one exec run of the validated trace: on a machine whose
// speed drifts over minutes, the profile and the runs it is checked against then come from the same minutes
// (on the 2-core VM what remained was not such a drift: bench/results/validate.md, runs 28-43).
// Errors are signed fractions sim/exec - 1 of TPOT (mean), TTFT (mean), and the median and p95 of the
// per-layer makespan; per op kind, the cost model's estimate against every measured op (median and p95 of
// estimate/measured - 1) and the total time it over- or under-estimates. --csv writes them plot-ready.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/calibrate_trace.h"
#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/exec_run.h"
#include "cli/run_figures.h"
#include "cli/run_setup.h"
#include "cli/sim_run.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/median_interval.h"
#include "core/metrics.h"
#include "core/progress.h"
#include "core/run_info.h"
#include "core/units.h"
#include "core/timeline.h"
#include "core/warnings.h"

namespace moesim::cli {
namespace {

struct ValidateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  uint32_t repeat = 1;
  std::string csv;
  std::string calibrate_on, profile_out, name;  // --calibrate-on, --profile-out, --name
  bool no_pilot = false;
  uint32_t pilot_runs = 0;  // --pilot-runs; 0: not given (calibrate's default)
};

Json num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
double rel(double sim, double exec) { return exec > 0 ? sim / exec - 1 : std::nan(""); }

Json errors_json(const Figures& sim, const Figures& exec) {
  Json j;
  j["tpot"] = num(rel(sim.tpot, exec.tpot));
  j["ttft"] = num(rel(sim.ttft, exec.ttft));
  j["layer_makespan_median"] = num(rel(sim.layer_median, exec.layer_median));
  j["layer_makespan_p95"] = num(rel(sim.layer_p95, exec.layer_p95));
  j["sim"] = {{"tpot_s", num(sim.tpot)}, {"ttft_s", num(sim.ttft)}, {"layer_makespan_median_s", num(sim.layer_median)},
              {"layer_makespan_p95_s", num(sim.layer_p95)}};
  j["exec"] = {{"tpot_s", num(exec.tpot)}, {"ttft_s", num(exec.ttft)},
               {"layer_makespan_median_s", num(exec.layer_median)}, {"layer_makespan_p95_s", num(exec.layer_p95)}};
  return j;
}

// The rows of the error table and the CSV, in order (cost_own_plan only where the plan moved; cost_reads_whole
// only with --calibrate-on where the profile models the I/O thread's CPU work per read).
constexpr const char* kChecks[] = {"structure", "structure_ops_only", "structure_no_contention", "structure_mean_runtime",
                                   "cost", "cost_own_plan", "cost_reads_whole"};

std::string pct(const Json& v) { return v.is_null() ? std::string("-") : strprintf("%+.2f%%", 100 * v.get<double>()); }

void execute(ValidateArgs& va) {
  RunArgs& a = *va.run;
  a.exec = true;
  if (va.repeat == 0 || va.repeat > 1000) throw UsageError("--repeat must be 1..1000");
  // --timeline PREFIX: the reference exec run, the structure simulation of it and the cost simulation, whole,
  // side by side (PREFIX-exec.json, PREFIX-structure.json, PREFIX-cost.json): where two schedules part is where
  // the error is.
  if (a.timeline_steps_given)
    throw UsageError("--timeline-steps: validate's timelines hold whole runs (every measured op feeds the simulator)");
  const bool interleaved = !va.calibrate_on.empty();
  if (!interleaved && (!va.profile_out.empty() || !va.name.empty() || va.no_pilot || va.pilot_runs > 0))
    throw UsageError("--profile-out, --name, --no-pilot and --pilot-runs go with --calibrate-on (validate then "
                     "calibrates too)");
  if (interleaved && a.store.empty())
    throw UsageError("--calibrate-on: --store is required (the calibration runs read and compute its experts)");
  if (!va.csv.empty()) check_output_writable(va.csv);
  if (!va.profile_out.empty()) check_output_writable(va.profile_out);
  PreparedRun p;
  prepare_run(a, p);
  serving::SystemConfig cfg = p.cfg;
  cfg.record_timeline = true;  // every op's measured duration
  const ExecRunOptions eo = exec_options(a, p.hw);
  sim::SimOptions so = sim_options(a, p.hw, eo.workers);

  const uint64_t steps = p.stream.steps();
  std::optional<Progress> bar;
  // Interleaved, the exec runs report to calibrate's bar and this one counts the five simulations only.
  const uint64_t total = static_cast<uint64_t>((interleaved ? 0 : va.repeat) + 5) * steps;
  uint64_t base = 0;
  cfg.on_step = [&](uint64_t done, uint64_t) {
    if (!bar) bar.emplace("validate", total);
    bar->set(base + done);
  };

  // Exec, N times. `exec_hw`: the profile the exec runs planned and scheduled with (ZipMoE's planner and Alg. 1
  // read the cost model), which the structure check replays; `hw`: the profile under test in the cost check.
  std::vector<serving::RunResult> runs;
  std::vector<exec::ExecCounters> ref_counters;
  Json exec_config;
  ExecReport report;
  HardwareProfile exec_hw = p.hw, hw = p.hw;
  Json calibration;  // --calibrate-on: the fitted profile
  Json reads_whole;  // and its ablation, fitted with each read whole (trace_profile), or null
  if (!interleaved) {
    for (uint32_t i = 0; i < va.repeat; ++i) {
      runs.push_back(run_exec(cfg, p.stream, p.trace.info(), p.costs, p.hw, eo, i == 0 ? &exec_config : nullptr, &report));
      ref_counters.push_back(report.counters);
      base += steps;
    }
  } else {
    RunArgs ca = a;  // the same system, model, store, budget and options on the calibration trace
    ca.trace = va.calibrate_on;
    ca.timeline.clear();
    ca.out = va.profile_out.empty() ? std::string("the fitted profile (--profile-out keeps it)") : va.profile_out;
    TraceCalibrationOptions o;
    o.name = va.name;
    o.repeat = va.repeat;
    if (va.no_pilot) o.pilot_runs = 0;
    else if (va.pilot_runs > 0) o.pilot_runs = va.pilot_runs;
    o.between_steps = steps;
    o.between_runs = [&](const HardwareProfile& planner, const std::function<void(uint64_t)>& progress) {
      serving::SystemConfig c = cfg;
      c.on_step = [&progress](uint64_t done, uint64_t) { progress(done); };
      const bool first = runs.empty();
      runs.push_back(run_exec(c, p.stream, p.trace.info(), p.costs, planner, eo, first ? &exec_config : nullptr, &report));
      ref_counters.push_back(report.counters);
      exec_hw = planner;
    };
    calibration = trace_profile(ca, o, calibration_stamp(), &reads_whole);
    calibration["calibration"]["fields_from"] = "trace";
    calibration["calibration"]["build"] = run_header("validate --calibrate-on", Json::object());
    hw = hardware_from_json(calibration, ca.out);
    so = sim_options(a, hw, eo.workers);
    if (!va.profile_out.empty()) write_file_atomic(va.profile_out, calibration.dump(2) + "\n");
  }
  std::vector<Figures> measured;
  for (const auto& r : runs) measured.push_back(figures_of(r.result));
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return measured[x].tpot < measured[y].tpot; });
  const size_t ref = order[order.size() / 2];  // the run of median TPOT
  Figures exec_median;
  {
    std::vector<double> tpot, ttft, lm, lp;
    for (const auto& f : measured) {
      tpot.push_back(f.tpot);
      ttft.push_back(f.ttft);
      lm.push_back(f.layer_median);
      lp.push_back(f.layer_p95);
    }
    exec_median = Figures{quantile(tpot, 0.5), quantile(ttft, 0.5), quantile(lm, 0.5), quantile(lp, 0.5)};
  }

  // Structure: the simulator with the reference run's durations.
  // Each op's work (sim/cpu_cores.h): its wall time, less the share of a core other CPU-bound ops took
  // from it; the simulation's contention model, on the same cores, puts the sharing back where its own
  // schedule overlaps the ops.
  const std::vector<TimelineEvent>& tl = runs[ref].result.timeline;
  const uint32_t cores = machine_cores();
  const OpWork ow = op_work(tl, cores, eo.gpu, report.direct_io);
  const std::vector<double>& work = ow.work;
  std::vector<size_t> events(tl.size());
  for (size_t i = 0; i < events.size(); ++i) events[i] = i;
  std::stable_sort(events.begin(), events.end(),
                   [&](size_t x, size_t y) { return tl[x].timing.start < tl[y].timing.start; });
  // `wall`: the same with wall times, for the structure_no_contention check below.
  sim::MeasuredDurations durations, wall;
  for (size_t i : events) {
    const OpTiming& t = tl[i].timing;
    durations.add(tl[i].op, work[i], t.handoff, t.turnaround, ow.read_cpu[i]);
    wall.add(tl[i].op, t.end - t.start, t.handoff, t.turnaround);
  }
  for (const PlanningTime& pt : ref_counters[ref].planning) {
    durations.add_planning(pt);
    wall.add_planning(pt);
  }
  serving::SystemConfig scfg = cfg;
  scfg.record_timeline = !a.timeline.empty();
  sim::SimOptions structure_opts = so;
  structure_opts.measured = &durations;
  structure_opts.cpu_cores = cores;
  structure_opts.charge_means();  // the runtime's costs as this run measured them (below), not the profile's
  structure_opts.gpu_on_cpu = !eo.gpu;
  // The runtime's own cost per dependency, measured in the same run: part of the structure.
  const exec::ExecCounters& rc = ref_counters[ref];
  structure_opts.dispatch_latency = rc.handoff_latency;
  for (size_t i = 0; i < kResourceClasses; ++i) structure_opts.dispatch[i] = rc.handoff[i];
  structure_opts.completion_latency = rc.pipeline_latency;
  structure_opts.wake_latency = rc.completion_latency;
  structure_opts.plan_latency_per_op = rc.plan_latency_per_op;
  structure_opts.plan_latency_fixed = rc.plan_latency_fixed;
  structure_opts.plan_tail_per_op = rc.plan_tail_per_op;
  structure_opts.plan_tail_fixed = rc.plan_tail_fixed;
  structure_opts.measured_handoff = true;   // each op's own hand-off where it found an idle unit in both runs
  structure_opts.measured_turnaround = true;  // and its own turnaround where it waited for its unit
  structure_opts.measured_planning = true;  // each graph's own planning time; the fits where the runs part
  for (size_t i = 0; i < kResourceClasses; ++i) structure_opts.turnaround[i] = rc.turnaround[i];
  const serving::RunResult structure = run_simulated(scfg, p.stream, p.trace.info(), p.costs, exec_hw, structure_opts);
  // Where the structure error comes from: the same run without the runtime's own costs (hand-offs, wake-ups,
  // turnarounds, planning), so the op graph, the queues and the priorities alone.
  const uint64_t matched = durations.matched(), unmatched = durations.unmatched();
  const uint64_t plans_matched = durations.planning_matched(), plans_unmatched = durations.planning_unmatched();
  if (!a.timeline.empty()) {
    write_chrome_trace(a.timeline + "-exec.json", runs[ref].result, p.costs.costs, TimelineWriteOptions{});
    write_chrome_trace(a.timeline + "-structure.json", structure.result, p.costs.costs, TimelineWriteOptions{});
  }
  scfg.record_timeline = false;
  durations.rewind();
  sim::SimOptions bare_opts = so;  // without any runtime cost, the profile's included
  bare_opts.measured = &durations;
  bare_opts.cpu_cores = cores;  // the durations are work: the contention stays
  bare_opts.charge_means();
  bare_opts.gpu_on_cpu = !eo.gpu;
  bare_opts.dispatch_latency = bare_opts.completion_latency = bare_opts.wake_latency = 0;
  for (double& d : bare_opts.dispatch) d = 0;
  bare_opts.plan_latency_per_op = bare_opts.plan_latency_fixed = 0;
  bare_opts.plan_tail_per_op = bare_opts.plan_tail_fixed = 0;
  bare_opts.measured_planning = false;
  bare_opts.measured_handoff = false;
  bare_opts.measured_turnaround = false;
  for (double& t : bare_opts.turnaround) t = 0;
  const serving::RunResult bare = run_simulated(scfg, p.stream, p.trace.info(), p.costs, exec_hw, bare_opts);
  // And what the contention model contributes: the structure check with each op's wall time and a core per
  // thread (the simulator before sim/cpu_cores.h).
  sim::SimOptions flat_opts = structure_opts;
  flat_opts.measured = &wall;
  flat_opts.cpu_cores = 0;
  const serving::RunResult flat = run_simulated(scfg, p.stream, p.trace.info(), p.costs, exec_hw, flat_opts);
  // And what charging the runtime's costs as means does (the cost check's way: each hand-off, turnaround and
  // planning call its run's mean, not its own): the structure check with those means.
  sim::SimOptions mean_opts = structure_opts;
  durations.rewind();
  mean_opts.measured_handoff = mean_opts.measured_turnaround = mean_opts.measured_planning = false;
  const serving::RunResult means = run_simulated(scfg, p.stream, p.trace.info(), p.costs, exec_hw, mean_opts);
  base += steps;
  // Cost: the simulator with the profile.
  scfg.record_timeline = !a.timeline.empty();
  serving::RunResult cost = run_simulated(scfg, p.stream, p.trace.info(), p.costs, hw, so);
  // --calibrate-on: the exec runs were planned with the last pilot run's fit. If the fitted profile plans ZipMoE's
  // pools otherwise, the cost check simulates the exec runs' plan (the pools fixed to it), so that it compares
  // the cost model on the ops exec made; the error under the profile's own plan is kept beside.
  const std::string exec_plan = plan_ratios(runs[ref].plan), cost_plan = plan_ratios(cost.plan);
  std::optional<Figures> own_plan;
  if (interleaved && !exec_plan.empty() && exec_plan != cost_plan) {
    own_plan = figures_of(cost.result);
    serving::SystemConfig pinned = scfg;
    pinned.pools = exec_plan;
    cost = run_simulated(pinned, p.stream, p.trace.info(), p.costs, hw, so);
    warn("validate --calibrate-on: the fitted profile plans ZipMoE's pools as " + cost_plan + ", but the exec runs "
         "were planned " + exec_plan + " (with " + exec_hw.origin + "): the cost check simulates " + exec_plan +
         " (errors.cost_own_plan: under " + cost_plan + ")");
  }
  // --profile: a calibrated profile says what plan its own runs were served with. If the exec runs here were
  // served another one (a fit near a tie between two plans, ZipMoE Alg. 4), its cost model was fitted on
  // another mix of ops than these runs make.
  if (!interleaved && !exec_plan.empty() && hw.raw.contains("calibration") && hw.raw.at("calibration").is_object()) {
    const Json& cal = hw.raw.at("calibration");
    const std::string fitted_under =
        cal.contains("in_sample") && cal["in_sample"].is_object() ? cal["in_sample"].value("runs_plan", std::string()) : "";
    if (!fitted_under.empty() && fitted_under != exec_plan)
      warn("validate: the exec runs were served ZipMoE's pools " + exec_plan + ", but the profile's calibration "
           "runs were served " + fitted_under + ": its cost model was fitted on another mix of ops than these runs "
           "make (validate --calibrate-on keeps the two on one plan)");
  }
  // The ablation: the cost check with the profile the same runs give when each read is fitted whole (no
  // ssd.read_cpu_*), under the same plan: what modelling the I/O thread's CPU work changes here.
  std::optional<Figures> whole_cost;
  if (!reads_whole.is_null()) {
    const HardwareProfile wh = hardware_from_json(reads_whole, "the profile fitted with each read whole");
    serving::SystemConfig wc = scfg;
    wc.record_timeline = false;
    if (own_plan) wc.pools = exec_plan;
    whole_cost = figures_of(run_simulated(wc, p.stream, p.trace.info(), p.costs, wh, sim_options(a, wh, eo.workers)).result);
  }
  if (bar) bar->finish();
  if (!a.timeline.empty()) write_chrome_trace(a.timeline + "-cost.json", cost.result, p.costs.costs, TimelineWriteOptions{});

  // Per op kind: the cost model's estimate against every measured op of the reference run.
  const sim::SimPlatform estimator(hw, so);
  struct KindErr {
    std::vector<double> rel;
    double measured = 0, estimated = 0;
  };
  std::map<std::string, KindErr> kinds;
  // Against the measured work when the profile models contention (its estimates are work), else wall time.
  for (size_t i : events) {
    const TimelineEvent* e = &tl[i];
    // A read's: its device time where the profile models the I/O thread's CPU work apart, else its wall time.
    const bool as_work = so.cpu_cores > 0 && (e->op.kind != OpKind::kSsdRead || hw.has_read_cpu());
    const double m = as_work ? work[i] : e->timing.end - e->timing.start;
    const double est = estimator.estimate(e->op);
    KindErr& ke = kinds[op_kind_label(e->op)];
    if (m > 0) ke.rel.push_back(est / m - 1);
    ke.measured += m;
    ke.estimated += est;
    // A read's CPU work after the device (the I/O thread's), where exec measured it or the profile models it.
    if (e->op.kind == OpKind::kSsdRead && so.cpu_cores > 0 && (ow.read_cpu[i] > 0 || hw.has_read_cpu())) {
      KindErr& kc = kinds[op_kind_label(e->op) + " (cpu)"];
      const double mc = ow.read_cpu[i], ec = hw.read_cpu(e->op.bytes, e->op.prefill);
      if (mc > 0) kc.rel.push_back(ec / mc - 1);
      kc.measured += mc;
      kc.estimated += ec;
    }
  }

  const Figures sf = figures_of(structure.result), cf = figures_of(cost.result);
  Json out;
  Json config = exec_config;
  config["trace"] = a.trace;
  config["model"] = a.load.model.empty() ? Json(nullptr) : Json(a.load.model);
  config["repeat"] = va.repeat;
  config["profile"] = hw.origin;
  if (interleaved) {
    config["calibrated_on"] = va.calibrate_on;
    config["base_profile"] = p.hw.origin;
    config["profile_out"] = va.profile_out.empty() ? Json(nullptr) : Json(va.profile_out);
  }
  out["header"] = run_header("validate", config);
  Json errors;
  errors["structure"] = errors_json(sf, measured[ref]);
  errors["structure"]["ops_matched"] = matched;
  errors["structure"]["ops_unmatched"] = unmatched;
  errors["structure"]["planning_matched"] = plans_matched;
  errors["structure"]["planning_unmatched"] = plans_unmatched;
  errors["structure"]["cpu_cores"] = cores;
  errors["structure"]["gpu_stream_on_cpu"] = !eo.gpu;
  errors["structure"]["dispatch_latency_s"] = structure_opts.dispatch_latency;
  for (size_t i = 0; i < kResourceClasses; ++i)
    errors["structure"][std::string("dispatch_latency_") + resource_class_name(static_cast<ResourceClass>(i)) + "_s"] =
        structure_opts.dispatch[i];
  errors["structure"]["pipeline_latency_s"] = structure_opts.completion_latency;
  errors["structure"]["wake_latency_s"] = structure_opts.wake_latency;
  errors["structure"]["plan_latency_per_op_s"] = structure_opts.plan_latency_per_op;
  errors["structure"]["plan_latency_fixed_s"] = structure_opts.plan_latency_fixed;
  errors["structure"]["plan_tail_per_op_s"] = structure_opts.plan_tail_per_op;
  errors["structure"]["plan_tail_fixed_s"] = structure_opts.plan_tail_fixed;
  for (size_t i = 0; i < kResourceClasses; ++i)
    errors["structure"]["turnaround_s"][resource_class_name(static_cast<ResourceClass>(i))] = rc.turnaround[i];
  errors["structure_ops_only"] = errors_json(figures_of(bare.result), measured[ref]);
  errors["structure_no_contention"] = errors_json(figures_of(flat.result), measured[ref]);
  errors["structure_mean_runtime"] = errors_json(figures_of(means.result), measured[ref]);
  errors["cost"] = errors_json(cf, exec_median);
  if (own_plan) errors["cost_own_plan"] = errors_json(*own_plan, exec_median);
  if (whole_cost) errors["cost_reads_whole"] = errors_json(*whole_cost, exec_median);
  Json per_kind = Json::object();
  for (const auto& [k, ke] : kinds)
    per_kind[k] = {{"ops", ke.rel.size()},
                   {"median", num(quantile(ke.rel, 0.5))},
                   {"p95", num(quantile(ke.rel, 0.95))},
                   {"measured_s", ke.measured},
                   {"estimated_s", ke.estimated}};
  errors["cost"]["op_kinds"] = per_kind;
  std::vector<double> tpots;
  for (const auto& f : measured) tpots.push_back(f.tpot);
  // How far the runs' noise alone moves the cost error: the exec median's distribution-free interval (order
  // statistics, at least 90% where there are runs enough), and the cost TPOT error at its two ends.
  const MedianInterval mi = median_interval(tpots, 0.9);
  if (tpots.size() >= 2)
    errors["cost"]["tpot_interval"] = {num(rel(cf.tpot, mi.hi)), num(rel(cf.tpot, mi.lo))};
  out["errors"] = errors;
  Json spread;
  spread["tpot_s"] = tpots;
  spread["tpot_median_s"] = num(quantile(tpots, 0.5));
  spread["tpot_min_s"] = num(quantile(tpots, 0));
  spread["tpot_max_s"] = num(quantile(tpots, 1));
  spread["tpot_spread"] = num(exec_median.tpot > 0 ? (quantile(tpots, 1) - quantile(tpots, 0)) / exec_median.tpot
                                                   : std::nan(""));
  if (tpots.size() >= 2)
    spread["tpot_median_interval"] = {{"lo_s", num(mi.lo)}, {"hi_s", num(mi.hi)}, {"coverage", mi.coverage},
                                      {"order_statistic", mi.k}};
  out["exec"] = spread;
  out["exec"]["report"] = exec_report_json(report);
  if (interleaved) {
    const Json& in = calibration["calibration"]["in_sample"];
    Json c = {{"trace", va.calibrate_on},
              {"runs", va.repeat},
              {"interleaved", true},
              {"values_from", calibration["calibration"]["values_from"]},
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
    if (cal_tpots.size() == tpots.size() && tpots.size() >= 2 && in["sim_tpot_s"].is_number() &&
        in["sim_tpot_s"].get<double>() > 0) {
      std::vector<double> ratios;
      for (size_t i = 0; i < tpots.size(); ++i)
        if (cal_tpots[i] > 0) ratios.push_back(tpots[i] / cal_tpots[i]);
      const MedianInterval ri = median_interval(ratios, 0.9);
      const double sim_ratio = cf.tpot / in["sim_tpot_s"].get<double>(), med = quantile(ratios, 0.5);
      if (ratios.size() >= 2 && std::isfinite(sim_ratio))
        c["paired"] = {{"ratios", ratios},
                       {"ratio_median", num(med)},
                       {"ratio_interval", {num(ri.lo), num(ri.hi)}},
                       {"coverage", ri.coverage},
                       {"sim_ratio", num(sim_ratio)},
                       {"transfer_error", num(sim_ratio / med - 1)},
                       {"transfer_interval", {num(sim_ratio / ri.hi - 1), num(sim_ratio / ri.lo - 1)}}};
    }
    out["calibration"] = c;
  }
  out["warnings"] = warnings_json();

  if (!va.csv.empty()) {
    std::string csv = "check,metric,sim_s,exec_s,error\n";
    for (const char* check : kChecks) {
      if (!errors.contains(check)) continue;
      const Json& e = errors[check];
      for (const char* m : {"tpot", "ttft", "layer_makespan_median", "layer_makespan_p95"}) {
        const std::string key = std::string(m) + "_s";
        auto cell = [](const Json& v) { return v.is_null() ? std::string() : strprintf("%.9g", v.get<double>()); };
        csv += strprintf("%s,%s,%s,%s,%s\n", check, m, cell(e["sim"][key]).c_str(), cell(e["exec"][key]).c_str(),
                         cell(e[m]).c_str());
      }
    }
    for (const auto& [k, ke] : kinds)
      csv += strprintf("cost,op:%s,%.9g,%.9g,%.9g\n", k.c_str(), ke.estimated, ke.measured,
                       ke.measured > 0 ? ke.estimated / ke.measured - 1 : 0.0);
    write_file_atomic(va.csv, csv);
  }

  std::string text;
  if (a.json) {
    text = out.dump(2) + "\n";
  } else {
    text += strprintf("moesim validate --system %s: %s against the simulator (%s)\n", a.system.c_str(),
                      report.platform.c_str(), hw.display_name.c_str());
    if (interleaved) {
      const Json& c = out["calibration"];
      text += strprintf("calibrated: on %s, %u run%s, each followed by one exec run of this trace%s; in sample %s "
                        "(spread %.1f%%)%s\n",
                        va.calibrate_on.c_str(), va.repeat, va.repeat > 1 ? "s" : "",
                        c.contains("runs_plan") ? (", all planned " + c["runs_plan"].get<std::string>()).c_str() : "",
                        pct(c["in_sample_tpot_error"]).c_str(), 100 * c["exec_tpot_spread"].get<double>(),
                        va.profile_out.empty() ? "" : (" -> " + va.profile_out).c_str());
      if (c.contains("paired")) {
        const Json& pr = c["paired"];
        text += strprintf("paired:    exec / calibration TPOT per pair %.3f median (%.0f%% interval %.3f to %.3f, %zu "
                          "pairs), simulated %.3f: transfer error %s (%s to %s)\n",
                          pr["ratio_median"].get<double>(), 100 * pr["coverage"].get<double>(),
                          pr["ratio_interval"][0].get<double>(), pr["ratio_interval"][1].get<double>(),
                          pr["ratios"].size(), pr["sim_ratio"].get<double>(), pct(pr["transfer_error"]).c_str(),
                          pct(pr["transfer_interval"][0]).c_str(), pct(pr["transfer_interval"][1]).c_str());
      }
    }
    text += strprintf("exec:      %u run%s; TPOT %s median (min %s, max %s, spread %.1f%%); %s\n", va.repeat,
                      va.repeat > 1 ? "s" : "", format_seconds(exec_median.tpot).c_str(),
                      format_seconds(quantile(tpots, 0)).c_str(), format_seconds(quantile(tpots, 1)).c_str(),
                      100 * spread["tpot_spread"].get<double>(),
                      report.counters.chunks_verified == report.counters.chunks_read ? "lossless" : "NOT VERIFIED");
    if (const std::string cpu = thread_cpu_text(report.counters); !cpu.empty())
      text += "           CPU time by thread (the last run): " + cpu + "\n";
    text += strprintf("\n  %-23s %10s %10s %12s %12s\n", "error", "TPOT", "TTFT", "layer p50", "layer p95");
    for (const char* check : kChecks) {
      if (!errors.contains(check)) continue;
      const Json& e = errors[check];
      text += strprintf("  %-23s %10s %10s %12s %12s\n", check, pct(e["tpot"]).c_str(), pct(e["ttft"]).c_str(),
                        pct(e["layer_makespan_median"]).c_str(), pct(e["layer_makespan_p95"]).c_str());
    }
    if (errors["cost"].contains("tpot_interval"))
      text += strprintf("  (cost TPOT over the exec median's %.0f%% interval, %s to %s from %zu runs by order statistics: "
                        "%s to %s)\n",
                        100 * mi.coverage, format_seconds(mi.lo).c_str(), format_seconds(mi.hi).c_str(), tpots.size(),
                        pct(errors["cost"]["tpot_interval"][0]).c_str(), pct(errors["cost"]["tpot_interval"][1]).c_str());
    text += strprintf("  (structure: %llu ops with their measured durations, %llu fell back to the cost model; %llu of "
                      "%llu graphs with their measured planning time;\n"
                      "   the runtime's measured costs: hand-off ssd/cpu/gpu/link %s/%s/%s/%s, wake-up %s, pipeline %s per op, planning %s + %s "
                      "per op (then busy %s + %s per op), turnaround ssd/cpu/gpu/link %s/%s/%s/%s;\n"
                      "   CPU contention: the CPU workers%s share %u cores, each op replayed as its work on them;\n"
                      "   structure_ops_only: the same without the runtime's costs; structure_no_contention: wall times, a core per thread;\n"
                      "   structure_mean_runtime: the runtime's costs as this run's means, as a profile without their distributions charges them)\n",
                      static_cast<unsigned long long>(matched), static_cast<unsigned long long>(unmatched),
                      static_cast<unsigned long long>(plans_matched),
                      static_cast<unsigned long long>(plans_matched + plans_unmatched),
                      format_seconds(rc.handoff[0]).c_str(), format_seconds(rc.handoff[1]).c_str(),
                      format_seconds(rc.handoff[2]).c_str(), format_seconds(rc.handoff[3]).c_str(),
                      format_seconds(rc.completion_latency).c_str(),
                      format_seconds(rc.pipeline_latency).c_str(), format_seconds(rc.plan_latency_fixed).c_str(),
                      format_seconds(rc.plan_latency_per_op).c_str(), format_seconds(rc.plan_tail_fixed).c_str(),
                      format_seconds(rc.plan_tail_per_op).c_str(), format_seconds(rc.turnaround[0]).c_str(),
                      format_seconds(rc.turnaround[1]).c_str(), format_seconds(rc.turnaround[2]).c_str(),
                      format_seconds(rc.turnaround[3]).c_str(), eo.gpu ? "" : " and the GPU stream's thread", cores);
    if (errors.contains("cost_reads_whole"))
      text += "  (cost_reads_whole: the cost check with the profile the same calibration runs give with each read fitted\n"
              "   whole, the I/O thread's CPU work per read (ssd.read_cpu_*) not modelled)\n";
    text += strprintf("\nwhere the cost error comes from (estimate / measured - 1 per op; time over all ops%s):\n",
                      so.cpu_cores > 0 ? "; CPU-bound ops: their work, the profile models the contention" : "");
    text += strprintf("  %-16s %8s %10s %10s %12s %12s\n", "op kind", "ops", "median", "p95", "measured", "estimated");
    for (const auto& [k, ke] : kinds)
      text += strprintf("  %-16s %8zu %10s %10s %12s %12s\n", k.c_str(), ke.rel.size(),
                        pct(num(quantile(ke.rel, 0.5))).c_str(), pct(num(quantile(ke.rel, 0.95))).c_str(),
                        format_seconds(ke.measured).c_str(), format_seconds(ke.estimated).c_str());
  }
  write_file_atomic(a.out, text);
}

void setup(CLI::App& app) {
  auto va = std::make_shared<ValidateArgs>();
  add_run_options(app, va->run);
  // validate writes three timelines side by side, named after the option's value.
  app.get_option("--timeline")
      ->description("write the exec run and the structure and cost simulations as Chrome trace timelines: "
                    "PREFIX-exec.json, PREFIX-structure.json, PREFIX-cost.json (compare with scripts/timeline-diff)");
  app.add_option("--profile", va->run->hw,
                 "hardware profile of this machine (from `moesim calibrate`; the same as --hw)");
  add_exec_options(app, va->run);
  app.add_option("--repeat", va->repeat, "exec runs (the spread of their TPOT is reported)")->capture_default_str();
  app.add_option("--csv", va->csv, "write the errors as CSV (check, metric, sim, exec, error)");
  app.add_option("--calibrate-on", va->calibrate_on,
                 "calibrate here too, on this trace (`moesim calibrate TRACE --repeat N`, --profile its base "
                 "profile): each of its N runs is followed by one exec run of the validated trace, so the profile "
                 "and the runs it is checked against come from the same minutes of this machine");
  app.add_option("--profile-out", va->profile_out, "--calibrate-on: write the fitted profile here");
  app.add_option("--name", va->name, "--calibrate-on: the profile's name (default: calibrated-HOST)");
  app.add_flag("--no-pilot", va->no_pilot, "--calibrate-on: as `moesim calibrate --no-pilot`");
  app.add_option("--pilot-runs", va->pilot_runs, "--calibrate-on: as `moesim calibrate --pilot-runs`")
      ->check(CLI::Range(1u, 100u));
  app.callback([va] { execute(*va); });
}

}  // namespace
MOESIM_CLI_COMMAND("validate",
                   "Exec a trace, then simulate it with the measured op durations (structure error) and with the "
                   "hardware profile (cost error): how far the simulator is from this machine",
                   setup);
}  // namespace moesim::cli
