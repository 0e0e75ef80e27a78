#include "harness/buddy_profile_job.h"

#include <cmath>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_io.h"
#include "harness/arguments.h"

namespace moesim::harness {

BuddyProfileResult buddy_profile(const BuddyProfileArgs& a) {
  require_trace_input(a.trace);
  traces::BuddyOptions opt = a.opt;
  if (a.weighting == "probability" || a.weighting == "prob") {
    opt.probability_weighted = true;
  } else if (a.weighting != "binary") {
    throw UsageError("--weighting: '" + a.weighting + "' is not binary or probability");
  }
  if (!(opt.alpha > 0 && opt.alpha <= 1))
    throw UsageError("--alpha must be in (0, 1], got " + std::to_string(opt.alpha));
  require_at_least("--k-max", opt.k_max, 1);
  if (!(opt.epsilon >= 0) || !std::isfinite(opt.epsilon))
    throw UsageError("--epsilon must be a finite number >= 0, got " + std::to_string(opt.epsilon));
  check_output_writable(a.out);
  const traces::Trace t = traces::load_trace(a.trace, a.load);
  BuddyProfileResult r;
  r.profile = traces::build_buddy_profile(t, opt, a.trace);
  r.synthetic = t.info().synthetic;
  write_json_file(a.out, traces::to_json(r.profile));
  for (const auto& l : r.profile.layer)
    for (const auto& v : l.buddies) {
      r.lists += !v.empty();
      r.buddies += v.size();
    }
  return r;
}

}  // namespace moesim::harness
