// `moesim sensitivity`: options and help; what it does is harness/sensitivity_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/summary_json.h"
#include "harness/sensitivity_job.h"

namespace moesim::cli {
namespace sensitivity_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<SensitivityArgs>();
  app.add_option("spec", a->spec,
                 "the spec (JSON: points of trace, hw, budget, systems and metric; docs/sensitivity.md)")
      ->required();
  app.add_option(
      "--factors", a->factors,
      "factors each assumption-marked field is scaled by, comma-separated (default: the spec's, else "
      "0.5,2)");
  add_jobs_option(app, a->jobs, "runs simulated in parallel; the output does not depend on it", "--threads");
  app.add_flag(
      "--find-flip", a->find_flip,
      "search, per field, the factor on each side of 1 at which the ranking flips (bisection), instead "
      "of the fixed factors; fields may include the run parameters budget and ratio");
  app.add_option("--range", a->range, "--find-flip: the factors searched, LO,HI with LO < 1 < HI")
      ->capture_default_str();
  app.add_option("--tolerance", a->tolerance, "--find-flip: the final bracket's relative width")
      ->capture_default_str();
  app.add_option("--plot", a->plot, "--find-flip: a tornado plot of the break-evens (PNG, PDF or SVG)");
  app.add_flag("--json", a->json,
               "print JSON (header, warnings, points, fields or flips; docs/sensitivity.md)");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([a] { write_file_atomic(a->out, sensitivity_output(*a)); });
}

}  // namespace sensitivity_cmd
MOESIM_CLI_COMMAND(
    "sensitivity",
    "Scale each assumed hardware figure a comparison rests on and report whether its ranking flips",
    sensitivity_cmd::setup);
}  // namespace moesim::cli
