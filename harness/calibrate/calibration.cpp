// `moesim calibrate`: fits the simulator's cost models to this machine and writes a hardware profile.
//   moesim calibrate --store S --trace T --model M [--system zipmoe] [--budget B] [--workers L] -o
//   profile.json moesim calibrate --store S --micro [--workers L] [--io uring] -o profile.json
//   (microbenchmarks only) both: the trace run and the microbenchmarks; --fit-from trace|micro picks which
//   fills the profile's fields
// The microbenchmarks (exec/microbench.h) are fitted in harness/calibrate/micro_calibration.cpp; the trace
// run and its fits are in harness/calibrate/trace_calibration.cpp. It serves the calibration trace for real
// (`moesim exec`, the same code paths every later exec runs), records every op's duration, and fits by least
// squares (Eigen) the linear cost models of core/cost_model.h and sim/resources.h:
//   ssd.read_latency, ssd.read_bandwidth        read  = latency + bytes / bandwidth (SM- and E-chunk reads of
//                                               decode steps; ssd.prefill_read_* those of prefill steps)
//   cpu.decompress_bandwidth_per_core           decompress = bytes / bandwidth (through the origin)
//   cpu.memcpy_bandwidth_per_core               recover on a CPU worker = 2 bytes / bandwidth
//                                               (both from decode steps' ops; cpu.prefill_slowdown and
//                                               cpu.prefill_recover_slowdown scale a prefill's: measured work
//                                               / those models' estimate)
//   gpu.memory_bandwidth, gpu.bf16_flops        expert and dense compute = max(bytes / bandwidth, flops /
//   peak):
//                                               bandwidth from ops of 1 token, peak from ops of 8+ tokens;
//   gpu.fresh_expert_overhead                   experts of 1 token on weights their request just read or
//                                               recovered: mean of time - flops / peak
//                                               (calibration.fits.compute_fresh; without a GPU)
//   gpu.expert_gemm_overhead, dense_gemm_overhead  experts and dense ops of 2+ tokens (GEMMs where 1 token
//                                               takes GEMVs): mean of time - roofline
// Fits are ordinary least squares, through the origin except the SSD's (mean-preserving: the fitted model
// reproduces the total time of the calibration run's ops, contention included, which is what TPOT adds up).
//   link.latency                                transfer (shared memory: a hand-off only)
//   runtime.*                                   the engine's own costs: thread hand-off, the pipeline
//   thread's
//                                               work per completed op, its wake-up (sim/sim_platform.h)
//   gpu.recover_bandwidth, gpu.recover_overhead the CUDA recovery kernel (with a GPU)
//   gpu.kernel_overhead, gpu.expert_overhead    with a GPU: the fixed cost of a dense op and of an expert's
//   FFN
//                                               (mean of time - roofline at the base profile's rates: on a
//                                               GPU the compute of small ops is launch-bound)
//   link.bandwidth, link.latency                host-to-device copies (a discrete GPU)
// Without a GPU the "gpu" is exec's CPU thread emulating a GPU stream, and the profile says so. Each value's
// "source" names the fit, its points and its relative RMS residual; a "calibration" section keeps the
// date, host, store, trace and every fit, and how well the profile reproduces the runs it was fitted to
// (in_sample). Calibrate on one trace and validate on another (`moesim validate`).
#include "harness/calibrate/calibration.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "exec/store_reader.h"
#include "harness/arguments.h"
#include "harness/calibrate/micro_calibration.h"
#include "harness/machine.h"
#include "kernels/codec.h"

