// The microbenchmarks of `moesim calibrate --micro` (exec/microbench.h's points), fitted into a profile's
// fields.
#include "harness/calibrate/micro_calibration.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "harness/arguments.h"

namespace moesim::harness {
namespace {

Json rate_fit_json(const Fit& f, const char* model, const char* rate_key, double rate) {
  Json j = fit_json(f, model);
  j[rate_key] = rate;
  return j;
}

// The run's settings and the store's sizes the fits were made against.
void put_micro_settings(Json& j, const exec::MicroResults& m, const exec::MicroOptions& mo) {
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
}

// The queue depth is the smallest depth that reaches 90% of the best aggregate bandwidth gain over depth 1
// (mean over sizes); returns the gains per depth for the report.
Json fit_queue_depth(const exec::MicroResults& m, MicroFits& f) {
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
  return gain_json;
}

// SSD: per request, latency + depth x bytes / bandwidth: the simulator's Ssd model (sim/resources.h), where
// the requests in service share the bandwidth. Deeper points than the queue depth are not fitted.
void fit_ssd(const exec::MicroResults& m, MicroFits& f) {
  Json& j = f.json;
  Json gain_json = fit_queue_depth(m, f);
  // With O_DIRECT a request is, as in the simulator, the device's time and then the I/O thread's CPU work
  // (the kernel's direct-I/O path and the chunk's hash; ssd.read_cpu_*, which shares the cores with the
  // workers): that CPU time is fitted on its own, and the device's line to each request's time less it.
  // Buffered reads are fitted whole, as the trace calibration does.
  bool split = m.direct_io;
  for (const auto& r : m.reads)
    if (r.depth <= f.queue_depth && !(r.cpu_s >= 0 && r.cpu_s < r.latency_s)) split = false;
  std::vector<double> x, y, x1, y1, cx, cy;
  std::vector<DepthSample> samples;
  Json pts = Json::array();
  for (const auto& r : m.reads) {
    pts.push_back({{"bytes", r.bytes},
                   {"depth", r.depth},
                   {"requests", r.requests},
                   {"latency_s", r.latency_s},
                   {"latency_p50_s", r.latency_p50_s},
                   {"bandwidth", r.bandwidth},
                   {"cpu_s", r.cpu_s >= 0 ? Json(r.cpu_s) : Json(nullptr)}});
    const double device = split ? r.latency_s - r.cpu_s : r.latency_s;
    samples.push_back(DepthSample{r.bytes, r.depth, device});
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
  f.depth_curve = fit_queue_depth_curve(samples);
  f.ssd = fit_line(x, y, false, true);
  f.ssd_depth1 = fit_line(x1, y1, false, true);
  j["ssd"] = {{"points", pts},
              {"depth_gain", gain_json},
              {"queue_depth", f.queue_depth},
              {"fit", rate_fit_json(f.ssd, "latency + depth x bytes / bandwidth (depths up to queue_depth)",
                                    "bandwidth", f.ssd.slope > 0 ? 1.0 / f.ssd.slope : 0.0)},
              {"fit_depth1", rate_fit_json(f.ssd_depth1, "latency + bytes / bandwidth (depth 1)", "bandwidth",
                                           f.ssd_depth1.slope > 0 ? 1.0 / f.ssd_depth1.slope : 0.0)}};
  Json curve_fits = Json::array();
  for (size_t i = 0; i < f.depth_curve.fits.size(); ++i) {
    Json c = fit_json(f.depth_curve.fits[i], "latency + depth x bytes / bandwidth at this depth");
    c["depth"] = static_cast<uint64_t>(f.depth_curve.curve[i].depth);
    curve_fits.push_back(c);
  }
  j["ssd"]["depth_curve"] = curve_fits;
  if (split) {
    j["ssd"]["device_time"] = "each request's time less the I/O thread's CPU time (cpu_s)";
    j["ssd"]["fit_cpu"] = rate_fit_json(f.read_cpu,
                                        "the I/O threads' CPU time per request: overhead + bytes / bandwidth "
                                        "(depths up to queue_depth)",
                                        "bandwidth", f.read_cpu.slope > 0 ? 1.0 / f.read_cpu.slope : 0.0);
  }
}

// Decompression and recovery: time = bytes / bandwidth per core, per (codec,) thread count. A line through
// the origin cannot follow the caches (small outputs stay in them, large ones go to memory), so the field's
// fit takes the sizes within 4x of the store's own ops (`near`: its median E-chunk or tensor); the fits over
// every size are kept beside it.
Fit fit_per_threads(const std::vector<exec::MicroOpPoint>& ops, const std::string& codec, uint32_t t,
                    double scale, uint64_t near = 0) {
  std::vector<double> xs, ys;
  for (const auto& o : ops)
    if (o.codec == codec && o.threads == t && (near == 0 || (o.bytes * 4 >= near && o.bytes <= near * 4))) {
      xs.push_back(scale * static_cast<double>(o.bytes));
      ys.push_back(o.time_s);
    }
  Fit fit = fit_line(xs, ys, true, true);
  return fit.points >= 2 || near == 0 ? fit : Fit{};
}

Json op_points_json(const std::vector<exec::MicroOpPoint>& ops, bool codec) {
  Json a = Json::array();
  for (const auto& o : ops) {
    Json p = {{"bytes", o.bytes},
              {"threads", o.threads},
              {"ops", o.ops},
              {"time_s", o.time_s},
              {"time_p50_s", o.time_p50_s}};
    if (codec) {
      p["codec"] = o.codec;
      p["stored_bytes"] = o.stored;
    }
    a.push_back(p);
  }
  return a;
}

// The section of an op kind: its raw points, its fits per thread count, and the fit the profile's field
// takes.
Json op_section_json(Json points, Json fits, const Fit& field, const char* model, uint64_t near) {
  Json ff = rate_fit_json(field, model, "bandwidth_per_core", field.slope > 0 ? 1.0 / field.slope : 0.0);
  ff["near_bytes"] = near;
  return Json{{"points", std::move(points)}, {"fits", std::move(fits)}, {"field_fit", ff}};
}

void fit_decompress(const exec::MicroResults& m, const exec::MicroOptions& mo, MicroFits& f) {
  std::vector<std::string> codecs;
  for (const auto& o : m.decompress)
    if (std::find(codecs.begin(), codecs.end(), o.codec) == codecs.end()) codecs.push_back(o.codec);
  Json dfits = Json::array();
  for (const std::string& c : codecs)
    for (uint32_t t = 1; t <= mo.threads; ++t) {
      const Fit fit = fit_per_threads(m.decompress, c, t, 1.0);
      Json fj = rate_fit_json(fit, "bytes / bandwidth per core (decompressed bytes)", "bandwidth_per_core",
                              fit.slope > 0 ? 1.0 / fit.slope : 0.0);
      fj["codec"] = c;
      fj["threads"] = t;
      dfits.push_back(fj);
      if (t == mo.threads && f.dec_codec.empty()) {  // the first codec is the store's own when it has one
        f.dec_codec = c;
        f.dec = fit_per_threads(m.decompress, c, t, 1.0, m.median_shard_bytes);
        if (f.dec.points < 2) f.dec = fit;
      }
    }
  f.json["decompress"] = op_section_json(
      op_points_json(m.decompress, true), dfits, f.dec,
      "bytes / bandwidth per core: the store's codec at L threads, sizes within 4x of its median E-chunk",
      m.median_shard_bytes);
  f.json["decompress"]["field_fit"]["codec"] = f.dec_codec;
}

void fit_recover(const exec::MicroResults& m, const exec::MicroOptions& mo, MicroFits& f) {
  Json rfits = Json::array();
  for (uint32_t t = 1; t <= mo.threads; ++t) {
    // x = 2 x BF16 bytes: the cost model's recovery is 2 bytes / bandwidth (reads SM + exponents, writes
    // BF16).
    const Fit fit = fit_per_threads(m.recover, "", t, 2.0);
    Json fj = rate_fit_json(fit, "2 x BF16 bytes / bandwidth per core", "bandwidth_per_core",
                            fit.slope > 0 ? 1.0 / fit.slope : 0.0);
    fj["threads"] = t;
    rfits.push_back(fj);
    if (t == mo.threads) {
      f.rec = fit_per_threads(m.recover, "", t, 2.0, m.median_tensor_bytes);
      if (f.rec.points < 2) f.rec = fit;
    }
  }
  f.json["recover"] = op_section_json(
      op_points_json(m.recover, false), rfits, f.rec,
      "2 x BF16 bytes / bandwidth per core at L threads, sizes within 4x of the store's median tensor",
      m.median_tensor_bytes);
}

// Compute: the roofline's two sides, as the trace run fits them (1 token: weight bytes; experts of 8+:
// FLOPs), and the fixed cost of an expert's GEMMs (2+ tokens).
void fit_compute(const exec::MicroResults& m, MicroFits& f) {
  std::vector<double> bx, by, fx, fy;
  Json cpts = Json::array();
  for (const auto& c : m.compute) {
    cpts.push_back({{"kind", c.kind},
                    {"tokens", c.tokens},
                    {"bytes", c.bytes},
                    {"flops", c.flops},
                    {"ops", c.ops},
                    {"time_s", c.time_s},
                    {"time_p50_s", c.time_p50_s}});
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
  f.json["compute"] = {
      {"points", cpts},
      {"fit_bytes", rate_fit_json(f.cbytes, "overhead + weight bytes / bandwidth (1 token)", "bandwidth",
                                  f.cbytes.slope > 0 ? 1.0 / f.cbytes.slope : 0.0)},
      {"fit_flops", rate_fit_json(f.cflops, "flops / peak (expert FFN, 8+ tokens)", "flops",
                                  f.cflops.slope > 0 ? 1.0 / f.cflops.slope : 0.0)},
      {"fit_expert_gemm",
       {{"model", "mean of time - roofline (expert FFN, 2+ tokens: GEMMs)"},
        {"points", f.gemm.points},
        {"overhead_s", f.gemm.intercept},
        {"relative_rms", f.gemm.rel_rms}}}};
}

Json interference_json(const exec::MicroResults& m) {
  Json inter = Json::array();
  for (const auto& i : m.interference)
    inter.push_back({{"component", i.component},
                     {"threads", i.threads},
                     {"op_bytes", i.op_bytes},
                     {"alone_ops", i.alone_ops},
                     {"alone_s", i.alone_s},
                     {"together_ops", i.together_ops},
                     {"together_s", i.together_s},
                     {"slowdown", i.alone_s > 0 ? i.together_s / i.alone_s : 0.0}});
  return inter;
}

}  // namespace

MicroFits micro_fits(const exec::MicroResults& m, const exec::MicroOptions& mo) {
  MicroFits f;
  put_micro_settings(f.json, m, mo);
  fit_ssd(m, f);
  fit_decompress(m, mo, f);
  fit_recover(m, mo, f);
  fit_compute(m, f);
  f.json["interference"] = interference_json(m);
  return f;
}

// The profile's fields the microbenchmarks measure (where a field exists for them). `gpu`: exec runs on a
// CUDA device, whose compute the CPU microbenchmarks do not measure (the gpu section stays as it is).
void apply_micro(Json& prof, const MicroFits& f, const exec::MicroOptions& mo, bool gpu,
                 const CalibrationStamp& st) {
  auto val = [&](double v, const std::string& what, const Fit& fit) {
    return Json{{"value", v},
                {"source", st.by + "microbenchmark: " + what +
                               strprintf(" (%zu points, relative RMS residual %.1f%%)", fit.points,
                                         100 * fit.rel_rms)}};
  };
  if (f.ssd.points < 2 || !(f.ssd.slope > 0))
    throw Error(
        "calibrate --micro: the read benchmark's fit came out non-positive (times do not grow with "
        "size); the machine was too busy or the budget too small: raise --micro-budget");
  prof["ssd"]["read_bandwidth"] = val(
      1.0 / f.ssd.slope,
      "O_DIRECT reads of the store against size and queue depth: latency + depth x bytes / bandwidth", f.ssd);
  prof["ssd"]["read_latency"] = val(std::max(f.ssd.intercept, 0.0), "intercept of the same fit", f.ssd);
  // The I/O thread's CPU work per read, for a decode step's reads and a prefill's alike (the microbenchmark
  // has no phases); without the split (buffered reads) the fields the profile had are dropped, since the
  // device's fit above then holds each read whole.
  for (const char* k :
       {"read_cpu_overhead", "read_cpu_bandwidth", "prefill_read_cpu_overhead", "prefill_read_cpu_bandwidth"})
    prof["ssd"].erase(k);
  if (f.read_cpu.points >= 2 && (f.read_cpu.intercept > 0 || f.read_cpu.slope > 0)) {
    prof["ssd"]["read_bandwidth"]["source"] = prof["ssd"]["read_bandwidth"]["source"].get<std::string>() +
                                              "; the device's part: each request's time less its CPU time";
    prof["ssd"]["read_cpu_overhead"] =
        val(std::max(f.read_cpu.intercept, 0.0),
            "the I/O thread's CPU time per O_DIRECT request and its hash, after the "
            "device's time and sharing the cores with the CPU-bound threads: fixed part of overhead + bytes "
            "/ bandwidth",
            f.read_cpu);
    if (f.read_cpu.slope > 0)
      prof["ssd"]["read_cpu_bandwidth"] =
          val(1.0 / f.read_cpu.slope, "per-byte part of the same fit", f.read_cpu);
  }
  prof["ssd"]["queue_depth"] = {
      {"value", f.queue_depth},
      {"source", st.by +
                     "microbenchmark: the smallest queue depth reaching 90% of the best "
                     "aggregate bandwidth (" +
                     std::string(f.json["io"]) + ")"}};
  prof["ssd"].erase("queue_depth_curve");
  if (f.depth_curve.curve.size() >= 2)
    prof["ssd"]["queue_depth_curve"] = {
        {"value", depth_curve_json(f.depth_curve.curve)},
        {"source",
         st.by +
             "microbenchmark: per queue depth, latency + depth x bytes / bandwidth over the read sizes (" +
             std::string(f.json["io"]) + "; fits in micro.ssd.depth_curve)"}};
  const std::string at = " on " + std::to_string(mo.threads) + " threads at once";
  if (f.dec.points >= 2 && f.dec.slope > 0)
    prof["cpu"]["decompress_bandwidth_per_core"] = val(1.0 / f.dec.slope,
                                                       f.dec_codec + " decompression of E-chunk exponents" +
                                                           at + ", sizes near the store's: bytes / bandwidth",
                                                       f.dec);
  if (f.rec.points >= 2 && f.rec.slope > 0)
    prof["cpu"]["memcpy_bandwidth_per_core"] =
        val(1.0 / f.rec.slope,
            "CPU recovery (merge)" + at + ", sizes near the store's tensors: 2 bytes / bandwidth", f.rec);
  if (f.cflops.points >= 2 && f.cflops.slope > 0)
    prof["cpu"]["flops_per_core"] =
        val(1.0 / f.cflops.slope, "the expert FFN of 8+ tokens on one thread", f.cflops);
  if (!gpu && f.cbytes.slope > 0 && f.cflops.slope > 0) {
    prof["gpu"]["bf16_flops"] =
        val(1.0 / f.cflops.slope, "the expert FFN of 8+ tokens: flops / peak", f.cflops);
    prof["gpu"]["memory_bandwidth"] = val(
        1.0 / f.cbytes.slope, "expert FFNs and dense GEMMs of 1 token: weight bytes / bandwidth", f.cbytes);
    prof["gpu"]["kernel_overhead"] =
        val(f.cbytes.intercept, "intercept of the same fit: fixed cost per compute op", f.cbytes);
    if (f.gemm.points >= 2)
      prof["gpu"]["expert_gemm_overhead"] =
          val(f.gemm.intercept, "the expert FFN of 2+ tokens (GEMMs): mean of time - roofline", f.gemm);
    // Its fixed cost sits over the roofline: a line the trace run probed (gpu.expert_gemm_flops) would add
    // its FLOPs to this intercept in series, a mix neither measured.
    if (f.gemm.points >= 2) prof["gpu"].erase("expert_gemm_flops");
  }
}

// A profile from the microbenchmarks alone (no trace): the base profile's memory section, and for a GPU its
// gpu and link sections, which the CPU microbenchmarks do not measure.
Json micro_skeleton(const std::string& name, const RunArgs& run, const HardwareProfile& hw, bool gpu,
                    const CalibrationStamp& st) {
  Json prof;
  prof["name"] = name.empty() ? "calibrated-" + st.host : name;
  prof["display_name"] = "This machine (" + st.host + "), calibrated " + st.date + " by microbenchmarks" +
                         (gpu ? "" : "; no GPU: exec's GPU stream is one CPU thread");
  prof["ssd"] = {{"model", "the disk holding " + run.store}};
  prof["memory"] = hw.raw.value("memory", Json::object());
  prof["memory"]["unified"] = gpu ? hw.unified_memory : true;
  prof["cpu"] = {{"model", "this machine's CPU"},
                 {"cores",
                  {{"value", run.workers ? run.workers : hw.cpu_cores},
                   {"source", st.by + "the CPU workers calibrated (L)"}}}};
  for (const char* k : {"memcpy_bandwidth_per_core", "decompress_bandwidth_per_core", "flops_per_core"})
    if (hw.raw.contains("cpu") && hw.raw["cpu"].contains(k)) prof["cpu"][k] = hw.raw["cpu"][k];
  if (gpu) {
    prof["gpu"] = hw.raw.value("gpu", Json::object());
    prof["link"] = hw.raw.value("link", Json::object());
  } else {
    prof["gpu"] = {{"model", "none: a CPU thread emulating a GPU stream"}};
    prof["link"] = {
        {"kind", "uma"},
        {"bandwidth", {{"value", "100GB/s"}, {"source", st.by + "shared memory: transfers move no bytes"}}},
        {"latency",
         {{"value", 0.0},
          {"source", st.by + "shared memory: exec's transfers move nothing; the "
                             "hand-off is measured only by a trace run"}}}};
  }
  return prof;
}

std::string micro_summary(const MicroFits& f) {
  std::string s =
      strprintf("micro: SSD %s + %s/s per request (queue depth %u, %s), ",
                format_seconds(std::max(f.ssd.intercept, 0.0)).c_str(),
                format_bytes(static_cast<uint64_t>(f.ssd.slope > 0 ? 1.0 / f.ssd.slope : 0)).c_str(),
                f.queue_depth, f.json["io"].get<std::string>().c_str());
  if (f.read_cpu.points >= 2)
    s += strprintf(
        "then the I/O thread's CPU %s + %s/s per request, ",
        format_seconds(std::max(f.read_cpu.intercept, 0.0)).c_str(),
        f.read_cpu.slope > 0 ? format_bytes(static_cast<uint64_t>(1.0 / f.read_cpu.slope)).c_str() : "inf");
  if (f.dec.slope > 0)
    s += strprintf("%s %s/s per core, ", f.dec_codec.c_str(),
                   format_bytes(static_cast<uint64_t>(1.0 / f.dec.slope)).c_str());
  if (f.rec.slope > 0)
    s += strprintf("recover %s/s per core, ", format_bytes(static_cast<uint64_t>(1.0 / f.rec.slope)).c_str());
  if (f.cflops.slope > 0) s += strprintf("compute %.2f GFLOP/s", 1e-9 / f.cflops.slope);
  if (f.cbytes.slope > 0)
    s += strprintf(" and %s/s of weights", format_bytes(static_cast<uint64_t>(1.0 / f.cbytes.slope)).c_str());
  std::string inter;
  for (const auto& i : f.json["interference"])
    inter += strprintf("%s%s x%.2f", inter.empty() ? "" : ", ", i["component"].get<std::string>().c_str(),
                       i["slowdown"].get<double>());
  if (!inter.empty()) s += "; all at once: " + inter;
  return s + "\n";
}

}  // namespace moesim::harness
