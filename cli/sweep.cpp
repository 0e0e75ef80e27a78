// `moesim sweep SPEC.json [--jobs N] [--shard i/N] [--resume] [--force] [--dry-run] [--json] -o DIR`: options
// and help; what it does is harness/sweep_job.h. This file also owns the runner of a sweep's points
// (cli/run_command.h): a point is its command's own option parsing and callback.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/command.h"
#include "cli/io_guard.h"
#include "cli/option_checks.h"
#include "cli/run_command.h"
#include "core/data_dir.h"
#include "harness/sweep_job.h"

namespace moesim::cli {

namespace {

// Sets `app` up as the command args[0] with its own options and checks, and parses args[1..] into it; with
// `run` false its callback is dropped, so nothing runs.
void parse_command(std::vector<std::string> args, CLI::App& app, bool run) {
  const auto& cmds = commands();
  const auto it = std::find_if(cmds.begin(), cmds.end(), [&](const Command& c) { return c.path == args[0]; });
  if (it == cmds.end()) throw Error("sweep: no command '" + args[0] + "'");
  it->setup(app);
  if (!run) app.callback(std::function<void()>());
  add_option_checks(app);  // a point's options are checked as on the command line
  const std::string command = args[0];
  args.erase(args.begin());
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError("bad options for `moesim " + command + "`: " + e.what());
  }
}
}  // namespace

// `moesim ARGS...` (args[0] the command) in this process, on this thread: the command's own setup and
// callback, as main() would run them.
void run_command(std::vector<std::string> args) {
  CLI::App app{"", "moesim " + args[0]};
  parse_command(std::move(args), app, true);
}

void check_command(std::vector<std::string> args) {
  CLI::App app{"", "moesim " + args[0]};
  parse_command(std::move(args), app, false);
}

std::vector<NamedPath> command_line_inputs(std::vector<std::string> args) {
  CLI::App app{"", "moesim " + args[0]};
  try {
    parse_command(args, app, false);
  } catch (const Error&) {
    // Options the command refuses: the point fails when it runs. Until then, every value may name a file.
    std::vector<NamedPath> out;
    for (size_t i = 1; i < args.size(); ++i)
      for (NamedPath& p : files_named_by_value(i > 1 ? args[i - 1] : args[0], args[i], false))
        out.push_back(std::move(p));
    return out;
  }
  return command_inputs(app);
}

namespace sweep_cmd {

struct SweepOptions {
  SweepArgs args;
  bool json = false;
};

void execute(const SweepOptions& o) {
  const SweepOutcome out = run_sweep(o.args, run_command, command_line_inputs, check_command);
  if (o.json)
    write_json_file("-", out.summary);
  else if (o.args.dry_run)
    std::fputs(out.text.c_str(), stdout);
  if (!out.error.empty()) throw Error(out.error);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  SweepArgs* a = &o->args;
  app.add_option("spec", a->spec, "sweep spec (JSON; docs/sweep.md)")->required();
  app.add_option("-o,--output", a->out,
                 "output folder (points/, results.csv, manifest.json); required unless --dry-run");
  app.add_option("--jobs", a->jobs, "points run at once, one thread each (0 = every CPU)")
      ->capture_default_str();
  app.add_option("--shard", a->shard, "run only the i-th of N disjoint slices (points i, i+N, ...): i/N");
  app.add_flag(
      "--resume", a->resume,
      "finish a sweep in a folder that holds some of its points (removes a killed run's temporaries)");
  app.add_flag("--force", a->force, "run a spec of more than 10 million points");
  app.add_option("--plot", a->plot,
                 "draw results.csv's --y against --x, a line per value of --group, when the sweep ends "
                 "(PNG, PDF or SVG by extension; python3-matplotlib)");
  app.add_option("--x", a->plot_x, "--plot: the column on the x axis")->capture_default_str();
  app.add_option("--y", a->plot_y, "--plot: the column on the y axis")->capture_default_str();
  app.add_option("--group", a->plot_group, "--plot: a line per value of this column (default: one line)");
  app.add_flag("--dry-run", a->dry_run,
               "count the points (per shard and command) and time three of them, writing nothing: an "
               "estimate of the shard's time and a Slurm --time");
  app.add_flag("--json", o->json, "print a JSON summary (points run, failed, not written; docs/sweep.md)");
  app.callback([o] { execute(*o); });
}

}  // namespace sweep_cmd
MOESIM_CLI_COMMAND(
    "sweep", "Run a sweep spec's points (run or replay) in parallel threads, sharded, resumable; merged CSV",
    sweep_cmd::setup);
}  // namespace moesim::cli
