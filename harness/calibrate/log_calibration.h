// `moesim calibrate --from-log METRICS --trace ROUTE [run options] -o P.json`: a hardware profile fitted to a
// real engine's per-token log (traces/engine_log.h) and the route trace the same run recorded, for an engine
// that computes experts on its CPU and overlaps its reads with that compute (docs/engine-logs.md).
//
// What the simulated replay of the trace gives per decode token t (harness/log_replay.h): its reads n_t
// and their bytes B_t, and the weight bytes W_t its layers compute (dense weights and routed experts at the
// engine's own sizes). The fits, each over the log's decode tokens:
//   storage   io_ms_t = n_t * latency + B_t * depth / bandwidth   (least squares, two terms, no intercept):
//             io_ms is the I/O threads' busy time summed over the engine's --io-depth threads, each reading
//             at bandwidth / depth while all are busy (sim/resources.h's Ssd shares the bandwidth so); a
//             negative latency is refitted as 0 through the origin.
//   compute   compute_ms_t = sum over its ops of max(bytes / rate, flops / FLOP/s) (the roofline of
//             core/cost_model.h). At batch 1 every token computes the same weights and FLOPs, so the decode
//             tokens fit either side alone (through the origin, keeping the mean): memory-bound (rate = sum
//             W_t / sum compute_ms_t) or FLOP-bound (FLOP/s = sum F_t / sum compute_ms_t); the other side is
//             then set where it just stops binding at one token. The prompt pass tells them apart (28 tokens
//             per dense op: FLOPs weigh 28 times more): the side whose simulated TTFT is nearer the log's
//             prefill time is kept. Either absorbs the work the trace does not size (the output head, norms,
//             sampling).
//   copies    mgmt_ms_t = B_t / copy rate: the engine moves each read expert into its cache slot on the
//             compute thread as it arrives (cpu.load_copy_bandwidth, with --compute-after-loads); through the
//             origin.
//   prefill   cpu.prefill_compute_slowdown: the factor on the prompt pass's compute that makes the simulated
//             TTFT the log's prefill time (bisected; 1 when the prediction is already within 1%). The log
//             holds one number for the prompt pass, so the in-sample TTFT is met by construction; the
//             prediction without the factor is kept in calibration.fits.ttft_predicted.
// The engine's compute threads work on one matmul together, so the profile has one CPU worker (cpu.cores 1)
// at their joint rate, and the dense ops (the profile's gpu lane in moesim) run at the same rate. Fields the
// log cannot give stay the base profile's (--hw), with their sources and assumptions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "harness/log_replay.h"

namespace moesim::harness {

struct LogFit {
  double read_latency = 0;      // seconds per read
  double read_bandwidth = 0;    // bytes/s of the device at the engine's I/O depth
  bool latency_fitted = true;   // false: refitted through the origin (latency 0)
  double weight_rate = 0;       // bytes of weights computed per second (dense and experts)
  double flops = 0;             // FLOP/s (dense and experts)
  bool flop_bound = false;      // which side the decode tokens' compute was fitted to
  double copy_rate = 0;         // bytes/s of the copies into the cache; 0 = the log has no mgmt time
  double prefill_slowdown = 1;  // cpu.prefill_compute_slowdown
  double ttft_memory_bound = 0, ttft_flop_bound = 0;  // simulated TTFT of either side, before the slowdown
  double io_rel_rms = 0, compute_rel_rms = 0, copy_rel_rms = 0;  // relative RMS residuals per token
};

// The decode-token fits of `steps` (replay_steps) against the log, with `io_depth` I/O threads, the compute
// on the side `flop_bound` says; `costs` gives the bytes per FLOP of one token's ops (where the other side
// stops binding). Throws moesim::Error naming the log when a fit has nothing to fit (no bytes read, no
// compute time).
LogFit fit_decode_tokens(const traces::EngineLog& log, const std::vector<ReplayStep>& steps,
                         uint32_t io_depth, const ModelCosts& costs, bool flop_bound);

// `base` (a profile's JSON) with the fitted fields set, each sourced by `source_prefix` and its fit.
Json profile_with_fit(const Json& base, const LogFit& f, uint32_t io_depth, const std::string& source_prefix);

struct LogCalibrateArgs {
  std::shared_ptr<RunArgs> run = std::make_shared<RunArgs>();
  std::string log, log_fields, name;
};

// Checks the arguments (UsageError), fits and returns the profile (checked to load, every field sourced),
// with a "calibration" section: the log, the trace, every fit and the in-sample errors
// (calibration.in_sample, as `validate --log` reports them). A summary goes to standard error.
Json calibrate_from_log(LogCalibrateArgs& ca);

}  // namespace moesim::harness
