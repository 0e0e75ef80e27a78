#include "harness/sensitivity_job.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/params.h"
#include "core/planning.h"
#include "core/profile_reads.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/plot_script.h"
#include "harness/run_setup.h"
#include "harness/sensitivity_flip.h"
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

bool is_run_parameter(const std::string& field) {
  return field == "budget" || field == "ratio";
}

// ZipMoE's rho of a system spec: its e_ratio, else the default (0 in the spec means the default too).
double system_ratio(const PolicySpec& system) {
  for (const auto& [k, v] : system.values)
    if (k == "e_ratio" && std::stod(v) > 0) return std::stod(v);
  return kGaussianBf16ExponentRatio;
}

// A cell's run with a run parameter scaled: `budget` by the factor in its unit (bytes, or experts per layer,
// at least 1), `ratio` on a system that declares e_ratio (others: nullopt, their baseline stands). Sets
// *value to the scaled parameter; nullopt as well when the factor takes it out of its range (a budget below
// top-k, rho outside (0, 4]).
std::optional<Cell> scaled_cell(const Cell& base, const std::string& field, double factor, double* value) {
  Cell c;
  c.args = base.args;
  c.args.loaded = std::make_shared<const traces::Trace>(base.run->trace);
  if (field == "budget") {
    const CacheCapacity cap = resolve_budget_option(
        "budget", parse_budget_option("budget", base.args.budgets.at(0)), base.run->trace.info(),
        base.run->costs.sizes["all_experts_bytes"].get<uint64_t>());
    const double scaled = std::max(1.0, std::round(static_cast<double>(cap.value) * factor));
    *value = scaled;
    c.args.budgets = {cap.unit == CacheCapacity::Unit::kBytes ? strprintf("%.0fB", scaled)
                                                              : strprintf("%.0f", scaled)};
  } else {
    if (!serving::system_declares(base.args.system, "e_ratio")) return std::nullopt;
    const double rho = system_ratio(base.args.system) * factor;
    *value = rho;
    try {
      check_exponent_ratio(rho, "ratio");
    } catch (const Error&) {
      return std::nullopt;
    }
    c.args.system =
        serving::with_system_param(base.args.system, "e_ratio", strprintf("%.17g", rho), "", true);
  }
  try {
    prepare_run(c.args, *c.run);
  } catch (const Error&) {
    return std::nullopt;  // the scaled parameter does not fit (a budget below top-k experts a layer)
  }
  return c;
}

// The metric of every system of point `p` with `field` scaled by `factor`: a profile field on the scaled
// profile, a run parameter on runs prepared again. *value is the scaled input (SI units, or the budget's),
// *base_value the unscaled one. nullopt when the factor takes the input out of its range.
std::optional<std::vector<double>> evaluate(const SensitivityPoint& point, const std::vector<Cell>& cells,
                                            const std::vector<double>& baseline, const std::string& field,
                                            double factor, Progress& bar, double* base_value, double* value) {
  std::vector<double> out;
  const std::string what = field + " x" + strprintf("%g", factor);
  if (!is_run_parameter(field)) {
    HardwareProfile hw;
    try {
      hw = scaled_profile(cells[0].run->hw, field, factor, value);
    } catch (const Error&) {
      return std::nullopt;
    }
    (void)scaled_profile(cells[0].run->hw, field, 1.0, base_value);
    for (const Cell& c : cells) out.push_back(simulate(c, hw, point.metric, what, bar).value);
    return out;
  }
  bool any = false;
  for (size_t s = 0; s < cells.size(); ++s) {
    double v = 0;
    const std::optional<Cell> c = scaled_cell(cells[s], field, factor, &v);
    if (!c) {
      if (field == "ratio" && !serving::system_declares(cells[s].args.system, "e_ratio")) {
        out.push_back(baseline[s]);  // a system without rho: unchanged
        continue;
      }
      return std::nullopt;
    }
    if (!any) {
      *value = v;
      *base_value = v / factor;
      any = true;
    }
    out.push_back(simulate(*c, c->run->hw, point.metric, what, bar).value);
  }
  if (!any) return std::nullopt;  // ratio, and no system of the point has one
  return out;
}

