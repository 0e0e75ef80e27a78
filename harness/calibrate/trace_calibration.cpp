#include "harness/calibrate/trace_calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "harness/arguments.h"
#include "harness/calibrate/calibrate_fit.h"
#include "harness/calibrate/gemm_probe.h"
#include "harness/exec_runner.h"
#include "harness/latency_summary.h"
#include "harness/sim_runner.h"

namespace moesim::harness {
namespace {

// The runtime's costs over several runs: the mean of each run's figures (runs of one trace: equal weights).
exec::ExecCounters mean_runtime(const std::vector<exec::ExecCounters>& runs) {
  exec::ExecCounters c = runs.back();
  const auto n = static_cast<double>(runs.size());
  auto avg = [&](auto field) {
    double sum = 0;
    for (const exec::ExecCounters& r : runs) sum += field(r);
    return sum / n;
  };
  c.handoff_latency = avg([](const exec::ExecCounters& r) { return r.handoff_latency; });
  c.completion_latency = avg([](const exec::ExecCounters& r) { return r.completion_latency; });
  c.pipeline_latency = avg([](const exec::ExecCounters& r) { return r.pipeline_latency; });
  c.plan_latency_per_op = avg([](const exec::ExecCounters& r) { return r.plan_latency_per_op; });
  c.plan_latency_fixed = avg([](const exec::ExecCounters& r) { return r.plan_latency_fixed; });
  c.plan_tail_per_op = avg([](const exec::ExecCounters& r) { return r.plan_tail_per_op; });
  c.plan_tail_fixed = avg([](const exec::ExecCounters& r) { return r.plan_tail_fixed; });
  for (size_t i = 0; i < kResourceClasses; ++i) {
    c.handoff[i] = avg([i](const exec::ExecCounters& r) { return r.handoff[i]; });
    c.turnaround[i] = avg([i](const exec::ExecCounters& r) { return r.turnaround[i]; });
  }
  return c;
}

// One measured run of the calibration trace: its ops, each op's work (op_work(): its wall time, less the
// share of a core other CPU-bound ops took; computed once, every fit reads it) and the runtime's figures.
struct MeasuredRun {
  serving::RunResult result;
  OpWork work;
  // The same with each read whole, its I/O thread's CPU time not split off (computed where `work` splits:
  // O_DIRECT reads): the profile of the model without ssd.read_cpu_*, the ablation beside the fitted one.
  std::optional<OpWork> whole;
  bool direct_io = false;  // the run read with O_DIRECT (its fused reads' device times are the disk's)
  exec::ExecCounters counters;
};
struct MeasuredRuns {
  std::vector<MeasuredRun> runs;
  ExecReport report;  // the last run's, with the runtime's means over all runs as its counters
};

// A compute op's figures, for the fixed costs over the roofline.
struct ComputeOp {
  bool expert;
  double bytes, flops, seconds;
};

// The runs' ops sorted into the fits' points ((x, y) per fit, by name), the compute ops for the fixed costs
// over the roofline, and the transfers' hand-offs.
struct OpPoints {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> pts;
  std::vector<ComputeOp> computes, gemms;
  // An O_DIRECT run's fused reads: where their decompression points are, the bytes read, the phase.
  struct FusedPoint {
    const char* key;  // its decompression point: pts[key] at index
    size_t index;
    uint64_t read_bytes;
    bool prefill;
  };
  std::vector<FusedPoint> fused;
  double transfer_sum = 0;
  size_t transfers = 0;
  bool recover_on_cpu = false;

