#include "harness/replay_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/progress.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/eviction.h"
#include "core/prefetch.h"
#include "core/run_info.h"
#include "harness/arguments.h"
#include "harness/plot_script.h"
#include "harness/routing_table.h"
#include "replay/cache_replay.h"
#include "replay/mrc.h"
#include "replay/prefetch_replay.h"
#include "replay/routing_replay.h"
#include "serving/metrics.h"
#include "serving/workload_view.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"
#include "traces/trace_summary.h"

namespace moesim::harness {
namespace {

std::string table(const std::vector<replay::ReplayResult>& rs) {
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-6s %-18s %9s %8s %8s %12s %12s %11s %9s %9s\n", "eviction",
                "scope", "capacity", "experts", "hit%", "dec.hit%", "lookups", "hits", "read", "over-cap",
                "Mlook/s");
  s += line;
  for (const auto& r : rs) {
    const auto& c = r.counters;
    std::snprintf(line, sizeof line, "%-24s %-6s %-18s %9llu %8.3f %8.3f %12llu %12llu %11s %9llu %9.1f\n",
                  r.policy.c_str(), scope_name(r.scope), r.capacity.to_string().c_str(),
                  static_cast<unsigned long long>(r.capacity_experts), r.hit_pct, r.decode_hit_pct,
                  static_cast<unsigned long long>(c.lookups), static_cast<unsigned long long>(c.hits),
                  r.expert_sizes_known ? format_bytes(c.read_bytes).c_str() : "n/a",
                  static_cast<unsigned long long>(c.over_capacity_invocations), r.lookups_per_s / 1e6);
    s += line;
  }
  return s;
}

void warn_over_capacity(uint64_t over, size_t invocations) {
  if (over > 0)
    warn("degenerate configuration: up to " + std::to_string(over) + " of " + std::to_string(invocations) +
         " invocations needed more experts than the capacity (typically prefill passes); their excess "
         "experts passed through the cache (see over_capacity_invocations)");
}

// The `replay --json` document of every mode: the run header with its configuration, the warnings, the
// trace's description and the mode's results under `results_key`. The configuration holds the options all
// modes share, in this order, with the mode's own sweep axis (`axis`: routing, prefetch) after the policies
// and its own options (`tail`) at the end; keys keep this order in the output. `trace` is called after the
// warnings are taken, so a warning it raises goes to stderr only, as it always did.
std::string replay_json(const ReplayArgs& a, const std::vector<std::string>& policies, const Json& axis,
                        CacheScope scope, const std::vector<std::string>& budgets, const Json& tail,
                        const std::function<Json()>& trace, const char* results_key, Json results) {
  Json config = {{"trace", a.trace},
                 {"format", a.load.format},
                 {"fields", a.load.fields},
                 {"model", a.load.model},
                 {"policies", policies}};
  for (const auto& [k, v] : axis.items()) config[k] = v;
  config["scope"] = scope_name(scope);
  config["budgets"] = budgets;
  config["batch"] = a.batch;
  for (const auto& [k, v] : tail.items()) config[k] = v;
  Json j;
  j["header"] = run_header("replay", config);
  j["warnings"] = warnings_json();
  j["trace"] = trace();
  j[results_key] = std::move(results);
  return j.dump(2) + "\n";
}

// The results of a sweep as a JSON array, each by replay::to_json.
template <typename Results>
Json results_json(const Results& results) {
  Json out = Json::array();
  for (const auto& r : results) out.push_back(replay::to_json(r));
  return out;
}

// The budgets for this trace's model (relative ones resolved), each checked for plausibility.
std::vector<CacheCapacity> check_budgets(const std::vector<CacheCapacity>& caps, CacheScope scope,
                                         const traces::TraceInfo& info) {
  uint64_t all_experts_bytes = 0;
  for (uint32_t l = 0; l < info.layers && !info.expert_bytes.empty(); ++l)
    all_experts_bytes +=
        uint64_t{info.experts} * info.expert_bytes[std::min<size_t>(l, info.expert_bytes.size() - 1)];
  std::vector<CacheCapacity> out;
  for (const auto& c : caps) {
    out.push_back(resolve_budget_option("--budget", c, info, all_experts_bytes));
    check_budget_plausibility("--budget", out.back(), scope, info, all_experts_bytes, nullptr, false);
  }
  return out;
}

// Token-level replay (routing policies, lifetimes): every (eviction, routing, budget), the Table-2 layout.
std::string run_routing(const ReplayArgs& a, const traces::Trace& trace, const replay::ReplayInput& input,
                        const std::vector<std::string>& policies, const std::vector<std::string>& budgets,
                        const std::vector<CacheCapacity>& caps, CacheScope scope) {
  std::vector<std::string> routings = split_routing_list(a.routing);
  if (routings.empty()) routings = {"identity"};
  const replay::RoutingReplayInput rin(input, trace);
  std::vector<replay::RoutingReplayConfig> configs;
  for (const auto& c : caps)
    for (const auto& p : policies)
      for (const auto& r : routings) configs.push_back({p, r, scope, c, a.oracle_passes});
  warn_if_unoptimized();
  Progress bar("replay", configs.size(), "replays");
  const auto results = replay::replay_routing_sweep(rin, configs, a.threads, [&bar] { bar.add(1); });
  bar.finish();
  uint64_t over = 0;
  for (const auto& r : results) over = std::max(over, r.replay.counters.over_capacity_invocations);
  warn_over_capacity(over, input.stream().invocations());
  const auto& info = trace.info();
  std::string text;
  if (a.json) {
    text = replay_json(
        a, policies, {{"routing", routings}}, scope, budgets,
        {{"threads", a.threads}, {"oracle_passes", a.oracle_passes}},
        [&] {
          return traces::trace_summary_json(
              trace, a.trace, a.batch == 1 ? input.stream() : traces::build_lookup_stream(trace, 1));
        },
        "results", results_json(results));
  } else {
    text = strprintf(
        "trace %s%s: model %s, %u layers x %u experts, top-%u, %zu invocations, %zu router lookups "
        "(%llu decode); %s scope%s\n",
        a.trace.c_str(), info.synthetic ? " (SYNTHETIC)" : "", info.model.c_str(), info.layers, info.experts,
        info.top_k, input.stream().invocations(), input.stream().lookups(),
        static_cast<unsigned long long>(input.stream().decode_lookups()), scope_name(scope),
        trace.has_logits() ? "" : "; no router logits");
    text += routing_replay_table(results, info, scope);
  }
  return text;
}

// Cache-only replay with prefetch policies: every (eviction, budget, prefetch), prefetch metrics as `run`'s.
std::string run_prefetch(const ReplayArgs& a, const traces::Trace& trace, const traces::LookupStream& stream,
                         const replay::ReplayInput& input, const std::vector<std::string>& policies,
                         const std::vector<std::string>& budgets, const std::vector<CacheCapacity>& caps,
                         CacheScope scope) {
  const WorkloadView w = serving::workload_view(stream);
  std::vector<replay::PrefetchReplayConfig> configs;
  for (const auto& p : policies)
    for (const auto& c : caps)
      for (const auto& pf : a.prefetch) configs.push_back({{p, scope, c}, pf});
  warn_if_unoptimized();
  Progress bar("replay", configs.size(), "replays");
  const auto results =
      replay::replay_prefetch_sweep(input, w, configs, a.threads, a.seed, [&bar] { bar.add(1); });
  bar.finish();
  uint64_t over = 0;
  for (const auto& r : results) over = std::max(over, r.replay.counters.over_capacity_invocations);
  warn_over_capacity(over, stream.invocations());
  const auto& info = trace.info();
  std::string text;
  if (a.json) {
    text = replay_json(
        a, policies, {{"prefetch", a.prefetch}}, scope, budgets, {{"threads", a.threads}, {"seed", a.seed}},
        [&] {
          return traces::trace_summary_json(trace, a.trace,
                                            a.batch == 1 ? stream : traces::build_lookup_stream(trace, 1));
        },
        "results", results_json(results));
  } else {
    text = strprintf(
        "trace %s%s: model %s, %u layers x %u experts, top-%u, %zu invocations, %zu lookups (%llu "
        "decode); %s scope; prefetch without timing (nothing is late)\n",
        a.trace.c_str(), info.synthetic ? " (SYNTHETIC)" : "", info.model.c_str(), info.layers, info.experts,
        info.top_k, stream.invocations(), stream.lookups(),
        static_cast<unsigned long long>(stream.decode_lookups()), scope_name(scope));
    text += strprintf("%-24s %-18s %8s %8s %10s %9s %9s %11s  %s\n", "eviction", "capacity", "hit%",
                      "dec.hit%", "issued", "accuracy", "coverage", "useless", "prefetch");
    for (const auto& r : results) {
      const Json pj = prefetch_counters_json(r.counters, r.replay.counters.lookups, false);
      text += strprintf("%-24s %-18s %8.3f %8.3f %10llu %9s %9s %11s  %s\n", r.replay.policy.c_str(),
                        r.replay.capacity.to_string().c_str(), r.replay.hit_pct, r.replay.decode_hit_pct,
                        static_cast<unsigned long long>(r.counters.issued),
                        num_or_dash(pj["accuracy"], "%.2f%%", 100).c_str(),
                        num_or_dash(pj["coverage"], "%.2f%%", 100).c_str(),
                        r.replay.expert_sizes_known ? format_bytes(r.counters.useless_bytes).c_str()
                                                    : std::to_string(r.counters.useless).c_str(),
                        r.prefetch.c_str());
    }
  }
  return text;
}

struct StreamCounts {
  size_t invocations = 0, lookups = 0;
  uint64_t decode_lookups = 0;
};

// ---- miss-ratio curves (replay/mrc.h)
// ----------------------------------------------------------------------

std::string mrc_csv(const std::vector<replay::MrcResult>& curves) {
  std::string s =
      "eviction,scope,capacity,capacity_experts,capacity_bytes,method,lookups,hits,misses,hit_ratio,miss_"
      "ratio,"
      "decode_lookups,decode_hits,read_bytes,evictions,over_capacity_invocations,hit_ratio_stderr\n";
  for (const auto& m : curves) {
    const bool exact = m.method == "stack-distance";
    for (size_t i = 0; i < m.points.size(); ++i) {
      const replay::ReplayResult& r = m.points[i];
      const CacheCounters& c = r.counters;
      const double hr = c.lookups ? static_cast<double>(c.hits) / static_cast<double>(c.lookups) : 0;
      const double se = exact ? std::nan("") : m.hit_pct_stderr[i] / 100;
      s += strprintf("%s,%s,%s,%llu,%s,%s,%llu,%llu,%llu,%.9g,%.9g,%llu,%llu,%s,%s,%s,%s\n", r.policy.c_str(),
                     scope_name(r.scope), r.capacity.to_string().c_str(),
                     static_cast<unsigned long long>(r.capacity_experts),
                     r.capacity_bytes ? std::to_string(r.capacity_bytes).c_str() : "", m.method.c_str(),
                     static_cast<unsigned long long>(c.lookups), static_cast<unsigned long long>(c.hits),
                     static_cast<unsigned long long>(c.lookups - c.hits), hr, 1 - hr,
                     static_cast<unsigned long long>(c.decode_lookups),
                     static_cast<unsigned long long>(c.decode_hits),
                     r.expert_sizes_known ? std::to_string(c.read_bytes).c_str() : "",
                     exact ? std::to_string(c.evictions).c_str() : "",
                     exact ? std::to_string(c.over_capacity_invocations).c_str() : "",
                     std::isnan(se) ? "" : strprintf("%.6g", se).c_str());
    }
  }
  return s;
}

std::string mrc_table(const std::vector<replay::MrcResult>& curves) {
  std::string s = strprintf("%-24s %-18s %9s %8s %8s %8s %11s  %s\n", "eviction", "capacity", "experts",
                            "hit%", "miss%", "+-hit%", "read", "method");
  for (const auto& m : curves)
    for (size_t i = 0; i < m.points.size(); ++i) {
      const auto& r = m.points[i];
      const double se = m.method == "stack-distance" ? std::nan("") : m.hit_pct_stderr[i];
      s += strprintf(
          "%-24s %-18s %9llu %8.3f %8.3f %8s %11s  %s\n", r.policy.c_str(), r.capacity.to_string().c_str(),
          static_cast<unsigned long long>(r.capacity_experts), r.hit_pct, 100 - r.hit_pct,
          std::isnan(se) ? "-" : strprintf("%.3f", se).c_str(),
          r.expert_sizes_known ? format_bytes(r.counters.read_bytes).c_str() : "n/a",
          m.method == "shards" ? strprintf("shards %g x%u", m.sample_rate, m.salts).c_str() : "exact");
    }
  return s;
}

// The curve of every policy over every budget: LRU exact, any other by SHARDS.
std::string run_mrc(const ReplayArgs& a, const replay::ReplayInput& input, const traces::TraceInfo& info,
                    const traces::TraceCounts& counts, const StreamCounts& sc,
                    const std::vector<std::string>& policies, std::vector<std::string> budgets,
                    std::vector<CacheCapacity> caps, CacheScope scope) {
  if (caps.empty())
    for (uint32_t n = std::max(1u, info.top_k); n <= info.experts; ++n) {
      caps.push_back({CacheCapacity::Unit::kExperts, n});
      budgets.push_back(std::to_string(n));
    }
  warn_if_unoptimized();
  std::vector<replay::MrcResult> curves;
  for (const auto& p : policies) {
    if (EvictionRegistry::instance().entry(p, "eviction").traits.recency_stack)
      curves.push_back(replay::lru_mrc(input, scope, caps));
    else
      curves.push_back(replay::shards_mrc(input, p, scope, caps, {a.mrc_sample, a.mrc_salts}));
  }
  uint64_t over = 0;
  for (const auto& m : curves)
    for (const auto& r : m.points) over = std::max(over, r.counters.over_capacity_invocations);
  warn_over_capacity(over, sc.invocations);
  const std::string csv = mrc_csv(curves);
  if (!a.csv.empty()) write_file_atomic(a.csv, csv);
  if (!a.plot.empty()) plot_table("plot_mrc.py", csv, a.csv, a.plot);
  if (a.json) {
    Json mrc = Json::array();
    for (const auto& m : curves) {
      Json c = {{"eviction", m.points.front().policy}};
      c.update(replay::to_json(m));
      mrc.push_back(std::move(c));
    }
    return replay_json(
        a, policies, Json::object(), scope, budgets,
        {{"mrc", true}, {"mrc_sample", a.mrc_sample}, {"mrc_salts", a.mrc_salts}},
        [&] { return traces::trace_summary_json(info, a.trace, counts); }, "mrc", std::move(mrc));
  }
  return strprintf(
             "trace %s%s: model %s, %u layers x %u experts, top-%u, %zu invocations, %zu lookups (%llu "
             "decode); %s scope; miss-ratio curve (LRU exact by stack distances, others by SHARDS)\n",
             a.trace.c_str(), info.synthetic ? " (SYNTHETIC)" : "", info.model.c_str(), info.layers,
             info.experts, info.top_k, sc.invocations, sc.lookups,
             static_cast<unsigned long long>(sc.decode_lookups), scope_name(scope)) +
         mrc_table(curves);
}

// The cache-only replay of every (policy, budget) and its output; `counts` describe the trace (its batch-1
// stream), `sc` the stream replayed.
std::string run_cache_only(const ReplayArgs& a, const replay::ReplayInput& input,
                           const traces::TraceInfo& info, const traces::TraceCounts& counts,
                           const StreamCounts& sc, const std::vector<std::string>& policies,
                           const std::vector<std::string>& budgets, const std::vector<CacheCapacity>& caps,
                           CacheScope scope) {
  if (a.mrc) return run_mrc(a, input, info, counts, sc, policies, budgets, caps, scope);
  std::vector<replay::ReplayConfig> configs;
  for (const auto& p : policies)
    for (const auto& c : caps) configs.push_back({p, scope, c});
  warn_if_unoptimized();
  Progress bar("replay", configs.size(), "replays");
  const std::vector<replay::ReplayResult> results =
      replay::replay_sweep(input, configs, a.threads, [&bar] { bar.add(1); });
  bar.finish();
  uint64_t over = 0;
  for (const auto& r : results) over = std::max(over, r.counters.over_capacity_invocations);
  warn_over_capacity(over, sc.invocations);

  std::string text;
  if (a.json) {
    text = replay_json(
        a, policies, Json::object(), scope, budgets, {{"threads", a.threads}},
        [&] { return traces::trace_summary_json(info, a.trace, counts); }, "results", results_json(results));
  } else {
    char head[512];
    std::snprintf(
        head, sizeof head,
        "trace %s%s: model %s, %u layers x %u experts, top-%u, %zu invocations, %zu lookups (%llu decode); "
        "%s scope\n",
        a.trace.c_str(), info.synthetic ? " (SYNTHETIC)" : "", info.model.c_str(), info.layers, info.experts,
        info.top_k, sc.invocations, sc.lookups, static_cast<unsigned long long>(sc.decode_lookups),
        scope_name(scope));
    text = head + table(results);
  }
  return text;
}

// Does any of the policies need the next-use index (Belady)?
bool needs_next_use(const std::vector<std::string>& policies) {
  return std::any_of(policies.begin(), policies.end(),
                     [](const std::string& p) { return replay::oracle_needs(p).next_use; });
}

// `replay` straight from the lookup stream of an .mtr file (traces/mtr_format.h read_mtr_lookup_stream): its
// lookup index when it has one (the records are not read), else the stream built from the record columns it
// is made of. Taken for the plain cache-only replay (or curve) at batch 1 of an .mtr file read as it is (no
// --model, no import options): its output, or nothing when that path does not apply or the file is no .mtr.
std::optional<std::string> try_run_indexed(const ReplayArgs& a, const std::vector<std::string>& policies,
                                           const std::vector<std::string>& budgets,
                                           const std::vector<CacheCapacity>& caps, CacheScope scope) {
  const auto& l = a.load;
  if (a.loaded || !a.routing.empty() || a.lifetime || !a.prefetch.empty() || a.batch != 1 ||
      !(l.format == "auto" || l.format == "mtr") || !l.fields.empty() || !l.model.empty() ||
      l.token_from != "column" || l.layer_base != 0 || !l.where.empty() || l.skip_warmup ||
      l.drop_duplicates || !l.delimiter.empty())
    return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(a.trace, ec)) return std::nullopt;
  // The file's checksums run while it is replayed (the structure is checked before): verified before any
  // result is returned, and a mismatch is the error reported when the replay fails too.
  const std::optional<traces::MtrLookups> idx = traces::read_mtr_lookup_stream(
      a.trace, needs_next_use(policies), a.json, traces::MtrReadOptions{.defer_checksum = true});
  if (!idx) return std::nullopt;
  const auto& info = idx->info;
  const replay::ReplayInput input(idx->view, info.layers, info.experts, info.top_k, info.expert_bytes);
  warn_trace_plausibility(a.trace, info, idx->records, idx->sequences, a.batch);
  const std::vector<CacheCapacity> resolved = check_budgets(caps, scope, info);
  const traces::TraceCounts counts{.sequences = idx->sequences,
                                   .prefill_tokens = idx->prefill_tokens,
                                   .decode_tokens = idx->decode_tokens,
                                   .records = idx->records,
                                   .invocations = idx->invocations(),
                                   .lookups = idx->lookups(),
                                   .decode_lookups = idx->decode_lookups,
                                   .has_weights = idx->has_weights,
                                   .has_logits = idx->has_logits};
  std::string text;
  try {
    text = run_cache_only(a, input, info, counts,
                          StreamCounts{idx->invocations(), idx->lookups(), idx->decode_lookups}, policies,
                          budgets, resolved, scope);
  } catch (const Error&) {
    idx->verify();
    throw;
  }
  idx->verify();
  return text;
}

}  // namespace

