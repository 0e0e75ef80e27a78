#include "harness/validate/matrix_validation.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/output_guard.h"
#include "base/progress.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/validate/matrix_spec.h"

namespace moesim::harness {
namespace {

// The judged errors of a cell, in the table's order: the JSON key under errors, the check and the metric.
struct Judged {
  const char* check;
  const char* metric;
  const char* column;  // the table's and the CSV's
};
constexpr Judged kJudged[] = {{"structure", "tpot", "structure_tpot"},
                              {"structure", "layer_makespan_median", "structure_layer_median"},
                              {"cost", "tpot", "cost_tpot"}};

// A term of the model and the check that leaves it out, against the check that keeps it.
struct Term {
  const char* name;
  const char* with;
  const char* without;
};
constexpr Term kTerms[] = {
    {"runtime costs (hand-off, wake-up, pipeline, planning)", "structure", "structure_ops_only"},
    {"CPU contention (ops as work on shared cores)", "structure", "structure_no_contention"},
    {"runtime cost distributions (not their means)", "structure", "structure_mean_runtime"},
    {"I/O thread CPU work per read (ssd.read_cpu_*)", "cost", "cost_reads_whole"}};

namespace matrix_validation_detail {
std::string pct(const Json& v) {
  return v.is_number() ? strprintf("%+.2f%%", 100 * v.get<double>()) : "-";
}
}  // namespace matrix_validation_detail

// One error of a cell with its interval and verdict, from validate's JSON.
Json judged_error(const Json& v, const char* check, const char* metric) {
  Json e = {{"value", nullptr}, {"low", nullptr}, {"high", nullptr}, {"verdict", "no target"}};
  if (v["errors"].contains(check)) e["value"] = v["errors"][check][metric];
  for (const Json& t : v["targets"]) {
    if (t["check"] != check || t["metric"] != metric) continue;
    e["limit"] = t["limit"];
    if (t["met"].is_null()) {
      e["verdict"] = "no figure";
    } else if (t.contains("decided")) {
      e["low"] = t["interval"][0];
      e["high"] = t["interval"][1];
      e["decided_by"] = "interval";
      e["verdict"] = !t["decided"].get<bool>() ? "undecided" : t["met"].get<bool>() ? "met" : "missed";
    } else {
      e["decided_by"] = "value";
      e["verdict"] = t["met"].get<bool>() ? "met" : "missed";
    }
  }
  return e;
}

Json cell_json(const matrix::Cell& c) {
  return {{"index", c.index},
          {"label", c.label()},
          {"model", c.model},
          {"trace", c.trace},
          {"system", c.system},
          {"budget", c.budget},
          {"batch", c.batch},
          {"io", c.io},
          {"validate", c.validate},
          {"calibrate", c.calibrate},
          {"options", c.args},
          // The calibration runs' batch and budget: where they differ, the cell judges a transfer.
          {"calibrated_at",
           {{"batch", c.calibrate_batch > 0 ? c.calibrate_batch : c.batch},
            {"budget", c.calibrate_budget.empty() ? c.budget : c.calibrate_budget}}}};
}

// What a finished cell keeps of its validation: the judged errors, the ablations' errors, the exec runs'
// spread and the in-sample error of its calibration.
void fill_cell(Json& j, const Json& v) {
  j["status"] = "ok";
  for (const Judged& k : kJudged) j["errors"][k.check][k.metric] = judged_error(v, k.check, k.metric);
  // Not a target, but what a prefill's terms shape: the terms' table weighs them on it too.
  j["errors"]["cost"]["ttft"] = judged_error(v, "cost", "ttft");
  Json ab = Json::object();
  for (const Term& t : kTerms)
    if (v["errors"].contains(t.without))
      ab[t.without] = {{"term", t.name},
                       {"check", t.with},
                       {"tpot", v["errors"][t.without]["tpot"]},
                       {"ttft", v["errors"][t.without]["ttft"]},
                       {"layer_makespan_median", v["errors"][t.without]["layer_makespan_median"]}};
  if (v["errors"].contains("cost_without"))
    for (const auto& [term, e] : v["errors"]["cost_without"].items())
      ab["cost_without:" + term] = {{"term", term},
                                    {"check", "cost"},
                                    {"tpot", e["tpot"]},
                                    {"ttft", e["ttft"]},
                                    {"layer_makespan_median", e["layer_makespan_median"]}};
  j["ablations"] = ab;
  j["exec"] = {{"tpot_median_s", v["exec"]["tpot_median_s"]},
               {"tpot_spread", v["exec"]["tpot_spread"]},
               {"runs", v["exec"]["tpot_s"].size()}};
  const Json& cal = v.contains("calibration") ? v["calibration"] : Json::object();
  j["calibration"] = {{"in_sample_tpot_error", cal.value("in_sample_tpot_error", Json(nullptr))},
                      {"beyond_in_sample", cal.value("beyond_in_sample", Json(nullptr))},
                      {"batch", cal.value("batch", Json(nullptr))}};  // the batch its runs were served at
}

namespace matrix_validation_detail {
// met / missed / undecided counts per judged error, and whether every cell met every target over its
// interval.
Json summary_json(const Json& cells) {
  Json s;
  size_t ok = 0, all_met = 0;
  for (const Judged& k : kJudged) {
    Json counts = {{"met", 0}, {"missed", 0}, {"undecided", 0}, {"no figure", 0}};
    for (const Json& c : cells)
      if (c["status"] == "ok") {
        const std::string v = c["errors"][k.check][k.metric]["verdict"].get<std::string>();
        if (counts.contains(v)) counts[v] = counts[v].get<int>() + 1;
      }
    s["verdicts"][k.column] = counts;
  }
  for (const Json& c : cells) {
    if (c["status"] != "ok") continue;
    ++ok;
    bool met = true;
    for (const Judged& k : kJudged) met = met && c["errors"][k.check][k.metric]["verdict"] == "met";
    all_met += met;
  }
  s["cells"] = cells.size();
  s["cells_ok"] = ok;
  s["cells_failed"] = cells.size() - ok;
  s["cells_all_met"] = all_met;
  return s;
}
}  // namespace matrix_validation_detail

// Each term (each ablation some cell has, in the order first met): the mean |error| over the finished cells
// with the term and without it, and the cells within the target (the check's limit) each way. The cost
// check's terms are judged on TPOT, its target, and on TTFT (no target: a prefill's terms shape little else).
Json terms_json(const Json& cells) {
  std::vector<std::string> keys;
  for (const Json& c : cells)
    if (c["status"] == "ok")
      for (const auto& [k, _] : c["ablations"].items())
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  Json out = Json::array();
  for (const std::string& key : keys)
    for (const char* metric : {"tpot", "layer_makespan_median", "ttft"}) {
      double with = 0, without = 0;
      size_t n = 0, in_with = 0, in_without = 0;
      Json about;
      for (const Json& c : cells) {
        if (c["status"] != "ok" || !c["ablations"].contains(key)) continue;
        about = c["ablations"][key];
        const std::string check = about["check"].get<std::string>();
        if (!c["errors"][check].contains(metric)) continue;
        const Json& e = c["errors"][check][metric];
        const Json& b = about[metric];
        if (!e["value"].is_number() || !b.is_number()) continue;
        ++n;
        const double x = std::abs(e["value"].get<double>()), y = std::abs(b.get<double>());
        with += x;
        without += y;
        if (e.contains("limit")) {
          in_with += x <= e["limit"].get<double>();
          in_without += y <= e["limit"].get<double>();
        }
      }
      if (n == 0) continue;
      out.push_back({{"term", about["term"]},
                     {"ablation", key},
                     {"check", about["check"]},
                     {"metric", metric},
                     {"cells", n},
                     {"mean_abs_error_with", with / n},
                     {"mean_abs_error_without", without / n},
                     {"cells_within_target_with", in_with},
                     {"cells_within_target_without", in_without}});
    }
  return out;
}

std::string verdict_mark(const Json& e) {
  const std::string v = e["verdict"].get<std::string>();
  return v == "met" ? "met" : v == "missed" ? "MISSED" : v == "undecided" ? "undec" : "-";
}

std::string table_text(const Json& out) {
  std::string t = strprintf(
      "moesim validate --matrix %s: %zu cells, each calibrated on another trace than it "
      "validates\n\n",
      out["spec"].get<std::string>().c_str(), out["cells"].size());
  t += strprintf("  %-3s %-50s %17s %17s %34s\n", "#", "cell (system budget batch model trace io)",
                 "structure TPOT", "structure layer", "cost TPOT [exec median interval]");
  for (const Json& c : out["cells"]) {
    t += strprintf("  %-3zu %-50s", c["index"].get<size_t>(), c["label"].get<std::string>().c_str());
    if (c["status"] != "ok") {
      t += "  FAILED: " + c["message"].get<std::string>() + "\n";
      continue;
    }
    const Json& s = c["errors"]["structure"];
    const Json& k = c["errors"]["cost"]["tpot"];
    t += strprintf(" %9s %-7s %9s %-7s %9s [%s, %s] %-6s\n",
                   matrix_validation_detail::pct(s["tpot"]["value"]).c_str(), verdict_mark(s["tpot"]).c_str(),
                   matrix_validation_detail::pct(s["layer_makespan_median"]["value"]).c_str(),
                   verdict_mark(s["layer_makespan_median"]).c_str(),
                   matrix_validation_detail::pct(k["value"]).c_str(),
                   matrix_validation_detail::pct(k["low"]).c_str(),
                   matrix_validation_detail::pct(k["high"]).c_str(), verdict_mark(k).c_str());
  }
  const Json& s = out["summary"];
  t += strprintf(
      "\n  targets: %s (structure by value: it replays one run; cost TPOT over the exec median's interval)\n",
      out["targets"].get<std::string>().c_str());
  for (const Judged& k : kJudged) {
    const Json& v = s["verdicts"][k.column];
    t += strprintf("  %-23s met %d, missed %d, undecided %d\n", k.column, v["met"].get<int>(),
                   v["missed"].get<int>(), v["undecided"].get<int>());
  }
  t += strprintf("  every target met: %zu of %zu cells (%zu failed)\n", s["cells_all_met"].get<size_t>(),
                 s["cells"].get<size_t>(), s["cells_failed"].get<size_t>());
  t += "\nterms on the matrix (mean |error| over the cells with the term, without it; cells within the "
       "target):\n";
  t += strprintf("  %-55s %-22s %8s %8s  %s\n", "term", "error", "with", "without", "within with/without");
  for (const Json& x : out["terms"])
    t += strprintf("  %-55s %-22s %7.2f%% %7.2f%%  %zu/%zu %zu/%zu\n", x["term"].get<std::string>().c_str(),
                   (x["check"].get<std::string>() + (x["metric"] == "tpot"   ? " TPOT"
                                                     : x["metric"] == "ttft" ? " TTFT"
                                                                             : " median layer"))
                       .c_str(),
                   100 * x["mean_abs_error_with"].get<double>(),
                   100 * x["mean_abs_error_without"].get<double>(),
                   x["cells_within_target_with"].get<size_t>(), x["cells"].get<size_t>(),
                   x["cells_within_target_without"].get<size_t>(), x["cells"].get<size_t>());
  return t;
}

std::string csv_text(const Json& out) {
  std::string csv = "index,model,trace,system,budget,batch,io,status";
  for (const Judged& k : kJudged)
    csv += strprintf(",%s,%s_low,%s_high,%s_verdict", k.column, k.column, k.column, k.column);
  for (const Term& t : kTerms) csv += strprintf(",%s_tpot", t.without);
  csv += ",exec_tpot_median_s,exec_tpot_spread,in_sample_tpot_error,calibrate_batch,calibrate_budget\n";
  auto cell = [](const Json& v) {
    return v.is_number() ? strprintf("%.9g", v.get<double>()) : std::string();
  };
  for (const Json& c : out["cells"]) {
    csv +=
        strprintf("%zu,%s,%s,%s,%s,%u,%s,%s", c["index"].get<size_t>(), c["model"].get<std::string>().c_str(),
                  c["trace"].get<std::string>().c_str(), c["system"].get<std::string>().c_str(),
                  c["budget"].get<std::string>().c_str(), c["batch"].get<uint32_t>(),
                  c["io"].get<std::string>().c_str(), c["status"].get<std::string>().c_str());
    const bool ok = c["status"] == "ok";
    for (const Judged& k : kJudged) {
      const Json e = ok ? c["errors"][k.check][k.metric] : Json::object();
      csv += "," + cell(e.value("value", Json())) + "," + cell(e.value("low", Json())) + "," +
             cell(e.value("high", Json())) + "," +
             (ok ? e["verdict"].get<std::string>() : std::string("failed"));
    }
    for (const Term& t : kTerms)
      csv += "," + (ok && c["ablations"].contains(t.without) ? cell(c["ablations"][t.without]["tpot"])
                                                             : std::string());
    csv += "," + (ok ? cell(c["exec"]["tpot_median_s"]) : "") + "," +
           (ok ? cell(c["exec"]["tpot_spread"]) : "") + "," +
           (ok ? cell(c["calibration"]["in_sample_tpot_error"]) : "") + "," +
           std::to_string(c["calibrated_at"]["batch"].get<uint32_t>()) + "," +
           c["calibrated_at"]["budget"].get<std::string>() + "\n";
  }
  return csv;
}

// The outputs may replace none of the spec's inputs (the command line's guard sees the spec itself only).
void guard_outputs(const MatrixArgs& ma, const matrix::Spec& spec) {
  std::vector<NamedPath> inputs = matrix::files_named(spec);
  inputs.push_back({ma.spec, "--matrix"});
  std::vector<NamedPath> outputs = {{ma.out, "-o"}};
  if (!ma.csv.empty()) outputs.push_back({ma.csv, "--csv"});
  refuse_outputs_over_inputs(outputs, inputs);
}

}  // namespace

MatrixOutput validate_matrix(const MatrixArgs& ma) {
  const matrix::Spec spec = matrix::load_spec(ma.spec);
  const std::vector<matrix::Cell> cells = matrix::cells_of(spec);
  guard_outputs(ma, spec);
  if (!ma.csv.empty()) check_output_writable(ma.csv);
  // Every cell's options are parsed before any cell runs: a typo in the spec stops the matrix at once.
  std::vector<std::shared_ptr<ValidateArgs>> args;
  for (const matrix::Cell& c : cells) {
    try {
      args.push_back(ma.parse(c.args));
    } catch (const UsageError& e) {
      throw UsageError(ma.spec + ": cell " + std::to_string(c.index) + " (" + c.label() + "): " + e.what());
    }
  }
  Json out;
  out["header"] = run_header("validate --matrix", {{"spec", ma.spec}, {"repeat", spec.repeat}});
  out["spec"] = ma.spec;
  out["targets"] = spec.targets;
  out["repeat"] = spec.repeat;
  out["cells"] = Json::array();
  Progress bar("matrix", cells.size(), "cells");
  MatrixOutput result;
  for (size_t i = 0; i < cells.size(); ++i) {
    const matrix::Cell& c = cells[i];
    ValidateArgs& va = *args[i];
    va.run->trace = c.validate;
    va.run->json = true;
    va.calibrate_on = c.calibrate;
    va.repeat = spec.repeat;
    va.targets = spec.targets;
    va.term_ablations = true;
    Json j = cell_json(c);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> raised;
    {
      ThreadWarningScope scope;  // each cell's warnings in its own entry, then raised again naming the cell
      try {
        fill_cell(j, validate(va).json);
      } catch (const Error& e) {
        j["status"] = "failed";
        j["message"] = e.what();
        ++result.failed;
      }
      for (const std::string& w : scope.items())  // calibration and validation may raise one warning each
        if (std::find(raised.begin(), raised.end(), w) == raised.end()) raised.push_back(w);
    }
    j["warnings"] = raised;
    for (const std::string& w : raised)
      warn("cell " + std::to_string(c.index) + " (" + c.label() + "): " + w);
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out["cells"].push_back(std::move(j));
    bar.add(1);
  }
  bar.finish();
  out["summary"] = matrix_validation_detail::summary_json(out["cells"]);
  out["terms"] = terms_json(out["cells"]);
  out["warnings"] = warnings_json();
  if (!ma.csv.empty()) result.csv = csv_text(out);
  if (!ma.json) result.text = table_text(out);
  result.json = std::move(out);
  return result;
}

}  // namespace moesim::harness
