#include "harness/run_outcome.h"

#include <optional>

#include "base/progress.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/planner_report.h"
#include "harness/sim_runner.h"
#include "serving/metrics.h"
#include "serving/timeline.h"

namespace moesim::harness {
namespace {

void keep_timings(const PipelineResult& r, RunOutcome& o) {
  for (const auto& s : r.steps) {
    o.step_phase.push_back(s.phase);
    o.step_s.push_back(s.end - s.start);
  }
  for (const auto& inv : r.invocations) {
    o.invocation_layer.push_back(inv.layer);
    o.invocation_phase.push_back(inv.phase);
    o.invocation_s.push_back(inv.end - inv.start);
  }
}

}  // namespace

RunOutcome run_outcome(RunArgs& a) {
  PreparedRun p;
  prepare_run(a, p);
  std::optional<Progress> bar;
  p.cfg.on_step = [&bar](uint64_t done, uint64_t total) {
    if (!bar) bar.emplace("run", total, "steps");
    bar->set(done);
  };
  RunOutcome o;
  serving::RunResult r;
  HwReads reads;
  if (a.exec)
    r = run_exec(p.cfg, p.stream, p.trace.info(), p.costs, p.hw, exec_options(a, p.hw), &o.config,
                 &o.exec_report, &reads);
  else
    r = run_simulated(p.cfg, p.stream, p.trace.info(), p.costs, p.hw, p.sim, &o.config, &reads);
  if (bar) bar->finish();
  o.rests_on = a.exec ? rests_on(p.hw, reads) : rests_on(p.hw, reads, &p.sim);

  o.config["trace"] = a.trace;
  o.config["format"] = a.load.format;
  o.config["fields"] = a.load.fields;
  o.config["model"] = a.load.model.empty() ? Json(nullptr) : Json(a.load.model);
  o.config["force"] = a.force;
  if (a.io != "direct") o.config["io"] = a.io;            // absent: direct (older outputs unchanged)
  if (a.exec && a.buffered) o.config["buffered"] = true;  // exec's --buffered: no O_DIRECT whatever --io says
  o.config["device_memory"] = run_memory_json(p, a);
  o.memory = p.memory;
  o.metrics = metrics_json(r.result);
  if (o.config.contains("page_cache") && o.config["page_cache"].contains("major_faults")) {
    const uint64_t tokens = o.metrics["generated_tokens"].get<uint64_t>();
    o.metrics["major_faults_per_token"] =
        tokens ? Json(static_cast<double>(o.config["page_cache"]["decode_major_faults"].get<uint64_t>()) /
                      static_cast<double>(tokens))
               : Json(nullptr);
  }
  o.metrics["synthetic"] = p.trace.info().synthetic;
  if (!a.timeline.empty()) {
    TimelineWriteOptions topt;
    if (p.timeline_warned) topt.warn_above_bytes = 0;  // said once already
    write_chrome_trace(a.timeline, r.result, p.costs.costs, topt);
  }
  warn_if_unoptimized();
  a.policy = p.policy;
  a.budget = p.budget;
  o.info = p.trace.info();
  o.hw = p.hw;
  o.timeline_ops = r.result.timeline.size();
  o.partial_states = serving::system_traits(a.system).partial_states;
  keep_timings(r.result, o);
  return o;
}

Json run_outcome_json(const RunArgs& a, const RunOutcome& o) {
  Json out;
  out["header"] = run_header(a.exec ? "exec" : "run", o.config);
  out["warnings"] = warnings_json();
  out["metrics"] = o.metrics;
  out["rests_on"] = o.rests_on;
  if (!o.config["plan"].is_null()) out["planner"] = planner_report(o.config["plan"], o.metrics);
  if (a.exec) out["exec"] = exec_report_json(o.exec_report);
  return out;
}

}  // namespace moesim::harness
