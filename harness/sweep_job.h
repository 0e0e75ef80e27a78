// `moesim sweep SPEC.json [--jobs N] [--shard i/N] [--resume] [--force] [--json] -o DIR` (docs/sweep.md),
// below its options: what-if sweeps over a spec's points, on threads of this process, sharded and resumable.
//
//   spec = load_spec(SPEC)                      (harness/sweep_spec.h: grid and/or explicit points)
//   over 10 million points: refused without --force (counted before the points are built)
//   --resume: this folder's temporaries of a killed run are removed
//   mine = points i with i mod N == shard, minus those whose DIR/points/<id>.json exists
//   manifest(DIR) = {spec hash, version, state running}      (a folder of another spec is refused)
//   over 100,000 points: the first point runs alone, timed, and a warning gives the count and the estimate
//   parallel_for(mine, --jobs):                 (base/parallel.h; each point on one thread, in this process)
//       run `moesim run|replay|cluster ARGS --json -o FILE` in process, its warnings captured per thread
//       write DIR/points/<id>.json atomically   (a killed sweep loses only the points in flight)
//   DIR/results.csv = merged_csv(spec, DIR); manifest = {..., points done, failed with their errors}
//
// A point runs the very code of its command: the caller's PointRunner parses its command line with the
// command's own options and checks (cli/ owns those; the CLI and the Python module pass the same runner). Its
// result depends only on its parameters and seed, never on the thread or the order it ran in, so results.csv
// -- a function of the spec and the point files -- is byte-identical however the sweep was sharded, resumed
// or parallelised. Points run in the spec's folder (the sweep changes into it and back), so a spec's relative
// paths are relative to the spec, from whatever directory the sweep starts.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "base/output_guard.h"

namespace moesim::harness {

struct SweepArgs {
  std::string spec, out, shard;     // spec: the file, or the name of spec_json in messages
  std::optional<Json> spec_json;    // the spec itself instead of a file (Python's dict)
  std::filesystem::path spec_base;  // spec_json's folder for relative paths (empty: the current one)
  unsigned jobs = 0;                // 0: every CPU
  bool resume = false, force = false;
  bool report = true;  // the one-line summary on stderr
  // Count and time, write nothing (run_sweep's summary is the dry run's; `out` optional).
  bool dry_run = false;
  // --plot FILE: results.csv's column `plot_y` against `plot_x`, a line per value of `plot_group` (empty: one
  // line), drawn by scripts/plot_sweep.py once the sweep has finished; the columns must be results.csv's.
  std::string plot, plot_x = "budget", plot_y = "tpot_mean_s", plot_group;
};

// Runs `moesim ARGS...` (args[0] the command) in this process, on this thread; throws moesim::Error (or
// UsageError for bad options) with the message the command line would print.
using PointRunner = std::function<void(std::vector<std::string> args)>;

struct SweepOutcome {
  Json summary;       // --json's summary (docs/sweep.md)
  std::string error;  // points that failed or files not written: the sweep's error, empty when none
  std::string text;   // a dry run's report (empty otherwise: a sweep's report goes to stderr)
};

// The files `moesim ARGS...` would read, from its command line alone (cli/run_command.h's
// command_line_inputs).
using PointInputs = std::function<std::vector<NamedPath>(std::vector<std::string> args)>;

// Runs this shard's unfinished points and writes DIR's point files, results.csv and manifest.json. Throws
// (before any point runs) for a bad spec, shard or folder; failed points end up in `error`, not thrown.
// Before anything is written or deleted, DIR may neither be nor hold a file the spec's points read
// (`inputs_of`, sweep::files_named): a moesim::UsageError naming the point and how it names the file.
// `check_command` (optional) parses a command line with the command's own options and checks and does not
// run it (cli::check_command): with it the spec's "options" are checked against each command of the spec
// before any point runs, so options that do not fit fail the spec (naming /options) instead of every point.
//
// With a.dry_run nothing is written: the summary counts the spec's points, this shard's and those still to
// run (a.out, when given and holding this spec's results, has some finished), per command, and times up to
// three of the points to run (the first, the middle and the last), each run alone into a temporary folder
// that is removed; `estimate_s` = their mean x points to run / min(jobs, points to run), which assumes the
// points cost alike and the threads scale; `slurm_time` is 1.5 x that, rounded up to whole minutes, at least
// one (an array task's --time). `text` holds the same for a terminal.
SweepOutcome run_sweep(const SweepArgs& a, const PointRunner& run_command, const PointInputs& inputs_of,
                       const PointRunner& check_command = {});

}  // namespace moesim::harness
