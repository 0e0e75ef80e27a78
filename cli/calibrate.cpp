// `moesim calibrate`: fits the simulator's cost models to this machine and writes a hardware profile.
//   moesim calibrate --store S --trace T --model M [--system zipmoe] [--budget B] [--workers L] -o profile.json
//   moesim calibrate --store S --micro [--workers L] [--io uring] -o profile.json      (microbenchmarks only)
//   both: the trace run and the microbenchmarks; --fit-from trace|micro picks which fills the profile's fields
// The microbenchmarks (exec/microbench.h) are fitted here (micro_fits()); the trace run and its fits are in
// cli/calibrate_trace.cpp. It serves the calibration trace for real (`moesim exec`, the same code paths every later exec runs), records
// every op's duration, and fits by least squares (Eigen) the linear cost models of sim/cost_model.h and
// sim/resources.h:
//   ssd.read_latency, ssd.read_bandwidth        read  = latency + bytes / bandwidth (SM- and E-chunk reads of
//                                               decode steps; ssd.prefill_read_* those of prefill steps)
//   cpu.decompress_bandwidth_per_core           decompress = bytes / bandwidth (through the origin)
//   cpu.memcpy_bandwidth_per_core               recover on a CPU worker = 2 bytes / bandwidth
//                                               (both from decode steps' ops; cpu.prefill_slowdown and
//                                               cpu.prefill_recover_slowdown scale a prefill's: measured work /
//                                               those models' estimate)
//   gpu.memory_bandwidth, gpu.bf16_flops        expert and dense compute = max(bytes / bandwidth, flops / peak):
//                                               bandwidth from ops of 1 token, peak from ops of 8+ tokens;
//   gpu.fresh_expert_overhead                   experts on weights their request just read or recovered: mean
//                                               of time - flops / peak (no memory-bound term)
//   gpu.expert_gemm_overhead, dense_gemm_overhead  experts and dense ops of 2+ tokens (GEMMs where 1 token
//                                               takes GEMVs): mean of time - roofline
// Fits are ordinary least squares, through the origin except the SSD's (mean-preserving: the fitted model
// reproduces the total time of the calibration run's ops, contention included, which is what TPOT adds up).
//   link.latency                                transfer (shared memory: a hand-off only)
//   runtime.*                                   the engine's own costs: thread hand-off, the pipeline thread's
//                                               work per completed op, its wake-up (sim/sim_platform.h)
//   gpu.recover_bandwidth, gpu.recover_overhead the CUDA recovery kernel (with a GPU)
//   gpu.kernel_overhead, gpu.expert_overhead    with a GPU: the fixed cost of a dense op and of an expert's FFN
//                                               (mean of time - roofline at the base profile's rates: on a GPU the
//                                               compute of small ops is launch-bound)
//   link.bandwidth, link.latency                host-to-device copies (a discrete GPU)
// Without a GPU the "gpu" is exec's CPU thread emulating a GPU stream, and the profile says so. Each value's
// "source" names the fit, its points and its relative RMS residual; a "calibration" section keeps the
// date, host, store, trace and every fit, and how well the profile reproduces the runs it was fitted to
// (in_sample). Calibrate on one trace and validate on another (`moesim validate`).
#include <unistd.h>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/calibrate_fit.h"
#include "cli/calibrate_trace.h"
#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/exec_run.h"
#include "cli/machine.h"
#include "cli/run_setup.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/run_info.h"
#include "core/units.h"
#include "core/warnings.h"
#include "exec/microbench.h"
#include "exec/store_reader.h"
#include "kernels/codec.h"