  void add(const char* k, double x, double y) {
    pts[k].first.push_back(x);
    pts[k].second.push_back(y);
  }
};

// Every fit of the runs' ops (a Fit left empty where its ops did not run) and the slowdowns of a prefill's.
struct RunFits {
  bool gpu = false;     // exec ran transfers, GPU recovery and GPU compute on a CUDA device
  bool phases = false;  // a prefill's reads have a line of their own
  bool split = false;   // decompressions ran: E-chunks apart from the SM part
  bool recover_on_cpu = false;
  // read_io, bulk_io: the I/O thread's reads alone (without the fused reads' points: the line as before
  // those joined it, calibration.fits.ssd_read_io_thread, for comparison).
  Fit read_io, bulk_io;
  // dec_tail: the decompression line over the fused ops' CPU clocks with their read's CPU tail left in (the
  // line as before fused_without_tail, calibration.fits.decompress_with_read_tail, for comparison).
  Fit dec_tail;
  // read_cpu_io, read_cpu_prefill_io: the read CPU lines over the I/O thread's reads alone (without the fused
  // reads' tails: calibration.fits.ssd_read_cpu_io_thread, for comparison).
  Fit read_cpu_io, read_cpu_prefill_io;
  Fit read, bulk, read_cpu, read_cpu_prefill, cbytes, dec, rec, cflops, dense_over, expert_over, fresh, gemm,
      dense_gemm;
  // The GEMMs' lines (gpu.{dense,expert}_gemm_flops with their overheads), where calibrate probed them; then
  // dense_gemm and gemm above are those lines.
  std::optional<GemmLines> gemm_lines;
  double prefill_slowdown = 0, prefill_recover_slowdown = 0;
};

// A fitted value with its source: who fitted it, what, over how many ops and how closely.
struct SourcedValue {
  const std::string& by;
  Json operator()(double v, const std::string& what, const Fit& f) const {
    return Json{
        {"value", v},
        {"source",
         by + what + strprintf(" (%zu ops, RMS residual %.1f%% of the mean op)", f.points, 100 * f.cv_rms)}};
  }
};

// Fitted to each op's work, not its wall time: on a machine with fewer cores than busy threads the CPU-bound
// ops shared them, and the simulator's contention model (the profile's runtime.cpu_cores) puts that back for
// the mix of ops of whatever run it simulates. With cores to spare, work is wall time.
OpPoints collect_op_points(std::span<const MeasuredRun> runs, bool reads_whole) {
  OpPoints o;
  for (const MeasuredRun& r : runs) {
    const OpWork& w = reads_whole && r.whole ? *r.whole : r.work;
    for (size_t i = 0; i < r.result.result.timeline.size(); ++i) {
      const TimelineEvent& e = r.result.result.timeline[i];
      const double d = w.work[i];
      const Op& op = e.op;
      switch (op.kind) {
        case OpKind::kSsdRead:
          // The device's time; the I/O thread's CPU work after it is a line of its own, per phase as the
          // reads.
          o.add(op.prefill ? "read_prefill" : "read", static_cast<double>(op.bytes), d);
          o.add(op.prefill ? "read_io_prefill" : "read_io", static_cast<double>(op.bytes), d);
          if (w.read_cpu[i] > 0)
            o.add(op.prefill ? "read_cpu_prefill" : "read_cpu", static_cast<double>(op.bytes), w.read_cpu[i]);
          break;
        case OpKind::kDecompress:
          // A fused read's decompression is its CPU part (the worker's CPU clock: the decompression and the
          // read's CPU tail); without that clock it tells no decompression apart.
          if (op.fused_read() && !(w.read_cpu[i] > 0)) break;
          o.add(op.prefill ? "decompress_prefill" : "decompress", static_cast<double>(op.bytes),
                op.fused_read() ? w.read_cpu[i] : d);
          // Its read's device time is a read off the same disk, of another size than the I/O thread's; its
          // CPU clock holds that read's CPU tail, which the simulator charges apart (ssd.read_cpu_*): taken
          // out of its decompression point by fused_without_tail.
          if (fused_read_on_read_line(op.read_bytes, w.read_cpu[i], r.direct_io)) {
            o.add(op.prefill ? "read_prefill" : "read", static_cast<double>(op.read_bytes), d);
            const char* k = op.prefill ? "decompress_prefill" : "decompress";
            o.fused.push_back({k, o.pts[k].second.size() - 1, op.read_bytes, op.prefill});
          }
          break;
        case OpKind::kRecover:
          o.add(op.prefill ? "recover_prefill" : "recover", 2.0 * static_cast<double>(op.bytes), d);
          o.recover_on_cpu = op.resource == ResourceClass::kCpu;
          break;
        case OpKind::kExpertCompute:
        case OpKind::kDenseCompute:
          // The roofline's two sides, each from the ops it governs: few tokens read every weight for little
          // arithmetic (memory-bound: bytes), many tokens are FLOP-bound.
          o.computes.push_back(
              ComputeOp{op.kind == OpKind::kExpertCompute, static_cast<double>(op.bytes), op.flops, d});
          if (op.tokens >= 8) o.add("compute_flops", op.flops, d);
          // An op of 2+ tokens runs GEMMs, where one of 1 token runs GEMVs: a fixed cost of its own per kind
          // (gpu.expert_gemm_overhead, gpu.dense_gemm_overhead), kept out of the 1-token fits.
          if (op.tokens >= 2) {
            o.gemms.push_back(o.computes.back());
            break;
          }
          // Weights the request just produced (Op::fresh) come from the last-level cache: a fixed cost of
          // their own.
          if (op.fresh)
            o.add("compute_fresh", op.flops, d);  // against its FLOPs: see fit_compute_ops
          else
            o.add(op.prefill ? "compute_bytes_prefill" : "compute_bytes", static_cast<double>(op.bytes), d);
          break;
        case OpKind::kTransfer:
          o.transfer_sum += d;
          ++o.transfers;
          o.add("transfer", static_cast<double>(op.bytes), d);
          break;
      }
    }
  }
  return o;
}

void need_points(OpPoints& o, const char* k, const char* why) {
  if (o.pts[k].first.size() < 2)
    throw Error(std::string("calibrate: the calibration run had fewer than 2 ops to fit ") + why +
                "; use a trace with prefill and decode steps and a budget that misses (--system zipmoe)");
}

// A decode step's reads, CPU-worker ops and memory-bound computes set their models (TPOT is decode). A
// prefill's reads (nearly every expert of a layer back to back) get a line of their own, ssd.prefill_read_*;
// its CPU-worker ops run beside every other thread of the engine, on buffers touched for the first time, and
// are slower, recoveries more than decompressions (bench/results/validate.md): cpu.prefill_slowdown
// (fit_worker_ops) scales them. Where decode steps gave fewer than 2 ops of a kind (for reads: either phase),
// every op of the kind is fitted together.
void pool_phases(OpPoints& o) {
  auto& pts = o.pts;
  for (const auto& [k, either] : {std::pair{"read", true},
                                  {"read_cpu", true},
                                  {"decompress", false},
                                  {"recover", false},
                                  {"compute_bytes", false}}) {
    auto& dec_pts = pts[k];
    auto& pre_pts = pts[std::string(k) + "_prefill"];
    if (dec_pts.first.size() >= 2 && !(either && pre_pts.first.size() == 1)) continue;
    dec_pts.first.insert(dec_pts.first.end(), pre_pts.first.begin(), pre_pts.first.end());
    dec_pts.second.insert(dec_pts.second.end(), pre_pts.second.begin(), pre_pts.second.end());
    pre_pts = {};
  }
  need_points(o, "read", "the SSD");
  need_points(o, "compute_bytes", "memory-bound compute (decode)");
  need_points(o, "compute_flops", "FLOP-bound compute (prefill)");
}

// Sizes that vary give the SSD's per-request latency (intercept); reads all of one size cannot separate it.
Fit fit_reads(OpPoints& o, const char* k, bool quiet) {
  auto& pts = o.pts;
  const auto [rmin, rmax] = std::minmax_element(pts[k].first.begin(), pts[k].first.end());
  const bool origin = *rmax < 1.5 * *rmin;
  const Fit f = fit_line_or_origin(pts[k].first, pts[k].second, origin);
  if (!quiet && !origin && f.intercept == 0)
    warn(
        "calibrate: the SSD read times did not grow with the request size in this run (a busy machine or "
        "disk): the read latency could not be separated and is fitted as 0, the bandwidth through the "
        "origin");
  return f;
}

// The I/O thread's CPU work per read (OpTiming::cpu; ssd.read_cpu_*), per phase as the device's (a
// prefill's reads may take more, and one line over both then simulates them short and a decode step's long;
// bench/results/validate.md, "the I/O thread's CPU work"): a line where the sizes vary, else the mean as a
// fixed cost. Fitted to the CPU time itself, which is work.
Fit fit_read_cpu(OpPoints& o, const char* k) {
  const auto& [cx, cy] = o.pts[k];
  if (cx.size() < 2) return Fit{};
  const auto [cmin, cmax] = std::minmax_element(cx.begin(), cx.end());
  return *cmax >= 1.5 * *cmin ? fit_line_or_origin(cx, cy, false)
                              : fit_offset(std::vector<double>(cx.size(), 0.0), cy);
}

// The fused reads' CPU tails on the read CPU line (fused_read_tails), per phase; before fused_without_tail,
// while the points' indices hold.
void fused_tails_on_read_cpu_line(OpPoints& o) {
  for (const bool prefill : {false, true}) {
    const auto& [x, y] = o.pts[prefill ? "decompress_prefill" : "decompress"];
    std::vector<bool> fused(x.size(), false);
    std::vector<double> px, py, fx, fy, fread;
    for (const OpPoints::FusedPoint& q : o.fused)
      if (q.prefill == prefill) {
        fused[q.index] = true;
        fx.push_back(x[q.index]);
        fy.push_back(y[q.index]);
        fread.push_back(static_cast<double>(q.read_bytes));
      }
    for (size_t i = 0; i < x.size(); ++i)
      if (!fused[i]) {
        px.push_back(x[i]);
        py.push_back(y[i]);
      }
    const std::vector<double> tails = fused_read_tails(px, py, fx, fy);
    for (size_t i = 0; i < tails.size(); ++i)
      o.add(prefill ? "read_cpu_prefill" : "read_cpu", fread[i], tails[i]);
  }
}

// A fused read's decompression point: its CPU clock less its read's CPU tail on the read CPU line as it
// stands (fit_read_cpu over the I/O thread's reads and the fused reads' tails, the prefill's line where it
// has one; at least 0): the tail the simulator charges the worker apart. Before pool_phases, while the
// points' indices hold.
void fused_without_tail(OpPoints& o) {
  const Fit dec = fit_read_cpu(o, "read_cpu"), pre = fit_read_cpu(o, "read_cpu_prefill");
  for (const OpPoints::FusedPoint& q : o.fused) {
    const Fit& t = q.prefill && pre.points > 0 ? pre : dec;
    double& y = o.pts[q.key].second[q.index];
    y = std::max(0.0, y - (t.intercept + t.slope * static_cast<double>(q.read_bytes)));
  }
}

// The decompression line as pool_phases and fit_worker_ops would fit it, over the points as they are now.
Fit decompress_line(OpPoints& o) {
  auto d = o.pts["decompress"];
  if (d.first.size() < 2) {
    const auto& pre = o.pts["decompress_prefill"];
    d.first.insert(d.first.end(), pre.first.begin(), pre.first.end());
    d.second.insert(d.second.end(), pre.second.begin(), pre.second.end());
  }
  return d.first.size() >= 2 ? fit_line(d.first, d.second, true) : Fit{};
}

void fit_ssd_reads(OpPoints& o, bool quiet, RunFits& f) {
  // A disk need not serve a prefill's bulk reads at a decode step's rate, and one line over both then
  // mis-estimates every decode read (bench/results/validate.md, "the calibration checks itself").
  f.phases = !o.pts["read_prefill"].first.empty();
  f.read = fit_reads(o, "read", quiet);
  f.bulk = f.phases ? fit_reads(o, "read_prefill", quiet) : Fit{};
  if (o.pts["read_io"].first.size() >= 2 && o.pts["read_io"].first.size() < o.pts["read"].first.size())
    f.read_io = fit_reads(o, "read_io", true);
  if (o.pts["read_io_prefill"].first.size() >= 2 &&
      o.pts["read_io_prefill"].first.size() < o.pts["read_prefill"].first.size())
    f.bulk_io = fit_reads(o, "read_io_prefill", true);
  f.read_cpu = fit_read_cpu(o, "read_cpu");
  f.read_cpu_prefill = fit_read_cpu(o, "read_cpu_prefill");
}

// cpu.prefill_slowdown: a prefill's decompressions against the decode model, mean-preserving (sum of
// measured work / sum of the model's estimates); cpu.prefill_recover_slowdown the same for its CPU
// recoveries, apart: they need not slow down alike, and one factor over both is set by the decompressions,
// which take most of the time, and leaves the recoveries short (bench/results/validate.md).
double prefill_slowdown(OpPoints& o, const char* k, const Fit& f) {
  double measured = 0, modelled = 0;
  const auto& [x, y] = o.pts[k];
  for (size_t i = 0; i < x.size(); ++i) {
    modelled += f.intercept + x[i] * f.slope;
    measured += y[i];
  }
  return x.size() >= 2 && modelled > 0 && measured > 0 ? measured / modelled : 0.0;
}

// The CPU workers' ops: decompressions and recoveries, and how much a prefill's are slower.
void fit_worker_ops(OpPoints& o, bool quiet, RunFits& f) {
  auto& pts = o.pts;
  const bool gpu = f.gpu;
  const bool recover_on_cpu = o.recover_on_cpu;
  f.recover_on_cpu = recover_on_cpu;
  f.split = pts["decompress"].first.size() >= 2;
  f.dec = f.split ? fit_line(pts["decompress"].first, pts["decompress"].second, true) : Fit{};
  if (pts["recover"].first.size() >= 2) {
    // On a GPU, with an intercept where tensor sizes vary (a launch and a synchronization per recovery);
    // on a CPU worker through the origin (cpu.memcpy_bandwidth_per_core has no overhead term).
    const auto [rn, rx] = std::minmax_element(pts["recover"].first.begin(), pts["recover"].first.end());
    const bool origin = !gpu || recover_on_cpu || *rx < 1.5 * *rn;
    f.rec = fit_line_or_origin(pts["recover"].first, pts["recover"].second, origin);
  }
  f.prefill_slowdown = f.split ? prefill_slowdown(o, "decompress_prefill", f.dec) : 0.0;
  f.prefill_recover_slowdown =
      recover_on_cpu && f.rec.points >= 2 ? prefill_slowdown(o, "recover_prefill", f.rec) : 0.0;
  if (!quiet && f.rec.points >= 2 && !recover_on_cpu && !gpu)
    warn(
        "calibrate: recovery ran on the GPU stream, which exec emulates on a CPU thread: the profile's "
        "gpu.memory_bandwidth is fitted to expert compute, so simulated recovery will be off; calibrate and "
        "validate with --recover-on cpu on a machine without a GPU");
}

// Per kind ({dense, expert}), the fixed cost over the roofline at these rates (seconds per byte, per FLOP).
std::pair<Fit, Fit> roofline_overheads(const std::vector<ComputeOp>& ops, double per_byte, double per_flop) {
  std::vector<double> roof[2], secs[2];
  for (const ComputeOp& c : ops) {
    roof[c.expert].push_back(std::max(c.bytes * per_byte, c.flops * per_flop));
    secs[c.expert].push_back(c.seconds);
  }
  return std::pair{fit_offset(roof[0], secs[0]), fit_offset(roof[1], secs[1])};
}

void fit_compute_ops(OpPoints& o, const PreparedRun& p, const GemmProbe* probe, RunFits& f) {
  auto& pts = o.pts;
  // With an intercept: a layer's dense GEMV and an expert's three small GEMVs read bytes at one rate, but the
  // expert pays a fixed cost more (three matrices, the activation); the cost model's kernel overhead.
  const auto [cbmin, cbmax] =
      std::minmax_element(pts["compute_bytes"].first.begin(), pts["compute_bytes"].first.end());
  f.cbytes =
      fit_line_or_origin(pts["compute_bytes"].first, pts["compute_bytes"].second, *cbmax < 1.5 * *cbmin);
  // On a GPU the compute ops of a scaled-down or decode-sized model are launch-bound: their bytes and FLOPs
  // at the device's rates take a few microseconds, the launches and the synchronization tens. The rates stay
  // the base profile's (datasheet) values; the fixed costs are fitted, mean-preserving, per kind: a dense op
  // is one GEMM, an expert's FFN three and the activation (gpu.kernel_overhead, gpu.expert_overhead).
  if (f.gpu) {
    std::tie(f.dense_over, f.expert_over) =
        roofline_overheads(o.computes, 1.0 / p.hw.gpu_memory_bandwidth, 1.0 / p.hw.gpu_bf16_flops);
    f.cflops.points = pts["compute_flops"].first.size();
    f.cflops.slope = 1.0 / p.hw.gpu_bf16_flops;
  } else {
    f.cflops = fit_line(pts["compute_flops"].first, pts["compute_flops"].second, true);
  }
  // Expert compute on fresh weights (1 token): no memory-bound term (the weights come from the last-level
  // cache; a line through the dense and resident experts gives a fixed cost above a fresh expert's whole time
  // here), so their fixed cost is the mean of time - flops / peak (the cost model adds the FLOPs back). Only
  // where a CPU thread emulates the GPU stream: on a GPU the rates are the datasheet's and the fixed costs
  // fitted per kind above.
  if (!f.gpu) {
    const auto& [flops, secs] = pts["compute_fresh"];
    std::vector<double> peak;
    for (double x : flops) peak.push_back(x * f.cflops.slope);
    f.fresh = fit_offset(peak, secs);
  }
  // gpu.expert_gemm_overhead and gpu.dense_gemm_overhead: each kind's ops of 2+ tokens (GEMMs), the mean of
  // time - roofline at the fitted rates, mean-preserving like the fresh experts' fixed cost. Only where a CPU
  // thread emulates the GPU stream.
  if (!f.gpu) std::tie(f.dense_gemm, f.gemm) = roofline_overheads(o.gemms, f.cbytes.slope, f.cflops.slope);
  // Where calibrate timed the run's GEMMs at a ladder of token counts (harness/calibrate/gemm_probe.h): each
  // kind's line over its FLOPs instead -- what a batch's decode GEMMs of a few tokens cost, which the runs of
  // batch 1 do not show.
  if (!f.gpu && probe) {
    GemmOps runs;
    for (const ComputeOp& c : o.gemms) {
      runs.flops[c.expert].push_back(c.flops);
      runs.seconds[c.expert].push_back(c.seconds);
    }
    f.gemm_lines = lines_on_runs(*probe, runs);
    if (f.gemm_lines->line[0].points >= 2) f.dense_gemm = f.gemm_lines->line[0];
    if (f.gemm_lines->line[1].points >= 2) f.gemm = f.gemm_lines->line[1];
  }
}

// Warns of fits that leave a large residual and refuses any that came out non-positive.
void check_fits(const RunFits& f, bool quiet) {
  for (const auto& [what, fit] : std::map<std::string, Fit>{{"SSD read", f.read},
                                                            {"SSD read (prefill)", f.bulk},
                                                            {"compute (bytes)", f.cbytes},
                                                            {"compute (flops)", f.cflops},
                                                            {"decompress", f.dec},
                                                            {"recover", f.rec}})
    if (!quiet && fit.points >= 2 && fit.cv_rms > 0.5 &&
        !(f.gpu && what.rfind("compute", 0) == 0))  // GPU: not lines
      warn("calibrate: the " + what + " fit leaves an RMS residual of " +
           strprintf("%.0f%%", 100 * fit.cv_rms) + " of the mean op" + " over " + std::to_string(fit.points) +
           " ops: this machine's op times vary a lot (noisy neighbours, a "
           "shared disk); calibrate again or with a longer trace");
  if (f.read.slope <= 0 || f.cbytes.slope <= 0 || !(f.cflops.slope > 0) || (f.split && f.dec.slope <= 0))
    throw Error(
        "calibrate: a fit came out non-positive (times do not grow with size); the calibration run was too "
        "short or too noisy");
}

void put_ssd_section(Json& prof, const RunArgs& a, const ExecRunOptions& eo, const RunFits& f,
                     const SourcedValue& val) {
  const std::string& by = val.by;
  const Fit& read = f.read;
  const Fit& bulk = f.bulk;
  const bool phases = f.phases;
  prof["ssd"] = {{"model", "the disk holding " + a.store},
                 {"read_bandwidth",
                  val(1.0 / read.slope, "fit of O_DIRECT chunk reads: latency + bytes / bandwidth", read)},
                 {"read_latency", val(std::max(read.intercept, 0.0), "intercept of the same fit", read)},
                 {"queue_depth", {{"value", eo.io_depth}, {"source", by + "the I/O depth exec ran with"}}}};
  if (phases && bulk.slope > 0) {
    prof["ssd"]["read_bandwidth"]["source"] =
        by + "fit of a decode step's O_DIRECT chunk reads: latency + bytes / bandwidth" +
        strprintf(" (%zu ops, RMS residual %.1f%% of the mean op)", read.points, 100 * read.cv_rms);
    prof["ssd"]["prefill_read_bandwidth"] =
        val(1.0 / bulk.slope,
            "fit of a prefill step's O_DIRECT chunk reads (a bulk load): latency + bytes / bandwidth", bulk);
    prof["ssd"]["prefill_read_latency"] =
        val(std::max(bulk.intercept, 0.0), "intercept of the same fit", bulk);
  }
  auto put_read_cpu = [&](const Fit& fit, const std::string& prefix, const char* which) {
    if (fit.points < 2 || !(fit.intercept > 0 || fit.slope > 0)) return false;
    prof["ssd"][prefix + "read_cpu_overhead"] =
        val(std::max(fit.intercept, 0.0),
            std::string("the I/O thread's CPU time per read (") + which +
                "; the kernel's "
                "O_DIRECT path, checksums, merging), after the device's time and sharing the cores with the "
                "CPU-bound "
                "threads: fixed part of a fit of CPU time = overhead + bytes / bandwidth",
            fit);
    if (fit.slope > 0)
      prof["ssd"][prefix + "read_cpu_bandwidth"] = val(1.0 / fit.slope, "per-byte part of the same fit", fit);
    return true;
  };
  if (put_read_cpu(f.read_cpu, "", phases ? "a decode step's reads" : "every read")) {
    if (phases) put_read_cpu(f.read_cpu_prefill, "prefill_", "a prefill step's reads");
    for (const char* k : {"read_bandwidth", "read_latency", "prefill_read_bandwidth", "prefill_read_latency"})
      if (prof["ssd"].contains(k))
        prof["ssd"][k]["source"] =
            prof["ssd"][k]["source"].get<std::string>() +
            "; the device's part: each read's time less its CPU phase (ssd.read_cpu_*)";
  }
}

// The memory and CPU sections; what the runs could not measure is kept from the base profile.
void put_cpu_section(Json& prof, const PreparedRun& p, const ExecRunOptions& eo, const RunFits& f,
                     const SourcedValue& val) {
  const std::string& by = val.by;
  const bool gpu = f.gpu;
  const bool split = f.split;
  const Fit& rec = f.rec;
  const Fit& dec = f.dec;
  prof["memory"] = p.hw.raw.value("memory", Json::object());
  prof["memory"]["unified"] = gpu ? p.hw.unified_memory : true;
  const double dec_bw = split ? 1.0 / dec.slope : p.hw.cpu_decompress_bandwidth;
  prof["cpu"] = {
      {"model", "this machine's CPU"},
      {"cores", {{"value", eo.workers}, {"source", by + "the CPU workers exec ran with (L)"}}},
      {"memcpy_bandwidth_per_core",
       rec.points >= 2 && f.recover_on_cpu
           ? val(1.0 / rec.slope, "recovery (merge) on a CPU worker: 2 bytes / bandwidth", rec)
           : p.hw.raw["cpu"].value("memcpy_bandwidth_per_core", Json(nullptr))},
      {"flops_per_core", gpu ? p.hw.raw["cpu"].value("flops_per_core", Json(nullptr))
                             : val(1.0 / f.cflops.slope,
                                   "SwiGLU expert and dense GEMMs of 8+ tokens on one thread", f.cflops)}};
  if (prof["cpu"]["flops_per_core"].is_null()) prof["cpu"].erase("flops_per_core");
  if (prof["cpu"]["memcpy_bandwidth_per_core"].is_null())
    throw Error("calibrate: no recovery ran on a CPU worker and the base profile " + p.hw.origin +
                " has no cpu.memcpy_bandwidth_per_core to keep");
  if (f.prefill_slowdown > 0)
    prof["cpu"]["prefill_slowdown"] = {
        {"value", f.prefill_slowdown},
        {"source",
         by + "a prefill step's decompressions: measured work / the decode-step model's estimate (they "
              "share the cores with every other thread of the engine)"}};
  if (f.prefill_recover_slowdown > 0)
    prof["cpu"]["prefill_recover_slowdown"] = {
        {"value", f.prefill_recover_slowdown},
        {"source",
         by + "a prefill step's recoveries on the CPU workers: measured work / the decode-step model's "
              "estimate (on buffers touched for the first time, beside every other thread)"}};
  if (dec_bw > 0)
    prof["cpu"]["decompress_bandwidth_per_core"] =
        split ? val(dec_bw, "E-chunk decompression on a CPU worker: bytes / bandwidth", dec)
              : p.hw.raw["cpu"].value("decompress_bandwidth_per_core", Json(nullptr));
}

void put_gpu_section(Json& prof, const PreparedRun& p, const ExecReport& report, const RunFits& f,
                     const SourcedValue& val) {
  const std::string& by = val.by;
  const Fit& cflops = f.cflops;
  const Fit& cbytes = f.cbytes;
  if (f.gpu) {
    const std::string kept = by + "kept from " + p.hw.origin + ": this GPU's compute ops were launch-bound";
    prof["gpu"] = {
        {"model", report.platform},
        {"bf16_flops", {{"value", p.hw.gpu_bf16_flops}, {"source", kept}}},
        {"memory_bandwidth", {{"value", p.hw.gpu_memory_bandwidth}, {"source", kept}}},
        {"kernel_overhead",
         val(f.dense_over.intercept, "dense compute: mean of time - roofline (one GEMM)", f.dense_over)},
        {"expert_overhead",
         val(f.expert_over.intercept,
             "expert compute: mean of time - roofline (three GEMMs and the activation)", f.expert_over)}};
  } else {
    prof["gpu"] = {
        {"model", "none: a CPU thread emulating a GPU stream"},
        {"bf16_flops",
         val(1.0 / cflops.slope, "expert and dense compute of 8+ tokens: flops / peak", cflops)},
        {"memory_bandwidth",
         val(1.0 / cbytes.slope, "expert and dense compute of 1 token: weight bytes / bandwidth", cbytes)},
        {"kernel_overhead",
         val(cbytes.intercept, "intercept of the 1-token compute fit: fixed cost per compute op", cbytes)}};
    // Experts of 1 token on weights their request just produced (Op::fresh) read them from the last-level
    // cache: the 1-token line above, fitted on resident weights that come from memory, costs them well above
    // their time. Their own fixed cost (calibration.fits.compute_fresh) is written where it has points: on
    // the held-out batch-transfer cells judged by a rule fixed before the runs it brought the cost TPOT
    // closer in most cells and lost no verdict, though later windows left it within their noise
    // (bench/results/batch-transfer-2026-12-06e.md), and the held-out matrix of 2026-11-28 had found it no
    // better (docs/exec.md, "terms on the held-out matrix").
    if (f.fresh.points >= 2)
      prof["gpu"]["fresh_expert_overhead"] =
          val(f.fresh.intercept, "experts of 1 token on fresh weights: mean of time - flops / peak", f.fresh);
    const auto& lines = f.gemm_lines;
    for (int k = 0; k < 2; ++k) {
      const Fit& fit = k ? f.gemm : f.dense_gemm;
      if (fit.points < 2) continue;
      const std::string kind = k ? "expert" : "dense";
      const std::string what =
          k ? "an expert's compute of 2+ tokens (GEMMs): " : "a dense op of 2+ tokens (GEMMs): ";
      const bool line = lines && lines->line[k].points >= 2 && lines->line[k].slope > 0;
      if (!line) {
        prof["gpu"][kind + "_gemm_overhead"] = val(fit.intercept, what + "mean of time - roofline", fit);
        continue;
      }
      const std::string how =
          "line over its FLOPs timed alone at 2-32 tokens at the run's shapes (calibration.gemm_probe); " +
          (lines->ratio[k] > 0
               ? strprintf("on the runs' own ops of 2+ tokens (a prefill's) measured / line = "
                           "%.3f, residuals on those ops",
                           lines->ratio[k])
               : std::string("residuals on its points"));
      prof["gpu"][kind + "_gemm_overhead"] = val(fit.intercept, what + "fixed part of a " + how, fit);
      prof["gpu"][kind + "_gemm_flops"] = val(1.0 / fit.slope, what + "FLOP rate of a " + how, fit);
    }
  }
  if (f.gpu && !f.recover_on_cpu && f.rec.points >= 2) {
    prof["gpu"]["recover_bandwidth"] =
        val(1.0 / f.rec.slope, "the CUDA recovery kernel: 2 bytes / bandwidth + overhead", f.rec);
    prof["gpu"]["recover_overhead"] =
        val(std::max(f.rec.intercept, 0.0), "intercept of the same fit (launch + synchronization)", f.rec);
  }
}

// The link: fitted to the host-to-device copies on a discrete GPU, shared memory otherwise. Returns the
// transfers' fit (empty unless fitted).
Fit put_link_section(Json& prof, OpPoints& o, const PreparedRun& p, const RunFits& f,
                     const SourcedValue& val) {
  auto& pts = o.pts;
  const std::string& by = val.by;
  const bool discrete = f.gpu && !p.hw.unified_memory;
  Fit xfer;
  if (discrete && pts["transfer"].first.size() >= 2) {
    const auto [tn, tx] = std::minmax_element(pts["transfer"].first.begin(), pts["transfer"].first.end());
    xfer = fit_line_or_origin(pts["transfer"].first, pts["transfer"].second, *tx < 1.5 * *tn);
  }
  if (discrete && xfer.points >= 2 && xfer.slope > 0) {
    prof["link"] = {
        {"kind", "pcie"},
        {"bandwidth",
         val(1.0 / xfer.slope, "host-to-device copies (pageable memory): latency + bytes / bandwidth", xfer)},
        {"latency", val(std::max(xfer.intercept, 0.0), "intercept of the same fit", xfer)}};
  } else if (discrete) {
    prof["link"] = p.hw.raw.value("link", Json::object());
  } else {
    prof["link"] = {
        {"kind", "uma"},
        {"bandwidth", {{"value", "100GB/s"}, {"source", by + "shared memory: transfers move no bytes"}}},
        {"latency",
         {{"value", o.transfers ? o.transfer_sum / static_cast<double>(o.transfers) : 0.0},
          {"source", by + "mean of " + std::to_string(o.transfers) + " transfer hand-offs"}}}};
  }
  return xfer;
}

// The distributions of the hand-offs (per resource) and of the pipeline thread's wake-up, pooled over the
// runs (each run's wake-up quantiles averaged index by index): the simulator draws from them.
void put_runtime_distributions(Json& prof, std::span<const MeasuredRun> runs, const std::string& by) {
  std::vector<double> handoffs[kResourceClasses];
  for (const MeasuredRun& r : runs)
    for (const TimelineEvent& e : r.result.result.timeline)
      if (e.timing.handoff >= 0) handoffs[static_cast<size_t>(e.op.resource)].push_back(e.timing.handoff);
  for (size_t i = 0; i < kResourceClasses; ++i) {
    std::vector<double>& v = handoffs[i];
    if (v.size() < kRuntimeQuantiles) continue;
    const size_t n = v.size();
    prof["runtime"][std::string("dispatch_latency_") + resource_class_name(static_cast<ResourceClass>(i)) +
                    "_quantiles"] = {
        {"value", runtime_quantiles(std::move(v))},
        {"source",
         by + "the 2.5%, 7.5%, ..., 97.5% quantiles of this resource's hand-offs to an idle thread (" +
             std::to_string(n) + " of them): the simulator draws each hand-off from them"}};
  }
  std::vector<double> w(kRuntimeQuantiles, 0.0);
  size_t n = 0;
  for (const MeasuredRun& r : runs)
    if (r.counters.completion_quantiles.size() == kRuntimeQuantiles) {
      for (size_t k = 0; k < kRuntimeQuantiles; ++k) w[k] += r.counters.completion_quantiles[k];
      ++n;
    }
  if (n) {
    for (double& x : w) x /= static_cast<double>(n);
    prof["runtime"]["wake_latency_quantiles"] = {
        {"value", w},
        {"source",
         by + "the 2.5%, 7.5%, ..., 97.5% quantiles of the completions that woke the pipeline thread (each "
              "run's, averaged): the simulator draws each wake-up from them"}};
  }
}

// The runtime's own costs: the runs' means, the cores its threads shared, and their distributions.
void put_runtime_section(Json& prof, std::span<const MeasuredRun> runs, const ExecReport& report,
                         const ExecRunOptions& eo, const std::string& by) {
  const auto& c = report.counters;
  prof["runtime"] = {
      {"dispatch_latency",
       {{"value", c.handoff_latency},
        {"source", by + "mean submit-to-start of ops given to an idle thread"}}},
      {"pipeline_latency",
       {{"value", c.pipeline_latency}, {"source", by + "mean pipeline work per completed op"}}},
      {"wake_latency",
       {{"value", c.completion_latency},
        {"source", by + "mean end-to-seen of completions that woke the pipeline thread"}}},
      {"plan_latency_per_op",
       {{"value", c.plan_latency_per_op},
        {"source",
         by + "the pipeline's work to plan a layer invocation up to its first submission, per op planned"}}},
      {"plan_latency_fixed",
       {{"value", c.plan_latency_fixed},
        {"source", by + "and per invocation planned (least squares over the run's planning calls)"}}},
      {"plan_tail_per_op",
       {{"value", c.plan_tail_per_op},
        {"source",
         by + "the rest of a planning call (submitting, waking units, freeing buffers), per op planned"}}},
      {"plan_tail_fixed",
       {{"value", c.plan_tail_fixed},
        {"source", by + "and per invocation planned (least squares over the run's planning calls)"}}}};
  prof["runtime"]["cpu_cores"] = {
      {"value", machine_cores()},
      {"source", by + "the CPUs exec could run on; the CPU-bound threads (" + std::to_string(eo.workers) +
                     " CPU workers" + (eo.gpu ? "" : " and the GPU stream's thread") + ") share them"}};
  prof["runtime"]["gpu_stream_on_cpu"] = {
      {"value", !eo.gpu},
      {"source", by + (eo.gpu ? "exec ran the GPU stream on a CUDA device"
                              : "no CUDA GPU: exec's GPU stream is a CPU thread")}};
  for (size_t i = 0; i < kResourceClasses; ++i)
    prof["runtime"][std::string("dispatch_latency_") + resource_class_name(static_cast<ResourceClass>(i))] = {
        {"value", c.handoff[i]},
        {"source", by + "mean submit-to-start of this resource's ops given to an idle thread"}};
  put_runtime_distributions(prof, runs, by);
  for (size_t i = 0; i < kResourceClasses; ++i)
    prof["runtime"][std::string("turnaround_") + resource_class_name(static_cast<ResourceClass>(i))] = {
        {"value", c.turnaround[i]},
        {"source", by + "mean gap between two ops of one unit when the second was waiting"}};
}

namespace trace_calibration_detail {
// The profile's "calibration" section: what was run, and every fit.
Json calibration_json(const RunArgs& a, const CalibrationStamp& st, const ExecRunOptions& eo, size_t runs,
                      const ExecReport& report, const RunFits& f, const Fit& xfer) {
  const bool phases = f.phases;
  Json cal;
  cal["date"] = st.date.c_str();
  cal["host"] = st.host;
  cal["store"] = a.store;
  cal["trace"] = a.trace;
  cal["model"] = a.load.model;
  cal["system"] = a.system.text();
  cal["workers"] = eo.workers;
  cal["runs"] = runs;
  cal["direct_io"] = report.direct_io;
  cal["io"] = report.io;
  cal["platform"] = report.platform;
  cal["fits"] = {
      {"ssd_read", fit_json(f.read, phases ? "latency + bytes / bandwidth (decode steps' reads)"
                                           : "latency + bytes / bandwidth")},
      {"ssd_read_prefill", fit_json(f.bulk, "latency + bytes / bandwidth (prefill steps' reads)")},
      {"ssd_read_cpu",
       fit_json(f.read_cpu, phases ? "overhead + bytes / bandwidth of the I/O thread's CPU time "
                                     "(decode steps' reads)"
                                   : "overhead + bytes / bandwidth of the I/O thread's CPU time")},
      {"ssd_read_cpu_prefill", fit_json(f.read_cpu_prefill, "the same, prefill steps' reads")},
      {"decompress", fit_json(f.dec, "bytes / bandwidth (decode steps')")},
      {"recover", fit_json(f.rec, "overhead + 2 bytes / bandwidth (decode steps')")},
      {"transfer", fit_json(xfer, "latency + bytes / bandwidth (discrete GPU)")},
      {"compute_bytes", fit_json(f.cbytes, "overhead + weight bytes / bandwidth (1 token, decode steps')")},
      {"compute_fresh", fit_json(f.fresh, "mean of time - flops / peak (experts of 1 token, fresh weights)")},
      {"compute_flops", fit_json(f.cflops, "flops / peak (8+ tokens)")},
      {"compute_expert_gemm",
       fit_json(f.gemm, f.gemm_lines && f.gemm_lines->line[1].points >= 2
                            ? "fixed + flops / rate, timed alone (calibration.gemm_probe); residuals on the "
                              "experts of 2+ tokens"
                            : "mean of time - roofline (experts of 2+ tokens)")},
      {"compute_dense_gemm",
       fit_json(f.dense_gemm,
                f.gemm_lines && f.gemm_lines->line[0].points >= 2
                    ? "fixed + flops / rate, timed alone (calibration.gemm_probe); residuals on "
                      "the dense ops of 2+ tokens"
                    : "mean of time - roofline (dense ops of 2+ tokens)")}};
  // Main's lines from the same ops, beside the ones the profile takes (where they differ), for comparison.
  const auto beside = [&](const char* name, const auto& fit, const char* how) {
    if (fit.points > 0) cal["fits"][name] = fit_json(fit, how);
  };
  beside("ssd_read_io_thread", f.read_io,
         "latency + bytes / bandwidth of the I/O thread's reads alone (decode steps'; ssd_read adds the CPU "
         "workers' fused reads)");
  beside("ssd_read_cpu_io_thread", f.read_cpu_io,
         "overhead + bytes / bandwidth of the I/O thread's CPU time alone (decode steps' reads; "
         "ssd_read_cpu adds the CPU workers' fused reads' tails)");
  beside("ssd_read_cpu_prefill_io_thread", f.read_cpu_prefill_io, "the same, prefill steps'");
  beside("decompress_with_read_tail", f.dec_tail,
         "bytes / bandwidth with each fused op's read CPU tail left in its point (decode steps'; decompress "
         "takes it out: the simulator charges the worker that tail apart)");
  beside("ssd_read_prefill_io_thread", f.bulk_io, "the same, prefill steps' reads");
  if (f.gpu)
    cal["fits"]["compute_overheads"] = {{"dense", fit_json(f.dense_over, "mean of time - roofline")},
                                        {"expert", fit_json(f.expert_over, "mean of time - roofline")}};
  return cal;
}
}  // namespace trace_calibration_detail

// The fits of the measured runs' ops: a whole profile, every value's source saying which fit gave it, and a
// "calibration" section with the fits. `p.hw` (the base profile) gives what the runs cannot measure.
// `quiet`: no warnings and no summary (the pilot's fit, which only plans the measured runs).
// `reads_whole`: each run's MeasuredRun::whole in place of its work (no ssd.read_cpu_*).
Json fit_runs(const RunArgs& a, const std::string& name, const PreparedRun& p, const ExecRunOptions& eo,
              std::span<const MeasuredRun> runs, const ExecReport& report, const CalibrationStamp& st,
              bool quiet, bool reads_whole = false, const GemmProbe* probe = nullptr) {
  OpPoints o = collect_op_points(runs, reads_whole);
  RunFits f;
  if (!o.fused.empty()) {
    f.dec_tail = decompress_line(o);
    f.read_cpu_io = fit_read_cpu(o, "read_cpu");
    f.read_cpu_prefill_io = fit_read_cpu(o, "read_cpu_prefill");
    fused_tails_on_read_cpu_line(o);
    fused_without_tail(o);
  }
  pool_phases(o);
  f.gpu = eo.gpu;
  fit_ssd_reads(o, quiet, f);
  fit_worker_ops(o, quiet, f);
  fit_compute_ops(o, p, probe, f);
  check_fits(f, quiet);

  const SourcedValue val{st.by};
  Json prof;
  prof["name"] = name.empty() ? "calibrated-" + st.host : name;
  prof["display_name"] = "This machine (" + st.host + "), calibrated " + st.date +
                         (f.gpu ? "" : "; no GPU: exec's GPU stream is one CPU thread");
  put_ssd_section(prof, a, eo, f, val);
  put_cpu_section(prof, p, eo, f, val);
  put_gpu_section(prof, p, report, f, val);
  const Fit xfer = put_link_section(prof, o, p, f, val);
  put_runtime_section(prof, runs, report, eo, st.by);
  prof["calibration"] = trace_calibration_detail::calibration_json(a, st, eo, runs.size(), report, f, xfer);
  return prof;
}

// Serves the calibration trace on exec, with one progress bar over every run: the pilots, the measured runs
// and what o.between_runs serves between them.
class TraceServer {
 public:
  TraceServer(const PreparedRun& p, const ExecRunOptions& eo, const TraceCalibrationOptions& o, bool pilot)
      : p_(p),
        eo_(eo),
        o_(o),
        cfg_(p.cfg),
        steps_(p.stream.steps()),
        // (one pilot counted; a further one, when the first's fit moves the plan, adds its steps)
        total_(steps_ * (o.repeat + (pilot ? 1 : 0)) + (o.between_runs ? o.between_steps * o.repeat : 0)) {
    cfg_.record_timeline = true;
    cfg_.on_step = [this](uint64_t done, uint64_t) { progress(done); };  // `this` stays put: not copyable
  }
  TraceServer(const TraceServer&) = delete;
  TraceServer& operator=(const TraceServer&) = delete;