namespace moesim::harness {

Json calibrate(CalibrateArgs& ca) {
  RunArgs& a = *ca.run;
  a.exec = true;
  const bool have_trace = !a.trace.empty();
  if (!have_trace && !ca.micro)
    throw UsageError(
        "calibrate needs a calibration trace (TRACE or --trace), --micro (microbenchmarks), or both");
  if (ca.fit_from.empty()) ca.fit_from = have_trace ? "trace" : "micro";
  if (ca.fit_from == "trace" && !have_trace) throw UsageError("--fit-from trace needs a calibration trace");
  if (ca.fit_from == "micro" && !ca.micro) throw UsageError("--fit-from micro needs --micro");
  if (a.store.empty())
    throw UsageError("--store is required: calibrate reads and computes the store's experts");
  if (ca.repeat == 0 || ca.repeat > 1000) throw UsageError("--repeat must be 1..1000");
  if (ca.repeat > 1 && !have_trace)
    throw UsageError("--repeat repeats the calibration trace's run: give a trace");
  if (!(ca.micro_budget > 0) || ca.micro_budget > 86400)
    throw UsageError(
        strprintf("--micro-budget must be between 0 and 86400 seconds (got %g)", ca.micro_budget));
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
  const CalibrationStamp st = calibration_stamp();
  Json prof;
  const HardwareProfile base = load_hardware(a.hw);
  const ExecRunOptions eo = exec_options(a, base);
  if (have_trace) {
    TraceCalibrationOptions o;
    o.name = ca.name;
    o.repeat = ca.repeat;
    o.pilot_runs = ca.no_pilot ? 0 : ca.pilot_runs;
    o.gemm_probe = !ca.no_gemm_probe;
    prof = trace_profile(a, o, st);
  }
  if (ca.micro) {
    exec::StoreReadOptions ro;
    ro.direct_io = !a.buffered_io();
    const exec::StoreReader reader(a.store, ro);
    if (!a.buffered_io() && !reader.direct_io_active())
      warn(a.store + ": the filesystem refused O_DIRECT; the read benchmark goes through the page cache");
    exec::MicroOptions mo;
    // L: --workers, else this machine's CPUs (not the base profile's cores: the sweep runs 1..L here).
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    mo.threads = a.workers ? a.workers : cpus;
    if (mo.threads > cpus)
      warn("calibrate --micro sweeps decompression and recovery over 1.." + std::to_string(mo.threads) +
           " threads on a machine with " + std::to_string(cpus) +
           " CPUs: the larger counts measure time sharing");
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
      warn("--io uring: io_uring is unavailable here (" + m.io_fallback +
           "); the queue-depth benchmark used pread threads");
    MicroFits f = micro_fits(m, mo);
    for (const auto& [name, fit] : std::map<std::string, Fit>{{"read", f.ssd},
                                                              {"decompress", f.dec},
                                                              {"recover", f.rec},
                                                              {"compute (bytes)", f.cbytes},
                                                              {"compute (flops)", f.cflops}})
      if (fit.points >= 2 && fit.rel_rms > 0.5)
        warn("calibrate --micro: the " + name + " fit leaves a relative RMS residual of " +
             strprintf("%.0f%%", 100 * fit.rel_rms) + " over " + std::to_string(fit.points) +
             " points: this machine's times vary a lot; raise --micro-budget or calibrate again");
    if (!have_trace) {
      prof = micro_skeleton(ca.name, a, base, eo.gpu, st);
      prof["calibration"] = {{"date", st.date},  {"host", st.host},       {"store", a.store},
                             {"trace", nullptr}, {"workers", mo.threads}, {"direct_io", m.direct_io},
                             {"io", m.io}};
      prof["cpu"]["cores"] = {{"value", mo.threads}, {"source", st.by + "the CPU workers calibrated (L)"}};
    }
    if (ca.fit_from == "micro") apply_micro(prof, f, mo, eo.gpu, st);
    prof["micro"] = f.json;
    std::fprintf(stderr, "%s", micro_summary(f).c_str());
  }
  prof["measured_on"] = this_machine_json(eo.gpu);
  prof["calibration"]["fields_from"] = ca.fit_from;
  prof["calibration"]["build"] = run_header("calibrate", Json::object());
  // The profile must load as one (and so be usable by run and validate, every field sourced) before it is
  // written.
  (void)hardware_from_json(prof, a.out, /*require_provenance=*/true);
  return prof;
}

}  // namespace moesim::harness
