#include "harness/calibrate/calibrate_fit.h"

#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>
#include <utility>

#include "harness/arguments.h"
#include "harness/latency_summary.h"

namespace moesim::harness {

CalibrationStamp calibration_stamp() {
  CalibrationStamp st;
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  st.date = date;
  char host[256] = {};
  st.host = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  st.by = "moesim calibrate on " + st.host + ", " + st.date + ": ";
  return st;
}

void set_residuals(Fit& f, const std::vector<double>& fitted, const std::vector<double>& y) {
  double rel = 0, abs = 0, sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double d = fitted[i] - y[i];
    abs += d * d;
    sum += y[i];
    if (y[i] > 0) {
      rel += (d / y[i]) * (d / y[i]);
      ++n;
    }
  }
  f.rel_rms = n ? std::sqrt(rel / static_cast<double>(n)) : 0;
  const double mean = y.empty() ? 0 : sum / static_cast<double>(y.size());
  f.cv_rms = mean > 0 ? std::sqrt(abs / static_cast<double>(y.size())) / mean : 0;
}

Fit fit_line(const std::vector<double>& x, const std::vector<double>& y, bool through_origin, bool relative) {
  Fit f;
  f.points = x.size();
  if (x.size() < 2) return f;
  const int cols = through_origin ? 1 : 2;
  Eigen::MatrixXd A(static_cast<Eigen::Index>(x.size()), cols);
  Eigen::VectorXd b(static_cast<Eigen::Index>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double w = relative && y[i] > 0 ? 1.0 / y[i] : 1.0;
    const auto r = static_cast<Eigen::Index>(i);
    if (through_origin) {
      A(r, 0) = x[i] * w;
    } else {
      A(r, 0) = w;
      A(r, 1) = x[i] * w;
    }
    b(r) = y[i] * w;
  }
  const Eigen::VectorXd c = A.colPivHouseholderQr().solve(b);
  if (through_origin) {
    f.slope = c(0);
  } else {
    f.intercept = c(0);
    f.slope = c(1);
  }
  std::vector<double> fitted(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    fitted[i] = f.intercept + f.slope * x[i];
    f.x_mean += x[i];
  }
  f.x_mean /= static_cast<double>(x.size());
  set_residuals(f, fitted, y);
  return f;
}

Fit fit_line_or_origin(const std::vector<double>& x, const std::vector<double>& y, bool through_origin,
                       bool relative) {
  Fit f = fit_line(x, y, through_origin, relative);
  if (!through_origin && (f.intercept < 0 || f.slope <= 0)) f = fit_line(x, y, true, relative);
  return f;
}

Fit fit_offset(const std::vector<double>& modelled, const std::vector<double>& measured) {
  Fit f;
  if (modelled.size() != measured.size() || measured.size() < 2) return f;
  f.points = measured.size();
  for (size_t i = 0; i < f.points; ++i) f.intercept += measured[i] - modelled[i];
  f.intercept = std::max(0.0, f.intercept / static_cast<double>(f.points));
  std::vector<double> fitted(f.points);
  for (size_t i = 0; i < f.points; ++i) fitted[i] = f.intercept + modelled[i];
  set_residuals(f, fitted, measured);
  return f;
}

Json fit_json(const Fit& f, const char* model) {
  return {{"model", model},    {"points", f.points},        {"intercept_s", f.intercept},
          {"slope", f.slope},  {"relative_rms", f.rel_rms}, {"rms_over_mean", f.cv_rms},
          {"mean_x", f.x_mean}};
}

namespace {

// The number of p[section][key]["value"], or NaN where there is none.
double value_at(const Json& p, const char* section, const std::string& key) {
  if (!p.contains(section) || !p[section].contains(key)) return std::nan("");
  const Json& v = p[section][key];
  return v.is_object() && v.contains("value") && v["value"].is_number() ? v["value"].get<double>()
                                                                        : std::nan("");
}

// Per line of `cal`.fits with points of a size (mean_x > 0): max / min - 1 of the runs' lines at that size.
Json runs_spread(const Json& cal, const Json& runs) {
  Json out = Json::object();
  if (!cal.contains("fits")) return out;
  for (const auto& [name, pooled] : cal["fits"].items()) {
    const double x = pooled.value("mean_x", 0.0);
    if (!(x > 0)) continue;
    double lo = INFINITY, hi = 0;
    for (const Json& r : runs) {
      if (!r.is_object() || !r.contains(name) || r[name].value("points", 0) < 2) {
        lo = 0;
        break;
      }
      const double y = r[name].value("intercept_s", 0.0) + r[name].value("slope", 0.0) * x;
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
    if (lo > 0 && std::isfinite(lo)) out[name] = hi / lo - 1;
  }
  return out;
}

}  // namespace

void take_median_of_runs(Json& prof, const std::vector<Json>& own) {
  for (const char* section : {"ssd", "cpu", "gpu", "link", "runtime"}) {
    if (!prof.contains(section)) continue;
    for (auto& [key, v] : prof[section].items()) {
      if (!v.is_object() || !v.contains("value") || !v["value"].is_number()) continue;
      std::vector<double> xs;
      for (const Json& r : own)
        if (const double x = value_at(r, section, key); !std::isnan(x)) xs.push_back(x);
      if (xs.size() != own.size() || std::all_of(xs.begin(), xs.end(), [&](double x) { return x == xs[0]; }))
        continue;
      const double all = v["value"].get<double>();
      v["value"] = quantile(xs, 0.5);
      if (v.contains("source"))
        v["source"] =
            v["source"].get<std::string>() +
            strprintf("; the median of the %zu runs' own fits (the fit over all runs: %.6g)", xs.size(), all);
    }
  }
  if (!prof.contains("calibration")) return;
  prof["calibration"]["values_from"] = strprintf("the median of the %zu runs' own fits", own.size());
  Json runs = Json::array();
  for (const Json& r : own)
    runs.push_back(r.contains("calibration") && r["calibration"].contains("fits") ? r["calibration"]["fits"]
                                                                                  : Json(nullptr));
  prof["calibration"]["runs_spread"] = runs_spread(prof["calibration"], runs);
  prof["calibration"]["runs_fits"] = std::move(runs);
}

bool fused_read_on_read_line(uint64_t read_bytes, double read_cpu, bool direct_io) {
  return direct_io && read_bytes > 0 && read_cpu > 0;
}

std::vector<double> fused_read_tails(const std::vector<double>& plain_bytes,
                                     const std::vector<double>& plain_s,
                                     const std::vector<double>& fused_bytes,
                                     const std::vector<double>& fused_cpu) {
  if (plain_bytes.size() < 2) return {};
  const Fit plain = fit_line(plain_bytes, plain_s, true);
  std::vector<double> tails(fused_bytes.size());
  for (size_t i = 0; i < fused_bytes.size(); ++i)
    tails[i] = std::max(0.0, fused_cpu[i] - plain.slope * fused_bytes[i]);
  return tails;
}

}  // namespace moesim::harness
