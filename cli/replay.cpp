// `moesim replay`: options and help; what it does is harness/replay_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "harness/replay_job.h"

namespace moesim::cli {
namespace replay_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<ReplayArgs>();
  add_trace_input(app, a->trace, "Trace file (.mtr, BigMoeOnEdge route CSV, JSONL or CSV)");
  app.add_option(
         "--policy", a->policies,
         "Eviction policy 'name:key=value,...' or 'all' (see `moesim policies`); repeatable, or a list "
         "split on ';' (or ',' before a policy name)")
      ->required()
      ->allow_extra_args(false);
  app.add_option("--scope", a->scope, "Cache scope: global (one cache) or layer (one cache per layer)")
      ->capture_default_str();
  app.add_option("--budget", a->budgets,
                 "Budget(s), repeatable or comma-separated (a sweep): N = N experts per layer (global scope: "
                 "N x layers "
                 "experts), or a total size with a unit such as 3000MiB (per-layer scope: split equally over "
                 "the layers)")
      ->allow_extra_args(false);
  app.add_option("--capacity,--sweep", a->budgets)
      ->group("")
      ->allow_extra_args(false);  // deprecated spellings of --budget
  app.add_option("--model", a->load.model,
                 "Model preset or JSON: checks the trace; gives expert sizes it lacks");
  app.add_option("--batch", a->batch, "Sequences decoding together (traces/lookup_stream.h)")
      ->capture_default_str();
  add_jobs_option(app, a->threads, "(policy, budget) runs at once; results do not depend on it", "--threads");
  app.add_option("--routing", a->routing,
                 "Routing policy/policies (cache-prior:lambda=0.5, ...; see `moesim policies`); with it (or "
                 "--lifetime) replay runs token by token and prints the Cache-Conditional Experts Table-2 "
                 "layout: lifetimes, miss rate vs the router's lookups, deviation")
      ->allow_extra_args(false);
  app.add_option(
         "--prefetch", a->prefetch,
         "Prefetch policy/policies (transition:train=T, popularity:train=T, temporal, oracle:accuracy=p, "
         "...; see `moesim policies`), each on top of every eviction and budget: accuracy, coverage and "
         "useless bytes as in `run` (no timing: nothing is late)")
      ->allow_extra_args(false);
  app.add_option("--seed", a->seed, "Seed of the prefetch policies' random choices (oracle accuracy < 1)")
      ->capture_default_str();
  app.add_flag("--lifetime", a->lifetime,
               "Also measure cache lifetimes (the token-level path, Table-2 layout)");
  app.add_option("--oracle-passes", a->oracle_passes,
                 "Fixed-point passes at most for an oracle eviction under a cache-dependent routing "
                 "(replay/routing_replay.h)")
      ->capture_default_str();
  app.add_flag(
      "--mrc", a->mrc,
      "Miss-ratio curve in one pass over every --budget (default: every experts-per-layer count from "
      "top-k up): LRU exact by stack distances, other policies estimated by SHARDS sampling");
  app.add_option("--mrc-sample", a->mrc_sample,
                 "SHARDS: fraction of the (layer, expert) keys sampled, (0, 1]")
      ->capture_default_str();
  app.add_option("--mrc-salts", a->mrc_salts,
                 "SHARDS: independent samples averaged; their spread gives each point's standard error")
      ->capture_default_str();
  app.add_option("--csv", a->csv, "With --mrc: also write the curve as CSV to this file");
  app.add_option(
      "--plot", a->plot,
      "With --mrc: also plot the curve to this file (PNG/PDF; scripts/plot_mrc.py, python3-matplotlib)");
  app.add_flag("--json", a->json, "Write JSON (header, trace, results) instead of the table");
  add_trace_format_options(app, a->load);
  app.add_option("-o,--output", a->out, "Output file ('-' = standard output)")->capture_default_str();
  app.callback([a] { write_file_atomic(a->out, replay_output(*a)); });
}

}  // namespace replay_cmd
MOESIM_CLI_COMMAND("replay", "Cache-only replay: hit rates of eviction policies on a trace (no timing)",
                   replay_cmd::setup);
}  // namespace moesim::cli
