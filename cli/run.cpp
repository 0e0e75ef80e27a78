// `moesim run` and `moesim exec`: options and help; what they do is harness/run_job.h.
#include "cli/command.h"
#include "cli/run_options.h"
#include "harness/exec_runner.h"
#include "harness/run_job.h"

namespace moesim::cli {
namespace run_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  add_run_options(app, a);
  app.callback([a] { run_and_report(*a); });
}

void setup_exec(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  a->exec = true;
  add_run_options(app, a);
  add_exec_options(app, a);
  app.callback([a] {
    harness::require_exec("exec serves a trace for real from an expert store (`moesim run` simulates it)");
    run_and_report(*a);
  });
}

}  // namespace run_cmd
MOESIM_CLI_COMMAND("run", "Simulate serving a trace (TTFT, TPOT, hit rates, utilization)", run_cmd::setup);
MOESIM_CLI_COMMAND(
    "exec",
    "Serve a trace for real from a packed expert store (threads, O_DIRECT reads, decompression, "
    "recovery, expert compute): the metrics of `run`, measured",
    run_cmd::setup_exec);
}  // namespace moesim::cli
