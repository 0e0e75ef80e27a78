// `moesim buddy profile`: options, help and the summary line; what it does is harness/buddy_profile_job.h.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/trace_options.h"
#include "harness/buddy_profile_job.h"

namespace moesim::cli {
namespace buddy_profile_command {

struct Options {
  harness::BuddyProfileArgs args;
  bool json = false;  // the profile is JSON either way
};

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  harness::BuddyProfileArgs& a = o->args;
  add_trace_input(app, a.trace, "Profiling trace (.mtr, BigMoeOnEdge route CSV, JSONL or CSV)");
  app.add_option("--alpha", a.opt.alpha,
                 "Cumulative frequency threshold of the buddy lists (Eq. 5), in (0, 1]")
      ->capture_default_str();
  app.add_option("--k-max", a.opt.k_max, "Buddies per expert at most")->capture_default_str();
  app.add_option("--epsilon", a.opt.epsilon, "Laplace smoothing added to every co-activation count")
      ->capture_default_str();
  app.add_option(
         "--weighting", a.weighting,
         "q_{j|i} from binary co-activation counts or probability-weighted ones (min of the two weights)")
      ->capture_default_str();
  add_trace_format_options(app, a.load);
  app.add_option("-o,--output", a.out, "Output JSON file ('-' = standard output)")->capture_default_str();
  app.add_flag("--json", o->json, "Write JSON: the profile is JSON with or without it");
  app.callback([o] {
    const harness::BuddyProfileResult r = harness::buddy_profile(o->args);
    std::fprintf(
        stderr,
        "moesim: wrote buddy profile %s: %u layers x %u experts, %zu buddy lists (mean %.2f buddies)%s\n",
        o->args.out == "-" ? "to standard output" : o->args.out.c_str(), r.profile.layers, r.profile.experts,
        r.lists, r.lists ? static_cast<double>(r.buddies) / r.lists : 0.0,
        r.synthetic ? " from a SYNTHETIC trace" : "");
  });
}

}  // namespace buddy_profile_command
MOESIM_CLI_GROUP("buddy", "BuddyMoE: offline co-activation profile for the buddy routing policy");
MOESIM_CLI_COMMAND("buddy profile",
                   "BuddyMoE profile: co-activations, q_{j|i}, CFT buddy lists, TAE percentiles",
                   buddy_profile_command::setup);
}  // namespace moesim::cli
