#include "harness/fit_job.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/memory_model.h"
#include "core/model_spec.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/run_outcome.h"
#include "harness/run_setup.h"
#include "traces/synth.h"
#include "traces/trace_io.h"

namespace moesim::harness {
namespace {

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

Json bytes_or_unbounded(uint64_t v) {
  return v == kUnbounded ? Json(nullptr) : Json(v);
}

// The trace the timing runs on: --trace, or one sequence of the model's shape routed by Zipf(alpha).
std::shared_ptr<const traces::Trace> timing_trace(const FitArgs& a, const ModelSpec& spec,
                                                  std::string& name) {
  if (!a.trace.empty()) {
    name = a.trace;
    traces::LoadOptions lo;
    lo.model = a.model;
    return std::make_shared<const traces::Trace>(traces::load_trace(a.trace, lo));
  }
  traces::SynthOptions so;
  so.seed = a.seed;
  so.sequences = 1;
  so.prompt_tokens = a.prompt;
  so.decode_tokens = a.tokens;
  name = strprintf("synthetic: %s, Zipf alpha %g, %u prompt + %u generated tokens, seed %llu",
                   spec.name.c_str(), a.zipf, a.prompt, a.tokens, static_cast<unsigned long long>(a.seed));
  return std::make_shared<const traces::Trace>(
      traces::generate_trace(traces::zipf_model(traces::shape_from_model(spec), a.zipf, a.seed), so));
}

// TTFT and TPOT of the run at `budget` bytes (the memory check of run included: the trace's context is at
// most the one asked for).
Json timing_at(const FitArgs& a, const ModelSpec& spec, uint64_t budget) {
  RunArgs r;
  std::string name;
  r.loaded = timing_trace(a, spec, name);
  r.trace = name;
  r.load.model = a.model;
  r.hw = a.hw;
  r.system = a.system;
  r.budgets = {std::to_string(budget) + "B"};
  r.batch = a.batch;
  r.io_depth = a.io_depth;
  r.compute_on = a.compute_on;
  r.recover_on = a.recover_on;
  r.dense = a.dense;
  r.seed = a.seed;
  r.force =
      true;  // the budget is the memory model's own answer; run's coarser check must not second-guess it
  const RunOutcome o = run_outcome(r);
  return {{"trace", name},
          {"budget_bytes", budget},
          {"ttft_s", o.metrics["ttft"]["mean_s"]},
          {"tpot_s", o.metrics["tpot"]["mean_s"]},
          {"decode_hit_rate", o.metrics["cache"]["decode_hit_rate"]}};
}

}  // namespace

Json fit_result(const FitArgs& a) {
  if (a.model.empty()) throw UsageError("--model is required (a preset name or a model JSON)");
  require_at_least("--batch", a.batch, 1);
  require_at_least("--context", a.context, 1);
  require_at_least("--io-depth", a.io_depth, 1);
  if (!(a.zipf >= 0 && a.zipf < 1e6)) throw UsageError("--zipf: alpha must be a number >= 0");
  const DensePlacement dense = parse_dense_placement(a.dense);
  uint64_t asked_budget = 0;
  if (!a.budget.empty()) asked_budget = parse_bytes_option("--budget", a.budget);
  const ModelSpec spec = load_model(a.model);
  const HardwareProfile hw = load_hardware(a.hw);
  const ModelMemory mem = model_memory(spec);

  MemoryRequest r;
  r.context_tokens = a.context;
  r.batch = a.batch;
  r.dense = dense;
  const uint64_t gpu_largest = largest_gpu_budget(hw, mem, r);
  r.gpu_budget = 0;
  const bool anything_fits = memory_breakdown(hw, mem, r).fits();
  Json out;
  out["header"] = run_header("fit", {{"model", a.model},
                                     {"hw", hw.name},
                                     {"hardware_origin", hw.origin},
                                     {"context", a.context},
                                     {"batch", a.batch},
                                     {"system", a.system.text()},
                                     {"dense", a.dense}});
  out["model"] = spec.name;
  out["hardware"] = hw.name;
  out["context_tokens"] = a.context;
  out["batch"] = a.batch;
  if (!anything_fits) {
    const MemoryBreakdown b = memory_breakdown(hw, mem, r);
    throw Error(spec.name + " does not fit in the memory of " + hw.display_name + " with a context of " +
                std::to_string(a.context) + " tokens x batch " + std::to_string(a.batch) +
                ", even without an expert cache:\n" + memory_breakdown_text(b));
  }
  // The budgets: a cache above every expert of the model holds nothing more.
  const uint64_t gpu_budget = std::min(gpu_largest, mem.all_experts_bytes);
  r.gpu_budget = gpu_budget;
  const uint64_t host_largest = largest_host_budget(hw, mem, r);
  out["largest_budget"] = {{"gpu_bytes", bytes_or_unbounded(gpu_largest)},
                           {"host_bytes", bytes_or_unbounded(host_largest)},
                           {"all_experts_bytes", mem.all_experts_bytes},
                           {"holds_every_expert", gpu_largest >= mem.all_experts_bytes}};
  out["memory"] = memory_breakdown_json(memory_breakdown(hw, mem, r), mem);
  // The longest context at the budget asked for (or at half the largest: what giving up cache buys).
  MemoryRequest c = r;
  c.gpu_budget = a.budget.empty() ? (gpu_largest == kUnbounded ? 0 : gpu_largest / 2) : asked_budget;
  out["longest_context"] = {{"at_budget_bytes", c.gpu_budget},
                            {"tokens", bytes_or_unbounded(longest_context(hw, mem, c))},
                            {"budget_source", a.budget.empty() ? "half the largest GPU budget" : "--budget"}};
  if (a.timing && gpu_budget > 0) out["timing"] = timing_at(a, spec, gpu_budget);
  return out;
}

namespace {

std::string bytes_text(const Json& v) {
  return v.is_null() ? "unbounded (no GPU memory size)" : format_bytes(v.get<uint64_t>());
}

std::string fit_text(const Json& j) {
  std::string t = strprintf("moesim fit: %s on %s, context %llu tokens x batch %u\n",
                            j["model"].get<std::string>().c_str(), j["hardware"].get<std::string>().c_str(),
                            static_cast<unsigned long long>(j["context_tokens"].get<uint64_t>()),
                            j["batch"].get<uint32_t>());
  const Json& m = j["memory"];
  t += "memory at the largest budget:\n";
  for (const Json& p : m["parts"])
    t += strprintf("  %-28s %12s  %s%s\n", p["name"].get<std::string>().c_str(),
                   format_bytes(p["bytes"].get<uint64_t>()).c_str(), p["place"].get<std::string>().c_str(),
                   p["evictable"].get<bool>() ? " (mmapped)" : "");
  t += strprintf("  %-28s %12s\n", "left for the page cache",
                 format_bytes(m["page_cache_bytes"].get<uint64_t>()).c_str());
  t += strprintf("  KV cache: %s per token\n", format_bytes(m["kv_bytes_per_token"].get<uint64_t>()).c_str());
  const Json& lb = j["largest_budget"];
  t += strprintf("largest expert budget: GPU tier %s, host tier %s (the model's experts: %s%s)\n",
                 bytes_text(lb["gpu_bytes"]).c_str(), bytes_text(lb["host_bytes"]).c_str(),
                 format_bytes(lb["all_experts_bytes"].get<uint64_t>()).c_str(),
                 lb["holds_every_expert"].get<bool>() ? "; every expert fits" : "");
  const Json& lc = j["longest_context"];
  t += strprintf("longest context at a budget of %s (%s): %s tokens\n",
                 format_bytes(lc["at_budget_bytes"].get<uint64_t>()).c_str(),
                 lc["budget_source"].get<std::string>().c_str(),
                 lc["tokens"].is_null() ? "unbounded" : std::to_string(lc["tokens"].get<uint64_t>()).c_str());
  if (j.contains("timing")) {
    const Json& tm = j["timing"];
    t += strprintf("at the largest budget (%s): TTFT %s, TPOT %s, decode hit rate %s%%\n  on %s\n",
                   format_bytes(tm["budget_bytes"].get<uint64_t>()).c_str(),
                   num_or_dash(tm["ttft_s"], "%.4g s").c_str(), num_or_dash(tm["tpot_s"], "%.4g s").c_str(),
                   num_or_dash(tm["decode_hit_rate"], "%.2f", 100).c_str(),
                   tm["trace"].get<std::string>().c_str());
  }
  return t;
}

}  // namespace

std::string fit_output(const FitArgs& a) {
  check_output_writable(a.out);
  Json j = fit_result(a);
  j["warnings"] = warnings_json();
  return a.json ? j.dump(2) + "\n" : fit_text(j);
}

}  // namespace moesim::harness