namespace moesim::cli {
namespace {

struct CalibrateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  std::string name;
  bool micro = false;
  double micro_budget = 20;
  uint32_t micro_depth = 8;
  std::vector<std::string> micro_codecs = {"zstd:3", "lz4"};
  std::string fit_from;  // "trace" or "micro"; default: trace when a trace is given
  uint32_t repeat = 1;   // trace runs, fitted together
  bool no_pilot = false;
  uint32_t pilot_runs = TraceCalibrationOptions{}.pilot_runs;  // at most, until a fit plans what it was served with
};

// ---- the microbenchmarks (--micro): exec/microbench.h's points, fitted ---------------------------------------

Json rate_fit_json(const Fit& f, const char* model, const char* rate_key, double rate) {
  Json j = fit_json(f, model);
  j[rate_key] = rate;
  return j;
}

struct MicroFits {
  Fit ssd, ssd_depth1;
  Fit read_cpu;  // O_DIRECT: the I/O threads' CPU time per request; ssd then fits each request's time less it
  uint32_t queue_depth = 1;
  std::string dec_codec;  // the codec whose fit at L threads fills cpu.decompress_bandwidth_per_core
  Fit dec, rec, cbytes, cflops, gemm;
  Json json;  // the profile's "micro" section
};

MicroFits micro_fits(const exec::MicroResults& m, const exec::MicroOptions& mo) {
  MicroFits f;
  Json& j = f.json;
  j["io"] = m.io;
  if (!m.io_fallback.empty()) j["io_fallback"] = m.io_fallback;
  j["direct_io"] = m.direct_io;
  j["threads"] = mo.threads;
  j["budget_s"] = mo.budget_s;
  j["wall_s"] = m.wall_s;
  j["seed"] = mo.seed;
  j["store_codec"] = m.store_codec;
  j["median_tensor_bytes"] = m.median_tensor_bytes;
  j["median_echunk_bytes"] = m.median_shard_bytes;
  j["expert_shape"] = {{"hidden", m.hidden}, {"intermediate", m.inter}};

  // SSD: per request, latency + depth x bytes / bandwidth: the simulator's Ssd model (sim/resources.h), where
  // the requests in service share the bandwidth. The queue depth is the smallest depth that reaches 90% of
  // the best aggregate bandwidth gain over depth 1 (mean over sizes); deeper points are not fitted.
  std::map<uint32_t, std::vector<double>> gains;
  std::map<uint64_t, double> bw1;
  for (const auto& r : m.reads)
    if (r.depth == 1) bw1[r.bytes] = r.bandwidth;
  for (const auto& r : m.reads)
    if (bw1[r.bytes] > 0) gains[r.depth].push_back(r.bandwidth / bw1[r.bytes]);
  double best = 0;
  Json gain_json = Json::array();
  std::vector<std::pair<uint32_t, double>> mean_gain;
  for (const auto& [d, g] : gains) {
    double s = 0;
    for (double x : g) s += x;
    mean_gain.emplace_back(d, s / static_cast<double>(g.size()));
    best = std::max(best, mean_gain.back().second);
    gain_json.push_back({{"depth", d}, {"bandwidth_gain", mean_gain.back().second}});
  }
  for (const auto& [d, g] : mean_gain)
    if (g >= 0.9 * best) {
      f.queue_depth = d;
      break;
    }
  // With O_DIRECT a request is, as in the simulator, the device's time and then the I/O thread's CPU work (the
  // kernel's direct-I/O path and the chunk's hash; ssd.read_cpu_*, which shares the cores with the workers):
  // that CPU time is fitted on its own, and the device's line to each request's time less it. Buffered reads
  // are fitted whole, as the trace calibration does.
  bool split = m.direct_io;
  for (const auto& r : m.reads)
    if (r.depth <= f.queue_depth && !(r.cpu_s >= 0 && r.cpu_s < r.latency_s)) split = false;
  std::vector<double> x, y, x1, y1, cx, cy;
  Json pts = Json::array();
  for (const auto& r : m.reads) {
    pts.push_back({{"bytes", r.bytes}, {"depth", r.depth}, {"requests", r.requests}, {"latency_s", r.latency_s},
                   {"latency_p50_s", r.latency_p50_s}, {"bandwidth", r.bandwidth},
                   {"cpu_s", r.cpu_s >= 0 ? Json(r.cpu_s) : Json(nullptr)}});
    const double device = split ? r.latency_s - r.cpu_s : r.latency_s;
    if (r.depth <= f.queue_depth) {
      x.push_back(static_cast<double>(r.depth) * static_cast<double>(r.bytes));
      y.push_back(device);
      if (split) {
        cx.push_back(static_cast<double>(r.bytes));
        cy.push_back(r.cpu_s);
      }
    }
    if (r.depth == 1) {
      x1.push_back(static_cast<double>(r.bytes));
      y1.push_back(device);
    }
  }
  if (split) f.read_cpu = fit_line_or_origin(cx, cy, false, true);
  f.ssd = fit_line(x, y, false, true);
  f.ssd_depth1 = fit_line(x1, y1, false, true);
  j["ssd"] = {{"points", pts},
              {"depth_gain", gain_json},
              {"queue_depth", f.queue_depth},
              {"fit", rate_fit_json(f.ssd, "latency + depth x bytes / bandwidth (depths up to queue_depth)",
                                    "bandwidth", f.ssd.slope > 0 ? 1.0 / f.ssd.slope : 0.0)},
              {"fit_depth1", rate_fit_json(f.ssd_depth1, "latency + bytes / bandwidth (depth 1)", "bandwidth",
                                           f.ssd_depth1.slope > 0 ? 1.0 / f.ssd_depth1.slope : 0.0)}};
  if (split) {
    j["ssd"]["device_time"] = "each request's time less the I/O thread's CPU time (cpu_s)";
    j["ssd"]["fit_cpu"] = rate_fit_json(f.read_cpu, "the I/O threads' CPU time per request: overhead + bytes / bandwidth "
                                        "(depths up to queue_depth)", "bandwidth",
                                        f.read_cpu.slope > 0 ? 1.0 / f.read_cpu.slope : 0.0);
  }

  // Decompression and recovery: time = bytes / bandwidth per core, per (codec,) thread count. A line through
  // the origin cannot follow the caches (small outputs stay in them, large ones go to memory), so the field's
  // fit takes the sizes within 4x of the store's own ops (`near`: its median E-chunk or tensor); the fits over
  // every size are kept beside it.
  auto per_threads = [&](const std::vector<exec::MicroOpPoint>& ops, const std::string& codec, uint32_t t,
                         double scale, uint64_t near = 0) {
    std::vector<double> xs, ys;
    for (const auto& o : ops)
      if (o.codec == codec && o.threads == t && (near == 0 || (o.bytes * 4 >= near && o.bytes <= near * 4))) {
        xs.push_back(scale * static_cast<double>(o.bytes));
        ys.push_back(o.time_s);
      }
    Fit fit = fit_line(xs, ys, true, true);
    return fit.points >= 2 || near == 0 ? fit : Fit{};
  };
  auto op_points = [](const std::vector<exec::MicroOpPoint>& ops, bool codec) {
    Json a = Json::array();
    for (const auto& o : ops) {
      Json p = {{"bytes", o.bytes}, {"threads", o.threads}, {"ops", o.ops}, {"time_s", o.time_s},
                {"time_p50_s", o.time_p50_s}};
      if (codec) {
        p["codec"] = o.codec;
        p["stored_bytes"] = o.stored;
      }
      a.push_back(p);
    }
    return a;
  };
  std::vector<std::string> codecs;
  for (const auto& o : m.decompress)
    if (std::find(codecs.begin(), codecs.end(), o.codec) == codecs.end()) codecs.push_back(o.codec);
  Json dfits = Json::array();
  for (const std::string& c : codecs)
    for (uint32_t t = 1; t <= mo.threads; ++t) {
      const Fit fit = per_threads(m.decompress, c, t, 1.0);
      Json fj = rate_fit_json(fit, "bytes / bandwidth per core (decompressed bytes)", "bandwidth_per_core",
                              fit.slope > 0 ? 1.0 / fit.slope : 0.0);
      fj["codec"] = c;
      fj["threads"] = t;
      dfits.push_back(fj);
      if (t == mo.threads && f.dec_codec.empty()) {  // the first codec is the store's own when it has one
        f.dec_codec = c;
        f.dec = per_threads(m.decompress, c, t, 1.0, m.median_shard_bytes);
        if (f.dec.points < 2) f.dec = fit;
      }
    }
  // The section of an op kind: its raw points, its fits per thread count, and the fit the profile's field takes.
  auto section = [](Json points, Json fits, const Fit& field, const char* model, uint64_t near) {
    Json ff = rate_fit_json(field, model, "bandwidth_per_core", field.slope > 0 ? 1.0 / field.slope : 0.0);
    ff["near_bytes"] = near;
    return Json{{"points", std::move(points)}, {"fits", std::move(fits)}, {"field_fit", ff}};
  };
  j["decompress"] = section(op_points(m.decompress, true), dfits, f.dec,
                            "bytes / bandwidth per core: the store's codec at L threads, sizes within 4x of its median "
                            "E-chunk",
                            m.median_shard_bytes);
  j["decompress"]["field_fit"]["codec"] = f.dec_codec;
  Json rfits = Json::array();
  for (uint32_t t = 1; t <= mo.threads; ++t) {
    // x = 2 x BF16 bytes: the cost model's recovery is 2 bytes / bandwidth (reads SM + exponents, writes BF16).
    const Fit fit = per_threads(m.recover, "", t, 2.0);
    Json fj = rate_fit_json(fit, "2 x BF16 bytes / bandwidth per core", "bandwidth_per_core",
                            fit.slope > 0 ? 1.0 / fit.slope : 0.0);
    fj["threads"] = t;
    rfits.push_back(fj);
    if (t == mo.threads) {
      f.rec = per_threads(m.recover, "", t, 2.0, m.median_tensor_bytes);
      if (f.rec.points < 2) f.rec = fit;
    }
  }
  j["recover"] = section(op_points(m.recover, false), rfits, f.rec,
                         "2 x BF16 bytes / bandwidth per core at L threads, sizes within 4x of the store's median tensor",
                         m.median_tensor_bytes);

  // Compute: the roofline's two sides, as the trace run fits them (1 token: weight bytes; experts of 8+:
  // FLOPs), and the fixed cost of an expert's GEMMs (2+ tokens).
  std::vector<double> bx, by, fx, fy;
  Json cpts = Json::array();
  for (const auto& c : m.compute) {
    cpts.push_back({{"kind", c.kind}, {"tokens", c.tokens}, {"bytes", c.bytes}, {"flops", c.flops}, {"ops", c.ops},
                    {"time_s", c.time_s}, {"time_p50_s", c.time_p50_s}});
    if (c.tokens == 1) {
      bx.push_back(static_cast<double>(c.bytes));
      by.push_back(c.time_s);
    }
    if (c.kind == "expert" && c.tokens >= 8) {
      fx.push_back(c.flops);
      fy.push_back(c.time_s);
    }
  }
  f.cbytes = fit_line_or_origin(bx, by, false, true);
  f.cflops = fit_line(fx, fy, true, true);
  if (f.cbytes.slope > 0 && f.cflops.slope > 0) {
    std::vector<double> roof, secs;  // the experts of 2+ tokens
    for (const auto& c : m.compute)
      if (c.kind == "expert" && c.tokens >= 2) {
        roof.push_back(std::max(static_cast<double>(c.bytes) * f.cbytes.slope, c.flops * f.cflops.slope));
        secs.push_back(c.time_s);
      }
    f.gemm = fit_offset(roof, secs);
  }
  j["compute"] = {{"points", cpts},
                  {"fit_bytes", rate_fit_json(f.cbytes, "overhead + weight bytes / bandwidth (1 token)", "bandwidth",
                                              f.cbytes.slope > 0 ? 1.0 / f.cbytes.slope : 0.0)},
                  {"fit_flops", rate_fit_json(f.cflops, "flops / peak (expert FFN, 8+ tokens)", "flops",
                                              f.cflops.slope > 0 ? 1.0 / f.cflops.slope : 0.0)},
                  {"fit_expert_gemm", {{"model", "mean of time - roofline (expert FFN, 2+ tokens: GEMMs)"},
                                       {"points", f.gemm.points},
                                       {"overhead_s", f.gemm.intercept},
                                       {"relative_rms", f.gemm.rel_rms}}}};

  Json inter = Json::array();
  for (const auto& i : m.interference)
    inter.push_back({{"component", i.component}, {"threads", i.threads}, {"op_bytes", i.op_bytes},
                     {"alone_ops", i.alone_ops}, {"alone_s", i.alone_s}, {"together_ops", i.together_ops},
                     {"together_s", i.together_s}, {"slowdown", i.alone_s > 0 ? i.together_s / i.alone_s : 0.0}});
  j["interference"] = inter;
  return f;
}

// The profile's fields the microbenchmarks measure (where a field exists for them). `gpu`: exec runs on a
// CUDA device, whose compute the CPU microbenchmarks do not measure (the gpu section stays as it is).
void apply_micro(Json& prof, const MicroFits& f, const exec::MicroOptions& mo, bool gpu, const Stamp& st) {
  auto val = [&](double v, const std::string& what, const Fit& fit) {
    return Json{{"value", v},
                {"source", st.by + "microbenchmark: " + what +
                               strprintf(" (%zu points, relative RMS residual %.1f%%)", fit.points, 100 * fit.rel_rms)}};
  };
  if (f.ssd.points < 2 || !(f.ssd.slope > 0))
    throw Error("calibrate --micro: the read benchmark's fit came out non-positive (times do not grow with "
                "size); the machine was too busy or the budget too small: raise --micro-budget");
  prof["ssd"]["read_bandwidth"] =
      val(1.0 / f.ssd.slope, "O_DIRECT reads of the store against size and queue depth: latency + depth x bytes / bandwidth", f.ssd);
  prof["ssd"]["read_latency"] = val(std::max(f.ssd.intercept, 0.0), "intercept of the same fit", f.ssd);
  // The I/O thread's CPU work per read, for a decode step's reads and a prefill's alike (the microbenchmark
  // has no phases); without the split (buffered reads) the fields the profile had are dropped, since the
  // device's fit above then holds each read whole.
  for (const char* k : {"read_cpu_overhead", "read_cpu_bandwidth", "prefill_read_cpu_overhead", "prefill_read_cpu_bandwidth"})
    prof["ssd"].erase(k);
  if (f.read_cpu.points >= 2 && (f.read_cpu.intercept > 0 || f.read_cpu.slope > 0)) {
    prof["ssd"]["read_bandwidth"]["source"] =
        prof["ssd"]["read_bandwidth"]["source"].get<std::string>() + "; the device's part: each request's time less its CPU time";
    prof["ssd"]["read_cpu_overhead"] =
        val(std::max(f.read_cpu.intercept, 0.0), "the I/O thread's CPU time per O_DIRECT request and its hash, after the "
            "device's time and sharing the cores with the CPU-bound threads: fixed part of overhead + bytes / bandwidth", f.read_cpu);
    if (f.read_cpu.slope > 0)
      prof["ssd"]["read_cpu_bandwidth"] = val(1.0 / f.read_cpu.slope, "per-byte part of the same fit", f.read_cpu);
  }
  prof["ssd"]["queue_depth"] = {{"value", f.queue_depth},
                                {"source", st.by + "microbenchmark: the smallest queue depth reaching 90% of the best "
                                                   "aggregate bandwidth (" + std::string(f.json["io"]) + ")"}};
  const std::string at = " on " + std::to_string(mo.threads) + " threads at once";
  if (f.dec.points >= 2 && f.dec.slope > 0)
    prof["cpu"]["decompress_bandwidth_per_core"] =
        val(1.0 / f.dec.slope, f.dec_codec + " decompression of E-chunk exponents" + at + ", sizes near the store's: bytes / bandwidth", f.dec);
  if (f.rec.points >= 2 && f.rec.slope > 0)
    prof["cpu"]["memcpy_bandwidth_per_core"] =
        val(1.0 / f.rec.slope, "CPU recovery (merge)" + at + ", sizes near the store's tensors: 2 bytes / bandwidth", f.rec);
  if (f.cflops.points >= 2 && f.cflops.slope > 0)
    prof["cpu"]["flops_per_core"] = val(1.0 / f.cflops.slope, "the expert FFN of 8+ tokens on one thread", f.cflops);
  if (!gpu && f.cbytes.slope > 0 && f.cflops.slope > 0) {
    prof["gpu"]["bf16_flops"] = val(1.0 / f.cflops.slope, "the expert FFN of 8+ tokens: flops / peak", f.cflops);
    prof["gpu"]["memory_bandwidth"] =
        val(1.0 / f.cbytes.slope, "expert FFNs and dense GEMMs of 1 token: weight bytes / bandwidth", f.cbytes);
    prof["gpu"]["kernel_overhead"] = val(f.cbytes.intercept, "intercept of the same fit: fixed cost per compute op", f.cbytes);
    if (f.gemm.points >= 2)
      prof["gpu"]["expert_gemm_overhead"] =
          val(f.gemm.intercept, "the expert FFN of 2+ tokens (GEMMs): mean of time - roofline", f.gemm);
  }
}

// A profile from the microbenchmarks alone (no trace): the base profile's memory section, and for a GPU its gpu
// and link sections, which the CPU microbenchmarks do not measure.
Json micro_skeleton(const CalibrateArgs& ca, const HardwareProfile& hw, bool gpu, const Stamp& st) {
  Json prof;
  prof["name"] = ca.name.empty() ? "calibrated-" + st.host : ca.name;
  prof["display_name"] = "This machine (" + st.host + "), calibrated " + st.date + " by microbenchmarks" +
                         (gpu ? "" : "; no GPU: exec's GPU stream is one CPU thread");
  prof["ssd"] = {{"model", "the disk holding " + ca.run->store}};
  prof["memory"] = hw.raw.value("memory", Json::object());
  prof["memory"]["unified"] = gpu ? hw.unified_memory : true;
  prof["cpu"] = {{"model", "this machine's CPU"},
                 {"cores", {{"value", ca.run->workers ? ca.run->workers : hw.cpu_cores},
                            {"source", st.by + "the CPU workers calibrated (L)"}}}};
  for (const char* k : {"memcpy_bandwidth_per_core", "decompress_bandwidth_per_core", "flops_per_core"})
    if (hw.raw.contains("cpu") && hw.raw["cpu"].contains(k)) prof["cpu"][k] = hw.raw["cpu"][k];
  if (gpu) {
    prof["gpu"] = hw.raw.value("gpu", Json::object());
    prof["link"] = hw.raw.value("link", Json::object());
  } else {
    prof["gpu"] = {{"model", "none: a CPU thread emulating a GPU stream"}};
    prof["link"] = {{"kind", "uma"},
                    {"bandwidth", {{"value", "100GB/s"}, {"source", st.by + "shared memory: transfers move no bytes"}}},
                    {"latency", {{"value", 0.0}, {"source", st.by + "shared memory: exec's transfers move nothing; the "
                                                            "hand-off is measured only by a trace run"}}}};
  }
  return prof;
}

std::string micro_summary(const MicroFits& f) {
  std::string s = strprintf("micro: SSD %s + %s/s per request (queue depth %u, %s), ",
                            format_seconds(std::max(f.ssd.intercept, 0.0)).c_str(),
                            format_bytes(static_cast<uint64_t>(f.ssd.slope > 0 ? 1.0 / f.ssd.slope : 0)).c_str(),
                            f.queue_depth, f.json["io"].get<std::string>().c_str());
  if (f.read_cpu.points >= 2)
    s += strprintf("then the I/O thread's CPU %s + %s/s per request, ",
                   format_seconds(std::max(f.read_cpu.intercept, 0.0)).c_str(),
                   f.read_cpu.slope > 0 ? format_bytes(static_cast<uint64_t>(1.0 / f.read_cpu.slope)).c_str() : "inf");
  if (f.dec.slope > 0)
    s += strprintf("%s %s/s per core, ", f.dec_codec.c_str(), format_bytes(static_cast<uint64_t>(1.0 / f.dec.slope)).c_str());
  if (f.rec.slope > 0) s += strprintf("recover %s/s per core, ", format_bytes(static_cast<uint64_t>(1.0 / f.rec.slope)).c_str());
  if (f.cflops.slope > 0) s += strprintf("compute %.2f GFLOP/s", 1e-9 / f.cflops.slope);
  if (f.cbytes.slope > 0) s += strprintf(" and %s/s of weights", format_bytes(static_cast<uint64_t>(1.0 / f.cbytes.slope)).c_str());
  std::string inter;
  for (const auto& i : f.json["interference"])
    inter += strprintf("%s%s x%.2f", inter.empty() ? "" : ", ", i["component"].get<std::string>().c_str(),
                       i["slowdown"].get<double>());
  if (!inter.empty()) s += "; all at once: " + inter;
  return s + "\n";
}

void execute(CalibrateArgs& ca) {
  RunArgs& a = *ca.run;
  a.exec = true;
  const bool have_trace = !a.trace.empty();
  if (!have_trace && !ca.micro)
    throw UsageError("calibrate needs a calibration trace (TRACE or --trace), --micro (microbenchmarks), or both");
  if (ca.fit_from.empty()) ca.fit_from = have_trace ? "trace" : "micro";
  if (ca.fit_from == "trace" && !have_trace) throw UsageError("--fit-from trace needs a calibration trace");
  if (ca.fit_from == "micro" && !ca.micro) throw UsageError("--fit-from micro needs --micro");
  if (a.store.empty()) throw UsageError("--store is required: calibrate reads and computes the store's experts");
  if (ca.repeat == 0 || ca.repeat > 1000) throw UsageError("--repeat must be 1..1000");
  if (ca.repeat > 1 && !have_trace) throw UsageError("--repeat repeats the calibration trace's run: give a trace");
  if (!(ca.micro_budget > 0) || ca.micro_budget > 86400)
    throw UsageError(strprintf("--micro-budget must be between 0 and 86400 seconds (got %g)", ca.micro_budget));
  if (ca.micro_depth < 1 || ca.micro_depth > 1024)
    throw UsageError("--micro-depth must be between 1 and 1024 (got " + std::to_string(ca.micro_depth) + ")");
  for (const std::string& c : ca.micro_codecs) {
    try {
      (void)kernels::make_codec(c);
    } catch (const Error& e) {
      throw UsageError(std::string("--micro-codecs: ") + e.what());
    }
  }
  check_output_writable(a.out);
  const Stamp st = calibration_stamp();
  Json prof;
  const HardwareProfile base = load_hardware(a.hw);
  const ExecRunOptions eo = exec_options(a, base);
  if (have_trace) {
    TraceCalibrationOptions o;
    o.name = ca.name;
    o.repeat = ca.repeat;
    o.pilot_runs = ca.no_pilot ? 0 : ca.pilot_runs;
    prof = trace_profile(a, o, st);
  }
  if (ca.micro) {
    exec::StoreReadOptions ro;
    ro.direct_io = !a.buffered;
    const exec::StoreReader reader(a.store, ro);
    if (!a.buffered && !reader.direct_io_active())
      warn(a.store + ": the filesystem refused O_DIRECT; the read benchmark goes through the page cache");
    exec::MicroOptions mo;
    // L: --workers, else this machine's CPUs (not the base profile's cores: the sweep runs 1..L here).
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    mo.threads = a.workers ? a.workers : cpus;
    if (mo.threads > cpus)
      warn("calibrate --micro sweeps decompression and recovery over 1.." + std::to_string(mo.threads) +
           " threads on a machine with " + std::to_string(cpus) + " CPUs: the larger counts measure time sharing");
    mo.max_depth = ca.micro_depth;
    mo.budget_s = ca.micro_budget;
    mo.io = eo.io;
    mo.codecs = ca.micro_codecs;
    mo.seed = a.seed;
    std::optional<Progress> bar;
    mo.progress = [&bar](uint64_t done, uint64_t total) {
      if (!bar) bar.emplace("calibrate micro", total, "points");
      bar->set(done);
    };
    const exec::MicroResults m = exec::run_microbenchmarks(reader, mo);
    if (bar) bar->finish();
    if (!m.io_fallback.empty())
      warn("--io uring: io_uring is unavailable here (" + m.io_fallback + "); the queue-depth benchmark used pread threads");
    MicroFits f = micro_fits(m, mo);
    for (const auto& [name, fit] : std::map<std::string, Fit>{{"read", f.ssd}, {"decompress", f.dec}, {"recover", f.rec},
                                                               {"compute (bytes)", f.cbytes}, {"compute (flops)", f.cflops}})
      if (fit.points >= 2 && fit.rel_rms > 0.5)
        warn("calibrate --micro: the " + name + " fit leaves a relative RMS residual of " +
             strprintf("%.0f%%", 100 * fit.rel_rms) + " over " + std::to_string(fit.points) +
             " points: this machine's times vary a lot; raise --micro-budget or calibrate again");
    if (!have_trace) {
      prof = micro_skeleton(ca, base, eo.gpu, st);
      prof["calibration"] = {{"date", st.date}, {"host", st.host}, {"store", a.store}, {"trace", nullptr},
                             {"workers", mo.threads}, {"direct_io", m.direct_io}, {"io", m.io}};
      prof["cpu"]["cores"] = {{"value", mo.threads}, {"source", st.by + "the CPU workers calibrated (L)"}};
    }
    if (ca.fit_from == "micro") apply_micro(prof, f, mo, eo.gpu, st);
    prof["micro"] = f.json;
    std::fprintf(stderr, "%s", micro_summary(f).c_str());
  }
  prof["measured_on"] = this_machine_json(eo.gpu);
  prof["calibration"]["fields_from"] = ca.fit_from;
  prof["calibration"]["build"] = run_header("calibrate", Json::object());
  // The profile must load as one (and so be usable by run and validate, every field sourced) before it is written.
  (void)hardware_from_json(prof, a.out, /*require_provenance=*/true);
  write_json_file(a.out, prof);
  if (!have_trace)
    std::fprintf(stderr, "calibrated %s by microbenchmarks -> %s\n", st.host.c_str(),
                 a.out == "-" ? "standard output" : a.out.c_str());
}

void setup(CLI::App& app) {
  auto ca = std::make_shared<CalibrateArgs>();
  add_run_options(app, ca->run);
  add_exec_options(app, ca->run);
  // One vocabulary: --json asks for JSON to -o (standard output by default), which a profile always is.
  app.get_option("--json")->description("write JSON: the profile is JSON with or without it (to -o, default standard "
                                        "output)");
  app.add_option("--name", ca->name, "the profile's name (default: calibrated-HOST)");
  app.add_option("--repeat", ca->repeat,
                 "serve the calibration trace N times and fit every run's ops together (default 1; this machine's "
                 "run-to-run variation averages out)");
  app.add_flag("--no-pilot", ca->no_pilot,
               "zipmoe: measure the runs under the base profile's plan (--hw) instead of serving the trace once "
               "first and planning the measured runs with that pilot run's fit");
  app.add_option("--pilot-runs", ca->pilot_runs,
                 "zipmoe: at most N pilot runs, each planned with the last one's fit, until a fit plans the pools "
                 "its run was served with (default 3)")
      ->check(whole_in_range(1, 100));
  app.add_option("--threads", ca->run->workers)->group("");  // the older name of --workers (L)
  auto* micro = app.add_flag("--micro", ca->micro,
                             "run the microbenchmarks: reads against size and queue depth, decompression per codec "
                             "and recovery against size and threads (1..L), expert compute against tokens, and "
                             "their interference (docs/exec.md)");
  app.add_option("--micro-budget", ca->micro_budget, "seconds the microbenchmarks aim to take in all")
      ->capture_default_str()
      ->needs(micro);
  app.add_option("--micro-depth", ca->micro_depth, "the deepest read queue benchmarked (1, 2, 4, ... up to it)")
      ->capture_default_str()
      ->needs(micro);
  app.add_option("--micro-codecs", ca->micro_codecs,
                 "codecs to benchmark decompression with besides the store's own (comma-separated)")
      ->delimiter(',')
      ->capture_default_str()
      ->needs(micro);
  app.add_option("--fit-from", ca->fit_from,
                 "which measurements fill the profile's fields: trace (the calibration run; default with a trace) "
                 "or micro (the microbenchmarks; default without)")
      ->check(CLI::IsMember({"trace", "micro"}));
  app.callback([ca] { execute(*ca); });
}

}  // namespace
MOESIM_CLI_COMMAND("calibrate",
                   "Fit the simulator's cost models to this machine from a real run of a calibration trace and/or "
                   "microbenchmarks (--micro) and write a hardware profile (-o profile.json)",
                   setup);
}  // namespace moesim::cli
