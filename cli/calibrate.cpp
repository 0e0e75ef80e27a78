// `moesim calibrate`: options and output; the runs and fits are harness/calibrate/calibration.h.
#include <cstdio>

#include "base/json_io.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/run_options.h"
#include "harness/calibrate/calibration.h"
#include "harness/calibrate/log_calibration.h"

namespace moesim::cli {
namespace calibrate_cmd {

void setup(CLI::App& app) {
  auto ca = std::make_shared<CalibrateArgs>();
  add_run_options(app, ca->run);
  add_exec_options(app, ca->run);
  // One vocabulary: --json asks for JSON to -o (standard output by default), which a profile always is.
  app.get_option("--json")->description(
      "write JSON: the profile is JSON with or without it (to -o, default standard "
      "output)");
  app.add_option("--name", ca->name, "the profile's name (default: calibrated-HOST)");
  app.add_option(
      "--repeat", ca->repeat,
      "serve the calibration trace N times and fit every run's ops together (default 1; this machine's "
      "run-to-run variation averages out)");
  app.add_flag(
      "--no-pilot", ca->no_pilot,
      "zipmoe: measure the runs under the base profile's plan (--hw) instead of serving the trace once "
      "first and planning the measured runs with that pilot run's fit");
  app.add_flag(
      "--no-gemm-probe", ca->no_gemm_probe,
      "without a GPU: do not time the run's dense and expert GEMMs at 2-32 tokens; ops of 2+ tokens then "
      "cost the roofline and a mean fixed cost per kind fitted on the runs alone (docs/exec.md)");
  app.add_option(
         "--pilot-runs", ca->pilot_runs,
         "zipmoe: at most N pilot runs, each planned with the last one's fit, until a fit plans the pools "
         "its run was served with (default 3)")
      ->check(whole_in_range(1, 100));
  app.add_option("--threads", ca->run->workers)->group("");  // the older name of --workers (L)
  auto* micro =
      app.add_flag("--micro", ca->micro,
                   "run the microbenchmarks: reads against size and queue depth, decompression per codec "
                   "and recovery against size and threads (1..L), expert compute against tokens, and "
                   "their interference (docs/exec.md)");
  app.add_option("--micro-budget", ca->micro_budget, "seconds the microbenchmarks aim to take in all")
      ->capture_default_str()
      ->needs(micro);
  app.add_option("--micro-depth", ca->micro_depth,
                 "the deepest read queue benchmarked (1, 2, 4, ... up to it)")
      ->capture_default_str()
      ->needs(micro);
  app.add_option("--micro-codecs", ca->micro_codecs,
                 "codecs to benchmark decompression with besides the store's own (comma-separated)")
      ->delimiter(',')
      ->capture_default_str()
      ->needs(micro);
  app.add_option(
         "--fit-from", ca->fit_from,
         "which measurements fill the profile's fields: trace (the calibration run; default with a trace) "
         "or micro (the microbenchmarks; default without)")
      ->check(CLI::IsMember({"trace", "micro"}));
  auto la = std::make_shared<harness::LogCalibrateArgs>();
  la->run = ca->run;
  auto* from_log =
      app.add_option("--from-log", la->log,
                     "fit the profile to a real engine's per-token log (METRICS) and the route trace "
                     "its run recorded (--trace), with the engine's settings as run options; --hw is "
                     "the base profile (default phone-snapdragon-8gen3); docs/engine-logs.md")
          ->excludes(micro);
  add_log_fields_option(app, la->log_fields, from_log);
  app.callback([ca, la, &app] {
    if (!la->log.empty()) {
      if (app.get_option("--hw")->count() == 0) la->run->hw = "phone-snapdragon-8gen3";
      la->name = ca->name;
      write_json_file(la->run->out, harness::calibrate_from_log(*la));
      return;
    }
    const Json prof = calibrate(*ca);
    const std::string& out = ca->run->out;
    write_json_file(out, prof);
    if (ca->run->trace.empty())
      std::fprintf(stderr, "calibrated %s by microbenchmarks -> %s\n",
                   prof["calibration"].value("host", "").c_str(),
                   out == "-" ? "standard output" : out.c_str());
  });
}

}  // namespace calibrate_cmd
MOESIM_CLI_COMMAND(
    "calibrate",
    "Fit the simulator's cost models to this machine from a real run of a calibration trace and/or "
    "microbenchmarks (--micro) and write a hardware profile (-o profile.json)",
    calibrate_cmd::setup);
}  // namespace moesim::cli
