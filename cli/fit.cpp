// `moesim fit`: options and help; what it does is harness/fit_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "harness/fit_job.h"

namespace moesim::cli {
namespace fit_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<FitArgs>();
  app.add_option("--model", a->model, "model preset or JSON")->required();
  app.add_option("--hw", a->hw, "hardware profile (see `moesim presets`)")->capture_default_str();
  app.add_option("--context", a->context,
                 "tokens of each sequence (prompt + generated) the KV cache must hold")
      ->capture_default_str();
  app.add_option("--batch", a->batch, "sequences decoding together (>= 1)")->capture_default_str();
  add_system_option(app, a->system, "serving system of the timing run, as `moesim run --system`");
  app.add_option("--budget", a->budget,
                 "the expert budget (bytes) to give the longest context at (default: half the largest)");
  app.add_option(
      "--trace", a->trace,
      "trace of the timing run (default: a synthetic one of the model's shape, see --prompt, --tokens, "
      "--zipf)");
  app.add_option("--prompt", a->prompt, "synthetic trace: prompt tokens")->capture_default_str();
  app.add_option("--tokens", a->tokens, "synthetic trace: generated tokens")->capture_default_str();
  app.add_option(
         "--zipf", a->zipf,
         "synthetic trace: Zipf alpha of the experts' popularity (0: uniform routing, a conservative TPOT)")
      ->capture_default_str();
  app.add_option("--seed", a->seed, "seed of the synthetic trace and the run")->capture_default_str();
  app.add_option("--dense", a->dense,
                 "the dense weights: pinned (resident) or mmap (evictable, in the page cache)")
      ->check(CLI::IsMember({"pinned", "mmap"}))
      ->capture_default_str();
  app.add_option("--compute-on", a->compute_on, "timing run: where routed experts compute (gpu or cpu)")
      ->capture_default_str();
  app.add_option("--recover-on", a->recover_on, "timing run: where recovery runs (gpu or cpu)")
      ->capture_default_str();
  app.add_option("--io-depth", a->io_depth, "timing run: reads the I/O thread keeps outstanding")
      ->capture_default_str();
  app.add_flag(
      "--no-timing", [a](int64_t) { a->timing = false; }, "the memory answers only: no timing run");
  app.add_flag("--json", a->json, "print JSON (header, memory, largest_budget, longest_context, timing)");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([a] { write_file_atomic(a->out, fit_output(*a)); });
}

}  // namespace fit_cmd
MOESIM_CLI_COMMAND(
    "fit",
    "Will a model run on a device: its memory, the largest expert budget and longest context that "
    "fit, and the TTFT and TPOT there",
    fit_cmd::setup);
}  // namespace moesim::cli
