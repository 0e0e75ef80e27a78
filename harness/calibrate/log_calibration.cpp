// `moesim calibrate --from-log` (harness/calibrate/log_calibration.h lists the fits and why they are so).
#include "harness/calibrate/log_calibration.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/calibrate/calibrate_fit.h"
#include "harness/latency_summary.h"
#include "harness/sim_runner.h"

namespace moesim::harness {
namespace {

double rel_rms(const std::vector<double>& fitted, const std::vector<double>& y) {
  double se = 0, sy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    se += (fitted[i] - y[i]) * (fitted[i] - y[i]);
    sy += y[i];
  }
  return sy > 0 ? std::sqrt(se / static_cast<double>(y.size())) / (sy / static_cast<double>(y.size())) : 0;
}

// y = k * x through the origin, mean-preserving (k = sum y / sum x); 0 when sum x is 0.
double ratio_fit(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
  }
  return sx > 0 ? sy / sx : 0;
}

// The storage fit: io = a * n + b * bytes (seconds), or b alone when a comes out negative.
void fit_storage(const std::vector<double>& n, const std::vector<double>& bytes,
                 const std::vector<double>& io, uint32_t depth, LogFit& f) {
  double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
  for (size_t i = 0; i < io.size(); ++i) {
    s11 += n[i] * n[i];
    s12 += n[i] * bytes[i];
    s22 += bytes[i] * bytes[i];
    s1y += n[i] * io[i];
    s2y += bytes[i] * io[i];
  }
  const double det = s11 * s22 - s12 * s12;
  double a = det > 0 ? (s22 * s1y - s12 * s2y) / det : -1;
  double b = det > 0 ? (s11 * s2y - s12 * s1y) / det : 0;
  if (!(a >= 0) || !(b > 0)) {
    f.latency_fitted = false;
    a = 0;
    b = ratio_fit(bytes, io);
  }
  f.read_latency = a;
  f.read_bandwidth = static_cast<double>(depth) / b;
  std::vector<double> fitted(io.size());
  for (size_t i = 0; i < io.size(); ++i) fitted[i] = a * n[i] + b * bytes[i];
  f.io_rel_rms = rel_rms(fitted, io);
}

namespace log_calibration_detail {
Json sourced(double v, const std::string& source) {
  return {{"value", v}, {"source", source}};
}
}  // namespace log_calibration_detail

double simulated_ttft(const LogRun& r, const HardwareProfile& hw) {
  const PreparedRun& p = r.prepared;
  const serving::RunResult res =
      run_simulated(p.cfg, p.stream, p.trace.info(), p.costs, hw, sim_options(r.args, hw, r.args.workers));
  return latency_summary_of(res.result).ttft;
}

double ttft_with(const LogRun& r, const Json& base, const LogFit& f, uint32_t depth,
                 const std::string& prefix) {
  return simulated_ttft(r, hardware_from_json(profile_with_fit(base, f, depth, prefix), r.log.origin));
}

// The factor on the prompt pass's compute at which the simulated TTFT is the log's prefill time (bisection in
// log space over [1/10, 10]: the TTFT grows with it); 1 when the prediction is within 1% already.
double fit_prefill_slowdown(const LogRun& r, const Json& base, LogFit f, uint32_t depth,
                            const std::string& prefix) {
  const double target = r.log.prefill_s;
  f.prefill_slowdown = 1;
  if (std::fabs(ttft_with(r, base, f, depth, prefix) / target - 1) <= 0.01) return 1;
  double lo = std::log(0.1), hi = std::log(10.0);
  for (int i = 0; i < 40 && hi - lo > 1e-5; ++i) {
    const double mid = 0.5 * (lo + hi);
    f.prefill_slowdown = std::exp(mid);
    (ttft_with(r, base, f, depth, prefix) < target ? lo : hi) = mid;
  }
  const double s = std::exp(0.5 * (lo + hi));
  if (s < 0.11 || s > 9.0)
    warn(r.log.origin + ": the prompt pass's compute would need a factor of " + strprintf("%.2f", s) +
         " to take the log's prefill time: the model leaves most of the prompt pass unexplained");
  return s;
}

// Bytes per FLOP of one token's ops at their largest and smallest (dense ops and routed experts of every
// layer).
std::pair<double, double> bytes_per_flop_range(const ModelCosts& c) {
  double lo = INFINITY, hi = 0;
  for (size_t l = 0; l < c.expert_bytes.size(); ++l) {
    for (const auto& [b, f] :
         {std::pair<double, double>(static_cast<double>(c.dense_bytes[l]), c.dense_flops_per_token),
          std::pair<double, double>(static_cast<double>(c.expert_bytes[l]), c.expert_flops_per_token)})
      if (b > 0 && f > 0) {
        lo = std::min(lo, b / f);
        hi = std::max(hi, b / f);
      }
  }
  if (!(hi > 0))
    throw Error(
        "the model's sizes give no FLOPs per weight byte: give --model (a preset with element counts)");
  return {lo, hi};
}

}  // namespace