  // A further pilot run: its steps join the total.
  void add_pilot() {
    total_ += steps_;
    if (bar_) bar_->set_total(total_);
  }

  // --repeat N: the trace N times, every op of every run in the fits and the runtime's means averaged, so
  // that one unlucky run (this machine's disk and CPU vary by 10-40% from one run to the next) does not set
  // the profile. `planner`: the profile whose estimates the runs plan and schedule with.
  MeasuredRuns serve(const HardwareProfile& planner, uint32_t n, bool measured) {
    MeasuredRuns m;
    std::vector<exec::ExecCounters> counters;
    for (uint32_t i = 0; i < n; ++i) {
      MeasuredRun r;
      r.result = run_exec(cfg_, p_.stream, p_.trace.info(), p_.costs, planner, eo_, nullptr, &m.report);
      r.work = op_work(r.result.result.timeline, machine_cores(), eo_.gpu, m.report.direct_io);
      r.direct_io = m.report.direct_io;
      if (m.report.direct_io && measured)
        r.whole = op_work(r.result.result.timeline, machine_cores(), eo_.gpu, false);
      r.counters = m.report.counters;
      counters.push_back(r.counters);
      m.runs.push_back(std::move(r));
      done_before_ += steps_;
      if (measured && o_.between_runs) {
        o_.between_runs(planner, [this](uint64_t done) { progress(done); });
        done_before_ += o_.between_steps;
      }
    }
    m.report.counters = mean_runtime(counters);
    return m;
  }

