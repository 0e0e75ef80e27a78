// Argument parsing and plausibility checks shared by replay, run, compare, sweeps and the Python module, so
// that they speak one vocabulary.
//
// Lists: `--policy` and `--budget` accept lists and repetition, both together. Budgets split on ','.
// Policy specs carry commas inside their parameters ("random:seed=7,warm=2"), so a policy list splits on
// ';' always, and on ',' only where the text after the comma starts with a registered policy name
// followed by ':' ',' ';' or the end ("lru,lfu" is two specs; "random:seed=7,lfu" is two; "lfu:decay=0.5,
// window=8" is one, since "window" is no policy).
//
// Every out-of-range value is a UsageError (exit 2) naming the option. Implausible but runnable
// configurations are warnings (base/warnings.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/json_io.h"
#include "core/eviction.h"
#include "core/hardware_profile.h"
#include "traces/trace.h"

namespace moesim::harness {

// The commands that read a trace take it as --trace T or as their first argument; neither is a usage error.
inline void require_trace_input(const std::string& path) {
  if (path.empty()) throw UsageError("a trace is required: --trace T (or T as the first argument)");
}

std::vector<std::string> split_policy_list(const std::vector<std::string>& values);
// The same split for any policy kind: ';' always separates, ',' only before a spec starting a name that
// `starts_policy` accepts (so "cache-prior:lambda=0.5,J=2" stays one spec).
std::vector<std::string> split_spec_list(const std::vector<std::string>& values,
                                         const std::function<bool(const std::string&)>& starts_policy);
std::vector<std::string> split_budget_list(const std::vector<std::string>& values);
// What `--policy all` means: every registered eviction policy with its defaults (registry order), then the
// parameterized variants that change the algorithm (lfu:history=1, tinylfu:window=0); `moesim policies` lists
// them. The replay golden table covers the same list.
std::vector<std::string> all_eviction_specs();
// split_policy_list, then 'all' expanded to all_eviction_specs() and each spec validated (unknown
// policy or parameter: an Error before any trace is read).
std::vector<std::string> resolve_policy_list(const std::vector<std::string>& values);
// A --system value (a system spec, `moesim policies`), parsed once where it is read (the CLI's option
// callback, the Python module, a spec file's reader): what follows works on the PolicySpec and prints its
// text(). Throws moesim::UsageError for bad syntax or an unknown system (listing the known ones).
PolicySpec parse_system_option(const std::string& text);
// A system spec whose `policy=` names an eviction spec for it (compare's and sensitivity's systems, such as
// "offload:policy=lru"): the system with its other parameters in their order, and the policy= values given.
struct SystemAndPolicies {
  PolicySpec system;
  std::vector<std::string> policies;
};
SystemAndPolicies take_policy_param(const PolicySpec& spec);

// What a data-writing job (pack, weights synth, trace synth) wrote to its -o: the summary `--json` prints
// under "wrote" (cli/summary_json.h) and the text the command prints without it (cli/ prints either).
struct Wrote {
  Json summary;
  std::string text;
};
// printf into a std::string (text outputs go through write_file_atomic, not stdout directly).
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// A CSV cell of a JSON number, 17 significant digits; empty when it is null (not measured).
std::string csv_num(const Json& v);
// A JSON number printed with `fmt` (scaled by `scale`), or "-" when it is null (not measured).
std::string num_or_dash(const Json& v, const char* fmt, double scale = 1.0);

// `option` names the flag in messages. Budgets must parse and be > 0. A relative budget ("25%", "2xtopk")
// parses here and is resolved by resolve_budget_option once the model is known.
CacheCapacity parse_budget_option(const std::string& option, const std::string& text);
// `c` in experts per layer or bytes for the trace's model (its layers, experts, top-k) whose routed experts
// weigh `all_experts_bytes` (0: unknown); an absolute budget comes back as it is, a relative one as what it
// is for this model (outputs then report that: the budget each point of a grid over models ran). UsageError
// naming the option when it comes to less than one expert.
CacheCapacity resolve_budget_option(const std::string& option, const CacheCapacity& c,
                                    const traces::TraceInfo& info, uint64_t all_experts_bytes);
// A size in bytes with a unit ("32GiB"); UsageError naming the option otherwise.
uint64_t parse_bytes_option(const std::string& option, const std::string& text);
CacheScope parse_scope_option(const std::string& option, const std::string& text);
// --scope of compare: "global", "layer" or both, comma-separated, in the order given (duplicates rejected).
std::vector<CacheScope> parse_scope_list(const std::string& text);
// Throws UsageError("OPTION must be a whole number from LO to HI (WHAT), got V") outside [lo, hi].
void require_in_range(const std::string& option, uint64_t v, uint64_t lo, uint64_t hi,
                      const std::string& what = "");
// --io-depth's range in every command (run, exec, compare, sensitivity's io_depth): reads outstanding at
// once. An NVMe queue holds at most 64Ki commands and io_uring at most 32Ki entries; 4096 is beyond any depth
// that still changes a result and keeps the per-read state small (a depth of 2^31 ran out of memory).
inline constexpr uint32_t kMaxIoDepth = 4096;
inline void check_io_depth(const std::string& option, uint64_t v) {
  require_in_range(option, v, 1, kMaxIoDepth, "reads outstanding at once");
}
// Throws UsageError("OPTION must be at least MIN (got V)") when v < min.
void require_at_least(const std::string& option, uint64_t v, uint64_t min);

// Number of distinct sequences in the trace.
uint32_t trace_sequences(const traces::Trace& trace);

// Trace-level plausibility: over 5% of the cells missing; batch larger than the trace's sequences.
void warn_trace_plausibility(const std::string& path, const traces::Trace& trace, uint32_t batch);
// The same from the header counts (a trace read through its lookup index, without its records).
void warn_trace_plausibility(const std::string& path, const traces::TraceInfo& info, uint64_t records,
                             uint64_t sequences, uint32_t batch);

// Budget plausibility. `all_experts_bytes` is 0 when expert sizes are unknown; `hw` may be null (replay has
// no hardware). A budget above the hardware's memory is a UsageError unless `force` (then a warning).
void check_budget_plausibility(const std::string& option, const CacheCapacity& budget, CacheScope scope,
                               const traces::TraceInfo& info, uint64_t all_experts_bytes,
                               const HardwareProfile* hw, bool force);

}  // namespace moesim::harness
