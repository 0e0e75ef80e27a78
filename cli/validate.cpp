// `moesim validate`: options and output; the runs and checks are harness/validate/validation.h.
#include "base/atomic_file.h"
#include "base/error.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/run_options.h"
#include "harness/cluster/cluster_validation.h"
#include "harness/exec_runner.h"
#include "harness/validate/log_validation.h"
#include "harness/validate/matrix_validation.h"
#include "harness/validate/validation.h"

namespace moesim::cli {
namespace validate_cmd {

// How --calibrate-on (and every matrix cell, which calibrates) runs its pilots, at which batch and budget.
void add_calibration_options(CLI::App& app, const std::shared_ptr<ValidateArgs>& va) {
  app.add_flag("--no-pilot", va->no_pilot, "--calibrate-on: as `moesim calibrate --no-pilot`");
  app.add_flag("--no-gemm-probe", va->no_gemm_probe, "--calibrate-on: as `moesim calibrate --no-gemm-probe`");
  app.add_option(
         "--calibrate-batch", va->calibrate_batch,
         "--calibrate-on: the calibration runs' batch (default --batch): a profile fitted at one batch, "
         "judged at another")
      ->check(whole_in_range(1, 4096));
  app.add_option("--calibrate-budget", va->calibrate_budget,
                 "--calibrate-on: the calibration runs' budget (default --budget): a profile fitted at one "
                 "budget, judged at another");
  app.add_option("--pilot-runs", va->pilot_runs, "--calibrate-on: as `moesim calibrate --pilot-runs`")
      ->check(whole_in_range(1, 100));
}

// A matrix cell's run, exec and pilot options, parsed as `moesim validate` parses its own (the same options,
// checks and defaults).
std::shared_ptr<ValidateArgs> parse_cell(const std::vector<std::string>& options) {
  auto va = std::make_shared<ValidateArgs>();
  CLI::App app{"a cell of validate --matrix", "moesim validate"};
  add_run_options(app, va->run);
  app.get_option("--hw")->each([va](const std::string&) { va->hw_given = true; });
  add_exec_options(app, va->run);
  add_calibration_options(app, va);
  add_option_checks(app);
  std::vector<std::string> args(options.rbegin(), options.rend());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  return va;
}

// --matrix takes its traces, configurations and repeat from the spec: any other option of a single validation
// would silently not apply, so it is refused.
void check_matrix_alone(CLI::App& app) {
  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0 && !o->check_name("--matrix") && !o->check_name("-o") && !o->check_name("--json") &&
        !o->check_name("--csv") && !o->check_name("--help") && !o->check_name("-q"))
      throw UsageError("--matrix: " + o->get_name() +
                       " is not an option of a matrix (its traces, configurations "
                       "and options are the spec's)");
}

void setup(CLI::App& app) {
  auto va = std::make_shared<ValidateArgs>();
  add_run_options(app, va->run);
  // validate writes three timelines side by side, named after the option's value.
  app.get_option("--timeline")
      ->description(
          "write the exec run and the structure and cost simulations as Chrome trace timelines: "
          "PREFIX-exec.json, PREFIX-structure.json, PREFIX-cost.json (compare with scripts/timeline-diff)");
  auto* hw = app.get_option("--hw");
  hw->description(
        "hardware profile of this machine (from `moesim calibrate`; required unless --calibrate-on, "
        "which fits one here and takes this one as its base)")
      ->default_str("")
      ->each([va](const std::string&) { va->hw_given = true; });
  app.add_option("--profile", va->run->hw)  // the older name of --hw
      ->group("")
      ->check(hidden_alias_of(hw))
      ->each([va](const std::string&) { va->hw_given = true; });
  add_exec_options(app, va->run);
  app.add_option("--repeat", va->repeat, "exec runs (the spread of their TPOT is reported)")
      ->capture_default_str();
  app.add_option("--csv", va->csv, "write the errors as CSV (check, metric, sim, exec, error)");
  app.add_option(
      "--calibrate-on", va->calibrate_on,
      "calibrate here too, on this trace (`moesim calibrate TRACE --repeat N`, --hw its base "
      "profile): each of its N runs is followed by one exec run of the validated trace, so the profile "
      "and the runs it is checked against come from the same minutes of this machine");
  app.add_option("--profile-out", va->profile_out, "--calibrate-on: write the fitted profile here");
  app.add_option("--name", va->name, "--calibrate-on: the profile's name (default: calibrated-HOST)");
  add_calibration_options(app, va);
  app.add_option(
         "--targets", va->targets,
         "the limits the errors are judged by, CHECK.METRIC=LIMIT,... (LIMIT 0.05 or 5%; \"\" for none); the "
         "cost TPOT error is also judged over the exec median's interval, and with --calibrate-on "
         "transfer.tpot (the paired transfer error) over the pairs'")
      ->capture_default_str();
  auto la = std::make_shared<harness::LogValidateArgs>();
  la->run = va->run;
  auto* log =
      app.add_option("--log", la->log,
                     "compare the simulator with a real engine's per-token log (METRICS) of the run that "
                     "recorded --trace, instead of an exec run here: errors.cost.tpot and errors.cost.ttft "
                     "(docs/engine-logs.md)")
          ->excludes("--calibrate-on");
  add_log_fields_option(app, la->log_fields, log);
  auto ma = std::make_shared<harness::MatrixArgs>();
  app.add_option(
      "--matrix", ma->spec,
      "validate a grid of configurations, each calibrated on another trace than it validates "
      "(SPEC.json: models, trace pairs, systems, budgets, batch, I/O variants; docs/exec.md, \"A held-out "
      "matrix\"): a table of each cell's structure and cost errors with their verdicts; --csv one row per "
      "cell (experiments/validate-matrix/plot.py draws it)");
  auto ca = std::make_shared<harness::ClusterValidateArgs>();
  app.add_option(
      "--cluster", ca->spec,
      "validate the cluster simulator against real server processes (SERVERS.json; `cluster --platform "
      "exec`): errors.structure.latency_mean and errors.cost.latency_mean over --repeat runs "
      "(docs/cluster-exec.md, \"Validation\")");
  app.add_option("--placement", ca->placement, "--cluster: the expert placement policy");
  app.add_option("--duration", ca->duration, "--cluster: each exec run's arrivals, in real time")
      ->capture_default_str();
  app.add_option("--launch", ca->launch,
                 "--cluster: netns (start the servers here; root) or none (--rendezvous)")
      ->capture_default_str();
  app.add_option("--rendezvous", ca->rendezvous, "--cluster --launch none: where the servers publish");
  app.add_option("--secret-file", ca->secret_file,
                 "--cluster --launch none: the run's secret (default DIR/secret)");
  app.callback([&app, va, la, ma, ca] {
    if (!ca->spec.empty()) {
      for (const CLI::Option* o : app.get_options())
        if (o->count() > 0 && !o->check_name("--cluster") && !o->check_name("--placement") &&
            !o->check_name("--duration") && !o->check_name("--launch") && !o->check_name("--rendezvous") &&
            !o->check_name("--secret-file") && !o->check_name("--repeat") && !o->check_name("--seed") &&
            !o->check_name("--store") && !o->check_name("-o") && !o->check_name("--json") &&
            !o->check_name("--help") && !o->check_name("-q"))
          throw UsageError("--cluster: " + o->get_name() + " is not an option of a cluster validation");
      ca->repeat = va->repeat;
      ca->seed = va->run->seed;
      ca->store = va->run->store;
      ca->out = va->run->out;
      const harness::ClusterValidationOutput out = harness::validate_cluster(*ca);
      write_file_atomic(va->run->out, va->run->json ? out.json.dump(2) + "\n" : out.text);
      return;
    }
    if (!ma->spec.empty()) {
      check_matrix_alone(app);
      harness::require_exec("validate --matrix runs each cell for real on an expert store");
      ma->out = va->run->out;
      ma->json = va->run->json;
      ma->csv = va->csv;
      ma->parse = parse_cell;
      const harness::MatrixOutput out = harness::validate_matrix(*ma);
      if (!ma->csv.empty()) write_file_atomic(ma->csv, out.csv);
      write_file_atomic(ma->out, ma->json ? out.json.dump(2) + "\n" : out.text);
      if (out.failed > 0)
        throw Error("validate --matrix: " + std::to_string(out.failed) + " of " +
                    std::to_string(out.json["cells"].size()) +
                    " cells failed (their messages are in the output)");
      return;
    }
    if (!la->log.empty()) {
      if (!va->hw_given)
        throw UsageError(
            "validate --log needs --hw P.json (a profile, e.g. from `moesim calibrate --from-log`)");
      const harness::LogValidationOutput out = harness::validate_log(*la);
      write_file_atomic(la->run->out, la->run->json ? out.json.dump(2) + "\n" : out.text);
      return;
    }
    harness::require_exec(
        "validate runs the trace for real on an expert store (validate --log compares the simulator with an "
        "engine's log without exec)");
    const ValidationOutput out = validate(*va);
    if (!va->csv.empty()) write_file_atomic(va->csv, out.csv);
    write_file_atomic(va->run->out, va->run->json ? out.json.dump(2) + "\n" : out.text);
  });
}

}  // namespace validate_cmd
MOESIM_CLI_COMMAND(
    "validate",
    "Exec a trace, then simulate it with the measured op durations (structure error) and with the "
    "hardware profile (cost error): how far the simulator is from this machine",
    validate_cmd::setup);
}  // namespace moesim::cli
