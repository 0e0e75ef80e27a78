// `moesim calibrate`: fits the simulator's cost models to this machine and writes a hardware profile.
//   moesim calibrate --store S --trace T --model M [--system zipmoe] [--budget B] [--workers L] -o profile.json
// It serves the calibration trace for real (`moesim exec`, the same code paths every later exec runs), records
// every op's duration, and fits by least squares (Eigen) the linear cost models of sim/cost_model.h and
// sim/resources.h:
//   ssd.read_latency, ssd.read_bandwidth        read  = latency + bytes / bandwidth (SM- and E-chunk reads)
//   cpu.decompress_bandwidth_per_core           decompress = bytes / bandwidth (through the origin)
//   cpu.memcpy_bandwidth_per_core               recover on a CPU worker = 2 bytes / bandwidth
//   gpu.memory_bandwidth, gpu.bf16_flops        expert and dense compute = max(bytes / bandwidth, flops / peak):
//                                               bandwidth from ops of 1-2 tokens, peak from ops of 8+ tokens
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
// date, host, store, trace and every fit. Calibrate on one trace and validate on another (`moesim validate`).
#include <unistd.h>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/exec_run.h"
#include "cli/run_setup.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/run_info.h"
#include "core/units.h"
#include "core/warnings.h"

namespace moesim::cli {
namespace {

struct CalibrateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  std::string name;
};

struct Fit {
  double intercept = 0, slope = 0;
  size_t points = 0;
  double rel_rms = 0;  // sqrt(mean(((fit - y) / y)^2))
};

// Ordinary least squares of y = a + b x (or y = b x with through_origin). Unweighted on purpose: the fitted
// line then reproduces the total time of the ops (residuals sum to zero with an intercept), which is what
// TPOT adds up; weighting by 1/y fits the typical op instead and, with the long tail of preempted ops on a
// busy machine, under-estimated the total decompression time by a quarter.
Fit fit_line(const std::vector<double>& x, const std::vector<double>& y, bool through_origin) {
  Fit f;
  f.points = x.size();
  if (x.size() < 2) return f;
  const int cols = through_origin ? 1 : 2;
  Eigen::MatrixXd A(static_cast<Eigen::Index>(x.size()), cols);
  Eigen::VectorXd b(static_cast<Eigen::Index>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double w = 1.0;
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
  double ss = 0;
  size_t n = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (y[i] > 0) {
      const double e = (f.intercept + f.slope * x[i] - y[i]) / y[i];
      ss += e * e;
      ++n;
    }
  f.rel_rms = n ? std::sqrt(ss / static_cast<double>(n)) : 0;
  return f;
}

Json fit_json(const Fit& f, const char* model) {
  return {{"model", model}, {"points", f.points}, {"intercept_s", f.intercept}, {"slope", f.slope},
          {"relative_rms", f.rel_rms}};
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

void execute(CalibrateArgs& ca) {
  RunArgs& a = *ca.run;
  a.exec = true;
  if (a.out == "-") throw UsageError("-o/--output PROFILE.json is required");
  PreparedRun p;
  prepare_run(a, p);
  serving::SystemConfig cfg = p.cfg;
  cfg.record_timeline = true;
  const ExecRunOptions eo = exec_options(a, p.hw);
  std::optional<Progress> bar;
  cfg.on_step = [&bar](uint64_t done, uint64_t total) {
    if (!bar) bar.emplace("calibrate", total);
    bar->set(done);
  };
  ExecReport report;
  const serving::RunResult r = run_exec(cfg, p.stream, p.trace.info(), p.costs, p.hw, eo, nullptr, &report);
  if (bar) bar->finish();

  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> pts;
  auto add = [&pts](const char* k, double x, double y) {
    pts[k].first.push_back(x);
    pts[k].second.push_back(y);
  };
  struct ComputeOp {
    bool expert;
    double bytes, flops, seconds;
  };
  std::vector<ComputeOp> computes;
  double transfer_sum = 0;
  size_t transfers = 0;
  bool recover_on_cpu = false;
  for (const TimelineEvent& e : r.result.timeline) {
    const double d = e.timing.end - e.timing.start;
    const Op& op = e.op;
    switch (op.kind) {
      case OpKind::kSsdRead:
        add("read", static_cast<double>(op.bytes), d);
        break;
      case OpKind::kDecompress:
        add("decompress", static_cast<double>(op.bytes), d);
        break;
      case OpKind::kRecover:
        add("recover", 2.0 * static_cast<double>(op.bytes), d);
        recover_on_cpu = op.resource == ResourceClass::kCpu;
        break;
      case OpKind::kExpertCompute:
      case OpKind::kDenseCompute:
        // The roofline's two sides, each from the ops it governs: few tokens read every weight for little
        // arithmetic (memory-bound: bytes), many tokens are FLOP-bound.
        computes.push_back(ComputeOp{op.kind == OpKind::kExpertCompute, static_cast<double>(op.bytes), op.flops, d});
        if (op.tokens <= 2) add("compute_bytes", static_cast<double>(op.bytes), d);
        if (op.tokens >= 8) add("compute_flops", op.flops, d);
        break;
      case OpKind::kTransfer:
        transfer_sum += d;
        ++transfers;
        add("transfer", static_cast<double>(op.bytes), d);
        break;
    }
  }
  auto need = [&](const char* k, const char* why) {
    if (pts[k].first.size() < 2)
      throw Error(std::string("calibrate: the calibration run had fewer than 2 ops to fit ") + why +
                  "; use a trace with prefill and decode steps and a budget that misses (--system zipmoe)");
  };
  need("read", "the SSD");
  need("compute_bytes", "memory-bound compute (decode)");
  need("compute_flops", "FLOP-bound compute (prefill)");
  // Sizes that vary give the SSD's per-request latency (intercept); reads all of one size cannot separate it.
  const auto [rmin, rmax] = std::minmax_element(pts["read"].first.begin(), pts["read"].first.end());
  const Fit read = fit_line(pts["read"].first, pts["read"].second, *rmax < 1.5 * *rmin);
  // With an intercept: a layer's dense GEMV and an expert's three small GEMVs read bytes at one rate, but the
  // expert pays a fixed cost more (three matrices, the activation); the cost model's kernel overhead.
  const auto [cbmin, cbmax] =
      std::minmax_element(pts["compute_bytes"].first.begin(), pts["compute_bytes"].first.end());
  Fit cbytes = fit_line(pts["compute_bytes"].first, pts["compute_bytes"].second, *cbmax < 1.5 * *cbmin);
  if (cbytes.intercept < 0 || cbytes.slope <= 0)
    cbytes = fit_line(pts["compute_bytes"].first, pts["compute_bytes"].second, true);
  const bool split = pts["decompress"].first.size() >= 2;
  const Fit dec = split ? fit_line(pts["decompress"].first, pts["decompress"].second, true) : Fit{};
  const bool gpu = eo.gpu;  // exec ran transfers, GPU recovery and GPU compute on a CUDA device
  Fit rec;
  if (pts["recover"].first.size() >= 2) {
    // On a GPU, with an intercept where tensor sizes vary (a launch and a synchronization per recovery);
    // on a CPU worker through the origin (cpu.memcpy_bandwidth_per_core has no overhead term).
    const auto [rn, rx] = std::minmax_element(pts["recover"].first.begin(), pts["recover"].first.end());
    const bool origin = !gpu || recover_on_cpu || *rx < 1.5 * *rn;
    rec = fit_line(pts["recover"].first, pts["recover"].second, origin);
    if (!origin && (rec.intercept < 0 || rec.slope <= 0)) rec = fit_line(pts["recover"].first, pts["recover"].second, true);
  }
  if (rec.points >= 2 && !recover_on_cpu && !gpu)
    warn("calibrate: recovery ran on the GPU stream, which exec emulates on a CPU thread: the profile's "
         "gpu.memory_bandwidth is fitted to expert compute, so simulated recovery will be off; calibrate and "
         "validate with --recover-on cpu on a machine without a GPU");
  // On a GPU the compute ops of a scaled-down or decode-sized model are launch-bound: their bytes and FLOPs at
  // the device's rates take a few microseconds, the launches and the synchronization tens. The rates stay the
  // base profile's (datasheet) values; the fixed costs are fitted, mean-preserving, per kind: a dense op is
  // one GEMM, an expert's FFN three and the activation (gpu.kernel_overhead, gpu.expert_overhead).
  Fit cflops;
  Fit dense_over, expert_over;
  if (gpu) {
    for (const ComputeOp& c : computes) {
      const double roof = std::max(c.bytes / p.hw.gpu_memory_bandwidth, c.flops / p.hw.gpu_bf16_flops);
      Fit& f = c.expert ? expert_over : dense_over;
      f.intercept += c.seconds - roof;
      ++f.points;
    }
    for (Fit* f : {&dense_over, &expert_over})
      if (f->points) f->intercept = std::max(0.0, f->intercept / static_cast<double>(f->points));
    cflops.points = pts["compute_flops"].first.size();
    cflops.slope = 1.0 / p.hw.gpu_bf16_flops;
  } else {
    cflops = fit_line(pts["compute_flops"].first, pts["compute_flops"].second, true);
  }
  for (const auto& [name, f] : std::map<std::string, Fit>{
           {"SSD read", read}, {"compute (bytes)", cbytes}, {"compute (flops)", cflops}, {"decompress", dec}, {"recover", rec}})
    if (f.points >= 2 && f.rel_rms > 0.5 && !(gpu && name.rfind("compute", 0) == 0))  // GPU: not fitted as lines
      warn("calibrate: the " + name + " fit leaves a relative RMS residual of " + strprintf("%.0f%%", 100 * f.rel_rms) +
           " over " + std::to_string(f.points) + " ops: this machine's op times vary a lot (noisy neighbours, a "
           "shared disk); calibrate again or with a longer trace");
  if (read.slope <= 0 || cbytes.slope <= 0 || !(cflops.slope > 0) || (split && dec.slope <= 0))
    throw Error("calibrate: a fit came out non-positive (times do not grow with size); the calibration run was too "
                "short or too noisy");

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::string host = host_name();
  const std::string by = "moesim calibrate on " + host + ", " + date + ": ";
  auto val = [&](double v, const std::string& what, const Fit& f) {
    return Json{{"value", v},
                {"source", by + what + strprintf(" (%zu ops, relative RMS residual %.1f%%)", f.points, 100 * f.rel_rms)}};
  };
  Json prof;
  prof["name"] = ca.name.empty() ? "calibrated-" + host : ca.name;
  prof["display_name"] = "This machine (" + host + "), calibrated " + std::string(date) +
                         (gpu ? "" : "; no GPU: exec's GPU stream is one CPU thread");
  prof["ssd"] = {{"model", "the disk holding " + a.store},
                 {"read_bandwidth", val(1.0 / read.slope, "fit of O_DIRECT chunk reads: latency + bytes / bandwidth", read)},
                 {"read_latency", val(std::max(read.intercept, 0.0), "intercept of the same fit", read)},
                 {"queue_depth", {{"value", eo.io_depth}, {"source", by + "the I/O depth exec ran with"}}}};
  prof["memory"] = p.hw.raw.value("memory", Json::object());
  prof["memory"]["unified"] = gpu ? p.hw.unified_memory : true;
  const bool discrete = gpu && !p.hw.unified_memory;
  const double dec_bw = split ? 1.0 / dec.slope : p.hw.cpu_decompress_bandwidth;
  prof["cpu"] = {{"model", "this machine's CPU"},
                 {"cores", {{"value", eo.workers}, {"source", by + "the CPU workers exec ran with (L)"}}},
                 {"memcpy_bandwidth_per_core",
                  rec.points >= 2 && recover_on_cpu
                      ? val(1.0 / rec.slope, "recovery (merge) on a CPU worker: 2 bytes / bandwidth", rec)
                      : p.hw.raw["cpu"].value("memcpy_bandwidth_per_core", Json(nullptr))},
                 {"flops_per_core", gpu ? p.hw.raw["cpu"].value("flops_per_core", Json(nullptr))
                                        : val(1.0 / cflops.slope, "SwiGLU expert and dense GEMMs of 8+ tokens on one thread", cflops)}};
  if (prof["cpu"]["flops_per_core"].is_null()) prof["cpu"].erase("flops_per_core");
  if (prof["cpu"]["memcpy_bandwidth_per_core"].is_null())
    throw Error("calibrate: no recovery ran on a CPU worker and the base profile " + p.hw.origin +
                " has no cpu.memcpy_bandwidth_per_core to keep");
  if (dec_bw > 0)
    prof["cpu"]["decompress_bandwidth_per_core"] =
        split ? val(dec_bw, "E-chunk decompression on a CPU worker: bytes / bandwidth", dec)
              : p.hw.raw["cpu"].value("decompress_bandwidth_per_core", Json(nullptr));
  if (gpu) {
    const std::string kept = by + "kept from " + p.hw.origin + ": this GPU's compute ops were launch-bound";
    prof["gpu"] = {{"model", report.platform},
                   {"bf16_flops", {{"value", p.hw.gpu_bf16_flops}, {"source", kept}}},
                   {"memory_bandwidth", {{"value", p.hw.gpu_memory_bandwidth}, {"source", kept}}},
                   {"kernel_overhead", val(dense_over.intercept, "dense compute: mean of time - roofline (one GEMM)", dense_over)},
                   {"expert_overhead", val(expert_over.intercept, "expert compute: mean of time - roofline (three GEMMs and the activation)", expert_over)}};
  } else {
    prof["gpu"] = {{"model", "none: a CPU thread emulating a GPU stream"},
                   {"bf16_flops", val(1.0 / cflops.slope, "expert and dense compute of 8+ tokens: flops / peak", cflops)},
                   {"memory_bandwidth", val(1.0 / cbytes.slope, "expert and dense compute of 1-2 tokens: weight bytes / bandwidth", cbytes)},
                   {"kernel_overhead", val(cbytes.intercept, "intercept of the 1-2 token compute fit: fixed cost per compute op", cbytes)}};
  }
  if (gpu && !recover_on_cpu && rec.points >= 2) {
    prof["gpu"]["recover_bandwidth"] = val(1.0 / rec.slope, "the CUDA recovery kernel: 2 bytes / bandwidth + overhead", rec);
    prof["gpu"]["recover_overhead"] = val(std::max(rec.intercept, 0.0), "intercept of the same fit (launch + synchronization)", rec);
  }
  Fit xfer;
  if (discrete && pts["transfer"].first.size() >= 2) {
    const auto [tn, tx] = std::minmax_element(pts["transfer"].first.begin(), pts["transfer"].first.end());
    xfer = fit_line(pts["transfer"].first, pts["transfer"].second, *tx < 1.5 * *tn);
    if (xfer.intercept < 0 || xfer.slope <= 0) xfer = fit_line(pts["transfer"].first, pts["transfer"].second, true);
  }
  if (discrete && xfer.points >= 2 && xfer.slope > 0) {
    prof["link"] = {{"kind", "pcie"},
                    {"bandwidth", val(1.0 / xfer.slope, "host-to-device copies (pageable memory): latency + bytes / bandwidth", xfer)},
                    {"latency", val(std::max(xfer.intercept, 0.0), "intercept of the same fit", xfer)}};
  } else if (discrete) {
    prof["link"] = p.hw.raw.value("link", Json::object());
  } else {
    prof["link"] = {{"kind", "uma"},
                    {"bandwidth", {{"value", "100GB/s"}, {"source", by + "shared memory: transfers move no bytes"}}},
                    {"latency", {{"value", transfers ? transfer_sum / static_cast<double>(transfers) : 0.0},
                                 {"source", by + "mean of " + std::to_string(transfers) + " transfer hand-offs"}}}};
  }
  const auto& c = report.counters;
  prof["runtime"] = {
      {"dispatch_latency", {{"value", c.handoff_latency}, {"source", by + "mean submit-to-start of ops given to an idle thread"}}},
      {"pipeline_latency", {{"value", c.pipeline_latency}, {"source", by + "mean pipeline work per completed op"}}},
      {"wake_latency", {{"value", c.completion_latency}, {"source", by + "mean end-to-seen of completions that woke the pipeline thread"}}},
      {"plan_latency_per_op", {{"value", c.plan_latency_per_op}, {"source", by + "the pipeline's work to plan a layer invocation up to its first submission, per op planned"}}},
      {"plan_latency_fixed", {{"value", c.plan_latency_fixed}, {"source", by + "and per invocation planned (least squares over the run's planning calls)"}}},
      {"plan_tail_per_op", {{"value", c.plan_tail_per_op}, {"source", by + "the rest of a planning call (submitting, waking units, freeing buffers), per op planned"}}},
      {"plan_tail_fixed", {{"value", c.plan_tail_fixed}, {"source", by + "and per invocation planned (least squares over the run's planning calls)"}}}};
  for (size_t i = 0; i < kResourceClasses; ++i)
    prof["runtime"][std::string("turnaround_") + resource_class_name(static_cast<ResourceClass>(i))] = {
        {"value", c.turnaround[i]}, {"source", by + "mean gap between two ops of one unit when the second was waiting"}};
  Json cal;
  cal["date"] = date;
  cal["host"] = host;
  cal["store"] = a.store;
  cal["trace"] = a.trace;
  cal["model"] = a.load.model;
  cal["system"] = a.system;
  cal["workers"] = eo.workers;
  cal["direct_io"] = report.direct_io;
  cal["platform"] = report.platform;
  cal["fits"] = {{"ssd_read", fit_json(read, "latency + bytes / bandwidth")},
                 {"decompress", fit_json(dec, "bytes / bandwidth")},
                 {"recover", fit_json(rec, "overhead + 2 bytes / bandwidth")},
                 {"transfer", fit_json(xfer, "latency + bytes / bandwidth (discrete GPU)")},
                 {"compute_bytes", fit_json(cbytes, "overhead + weight bytes / bandwidth (1-2 tokens)")},
                 {"compute_flops", fit_json(cflops, "flops / peak (8+ tokens)")}};
  if (gpu)
    cal["fits"]["compute_overheads"] = {{"dense", fit_json(dense_over, "mean of time - roofline")},
                                        {"expert", fit_json(expert_over, "mean of time - roofline")}};
  cal["build"] = run_header("calibrate", Json::object());
  prof["calibration"] = cal;
  // The profile must load as one (and so be usable by run and validate) before it is written.
  (void)hardware_from_json(prof, a.out);
  write_file_atomic(a.out, prof.dump(2) + "\n");
  std::fprintf(stderr,
               "calibrated %s: SSD %s + %s/s per read, decompress %s/s per core, recover %s/s, compute %.2f GFLOP/s "
               "and %s/s of weights; "
               "runtime hand-off %s, pipeline %s per op, wake %s -> %s\n",
               host.c_str(), format_seconds(std::max(read.intercept, 0.0)).c_str(),
               format_bytes(static_cast<uint64_t>(1.0 / read.slope)).c_str(),
               format_bytes(static_cast<uint64_t>(dec_bw)).c_str(),
               rec.points >= 2 ? format_bytes(static_cast<uint64_t>(1.0 / rec.slope)).c_str() : "-",
               1e-9 / cflops.slope, format_bytes(static_cast<uint64_t>(1.0 / cbytes.slope)).c_str(),
               format_seconds(c.handoff_latency).c_str(),
               format_seconds(c.pipeline_latency).c_str(), format_seconds(c.completion_latency).c_str(),
               a.out.c_str());
}

void setup(CLI::App& app) {
  auto ca = std::make_shared<CalibrateArgs>();
  add_run_options(app, ca->run);
  add_exec_options(app, ca->run);
  app.add_option("--name", ca->name, "the profile's name (default: calibrated-HOST)");
  app.add_option("--threads", ca->run->workers, "the same as --workers: the CPU workers (L) to calibrate with");
  app.callback([ca] { execute(*ca); });
}

}  // namespace
MOESIM_CLI_COMMAND("calibrate",
                   "Fit the simulator's cost models to this machine from a real run of a calibration trace and write "
                   "a hardware profile (-o profile.json)",
                   setup);
}  // namespace moesim::cli
