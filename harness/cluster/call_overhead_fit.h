// The lines `validate --cluster` fits in its calibration (harness/cluster/cluster_validation.cpp, step 1):
// a unit's work against its tokens, and the coordinator's call overhead against the other calls in flight,
// y = fixed + per_inflight * x, where x is the number of other calls in flight when a call is made and y
// its overhead in seconds.
//
// The overhead's line is anchored at the lone call (x = 0): `fixed` is the median of the points there, and
// the slope is least squares through that anchor over every point. A free least-squares line extrapolates its
// intercept from the crowded points, whose scatter trades the intercept against the slope from one
// calibration to the next; a run below capacity makes mostly lone calls, so its cost rests on the intercept.
// Two steadier lines are reported beside the cost, each tried as the cost and further from the same runs:
// the bursts' means (fit_call_overhead_bursts, bench/results/cluster-calls-2026-12-06b.md), and the lead
// call of a pair (fit_call_overhead_led), which measures the lone call a run makes: the first of a pass's
// experts, with the next submitted right after it (bench/results/cluster-calls-2026-12-06c.md). And the
// line of a short serve inside the calibration (fit_call_overhead_total), closer overall on the held-out
// cells but a met verdict lost (bench/results/cluster-calls-2026-12-06e.md).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace moesim::harness {

struct CallOverheadLine {
  double fixed = 0, per_inflight = 0;  // seconds, seconds per other call in flight; both at least 0
};

// Ordinary least squares y = a + b x over the points: {a, b}. The calibration's lines of a unit's work
// against its tokens, and the call overhead's line when no call was made alone. Fewer than two distinct x:
// {mean y, 0} ({0, 0} without points).
std::pair<double, double> least_squares_line(const std::vector<std::pair<double, double>>& points);

// `points` are (calls in flight besides this one, overhead in seconds). No point at x = 0: the ordinary
// least-squares line. No points, or all at one x > 0: fixed is their mean and the slope 0.
CallOverheadLine fit_call_overhead(const std::vector<std::pair<double, double>>& points);

// The line `validate --cluster` calibrates, from its bursts: `calls` holds one (burst size k, overhead in
// seconds) per call made in a burst of k calls submitted together. The mean overhead of each burst size,
// M_k, against (k - 1) / 2, by ordinary least squares with each burst size one point. The simulator charges a
// call made with x others in flight fixed + per_inflight * x, so a burst of k costs it on average
// fixed + per_inflight * (k - 1) / 2 per call: this line makes the simulator's bursts cost what the measured
// ones did, as nearly as a line can. Measured, every call of a burst takes about the same overhead whatever
// its place in it (the first of 16 as long as the last): the calls submitted after a call slow it as much as
// those before, so the overhead by position (fit_call_overhead) mixes lone calls with the first calls of
// bursts at x = 0, and its median there sits on whichever of the two the counts favour
// (bench/results/cluster-calls-2026-12-06b.md). Means, not medians: the simulator's figure is a mean
// latency; but a call over kStallOverMedian times its burst size's median is left out of the mean (a stall of
// the host, milliseconds long, that one calibration meets and the next does not). One burst size only: fixed
// is its mean and the slope 0; none: {0, 0}. Both at least 0.
inline constexpr double kStallOverMedian = 4;
CallOverheadLine fit_call_overhead_bursts(const std::vector<std::pair<uint32_t, double>>& calls);

// The lead call's line: `lead_s` are the overheads (seconds) of lone calls each followed, microseconds later,
// by a second call while it was in flight, the way a run's pass submits its experts; fixed is their median (a
// median: one calibration's stalls of the host stay out of it), per_inflight is `bursts`' (the line of the
// bursts' means, fit_call_overhead_bursts: its slope holds between calibrations where one pass's does not).
// No lead calls: `bursts` as it is. Both at least 0.
CallOverheadLine fit_call_overhead_led(const std::vector<double>& lead_s, const CallOverheadLine& bursts);

// The short serve's line (`validate --cluster`'s calibration.serve): `points` as fit_call_overhead's, from a
// serve's calls. fixed is the median at x = 0, and the slope makes the line charge the points their measured
// total: sum(y) = n fixed + slope sum(x). Its calls then cost the simulator, at their own calls in flight,
// what they cost the serve, stalls of the host included (a run meets them too), while the lone calls, most of
// a call-bound run's, keep their median. Least squares anchored at x = 0 (fit_call_overhead) weighs each
// point by x squared, so the rare crowded calls, milliseconds long, set its slope; a free least-squares line
// trades its intercept against them (both tried on the design cells:
// bench/results/cluster-calls-2026-12-06e.md). No point at x = 0: fit_call_overhead's line. Both at least 0.
CallOverheadLine fit_call_overhead_total(const std::vector<std::pair<double, double>>& points);

// The median overhead at each number of other calls in flight that the points hold, for the report: where the
// servers share the machine's cores, the second call in flight can cost several times the line's slope more
// than the first. Two other uses of these points were tried in the simulator and made cells they were not
// designed on worse, so it takes the line: the medians as a curve by calls in flight (made non-decreasing),
// and the slope as the coordinator's time per reply with replies queued for it
// (bench/results/cluster-calls-2026-12-05.md).
std::map<int, double> call_overhead_medians(const std::vector<std::pair<double, double>>& points);

}  // namespace moesim::harness