std::string replay_output(const ReplayArgs& a) {
  if (!a.loaded) require_trace_input(a.trace);
  require_at_least("--batch", a.batch, 1);
  require_at_least("--jobs", a.threads, 1);
  const CacheScope scope = parse_scope_option("--scope", a.scope);
  const std::vector<std::string> budgets = split_budget_list(a.budgets);
  if (budgets.empty() && !a.mrc)
    throw UsageError("a budget is required: --budget C (a list or repeated for a sweep)");
  std::vector<CacheCapacity> caps;
  for (const auto& c : budgets) caps.push_back(parse_budget_option("--budget", c));

  std::vector<std::string> policies = resolve_policy_list(a.policies);
  if (policies.empty())
    throw UsageError("--policy: no policy given (known: " + EvictionRegistry::instance().names() + ", all)");
  if (!a.prefetch.empty() && (!a.routing.empty() || a.lifetime))
    throw UsageError(
        "--prefetch cannot be combined with --routing or --lifetime in replay (use `moesim run`)");
  if (a.mrc && (!a.routing.empty() || a.lifetime || !a.prefetch.empty()))
    throw UsageError("--mrc cannot be combined with --routing, --lifetime or --prefetch");
  if (!a.mrc && (!a.csv.empty() || !a.plot.empty())) throw UsageError("--csv and --plot need --mrc");
  if (a.mrc && !(a.mrc_sample > 0 && a.mrc_sample <= 1))
    throw UsageError("--mrc-sample must be in (0, 1], got " + std::to_string(a.mrc_sample));
  if (a.mrc) require_at_least("--mrc-salts", a.mrc_salts, 1);
  check_output_writable(a.out);
  if (!a.csv.empty()) check_output_writable(a.csv);
  if (!a.plot.empty()) check_output_writable(a.plot);
  if (auto text = try_run_indexed(a, policies, budgets, caps, scope)) return *text;

  const traces::Trace trace = a.loaded ? *a.loaded : traces::load_trace(a.trace, a.load);
  const auto& info = trace.info();
  // The cache-only replay reads no token counts, and the next-use index only for an oracle policy: each is
  // a 4-byte array per lookup not to build (the token-level paths read both).
  traces::LookupStreamParts parts;
  if (a.routing.empty() && !a.lifetime && a.prefetch.empty()) {
    parts.tokens = false;
    parts.next_use = needs_next_use(policies);
  }
  const traces::LookupStream stream = traces::build_lookup_stream(trace, a.batch, parts);
  if (stream.lookups() == 0) throw Error(a.trace + ": the trace has no routing records, nothing to replay");
  const replay::ReplayInput input(stream, info.top_k, info.expert_bytes);
  warn_trace_plausibility(a.trace, trace, a.batch);
  const std::vector<CacheCapacity> resolved = check_budgets(caps, scope, info);

  if (!a.routing.empty() || a.lifetime)
    return run_routing(a, trace, input, policies, budgets, resolved, scope);
  if (!a.prefetch.empty()) return run_prefetch(a, trace, stream, input, policies, budgets, resolved, scope);
  // The trace's description is JSON-only (the counts take passes over the records).
  traces::TraceCounts counts;
  if (a.json) {
    const traces::LookupStream batch1_built =
        a.batch == 1 ? traces::LookupStream{} : traces::build_lookup_stream(trace, 1);
    const traces::LookupStream* batch1 = a.batch == 1 ? &stream : &batch1_built;
    counts = traces::TraceCounts{.sequences = trace.sequence_ids().size(),
                                 .prefill_tokens = trace.tokens(traces::Phase::kPrefill),
                                 .decode_tokens = trace.tokens(traces::Phase::kDecode),
                                 .records = trace.records(),
                                 .invocations = batch1->invocations(),
                                 .lookups = batch1->lookups(),
                                 .decode_lookups = batch1->decode_lookups(),
                                 .has_weights = trace.has_weights(),
                                 .has_logits = trace.has_logits()};
  }
  return run_cache_only(a, input, info, counts,
                        StreamCounts{stream.invocations(), stream.lookups(), stream.decode_lookups()},
                        policies, budgets, resolved, scope);
}

}  // namespace moesim::harness
