// `moesim compare`: options and help; what it does is harness/compare_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "harness/compare_job.h"

namespace moesim::cli {
namespace compare_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  add_trace_input(app, a->trace);
  add_trace_format_options(app, a->load);
  app.add_option("--model", a->load.model,
                 "model preset: take sizes from it (default: the trace's own sizes)");
  app.add_option("--hw", a->hw, "hardware profile")->capture_default_str();
  app.add_option(
         "--system", a->systems,
         "compare systems instead of policies: specs such as offload:policy=lru,zipmoe,layer-offload "
         "(repeatable or a list split on ',' before a system name); each system x --policy x budget x "
         "scope is a full simulated run")
      ->allow_extra_args(false);
  app.add_option("--policy", a->policies,
                 "eviction policy specs: repeatable, or a list split on ';' (or ',' before a policy name); "
                 "default: all (with --system: each system's default)")
      ->allow_extra_args(false);
  app.add_option(
         "--prefetch", a->prefetch,
         "prefetch policies (none, oracle:accuracy=P, transition:train=T, temporal, popularity:train=T, "
         "layer-window:depth=D; see `moesim policies`): every cell runs each; accuracy and coverage shown")
      ->allow_extra_args(false);
  app.add_option(
         "--routing", a->routing,
         "routing policies (lossless 'identity' and lossy ones such as cache-prior:lambda=0.5; see `moesim "
         "policies`): every cell runs each; deviation columns are shown")
      ->allow_extra_args(false);
  app.add_option("--budget", a->budgets,
                 "budgets: repeatable or comma-separated (bytes, or experts per layer); default "
                 "1GiB,2GiB,4GiB,8GiB")
      ->allow_extra_args(false);
  app.add_option("--policies", a->policies)
      ->group("")
      ->allow_extra_args(false);  // deprecated spellings, still accepted
  app.add_option("--budgets", a->budgets)->group("")->allow_extra_args(false);
  app.add_option("--scope", a->scope,
                 "cache scope(s): global, layer, or global,layer (both, each row labelled; the default)")
      ->capture_default_str();
  app.add_option("--batch", a->batch, "sequences decoding together")->capture_default_str();
  app.add_option("--io-depth", a->io_depth, "reads the I/O thread keeps outstanding")->capture_default_str();
  add_jobs_option(app, a->threads, "cells simulated in parallel; the output does not depend on it",
                  "--threads");
  app.add_flag("--force", a->force, "simulate budgets above the hardware's memory (a warning, not an error)");
  app.add_flag("--allow-overcommit", a->allow_overcommit,
               "simulate budgets that do not fit beside the dense weights, KV cache and reserve (a warning)");
  app.add_flag("--json", a->json, "print JSON (header, warnings, one row per cell; docs/cli-json.md)");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.add_option("--csv", a->csv, "also write the table as CSV to this file (atomically)");
  app.add_option("--plot", a->plot,
                 "also draw hit rate and mean TPOT against the budget, a line per policy or system, a row of "
                 "panels per scope (PNG, PDF or SVG by extension; python3-matplotlib)");
  app.callback([a] { write_file_atomic(a->out, compare_output(*a)); });
}

}  // namespace compare_cmd
MOESIM_CLI_COMMAND(
    "compare",
    "Compare eviction policies x routing policies x budgets in simulated offloaded serving, or "
    "systems side by side (--system)",
    compare_cmd::setup);
}  // namespace moesim::cli
