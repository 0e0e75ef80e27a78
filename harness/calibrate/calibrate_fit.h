// The least-squares fits behind `moesim calibrate` (cli/calibrate.cpp,
// harness/calibrate/trace_calibration.cpp): lines of op time against size, and the stamp every fitted value's
// "source" carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"

namespace moesim::harness {

// What every value's source says: who measured it, where and when.
struct CalibrationStamp {
  std::string date, host, by;
};
// Today's stamp on this host ("moesim calibrate on HOST, DATE: ").
CalibrationStamp calibration_stamp();

struct Fit {
  double intercept = 0, slope = 0;
  size_t points = 0;
  double rel_rms = 0;  // sqrt(mean(((fit - y) / y)^2)) over the points with y > 0
  // sqrt(mean((fit - y)^2)) / mean(y): the residual against the typical op. What a trace run's fits report:
  // an op's measured time can come out near 0 (a read's device time is its wall time less its CPU phase, and
  // a read served by a cache below O_DIRECT has almost none), and one such op puts rel_rms in the billions of
  // percent while the fit is as good as before.
  double cv_rms = 0;
  // The mean size (x) of the points a line was fitted to (fit_line; 0 for fit_offset): where a line's time is
  // compared between runs (take_median_of_runs).
  double x_mean = 0;
};

// Ordinary least squares of y = a + b x (or y = b x with through_origin). Unweighted on purpose: the fitted
// line then reproduces the total time of the ops (residuals sum to zero with an intercept), which is what
// TPOT adds up; weighting by 1/y fits the typical op instead and, with the long tail of preempted ops on a
// busy machine, under-estimated the total decompression time by a quarter.
// The microbenchmarks' points are means at log-spaced sizes, each as good as the next: they are fitted with
// `relative` weights (1/y: relative error minimised), or the largest size alone would decide the line.
Fit fit_line(const std::vector<double>& x, const std::vector<double>& y, bool through_origin,
             bool relative = false);

// fit_line, but through the origin wherever the line with an intercept comes out with a negative intercept or
// a non-positive slope (sizes too alike, or noise): a cost model's fixed cost and rate are never negative.
Fit fit_line_or_origin(const std::vector<double>& x, const std::vector<double>& y, bool through_origin,
                       bool relative = false);

// A fixed cost on top of a model: the mean of measured - modelled over the points (mean-preserving, like the
// lines), at least 0; its relative RMS residual is that of modelled + the cost. `modelled` and `measured` are
// parallel (seconds per op). Fewer than 2 points: an empty Fit (points 0).
Fit fit_offset(const std::vector<double>& modelled, const std::vector<double>& measured);

// f.rel_rms and f.cv_rms of the fitted values against the measured ones (parallel).
void set_residuals(Fit& f, const std::vector<double>& fitted, const std::vector<double>& y);

Json fit_json(const Fit& f, const char* model);

// Three runs or more: `prof` is the profile fitted over every run's ops, `own` each run's own fit (whole
// profiles). Every fitted number of prof's hardware sections (a {"value", "source"} object) that differs
// between the runs' own fits becomes their median, its source saying so, so that one run far from the others
// (a disk or a shared machine can make one calibration run much slower than the rest) moves the profile no
// more than it moves the median of the validation's runs. calibration.values_from records the rule and
// calibration.runs_fits keeps each run's own fits and calibration.runs_spread, per line, how far the runs'
// lines lay apart at the mean op (max / min - 1 at Fit::x_mean): what moves a profile between calibrations
// (bench/results/batch-transfer-2026-12-06.md: the SSD read line). Each value
// takes its own median: taking a line's fixed cost and rate together from the run whose line is the median
// at the ops' mean size (Fit::x_mean) lowered no spread there.
void take_median_of_runs(Json& prof, const std::vector<Json>& own);

// Whether a CPU worker's fused read (Op::read_bytes: the worker reads its E-chunk, then decompresses it)
// gives the SSD read line a point: its read's device time (op_work's, the wall time less its CPU phase) at
// read_bytes. Only in an O_DIRECT run (a buffered run's page cache serves the read as a copy: CPU time, no
// device time) and where exec recorded the op's CPU clock (`read_cpu` > 0; without it the parts are not told
// apart). zipmoe's I/O thread reads only SM parts, all of one size, so its reads alone cannot separate the
// disk's per-request latency from its rate: the line went through the origin and costed an E-chunk read of a
// tenth the size at a tenth the time, where the disk took most of a read's latency for it
// (bench/results/batch-transfer-2026-12-06c.md).
bool fused_read_on_read_line(uint64_t read_bytes, double read_cpu, bool direct_io);

// The CPU tails of fused reads, as points of the read CPU line (ssd.read_cpu_*): each fused op's CPU clock
// (`fused_cpu`, at `fused_bytes` decompressed) less its decompression on the line through the origin of the
// decompressions whose E-chunk the I/O thread read (`plain_bytes`, `plain_s`: no read in their time), at
// least 0. Empty with fewer than 2 plain points (no line to take off). zipmoe's I/O thread reads only SM
// parts, all of one size, so its tails alone give the line no slope, and a worker's E-chunk read, a tenth the
// size, took the SM read's whole tail (bench/results/batch-transfer-2026-12-06d.md).
std::vector<double> fused_read_tails(const std::vector<double>& plain_bytes,
                                     const std::vector<double>& plain_s,
                                     const std::vector<double>& fused_bytes,
                                     const std::vector<double>& fused_cpu);

}  // namespace moesim::harness
