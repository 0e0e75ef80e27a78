#include "harness/sensitivity_job.h"

#include <algorithm>
#include <memory>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/profile_reads.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/run_setup.h"
#include "harness/sim_runner.h"
#include "serving/metrics.h"

namespace moesim::harness {
namespace {

namespace fs = std::filesystem;

bool higher_is_better(const std::string& metric) {
  return metric == "decode_tokens_per_s";
}

// The metric of a run's metrics (serving/metrics.h). Throws moesim::Error when the run has none (a trace
// without decode steps has no TPOT).
double metric_value(const Json& m, const std::string& metric, const std::string& what) {
  const Json& v = metric == "tpot"         ? m["tpot"]["mean_s"]
                  : metric == "tpot_p90"   ? m["tpot"]["p90_s"]
                  : metric == "ttft"       ? m["ttft"]["mean_s"]
                  : metric == "end_to_end" ? m["end_to_end"]["mean_s"]
                  : metric == "makespan"   ? m["makespan_s"]
                                           : m["decode_tokens_per_s"];
  if (!v.is_number())
    throw Error(what + ": the run has no " + metric + " (its trace has no step that measures it)");
  return v.get<double>();
}

std::string metric_text(double v, const std::string& metric) {
  return higher_is_better(metric) ? strprintf("%.2f tok/s", v) : format_seconds(v);
}

// The systems' indices, best first; ties keep the spec's order.
std::vector<size_t> ranking(const std::vector<double>& v, bool higher) {
  std::vector<size_t> r(v.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = i;
  std::stable_sort(r.begin(), r.end(),
                   [&](size_t a, size_t b) { return higher ? v[a] > v[b] : v[a] < v[b]; });
  return r;
}

RunArgs run_args(const SensitivityPoint& p, const SensitivitySystem& s) {
  RunArgs a;
  a.trace = p.trace;
  if (!p.format.empty()) a.load.format = p.format;
  a.load.model = p.model;
  a.hw = p.hw;
  a.system = s.system;
  if (!s.policy.empty()) {
    a.policies = {s.policy};
    a.policy_given = true;
  }
  a.budgets = {p.budget};
  a.scope = p.scope;
  a.batch = p.batch;
  a.io_depth = p.io_depth;
  a.seed = p.seed;
  return a;
}

// One (point, system): its arguments and the run prepared from them, shared by every profile it runs on.
struct Cell {
  RunArgs args;
  std::unique_ptr<PreparedRun> run = std::make_unique<PreparedRun>();
};

// One simulation: a cell on a profile. Its metric and the profile fields it read.
struct Outcome {
  double value = 0;
  std::vector<std::string> fields;
};

Outcome simulate(const Cell& c, const HardwareProfile& hw, const std::string& metric, const std::string& what,
                 Progress& bar) {
  serving::SystemConfig cfg = c.run->cfg;
  uint64_t reported = 0;  // this run's steps already added (on_step gives a running count)
  cfg.on_step = [&bar, &reported](uint64_t done, uint64_t) {
    bar.add(done - reported);
    reported = done;
  };
  const sim::SimOptions so = sim_options(c.args, hw, c.args.workers);
  HwReads reads;
  const serving::RunResult r =
      run_simulated(cfg, c.run->stream, c.run->trace.info(), c.run->costs, hw, so, nullptr, &reads);
  return Outcome{metric_value(metrics_json(r.result), metric, what),
                 fields_read(hw, reads, so.profile_fields)};
}

// What a perturbed run is: a point's profile with one field scaled by one factor.
struct Variant {
  size_t point = 0;
  std::string field;
  double factor = 1, base_value = 0, value = 0;
  HardwareProfile hw;
};

struct Analysis {
  std::vector<std::vector<double>> base;  // [point][system]
  std::vector<Json> rests_on;             // [point]
  std::vector<Variant> variants;
  std::vector<std::vector<double>> perturbed;  // [variant][system]
};

// The fields a point's analysis scales: the spec's, else the assumption-marked scalar ones its runs read (a
// list such as ssd.queue_depth_curve has no one factor to scale by).
std::vector<std::string> fields_to_scale(const SensitivitySpec& spec, const Json& rests_on) {
  if (!spec.fields.empty()) return spec.fields;
  std::vector<std::string> out;
  for (const auto& r : rests_on) {
    const std::string f = r["field"].get<std::string>();
    const size_t dot = f.find('.');
    const char* kind = hardware_field_kind(f.substr(0, dot), f.substr(dot + 1));
    if (kind && std::string(kind) != "any") out.push_back(f);
  }
  return out;
}

void baseline(const SensitivitySpec& spec, std::vector<std::vector<Cell>>& cells, unsigned jobs,
              Progress& bar, Analysis& an) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t p = 0; p < cells.size(); ++p)
    for (size_t s = 0; s < cells[p].size(); ++s) runs.emplace_back(p, s);
  std::vector<Outcome> out(runs.size());
  parallel_for(runs.size(), jobs, [&](size_t i) {
    const auto [p, s] = runs[i];
    out[i] = simulate(cells[p][s], cells[p][s].run->hw, spec.points[p].metric,
                      "points[" + std::to_string(p) + "] " + spec.points[p].systems[s].label, bar);
  });
  an.base.assign(cells.size(), {});
  std::vector<std::vector<std::string>> read(cells.size());  // [point]: every system's fields, in run order
  for (size_t i = 0; i < runs.size(); ++i) {
    const size_t p = runs[i].first;
    an.base[p].push_back(out[i].value);
    read[p].insert(read[p].end(), out[i].fields.begin(), out[i].fields.end());
  }
  an.rests_on.clear();
  for (size_t p = 0; p < cells.size(); ++p) {
    const HardwareProfile& hw = cells[p][0].run->hw;
    an.rests_on.push_back(rests_on_json(hw, fields_read(hw, HwReads(), read[p])));
  }
}

void perturb(const SensitivitySpec& spec, const std::vector<double>& factors,
             std::vector<std::vector<Cell>>& cells, unsigned jobs, Progress& bar, Analysis& an) {
  for (size_t p = 0; p < cells.size(); ++p) {
    const HardwareProfile& hw = cells[p][0].run->hw;
    for (const auto& field : fields_to_scale(spec, an.rests_on[p]))
      for (double f : factors) {
        Variant v;
        v.point = p;
        v.field = field;
        v.factor = f;
        try {
          v.hw = scaled_profile(hw, field, f, &v.value);
        } catch (
            const Error& e) {  // the scaled value left the field's range: the factor's fault, not the file's
          throw UsageError(field + " x" + format_number(f) +
                           ": the factor takes the field out of its range (" + e.what() +
                           "); choose a smaller factor or leave this field out of \"fields\"");
        }
        (void)scaled_profile(hw, field, 1.0, &v.base_value);
        an.variants.push_back(std::move(v));
      }
  }
  std::vector<std::pair<size_t, size_t>> runs;  // (variant, system)
  for (size_t v = 0; v < an.variants.size(); ++v)
    for (size_t s = 0; s < cells[an.variants[v].point].size(); ++s) runs.emplace_back(v, s);
  uint64_t total = 0;  // in simulated steps: the baseline's, then these runs'
  for (const auto& point : cells) total += point[0].run->stream.steps() * point.size();
  for (const auto& [v, sys] : runs) total += cells[an.variants[v].point][sys].run->stream.steps();
  bar.set_total(total);
  std::vector<double> out(runs.size());
  parallel_for(runs.size(), jobs, [&](size_t i) {
    const Variant& v = an.variants[runs[i].first];
    out[i] = simulate(cells[v.point][runs[i].second], v.hw, spec.points[v.point].metric,
                      v.field + " x" + strprintf("%g", v.factor), bar)
                 .value;
  });
  an.perturbed.assign(an.variants.size(), {});
  for (size_t i = 0; i < runs.size(); ++i) an.perturbed[runs[i].first].push_back(out[i]);
}

Json point_json(const SensitivityPoint& p, size_t index, const Analysis& an) {
  Json j;
  j["index"] = index;
  j["trace"] = p.trace;
  j["model"] = p.model.empty() ? Json(nullptr) : Json(p.model);
  j["hw"] = p.hw;
  j["budget"] = p.budget;
  j["metric"] = p.metric;
  Json systems = Json::array(), base = Json::object(), rank = Json::array();
  for (size_t s = 0; s < p.systems.size(); ++s) {
    systems.push_back(p.systems[s].label);
    base[p.systems[s].label] = an.base[index][s];
  }
  for (size_t s : ranking(an.base[index], higher_is_better(p.metric))) rank.push_back(p.systems[s].label);
  j["systems"] = systems;
  j["baseline"] = base;
  j["ranking"] = rank;
  j["rests_on"] = an.rests_on[index];
  return j;
}

Json variant_json(const SensitivitySpec& spec, const Analysis& an, size_t v) {
  const Variant& var = an.variants[v];
  const SensitivityPoint& p = spec.points[var.point];
  const bool higher = higher_is_better(p.metric);
  const std::vector<size_t> before = ranking(an.base[var.point], higher),
                            after = ranking(an.perturbed[v], higher);
  Json j;
  j["point"] = var.point;
  j["field"] = var.field;
  j["factor"] = var.factor;
  j["base_value"] = var.base_value;
  j["value"] = var.value;
  j["metric"] = p.metric;
  Json systems = Json::object(), rank = Json::array();
  for (size_t s = 0; s < p.systems.size(); ++s) {
    const double b = an.base[var.point][s], x = an.perturbed[v][s];
    systems[p.systems[s].label] = {{"value", x}, {"change", b != 0 ? Json((x - b) / b) : Json(nullptr)}};
  }
  for (size_t s : after) rank.push_back(p.systems[s].label);
  j["systems"] = systems;
  j["ranking"] = rank;
  j["flips"] = before != after;
  return j;
}

std::string report_text(const SensitivitySpec& spec, const Analysis& an) {
  std::string t;
  for (size_t p = 0; p < spec.points.size(); ++p) {
    const SensitivityPoint& pt = spec.points[p];
    t += strprintf("point %zu: %s, %s, budget %s; metric %s\n  baseline:", p, pt.trace.c_str(), pt.hw.c_str(),
                   pt.budget.c_str(), pt.metric.c_str());
    for (size_t s : ranking(an.base[p], higher_is_better(pt.metric)))
      t += strprintf("  %s %s", pt.systems[s].label.c_str(), metric_text(an.base[p][s], pt.metric).c_str());
    t += "  (best first)\n" + strprintf("  %-36s %6s", "field", "factor");
    for (const auto& s : pt.systems) t += strprintf(" %24s", s.label.c_str());
    t += "  ranking\n";
    for (size_t v = 0; v < an.variants.size(); ++v) {
      if (an.variants[v].point != p) continue;
      const Json j = variant_json(spec, an, v);
      t += strprintf("  %-36s %6g", an.variants[v].field.c_str(), an.variants[v].factor);
      for (size_t s = 0; s < pt.systems.size(); ++s)
        t += strprintf(" %24s",
                       (metric_text(an.perturbed[v][s], pt.metric) + " (" +
                        num_or_dash(j["systems"][pt.systems[s].label]["change"], "%+.1f%%", 100) + ")")
                           .c_str());
      t += j["flips"].get<bool>() ? "  FLIPS\n" : "  same\n";
    }
    if (an.variants.empty()) t += "  (no field to scale: the runs read no assumption-marked field)\n";
    t += rests_on_line(an.rests_on[p]);
  }
  return t;
}

}  // namespace

