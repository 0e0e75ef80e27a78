#include "cli/run_options.h"

#include "cli/option_checks.h"
#include "cli/trace_options.h"
#include "traces/engine_log.h"

namespace moesim::cli {

void add_run_options(CLI::App& app, const std::shared_ptr<RunArgs>& a) {
  add_trace_input(app, a->trace);
  app.add_option("--model", a->load.model,
                 "model preset or JSON: take expert/dense sizes and FLOPs from it (default: the trace's own "
                 "expert sizes, shape from the preset its model name starts with)");
  app.add_option("--hw", a->hw, "hardware profile (see `moesim presets`)")->capture_default_str();
  add_system_option(app, a->system,
                    "system to simulate: offload (expert-level on-demand caching), layer-offload (a layer's "
                    "whole weights loaded when it runs), zipmoe (ZipMoE: compressed pools, planner, Alg. 1 "
                    "scheduler)");
  app.add_option(
         "--policy", a->policies,
         "eviction policy spec, e.g. lru, lfu, belady (see `moesim policies`); default lru; for zipmoe "
         "the in-pool eviction: freq (the paper's), lru, fifo, marking")
      ->allow_extra_args(false)
      ->each([a](const std::string&) { a->policy_given = true; });
  app.add_option(
         "--prefetch", a->prefetch,
         "prefetch policy: none, oracle:accuracy=P,lookahead=N, layer-window:depth=D (see `moesim policies`)")
      ->capture_default_str();
  app.add_option("--host-budget", a->host_budget,
                 "discrete GPU: a host-memory (DRAM) expert cache of this many bytes behind the --budget in "
                 "VRAM (0: none, "
                 "as without the option)");
  app.add_option("--recover-on", a->recover_on, "where tensor recovery runs: gpu or cpu")
      ->capture_default_str();
  app.add_option(
         "--compute-on", a->compute_on,
         "where routed experts compute: gpu, or cpu (as llama.cpp --n-cpu-moe, ktransformers, Fiddler)")
      ->capture_default_str();
  app.add_flag(
      "--compute-after-loads", a->compute_after_loads,
      "a layer's routed experts compute only once all its misses are loaded (reads overlap one another, "
      "not the resident experts' compute): engines that load a layer before computing it");
  app.add_option("--pools", a->pools,
                 "zipmoe: the pools the planner may use (Lambda, default F,C,S,E), or fixed ratios such as "
                 "F=0.2,C=0.5,S=0.3 (no planning)");
  app.add_option("--grid", a->grid, "zipmoe: planner grid step")->capture_default_str();
  app.add_flag("--warm", a->warm,
               "run the trace once to warm the caches (expert caches, the page cache), then measure a second "
               "pass");
  app.add_option("--warm-from", a->warm_from,
                 "warm the caches with this trace (the same model) before measuring the run's trace");
  app.add_option("--profile-trace", a->profile_trace,
                 "zipmoe: the trace the planner's popularity profile is measured on (as the paper profiles "
                 "offline; default: the run's own trace)");
  app.add_option(
         "--profile-tokens", a->profile_tokens,
         "zipmoe: measure the planner's popularity profile on the run's first N decode tokens only (what a "
         "system that profiles at start-up has seen; default: the whole trace)")
      ->check(whole_in_range(1, UINT32_MAX));
  app.add_option("--shards", a->shards, "zipmoe: E-chunk shards per tensor (K; default: the store's, else 4)")
      ->each([a](const std::string&) { a->shards_given = true; });
  app.add_option(
      "--store", a->store,
      "a packed expert store (moesim pack): exec reads the experts from it; for zipmoe also rho and K");
  app.add_option(
      "--ratio", a->ratio,
      "zipmoe: exponent compression ratio rho (compressed / raw exponent bytes); default: measured on "
      "Gaussian BF16 weights");
  app.add_option("--delta", a->delta, "zipmoe: dispatch tolerance in ranks (ZipMoE §3.4)")
      ->capture_default_str();
  app.add_option("--seed", a->seed, "seed of every random choice (prefetch oracle, marking)")
      ->capture_default_str();
  app.add_option("--budget", a->budgets, "expert cache budget in bytes (8GiB) or experts per layer (32)")
      ->allow_extra_args(false);
  app.add_option("--capacity", a->budgets)
      ->group("")
      ->allow_extra_args(false);  // deprecated spelling of --budget
  app.add_option("--scope", a->scope, "cache scope: global or layer")->capture_default_str();
  app.add_option("--batch", a->batch, "sequences decoding together (>= 1)")->capture_default_str();
  app.add_option("--routing", a->routing, "routing-rewrite policy")->capture_default_str();
  app.add_option("--scheduling", a->scheduling, "scheduling policy")->capture_default_str();
  app.add_option("--io-depth", a->io_depth, "reads the I/O thread keeps outstanding (1 = blocking reads)")
      ->capture_default_str();
  app.add_option(
         "--io", a->io,
         "how reads reach the SSD: direct (O_DIRECT, one blocking read per I/O thread), buffered (through "
         "the OS page cache: a re-read of resident bytes is a copy from DRAM), uring (io_uring with "
         "O_DIRECT, a tensor's chunks in flight at once; falls back to direct where unavailable); pread = "
         "direct")
      ->check(CLI::IsMember({"direct", "buffered", "uring", "pread"}))
      ->capture_default_str();
  app.add_option("--workers", a->workers, "CPU worker threads L (0 = the profile's cores)")
      ->capture_default_str();
  app.add_flag("--force", a->force,
               "simulate a budget above the hardware's memory (a warning, not an error)");
  app.add_flag("--allow-overcommit", a->allow_overcommit,
               "run a budget that does not fit beside the dense weights, KV cache and reserve (a warning and "
               "\"overcommitted\" in the JSON's device_memory, not an error; `moesim fit` gives the largest "
               "that fits)");
  app.add_option("--dense", a->dense,
                 "the dense weights: pinned (resident) or mmap (pages of the mapped file, in the page cache)")
      ->check(CLI::IsMember({"pinned", "mmap"}))
      ->capture_default_str();
  add_trace_format_options(app, a->load);
  app.add_flag("--json", a->json,
               "print JSON (header, warnings, metrics; docs/cli-json.md) instead of a summary");
  app.add_option("-o,--output", a->out, "output file ('-' = standard output)")->capture_default_str();
  app.add_option("--timeline", a->timeline, "write a Chrome trace event timeline (Perfetto) to this file");
  app.add_option("--timeline-steps", a->timeline_steps,
                 "record only workload steps A..B in --timeline (A:B, A:, :B; 0-based, inclusive)")
      ->each([a](const std::string&) { a->timeline_steps_given = true; });
}

void add_exec_options(CLI::App& app, const std::shared_ptr<RunArgs>& a) {
  app.add_flag(
      "--buffered", a->buffered,
      "exec: read through the page cache instead of O_DIRECT, whatever --io says (the simulation reads "
      "as --io says: --io buffered for both)");
  app.add_option(
         "--gpu", a->gpu,
         "run transfers, recovery and compute on the CUDA GPU: auto (when one is usable), on (required), off "
         "(a CPU thread emulates the GPU stream)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app.get_option("--workers")->description("CPU worker threads L (0 = this machine's CPUs)");
  app.add_flag("--verify-gpu", a->verify_gpu,
               "copy every GPU-recovered tensor back and compare it with the CPU kernel's (slower; a check)");
}

void add_log_fields_option(CLI::App& app, std::string& spec, CLI::Option* log) {
  app.add_option("--log-fields", spec,
                 log->get_name() +
                     ": the log's column (or summary key) of each field, FIELD=NAME,... (fields: " +
                     std::string(traces::kLogFields) + ")")
      ->needs(log);
}

}  // namespace moesim::cli