LogFit fit_decode_tokens(const traces::EngineLog& log, const std::vector<ReplayStep>& steps,
                         uint32_t io_depth, const ModelCosts& costs, bool flop_bound) {
  std::vector<double> n, bytes, weights, flops, io, compute, mgmt;
  for (size_t i = 0; i < steps.size(); ++i) {
    n.push_back(static_cast<double>(steps[i].reads));
    bytes.push_back(steps[i].read_bytes);
    weights.push_back(steps[i].weight_bytes);
    flops.push_back(steps[i].flops);
    io.push_back(log.tokens[i].io_ms / 1e3);
    compute.push_back(log.tokens[i].compute_ms / 1e3);
    mgmt.push_back(log.tokens[i].mgmt_ms / 1e3);
  }
  if (!(ratio_fit(bytes, io) > 0))
    throw Error(log.origin +
                ": the decode tokens read nothing (io_ms or the replay's reads are all 0): the storage "
                "cannot be fitted; calibrate on a run whose cache misses");
  if (!(ratio_fit(weights, compute) > 0))
    throw Error(log.origin + ": compute_ms is 0 on every token: the compute cannot be fitted");
  LogFit f;
  fit_storage(n, bytes, io, io_depth, f);
  // One side binds at one token; the other is set where it just stops binding for every op.
  const auto [bpf_lo, bpf_hi] = bytes_per_flop_range(costs);
  f.flop_bound = flop_bound;
  const std::vector<double>& x = flop_bound ? flops : weights;
  const double per_unit = ratio_fit(x, compute);
  if (flop_bound) {
    f.flops = 1 / per_unit;
    f.weight_rate = f.flops * bpf_hi;
  } else {
    f.weight_rate = 1 / per_unit;
    f.flops = f.weight_rate / bpf_lo;
  }
  const double per_copied = ratio_fit(bytes, mgmt);
  f.copy_rate = per_copied > 0 ? 1 / per_copied : 0;
  std::vector<double> fc(steps.size()), fm(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    fc[i] = x[i] * per_unit;
    fm[i] = bytes[i] * per_copied;
  }
  f.compute_rel_rms = rel_rms(fc, compute);
  f.copy_rel_rms = rel_rms(fm, mgmt);
  return f;
}

Json profile_with_fit(const Json& base, const LogFit& f, uint32_t io_depth, const std::string& prefix) {
  Json p = base;
  const std::string depth = std::to_string(io_depth);
  p["ssd"]["read_bandwidth"] = log_calibration_detail::sourced(
      f.read_bandwidth, prefix +
                            "io_ms per token against its reads' bytes (least squares with read_latency; " +
                            depth + " I/O threads, each at bandwidth / " + depth +
                            strprintf("; relative RMS residual %.2f)", f.io_rel_rms));
  p["ssd"]["read_latency"] = log_calibration_detail::sourced(
      f.read_latency, prefix + (f.latency_fitted ? "io_ms per token against its reads (least squares with "
                                                   "read_bandwidth)"
                                                 : "fitted negative against the reads' count: 0, the "
                                                   "bandwidth through the origin"));
  const std::string fit = strprintf(
      "compute_ms per token against its %s (dense and experts, through the origin; "
      "relative RMS residual %.2f; the prompt pass chose this side: simulated TTFT "
      "%.3f s FLOP-bound, %.3f s memory-bound)",
      f.flop_bound ? "FLOPs" : "weight bytes", f.compute_rel_rms, f.ttft_flop_bound, f.ttft_memory_bound);
  const std::string bound = f.flop_bound
                                ? "a lower bound: where the weights stop binding on every op of one token "
                                  "(the compute is FLOP-bound)"
                                : "a lower bound: where the FLOPs stop binding on every op of one token "
                                  "(the compute is memory-bound)";
  p["cpu"]["cores"] = log_calibration_detail::sourced(
      1, prefix +
             "the engine's compute threads split each matmul between them: one worker "
             "at their joint rate");
  p["cpu"]["expert_bandwidth"] =
      log_calibration_detail::sourced(f.weight_rate, prefix + (f.flop_bound ? bound : fit));
  p["cpu"]["flops_per_core"] =
      log_calibration_detail::sourced(f.flops, prefix + (f.flop_bound ? fit : bound));
  p["gpu"]["memory_bandwidth"] = log_calibration_detail::sourced(
      f.weight_rate, prefix +
                         "the engine computes dense layers on its CPU threads too (moesim's dense ops "
                         "run on this lane): cpu.expert_bandwidth");
  p["gpu"]["bf16_flops"] =
      log_calibration_detail::sourced(f.flops, prefix + "the dense ops' FLOP/s: cpu.flops_per_core");
  p["gpu"]["kernel_overhead"] =
      log_calibration_detail::sourced(0, prefix + "no fixed cost per dense op: the compute fit has none");
  if (f.prefill_slowdown != 1)
    p["cpu"]["prefill_compute_slowdown"] = log_calibration_detail::sourced(
        f.prefill_slowdown, prefix + strprintf("the prompt pass's compute, bisected until the simulated TTFT "
                                               "is the log's prefill_s (%.3f s predicted without it)",
                                               f.flop_bound ? f.ttft_flop_bound : f.ttft_memory_bound));
  else
    p["cpu"].erase("prefill_compute_slowdown");
  if (f.copy_rate > 0)
    p["cpu"]["load_copy_bandwidth"] = log_calibration_detail::sourced(
        f.copy_rate, prefix + "mgmt_ms per token against the bytes it read (through the origin" +
                         strprintf("; relative RMS residual %.2f)", f.copy_rel_rms));
  else
    p["cpu"].erase("load_copy_bandwidth");
  return p;
}