void sensitivity(const SensitivityArgs& a) {
  const std::string origin = a.spec;
  const SensitivitySpec spec =
      sensitivity_spec_from_json(load_json_file(a.spec), origin, fs::path(a.spec).parent_path());
  const std::vector<double> factors = !a.factors.empty()     ? parse_factors(a.factors, "--factors")
                                      : spec.factors.empty() ? std::vector<double>{0.5, 2}
                                                             : spec.factors;
  check_output_writable(a.out);
  refuse_outputs_over_inputs({{a.out, "--output"}}, files_named(spec, origin));
  std::vector<std::vector<Cell>> cells(spec.points.size());
  uint64_t total = 0;
  for (size_t p = 0; p < spec.points.size(); ++p)
    for (const auto& sys : spec.points[p].systems) {
      Cell c;
      c.args = run_args(spec.points[p], sys);
      try {
        prepare_run(c.args, *c.run);
      } catch (const UsageError& e) {  // a bad value in the spec: a bad input file, not a bad command line
        throw Error(origin + ": points[" + std::to_string(p) + "] " + sys.label + ": " + e.what());
      }
      total += c.run->stream.steps();
      cells[p].push_back(std::move(c));
    }
  Analysis an;
  Progress bar("sensitivity", total, "steps");
  baseline(spec, cells, a.jobs, bar, an);
  perturb(spec, factors, cells, a.jobs, bar, an);
  bar.finish();
  if (!a.json) {
    write_file_atomic(a.out, report_text(spec, an));
    return;
  }
  Json config;
  config["spec"] = a.spec;
  config["factors"] = factors;
  config["jobs"] = a.jobs;
  Json points = Json::array(), fields = Json::array();
  for (size_t p = 0; p < spec.points.size(); ++p) points.push_back(point_json(spec.points[p], p, an));
  for (size_t v = 0; v < an.variants.size(); ++v) fields.push_back(variant_json(spec, an, v));
  Json out;
  out["header"] = run_header("sensitivity", config);
  out["warnings"] = warnings_json();
  out["points"] = points;
  out["fields"] = fields;
  write_json_file(a.out, out);
}

}  // namespace moesim::harness
