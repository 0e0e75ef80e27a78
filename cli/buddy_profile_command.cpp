// `moesim buddy profile --trace T -o buddies.json`: BuddyMoE's offline profile (traces/buddy_profile.h):
// per-layer co-activation counts (binary and probability-weighted), Laplace smoothing, q_{j|i}, CFT buddy
// lists B(i; alpha) capped at k_max, and the TAE percentiles that calibrate tau. The runtime reads it with
// `--routing buddy:profile=buddies.json`. Written atomically.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "base/json_io.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "traces/buddy_profile.h"
#include "traces/trace_io.h"

namespace moesim::cli {
namespace {

struct Args {
  std::string trace, out = "-", weighting = "binary";
  bool json = false;  // the profile is JSON either way
  traces::LoadOptions load;
  traces::BuddyOptions opt;
};

void run(const Args& a) {
  require_trace_input(a.trace);
  Args b = a;
  if (a.weighting == "probability" || a.weighting == "prob") {
    b.opt.probability_weighted = true;
  } else if (a.weighting != "binary") {
    throw UsageError("--weighting: '" + a.weighting + "' is not binary or probability");
  }
  if (!(a.opt.alpha > 0 && a.opt.alpha <= 1))
    throw UsageError("--alpha must be in (0, 1], got " + std::to_string(a.opt.alpha));
  require_at_least("--k-max", a.opt.k_max, 1);
  if (!(a.opt.epsilon >= 0) || !std::isfinite(a.opt.epsilon))
    throw UsageError("--epsilon must be a finite number >= 0, got " + std::to_string(a.opt.epsilon));
  check_output_writable(a.out);
  const traces::Trace t = traces::load_trace(a.trace, a.load);
  const traces::BuddyProfile p = traces::build_buddy_profile(t, b.opt, a.trace);
  write_json_file(a.out, traces::to_json(p));
  size_t lists = 0, total = 0;
  for (const auto& l : p.layer)
    for (const auto& v : l.buddies) {
      lists += !v.empty();
      total += v.size();
    }
  std::fprintf(
      stderr,
      "moesim: wrote buddy profile %s: %u layers x %u experts, %zu buddy lists (mean %.2f buddies)%s\n",
      a.out == "-" ? "to standard output" : a.out.c_str(), p.layers, p.experts, lists,
      lists ? static_cast<double>(total) / lists : 0.0, t.info().synthetic ? " from a SYNTHETIC trace" : "");
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  add_trace_input(app, a->trace, "Profiling trace (.mtr, BigMoeOnEdge route CSV, JSONL or CSV)");
  app.add_option("--alpha", a->opt.alpha,
                 "Cumulative frequency threshold of the buddy lists (Eq. 5), in (0, 1]")
      ->capture_default_str();
  app.add_option("--k-max", a->opt.k_max, "Buddies per expert at most")->capture_default_str();
  app.add_option("--epsilon", a->opt.epsilon, "Laplace smoothing added to every co-activation count")
      ->capture_default_str();
  app.add_option(
         "--weighting", a->weighting,
         "q_{j|i} from binary co-activation counts or probability-weighted ones (min of the two weights)")
      ->capture_default_str();
  add_trace_format_options(app, a->load);
  app.add_option("-o,--output", a->out, "Output JSON file ('-' = standard output)")->capture_default_str();
  app.add_flag("--json", a->json, "Write JSON: the profile is JSON with or without it");
  app.callback([a] { run(*a); });
}

}  // namespace
MOESIM_CLI_GROUP("buddy", "BuddyMoE: offline co-activation profile for the buddy routing policy");
MOESIM_CLI_COMMAND("buddy profile",
                   "BuddyMoE profile: co-activations, q_{j|i}, CFT buddy lists, TAE percentiles", setup);
}  // namespace moesim::cli