  void finish() {
    if (bar_) bar_->finish();
  }

 private:
  void progress(uint64_t done) {
    if (!bar_) bar_.emplace("calibrate", total_, "steps");
    bar_->set(done_before_ + done);
  }

  const PreparedRun& p_;
  const ExecRunOptions& eo_;
  const TraceCalibrationOptions& o_;
  serving::SystemConfig cfg_;
  std::optional<Progress> bar_;
  const uint64_t steps_;
  uint64_t done_before_ = 0;
  uint64_t total_;
};

std::string plan_of(const serving::RunResult& r) {
  return plan_ratios(r.plan);
}

// What the pilots leave: the profile the measured runs plan with, and what each pilot served and its fit
// plans.
struct Pilots {
  HardwareProfile planner;
  Json plans = Json::array();
  bool fixed = false;  // the last pilot's fit plans what it was served with
};

// The pilots: each serves the trace once under the last one's fit (the first under the base profile), until
// a fit plans ZipMoE's pools as its own run was served (Alg. 4 run on the fit reproduces the plan the fit was
// measured under), so that the measured runs exercise the plan the calibrated profile makes.
Pilots run_pilots(const RunArgs& a, const TraceCalibrationOptions& o, const PreparedRun& p,
                  const ExecRunOptions& eo, const CalibrationStamp& st, bool pilot, TraceServer& server,
                  const GemmProbe* probe) {
  Pilots r{p.hw};
  for (uint32_t i = 0; pilot && i < o.pilot_runs && !r.fixed; ++i) {
    if (i > 0) server.add_pilot();
    const MeasuredRuns one = server.serve(r.planner, 1, false);
    const std::string served = plan_of(one.runs[0].result);
    r.planner = hardware_from_json(fit_runs(a, o.name, p, eo, one.runs, one.report, st, true, false, probe),
                                   strprintf("pilot run %u's fit", i + 1));
    serving::SystemConfig pc = p.cfg;
    pc.record_timeline = false;
    const std::string fit_plan = plan_of(run_simulated(pc, p.stream, p.trace.info(), p.costs, r.planner,
                                                       sim_options(a, r.planner, eo.workers)));
    r.plans.push_back({{"served", served}, {"fit_plans", fit_plan}});
    r.fixed = fit_plan == served;
  }
  if (pilot) {
    std::string line;
    for (const Json& x : r.plans)
      line += strprintf("%sserved %s, its fit plans %s", line.empty() ? "" : "; ",
                        x["served"].get<std::string>().c_str(), x["fit_plans"].get<std::string>().c_str());
    std::fprintf(stderr, "pilot run%s: %s%s\n", r.plans.size() == 1 ? "" : "s", line.c_str(),
                 r.fixed ? " (a fixed point: the measured runs are served so)" : "");
  }
  if (pilot && !r.fixed)
    warn(strprintf(
        "calibrate: after %u pilot run%s the fit still moves ZipMoE's pools (the last was served %s, its "
        "fit plans %s); the measured runs are planned with the last pilot's fit (more: --pilot-runs)",
        o.pilot_runs, o.pilot_runs == 1 ? "" : "s", r.plans.back()["served"].get<std::string>().c_str(),
        r.plans.back()["fit_plans"].get<std::string>().c_str()));
  return r;
}

// Three runs or more: every fitted value becomes the median of the runs' own fits. One run far from the
// others (a disk or a shared machine can make one calibration run much slower than the rest) then moves the
// profile no more than it moves the median of the validation's runs, which is what the profile is checked
// against.
Json fit_median_profile(const RunArgs& a, const TraceCalibrationOptions& o, const PreparedRun& p,
                        const ExecRunOptions& eo, const MeasuredRuns& m, const CalibrationStamp& st,
                        bool reads_whole, const GemmProbe* probe) {
  Json fitted = fit_runs(a, o.name, p, eo, m.runs, m.report, st, reads_whole, reads_whole, probe);
  if (m.runs.size() < 3) return fitted;
  std::vector<Json> own;
  try {
    for (size_t i = 0; i < m.runs.size(); ++i) {
      ExecReport r = m.report;
      r.counters = m.runs[i].counters;
      own.push_back(fit_runs(a, o.name, p, eo, std::span<const MeasuredRun>(&m.runs[i], 1), r, st, true,
                             reads_whole, probe));
    }
  } catch (const Error& e) {
    own.clear();
    if (!reads_whole)
      warn(std::string("calibrate: one run alone could not be fitted (") + e.what() +
           "); the profile keeps the fit over all runs instead of the median of the runs' own fits");
  }
  if (own.empty()) return fitted;
  take_median_of_runs(fitted, own);
  // How far the runs' own lines lay apart at the mean op, the widest first: a calibration of this machine
  // moves by about as much (the runs' median is one draw of it). A note, not a warning: on a small shared
  // machine the runs' reads lie further apart than validate's targets even when it is quiet
  // (bench/results/batch-transfer-2026-12-06.md).
  if (!reads_whole) {
    std::vector<std::pair<double, std::string>> lines;
    for (const auto& [fit, v] : fitted["calibration"]["runs_spread"].items())
      lines.emplace_back(v.get<double>(), fit);
    std::sort(lines.rbegin(), lines.rend());
    std::string note;
    for (size_t i = 0; i < lines.size() && i < 3; ++i)
      note += strprintf("%s%s %.0f%%", i ? ", " : "", lines[i].second.c_str(), 100 * lines[i].first);
    if (!note.empty())
      std::fprintf(stderr, "the %zu runs' own fits at the mean op lie apart by (max / min - 1): %s\n",
                   own.size(), note.c_str());
  }
  return fitted;
}

// The profile, and the ablation: the same runs fitted with each read whole (the model without the I/O
// thread's CPU work), where the profile has that work.
struct FittedProfiles {
  Json prof;
  std::optional<Json> whole;
};

FittedProfiles fit_profiles(const RunArgs& a, const TraceCalibrationOptions& o, const PreparedRun& p,
                            const ExecRunOptions& eo, const MeasuredRuns& m, const CalibrationStamp& st,
                            const GemmProbe* probe) {
  FittedProfiles r{fit_median_profile(a, o, p, eo, m, st, false, probe), std::nullopt};
  Json& prof = r.prof;
  if (m.runs.front().whole && prof["ssd"].contains("read_cpu_overhead")) {
    try {
      r.whole = fit_median_profile(a, o, p, eo, m, st, true, probe);
      (*r.whole)["name"] = prof["name"].get<std::string>() + "-reads-whole";
    } catch (const Error&) {
      r.whole.reset();  // its fits failed where the profile's did not: no ablation
    }
  }
  if (!prof["calibration"].contains("values_from"))
    prof["calibration"]["values_from"] =
        m.runs.size() == 1 ? "the run's fit" : "the fit over every run's ops";
  return r;
}

void print_calibrated(const CalibrationStamp& st, const Json& prof, const HardwareProfile& fitted,
                      const ExecRunOptions& eo, const std::string& out) {
  const bool bulk = prof["ssd"].contains("prefill_read_bandwidth");
  const bool cpu_recover = prof["calibration"]["fits"]["recover"]["points"].get<size_t>() >= 2;
  std::fprintf(
      stderr,
      "calibrated %s: SSD %s + %s/s per read%s, decompress %s/s per core, recover %s/s, compute %.2f "
      "GFLOP/s and %s/s of weights; runtime hand-off %s, pipeline %s per op, wake %s -> %s\n",
      st.host.c_str(), format_seconds(fitted.ssd_read_latency).c_str(),
      format_bytes(static_cast<uint64_t>(fitted.ssd_read_bandwidth)).c_str(),
      bulk ? strprintf(" (prefill: %s + %s/s)", format_seconds(fitted.ssd_prefill_read_latency).c_str(),
                       format_bytes(static_cast<uint64_t>(fitted.ssd_prefill_read_bandwidth)).c_str())
                 .c_str()
           : "",
      format_bytes(static_cast<uint64_t>(fitted.cpu_decompress_bandwidth)).c_str(),
      cpu_recover ? format_bytes(static_cast<uint64_t>(eo.gpu ? fitted.gpu_recover_bandwidth
                                                              : fitted.cpu_memcpy_bandwidth))
                        .c_str()
                  : "-",
      1e-9 * fitted.gpu_bf16_flops, format_bytes(static_cast<uint64_t>(fitted.gpu_memory_bandwidth)).c_str(),
      format_seconds(fitted.raw["runtime"]["dispatch_latency"]["value"].get<double>()).c_str(),
      format_seconds(fitted.raw["runtime"]["pipeline_latency"]["value"].get<double>()).c_str(),
      format_seconds(fitted.raw["runtime"]["wake_latency"]["value"].get<double>()).c_str(), out.c_str());
}

// In sample: the fitted profile simulating the trace it was fitted to, against the measured runs' median
// TPOT. Far off means the cost model misses something this machine does even on the ops it was fitted to
// (or the runs varied: their spread is beside it).
struct InSample {
  std::vector<double> tpots, ttfts;  // each measured run's
  double measured = 0;               // the runs' median TPOT
  std::string runs_plan;             // the pools the runs were served with ("" without pools)
  ServedPlanRun served;              // the profile's simulation, under runs_plan where the plans differ
  double own_plan_tpot = std::nan(""), means_tpot = std::nan(""), whole_tpot = std::nan("");
  // Derived from the above by compare_in_sample().
  double simulated = 0, measured_ttft = 0, simulated_ttft = 0, ttft_error = 0, error = 0;
};

InSample measured_figures(const MeasuredRuns& m) {
  InSample s;
  for (const MeasuredRun& r : m.runs) {
    const LatencySummary f = latency_summary_of(r.result.result);
    s.tpots.push_back(f.tpot);
    s.ttfts.push_back(f.ttft);
  }
  s.measured = quantile(s.tpots, 0.5);
  return s;
}

void simulate_in_sample(const RunArgs& a, const PreparedRun& p, const ExecRunOptions& eo,
                        const MeasuredRuns& m, const HardwareProfile& fitted,
                        const std::optional<Json>& whole, InSample& s) {
  serving::SystemConfig scfg = p.cfg;
  scfg.record_timeline = true;
  const sim::SimOptions so = sim_options(a, fitted, eo.workers);
  // The runs were planned with another profile (the pilot's fit) and the fitted one may plan ZipMoE's pools
  // otherwise: the in-sample error is then taken under the runs' own plan, the error under the profile's own
  // plan kept beside.
  s.runs_plan = plan_of(m.runs[0].result);
  s.served = simulate_served_plan(scfg, p, fitted, so, s.runs_plan);
  s.own_plan_tpot = s.served.own_plan ? s.served.own_plan->tpot : std::nan("");
  if (s.served.own_plan)
    scfg.system = serving::with_system_param(scfg.system, "pools", s.runs_plan, "",
                                             true);  // the ablations below under the same plan
  // The same with every runtime cost at its mean (the model before the distributions): how much they change.
  {
    scfg.record_timeline = false;
    sim::SimOptions means = so;
    means.charge_means();
    s.means_tpot =
        latency_summary_of(run_simulated(scfg, p.stream, p.trace.info(), p.costs, fitted, means).result).tpot;
  }
  // And the ablation's profile (reads whole, no ssd.read_cpu_*) on the same runs: what the I/O thread's CPU
  // work in the model changes.
  if (whole) {
    const HardwareProfile wh = hardware_from_json(*whole, "the profile fitted with each read whole");
    s.whole_tpot =
        latency_summary_of(
            run_simulated(scfg, p.stream, p.trace.info(), p.costs, wh, sim_options(a, wh, eo.workers)).result)
            .tpot;
  }
}

void compare_in_sample(InSample& s) {
  const serving::RunResult& sim = s.served.run;
  s.simulated = latency_summary_of(sim.result).tpot;
  // TTFT too: a prefill step's models (its reads, its CPU-worker slowdowns, its experts of 2+ tokens) are
  // fitted on the same runs, and TPOT does not see them.
  s.measured_ttft = quantile(s.ttfts, 0.5);
  s.simulated_ttft = latency_summary_of(sim.result).ttft;
  s.ttft_error = s.measured_ttft > 0 ? s.simulated_ttft / s.measured_ttft - 1 : std::nan("");
  s.error = s.measured > 0 ? s.simulated / s.measured - 1 : std::nan("");
}

// Per op kind: ops and the seconds from their start to their end (in the simulator: with the contention
// model's stretch), split by phase, since the cost models of several kinds differ between a prefill and a
// decode step.
Json op_kinds_json(const std::vector<TimelineEvent>& timeline) {
  std::map<std::string, std::pair<uint64_t, double>> sums;
  for (const TimelineEvent& e : timeline) {
    auto& [ops, seconds] = sums[op_kind_label(e.op) + (e.op.prefill ? " (prefill)" : "")];
    ++ops;
    seconds += e.timing.end - e.timing.start;
  }
  Json kinds = Json::object();
  for (const auto& [k, s] : sums) kinds[k] = {{"ops", s.first}, {"seconds", s.second}};
  return kinds;
}

Json in_sample_json(const MeasuredRuns& m, const InSample& s) {
  Json per_run =
      Json::array();  // each run's TPOT and time per op kind: how much the runs differed, and where
  for (size_t i = 0; i < m.runs.size(); ++i)
    per_run.push_back(
        {{"tpot_s", s.tpots[i]}, {"op_kinds", op_kinds_json(m.runs[i].result.result.timeline)}});
  const double measured = s.measured;
  const auto [lo, hi] = std::minmax_element(s.tpots.begin(), s.tpots.end());
  Json in;
  in["runs_tpot_s"] = s.tpots;
  in["exec_tpot_median_s"] = measured;
  in["exec_tpot_spread"] = *lo > 0 ? *hi / *lo - 1 : 0.0;
  in["sim_tpot_s"] = s.simulated;
  in["runs"] = per_run;
  in["sim_op_kinds"] = op_kinds_json(s.served.run.result.timeline);
  in["tpot_error"] = std::isfinite(s.error) ? Json(s.error) : Json(nullptr);
  in["tpot_error_runtime_means"] = measured > 0 ? Json(s.means_tpot / measured - 1) : Json(nullptr);
  if (std::isfinite(s.whole_tpot) && measured > 0) in["tpot_error_reads_whole"] = s.whole_tpot / measured - 1;
  in["runs_ttft_s"] = s.ttfts;
  in["exec_ttft_median_s"] = s.measured_ttft;
  in["sim_ttft_s"] = s.simulated_ttft;
  in["ttft_error"] = std::isfinite(s.ttft_error) ? Json(s.ttft_error) : Json(nullptr);
  if (std::isfinite(s.own_plan_tpot)) {
    in["simulated_under"] = "the runs' plan (" + s.runs_plan + "), the pools fixed to it";
    in["tpot_error_own_plan"] = measured > 0 ? Json(s.own_plan_tpot / measured - 1) : Json(nullptr);
  }
  return in;
}

void print_in_sample(const InSample& s, const Json& in) {
  const double measured = s.measured;
  const std::string& profile_plan = s.served.profile_plan;
  const std::string own_plan_note =
      std::isfinite(s.own_plan_tpot) && measured > 0
          ? strprintf(" (under the runs' plan %s; under its own plan, %s: %+.2f%%)", s.runs_plan.c_str(),
                      profile_plan.c_str(), 100 * (s.own_plan_tpot / measured - 1))
          : std::string();
  const std::string means_note =
      std::isfinite(s.means_tpot) && measured > 0
          ? strprintf("; every runtime cost at its mean: %+.2f%%", 100 * (s.means_tpot / measured - 1))
          : std::string();
  const std::string whole_note =
      std::isfinite(s.whole_tpot) && measured > 0
          ? strprintf("; fitted with each read whole (no I/O-thread CPU work): %+.2f%%",
                      100 * (s.whole_tpot / measured - 1))
          : std::string();
  const std::string ttft_note =
      std::isfinite(s.ttft_error)
          ? strprintf("; TTFT %s against %s: %+.2f%%", format_seconds(s.simulated_ttft).c_str(),
                      format_seconds(s.measured_ttft).c_str(), 100 * s.ttft_error)
          : std::string();
  std::fprintf(
      stderr,
      "in sample: the profile simulates the calibration trace at TPOT %s against %s measured (median "
      "of %zu run%s, spread %.1f%%): %+.2f%%%s%s\n",
      format_seconds(s.simulated).c_str(), format_seconds(measured).c_str(), s.tpots.size(),
      s.tpots.size() == 1 ? "" : "s", 100 * in["exec_tpot_spread"].get<double>(), 100 * s.error,
      (own_plan_note + means_note + whole_note).c_str(), ttft_note.c_str());
}

// Where an in-sample error comes from: each op kind's simulated seconds against the run closest to the
// median.
void print_in_sample_by_op_kind(const InSample& s, const Json& in) {
  const std::vector<double>& tpots = s.tpots;
  const double measured = s.measured;
  size_t mid = 0;
  for (size_t i = 1; i < tpots.size(); ++i)
    if (std::abs(tpots[i] - measured) < std::abs(tpots[mid] - measured)) mid = i;
  const Json& ek = in["runs"][mid]["op_kinds"];
  const Json& sk = in["sim_op_kinds"];
  std::string line;
  for (const auto& [k, v] : sk.items()) {
    const double sec = v["seconds"].get<double>();
    if (!ek.contains(k) || sec < 1e-3) continue;
    const double e = ek[k]["seconds"].get<double>();
    if (e <= 0) continue;
    line += strprintf("%s%s %s against %s (%+.1f%%)", line.empty() ? "" : "; ", k.c_str(),
                      format_seconds(sec).c_str(), format_seconds(e).c_str(), 100 * (sec / e - 1));
  }
  if (!line.empty())
    std::fprintf(stderr, "in sample by op kind (simulated start-to-end seconds against run %zu's): %s\n",
                 mid + 1, line.c_str());
}

}  // namespace

// The probe's token ladder reaches a decode step's batch of up to 16 and a prefill chunk beyond it (a line
// fitted over 2-32 tokens; a larger op extrapolates it).
constexpr uint32_t kGemmProbeTokens = 32;

Json trace_profile(RunArgs& a, const TraceCalibrationOptions& o, const CalibrationStamp& st,
                   Json* whole_out) {
  PreparedRun p;
  prepare_run(a, p);
  const ExecRunOptions eo = exec_options(a, p.hw);
  const bool pilot = o.pilot_runs > 0 && serving::system_traits(p.cfg.system).plans_pools();
  // On a CPU emulating the GPU stream, the GEMMs' growth with their tokens, timed before any run (alone).
  std::optional<GemmProbe> probe;
  if (!eo.gpu && o.gemm_probe) probe = probe_gemms(eo.store, p.costs.costs.dense_bytes, kGemmProbeTokens);
  const GemmProbe* gp = probe ? &*probe : nullptr;
  TraceServer server(p, eo, o, pilot);
  const Pilots pilots = run_pilots(a, o, p, eo, st, pilot, server, gp);
  const MeasuredRuns m = server.serve(pilots.planner, o.repeat, true);
  server.finish();
  FittedProfiles fitted_profiles = fit_profiles(a, o, p, eo, m, st, gp);
  Json& prof = fitted_profiles.prof;
  if (probe) prof["calibration"]["gemm_probe"] = gemm_probe_json(*probe);

  InSample s = measured_figures(m);
  const HardwareProfile fitted = hardware_from_json(prof, a.out);
  print_calibrated(st, prof, fitted, eo, a.out);
  simulate_in_sample(a, p, eo, m, fitted, fitted_profiles.whole, s);
  compare_in_sample(s);
  const Json in = in_sample_json(m, s);
  prof["calibration"]["in_sample"] = in;
  prof["calibration"]["planned_with"] = pilots.planner.origin;
  // The batch the runs were served at: a profile carried to another batch is a transfer (docs/exec.md).
  prof["calibration"]["batch"] = a.batch;
  if (pilot)
    prof["calibration"]["pilot"] = {{"hardware", p.hw.origin},
                                    {"plan", pilots.plans[0]["served"]},
                                    {"runs", pilots.plans},
                                    {"fixed_point", pilots.fixed},
                                    {"runs_plan", s.runs_plan}};
  const std::string& profile_plan = s.served.profile_plan;
  if (!s.runs_plan.empty()) {
    prof["calibration"]["in_sample"]["runs_plan"] = s.runs_plan;
    prof["calibration"]["in_sample"]["profile_plan"] = profile_plan;
  }
  print_in_sample(s, in);
  print_in_sample_by_op_kind(s, in);
  if (s.runs_plan != profile_plan)
    warn("calibrate: the calibrated profile plans ZipMoE's pools as " + profile_plan +
         ", but the calibration runs " + "were served with " + s.runs_plan + " (planned with " +
         pilots.planner.origin +
         "): they measured another mix of "
         "ops than runs with this profile will make; calibrate again with --hw " +
         a.out);
  if (whole_out && fitted_profiles.whole) *whole_out = std::move(*fitted_profiles.whole);
  return prof;
}

ServedPlanRun simulate_served_plan(const serving::SystemConfig& cfg, const PreparedRun& p,
                                   const HardwareProfile& hw, const sim::SimOptions& so,
                                   const std::string& served) {
  ServedPlanRun r;
  r.run = run_simulated(cfg, p.stream, p.trace.info(), p.costs, hw, so);
  r.profile_plan = plan_ratios(r.run.plan);
  if (!served.empty() && served != r.profile_plan) {
    r.own_plan = latency_summary_of(r.run.result);
    serving::SystemConfig pinned = cfg;
    pinned.system = serving::with_system_param(cfg.system, "pools", served, "", true);
    r.run = run_simulated(pinned, p.stream, p.trace.info(), p.costs, hw, so);
  }
  return r;
}

}  // namespace moesim::harness