// What a perturbed run is: a point's profile with one field scaled by one factor.
struct Variant {
  size_t point = 0;
  std::string field;
  double factor = 1, base_value = 0, value = 0;
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
  for (size_t p = 0; p < cells.size(); ++p)
    for (const auto& field : fields_to_scale(spec, an.rests_on[p]))
      for (double f : factors) an.variants.push_back(Variant{p, field, f, 0, 0});
  uint64_t total = 0;  // in simulated steps: the baseline's, then these runs'
  for (const auto& point : cells) total += point[0].run->stream.steps() * point.size();
  for (const Variant& v : an.variants) total += cells[v.point][0].run->stream.steps() * cells[v.point].size();
  bar.set_total(total);
  an.perturbed.assign(an.variants.size(), {});
  std::vector<char> out_of_range(an.variants.size(), 0);
  parallel_for(an.variants.size(), jobs, [&](size_t i) {
    Variant& v = an.variants[i];
    auto r = evaluate(spec.points[v.point], cells[v.point], an.base[v.point], v.field, v.factor, bar,
                      &v.base_value, &v.value);
    if (r)
      an.perturbed[i] = std::move(*r);
    else
      out_of_range[i] = 1;
  });
  for (size_t i = 0; i < an.variants.size(); ++i)
    if (out_of_range[i])  // the scaled value left the field's range: the factor's fault, not the file's
      throw UsageError(an.variants[i].field + " x" + format_number(an.variants[i].factor) +
                       ": the factor takes the field out of its range; choose a smaller factor or leave this "
                       "field out of \"fields\"");
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

// The JSON report: header, warnings, the points, then `key` (fixed factors' "fields", or "flips").
std::string report_json(const SensitivitySpec& spec, const Analysis& an, const Json& config, const char* key,
                        const Json& rows) {
  Json points = Json::array();
  for (size_t p = 0; p < spec.points.size(); ++p) points.push_back(point_json(spec.points[p], p, an));
  Json out;
  out["header"] = run_header("sensitivity", config);
  out["warnings"] = warnings_json();
  out["points"] = points;
  out[key] = rows;
  return out.dump(2) + "\n";
}

FlipSearch flip_search(const SensitivityArgs& a) {
  FlipSearch s;
  const std::vector<double> r = parse_factors(a.range, "--range");
  if (r.size() != 2 || !(r[0] < 1 && r[1] > 1))
    throw UsageError("--range: expected LO,HI with LO < 1 < HI (each in 0.001..1000), e.g. 0.1,10; got '" +
                     a.range + "'");
  s.lo = r[0];
  s.hi = r[1];
  s.tolerance = a.tolerance;
  if (!(s.tolerance >= 1e-4 && s.tolerance <= 0.5))
    throw UsageError("--tolerance must be in [0.0001, 0.5] (the final bracket's relative width), got " +
                     format_number(a.tolerance));
  return s;
}

// One field of one point searched for its break-evens.
struct FlipTask {
  size_t point = 0;
  std::string field;
  FlipResult result;
  double base_value = 0;
  std::map<double, double>
      value_at;         // the input's value at each factor evaluated (whole-number fields rounded)
  bool applies = true;  // ratio on a point without a system that has rho: nothing to scale
  std::vector<std::string> warnings;  // the scaled runs' (a budget scaled below a token's working set ...)
};

std::vector<FlipTask> search_flips(const SensitivitySpec& spec, const std::vector<std::vector<Cell>>& cells,
                                   const Analysis& an, const FlipSearch& search, unsigned jobs) {
  std::vector<FlipTask> tasks;
  for (size_t p = 0; p < cells.size(); ++p)
    for (const auto& field : fields_to_scale(spec, an.rests_on[p])) {
      FlipTask t;
      t.point = p;
      t.field = field;
      if (field == "ratio")
        t.applies = std::any_of(cells[p].begin(), cells[p].end(), [](const Cell& c) {
          return serving::system_declares(c.args.system, "e_ratio");
        });
      tasks.push_back(std::move(t));
    }
  // The evaluations a search takes depend on where the flips are: the bar counts steps without a total.
  Progress bar("sensitivity --find-flip", 0, "steps");
  parallel_for(tasks.size(), jobs, [&](size_t i) {
    FlipTask& t = tasks[i];
    if (!t.applies) return;
    const SensitivityPoint& point = spec.points[t.point];
    const bool higher = higher_is_better(point.metric);
    // The scaled runs' warnings are about scaled inputs, not the spec's: kept apart, summarised once.
    ThreadWarningScope captured;
    t.result = find_flip(
        ranking(an.base[t.point], higher),
        [&](double f) -> std::optional<std::vector<size_t>> {
          double base_value = 0, value = 0;
          const auto m =
              evaluate(point, cells[t.point], an.base[t.point], t.field, f, bar, &base_value, &value);
          if (!m) return std::nullopt;
          t.base_value = base_value;
          t.value_at[f] = value;
          return ranking(*m, higher);
        },
        search);
    t.warnings = captured.items();
  });
  for (const FlipTask& t : tasks)
    if (!t.warnings.empty())
      warn(strprintf("%s: %zu warning(s) from its scaled runs, e.g. ", t.field.c_str(), t.warnings.size()) +
           t.warnings.front());
  bar.finish();
  return tasks;
}

Json flip_side_json(const FlipSide& side, const FlipTask& t, const SensitivityPoint& p) {
  Json j;
  j["found"] = side.found;
  j["unflipped_factor"] = side.unflipped;
  j["range_end_factor"] = side.range_end ? Json(*side.range_end) : Json(nullptr);
  if (!side.found) return j;
  j["factor"] = side.factor;
  j["value"] = t.value_at.at(side.factor);
  Json rank = Json::array();
  for (size_t s : side.ranking) rank.push_back(p.systems[s].label);
  j["ranking"] = rank;
  return j;
}

std::string flip_side_text(const FlipSide& side, const FlipTask& t, const SensitivityPoint& p, double bound) {
  if (!side.found) {
    const double end = side.range_end ? side.unflipped : bound;
    return side.range_end ? strprintf("no flip up to x%.3g (x%.3g leaves its range)", end, *side.range_end)
           : bound < 1    ? strprintf("no flip in [x%.3g, x1]", bound)
                          : strprintf("no flip in [x1, x%.3g]", bound);
  }
  std::string rank;
  for (size_t s : side.ranking) rank += (rank.empty() ? "" : " < ") + p.systems[s].label;
  return strprintf("x%.3g (%.4g): %s", side.factor, t.value_at.at(side.factor), rank.c_str());
}

// The break-evens: JSON, text, and the tornado plot's table (point, field, the two flip factors, the range).
std::string report_flips(const SensitivityArgs& a, const SensitivitySpec& spec, const Analysis& an,
                         const FlipSearch& search, const std::vector<FlipTask>& tasks) {
  std::string csv =
      "point,field,base_value,lower_factor,upper_factor,lower_range_end,upper_range_end,lo,hi\n";
  Json flips = Json::array();
  std::string t;
  for (size_t p = 0; p < spec.points.size(); ++p) {
    const SensitivityPoint& pt = spec.points[p];
    t += strprintf("point %zu: %s, %s, budget %s; metric %s; baseline ranking", p, pt.trace.c_str(),
                   pt.hw.c_str(), pt.budget.c_str(), pt.metric.c_str());
    for (size_t s : ranking(an.base[p], higher_is_better(pt.metric))) t += " " + pt.systems[s].label;
    t += strprintf(" (best first)\n  %-36s %-44s %s\n", "input", "flips below x1", "flips above x1");
    for (const FlipTask& task : tasks) {
      if (task.point != p) continue;
      if (!task.applies) {
        t += strprintf("  %-36s no system of the point has rho (e_ratio)\n", task.field.c_str());
        continue;
      }
      t += strprintf("  %-36s %-44s %s\n", task.field.c_str(),
                     flip_side_text(task.result.below, task, pt, search.lo).c_str(),
                     flip_side_text(task.result.above, task, pt, search.hi).c_str());
      flips.push_back({{"point", p},
                       {"field", task.field},
                       {"base_value", task.base_value},
                       {"below", flip_side_json(task.result.below, task, pt)},
                       {"above", flip_side_json(task.result.above, task, pt)},
                       {"evaluations", task.result.evaluations}});
      auto opt = [](bool has, double v) { return has ? strprintf("%.17g", v) : std::string(); };
      const FlipSide &lo = task.result.below, &hi = task.result.above;
      csv +=
          strprintf("%zu,\"%s\",%.17g,%s,%s,%s,%s,%.17g,%.17g\n", p, task.field.c_str(), task.base_value,
                    opt(lo.found, lo.factor).c_str(), opt(hi.found, hi.factor).c_str(),
                    opt(!lo.found && lo.range_end.has_value(), lo.unflipped).c_str(),
                    opt(!hi.found && hi.range_end.has_value(), hi.unflipped).c_str(), search.lo, search.hi);
    }
    t += rests_on_line(an.rests_on[p]);
  }
  t += strprintf(
      "(a scan of %u geometric steps a side, then bisection to within x%.4g; a ranking that flips and "
      "flips back between two steps is missed)\n",
      search.steps, 1 + search.tolerance);
  if (!a.plot.empty()) plot_table("plot_tornado.py", csv, "", a.plot);
  if (!a.json) return t;
  Json config;
  config["spec"] = a.spec;
  config["find_flip"] = true;
  config["range"] = {search.lo, search.hi};
  config["tolerance"] = search.tolerance;
  config["scan_steps"] = search.steps;
  config["jobs"] = a.jobs;
  return report_json(spec, an, config, "flips", flips);
}

}  // namespace

