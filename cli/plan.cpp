// `moesim plan`: options and help; what it does is harness/plan_job.h.
#include "base/atomic_file.h"
#include "cli/command.h"
#include "cli/summary_json.h"
#include "cli/trace_options.h"
#include "harness/plan_job.h"

namespace moesim::cli {
namespace plan_cmd {

void setup(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  add_trace_input(app, a->trace);
  app.add_option("--model", a->load.model,
                 "model preset or JSON (expert sizes, tensors, layers); default: the trace's model name");
  app.add_option("--hw", a->hw, "hardware profile (see `moesim presets`): the delays u, v, c")
      ->capture_default_str();
  add_system_option(app, a->system,
                    "the system whose planner sizes the pools (a system with a planner, `moesim policies`)");
  app.add_option("--budget", a->budget,
                 "memory for all layers' pools, in bytes (8GiB), or experts per layer (32)");
  app.add_option("--pools", a->pools,
                 "the active pools Lambda to plan over (a subset of F,C,S,E), or fixed ratios such as "
                 "F=0.2,C=0.5,S=0.3 "
                 "(no search)")
      ->capture_default_str();
  app.add_option("--grid", a->grid, "grid step delta of the ratios (1/n)")->capture_default_str();
  app.add_option("--batch", a->batch,
                 "sequences decoding together (>= 1): the invocations f_r is counted over")
      ->capture_default_str();
  app.add_option("--phase", a->phase, "invocations f_r is counted over: decode, prefill or all")
      ->capture_default_str();
  app.add_option(
      "--inclusion", a->inclusion,
      "rank-based inclusion probabilities instead of the trace's: a JSON list inline ('[0.9,0.7,...]') "
      "or a file; k = their sum, rounded");
  app.add_option("--workers", a->threads,
                 "CPU decompression workers L, as in `moesim run` (0 = the profile's CPU cores)")
      ->capture_default_str();
  // Elsewhere --threads means the host threads moesim itself uses; here it is only an alias of --workers.
  app.add_option("--threads", a->threads)->group("");
  app.add_option("--shards", a->shards, "K: exponent shards per tensor (default: the store's, else 4)");
  app.add_option(
      "--ratio", a->ratio,
      "rho: compressed / raw exponent bytes (default: the store's, else the Gaussian BF16 measurement)");
  app.add_option("--store", a->store, "a packed expert store (moesim pack) to read rho and K from");
  app.add_option(
         "--io", a->io,
         "who reads the E-chunks, as `run --system zipmoe:io=`: fused (each CPU worker its own, ZipMoE "
         "§4's prototype) or thread (the one I/O thread, §3.3); Alg. 3 assumes the same")
      ->check(CLI::IsMember({"fused", "thread"}))
      ->capture_default_str();
  app.add_option("--runners-up", a->runners_up, "other grid points to list")->capture_default_str();
  app.add_flag("--force", a->force, "plan a budget above the hardware's memory (a warning, not an error)");
  app.add_flag("--allow-overcommit", a->allow_overcommit,
               "plan a budget that does not fit beside the dense weights, KV cache and reserve (a warning)");
  add_trace_format_options(app, a->load);
  app.add_flag("--json", a->json, "print JSON (header, warnings, plan, runners_up) instead of a summary");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.callback([a] { write_file_atomic(a->out, plan_output(*a)); });
}

}  // namespace plan_cmd
MOESIM_CLI_COMMAND("plan", "Plan ZipMoE's cache pools (F/C/S/E ratios) for a trace, model and budget",
                   plan_cmd::setup);
}  // namespace moesim::cli