Json calibrate_from_log(LogCalibrateArgs& ca) {
  RunArgs& a = *ca.run;
  require_trace_input(a.trace);
  if (a.compute_on != "cpu")
    throw UsageError(
        "calibrate --from-log fits an engine that computes experts on its CPU: give --compute-on cpu");
  check_output_writable(a.out);
  LogRun r = load_log_run(a, ca.log, ca.log_fields);
  const HardwareProfile& base = r.prepared.hw;
  const std::string prefix = "moesim calibrate --from-log " +
                             std::filesystem::path(ca.log).filename().string() + " --trace " +
                             std::filesystem::path(a.trace).filename().string() + ": ";
  const std::vector<ReplayStep> steps = replay_steps(r, base);
  Json prof = base.raw;
  prof.erase("measured_on");
  prof["name"] = ca.name.empty() ? "from-log-" + std::filesystem::path(ca.log).stem().string() : ca.name;
  prof["display_name"] = prof.value("display_name", base.name) + "; calibrated from the per-token log " +
                         std::filesystem::path(ca.log).filename().string();
  const ModelCosts& costs = r.prepared.costs.costs;
  LogFit mem = fit_decode_tokens(r.log, steps, a.io_depth, costs, false);
  LogFit flop = fit_decode_tokens(r.log, steps, a.io_depth, costs, true);
  const double t_mem = ttft_with(r, prof, mem, a.io_depth, prefix),
               t_flop = ttft_with(r, prof, flop, a.io_depth, prefix);
  LogFit f = std::fabs(std::log(t_flop / r.log.prefill_s)) < std::fabs(std::log(t_mem / r.log.prefill_s))
                 ? flop
                 : mem;
  f.ttft_memory_bound = t_mem;
  f.ttft_flop_bound = t_flop;
  f.prefill_slowdown = fit_prefill_slowdown(r, prof, f, a.io_depth, prefix);
  prof = profile_with_fit(prof, f, a.io_depth, prefix);
  const HardwareProfile fitted = hardware_from_json(prof, a.out, /*require_provenance=*/true);
  const LogErrors e = log_errors(r, fitted);
  const CalibrationStamp st = calibration_stamp();
  prof["calibration"] = {{"date", st.date},
                         {"from_log", ca.log},
                         {"trace", a.trace},
                         {"base", base.name},
                         {"io_depth", a.io_depth},
                         {"fits",
                          {{"read_latency_s", f.read_latency},
                           {"read_bandwidth", f.read_bandwidth},
                           {"latency_fitted", f.latency_fitted},
                           {"io_rel_rms", f.io_rel_rms},
                           {"weight_rate", f.weight_rate},
                           {"flops", f.flops},
                           {"compute_bound", f.flop_bound ? "flops" : "weights"},
                           {"compute_rel_rms", f.compute_rel_rms},
                           {"copy_rate", f.copy_rate},
                           {"copy_rel_rms", f.copy_rel_rms},
                           {"ttft_predicted", {{"flop_bound", t_flop}, {"memory_bound", t_mem}}},
                           {"prefill_compute_slowdown", f.prefill_slowdown}}},
                         {"in_sample", e.json()},
                         {"build", run_header("calibrate", Json::object())}};
  std::fprintf(stderr,
               "calibrated from %s: TPOT %.1f ms (log %.1f ms, %+.1f%%), TTFT %.3f s (log %.3f s, %+.1f%%)\n",
               ca.log.c_str(), 1e3 * e.sim_tpot, 1e3 * e.log_tpot, 100 * e.tpot(), e.sim_ttft, e.log_ttft,
               100 * e.ttft());
  if (std::fabs(e.tpot()) > 0.05)
    warn("calibrate --from-log: the fitted profile misses the log's TPOT by " +
         strprintf("%+.1f%%", 100 * e.tpot()) +
         " in sample (docs/engine-logs.md says what the model leaves out)");
  return prof;
}

}  // namespace moesim::harness