std::string sensitivity_output(const SensitivityArgs& a) {
  const std::string origin = a.spec;
  const SensitivitySpec spec =
      sensitivity_spec_from_json(load_json_file(a.spec), origin, fs::path(a.spec).parent_path());
  const std::vector<double> factors = !a.factors.empty()     ? parse_factors(a.factors, "--factors")
                                      : spec.factors.empty() ? std::vector<double>{0.5, 2}
                                                             : spec.factors;
  std::optional<FlipSearch> search;
  if (a.find_flip) search = flip_search(a);
  if (!a.find_flip && !a.plot.empty())
    throw UsageError("--plot needs --find-flip (the break-evens' tornado plot)");
  check_output_writable(a.out);
  if (!a.plot.empty()) check_output_writable(a.plot);
  std::vector<NamedPath> outputs = {{a.out, "--output"}};
  if (!a.plot.empty()) outputs.push_back({a.plot, "--plot"});
  refuse_outputs_over_inputs(outputs, files_named(spec, origin));
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
  if (search) {
    bar.finish();
    return report_flips(a, spec, an, *search, search_flips(spec, cells, an, *search, a.jobs));
  }
  perturb(spec, factors, cells, a.jobs, bar, an);
  bar.finish();
  if (!a.json) return report_text(spec, an);
  Json config;
  config["spec"] = a.spec;
  config["factors"] = factors;
  config["jobs"] = a.jobs;
  Json fields = Json::array();
  for (size_t v = 0; v < an.variants.size(); ++v) fields.push_back(variant_json(spec, an, v));
  return report_json(spec, an, config, "fields", fields);
}

}  // namespace moesim::harness
