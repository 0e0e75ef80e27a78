#include "harness/arguments.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/units.h"
#include "base/warnings.h"
#include "core/run_info.h"
#include "serving/system.h"

namespace moesim::harness {
namespace {

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool starts_with_policy_name(const std::string& s) {
  for (const auto& e : EvictionRegistry::instance().entries()) {
    if (s.compare(0, e.name.size(), e.name) != 0) continue;
    if (s.size() == e.name.size() || s[e.name.size()] == ':') return true;
  }
  return s == "all";
}

}  // namespace

std::vector<std::string> split_policy_list(const std::vector<std::string>& values) {
  return split_spec_list(values, starts_with_policy_name);
}

std::vector<std::string> split_spec_list(const std::vector<std::string>& values,
                                         const std::function<bool(const std::string&)>& starts_policy) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    for (const auto& part : split_on(v, ';')) {
      std::string cur;
      for (const auto& piece : split_on(part, ',')) {
        if (!cur.empty() && starts_policy(piece)) {
          out.push_back(cur);
          cur.clear();
        }
        cur += (cur.empty() ? "" : ",") + piece;
      }
      if (!cur.empty()) out.push_back(cur);
    }
  }
  return out;
}

std::vector<std::string> split_budget_list(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values)
    for (const auto& b : split_on(v, ',')) out.push_back(b);
  return out;
}

std::vector<std::string> all_eviction_specs() {
  // Variants whose parameter changes the algorithm rather than tuning it: perfect LFU (counts kept across
  // evictions) and TinyLFU without its window.
  static const char* const kVariants[] = {"lfu:history=1", "tinylfu:window=0"};
  std::vector<std::string> specs;
  for (const auto& e : EvictionRegistry::instance().entries()) specs.push_back(e.name);
  for (const char* v : kVariants) specs.emplace_back(v);
  return specs;
}

PolicySpec parse_system_option(const std::string& text) {
  return serving::parse_system_spec(text);
}

SystemAndPolicies take_policy_param(const PolicySpec& spec) {
  SystemAndPolicies out{PolicySpec{spec.name, {}}, {}};
  for (const auto& [k, v] : spec.values)
    if (k == "policy")
      out.policies.push_back(v);
    else
      out.system.values.emplace_back(k, v);
  return out;
}

std::vector<std::string> resolve_policy_list(const std::vector<std::string>& values) {
  std::vector<std::string> policies;
  for (const auto& p : split_policy_list(values)) {
    if (p == "all") {
      for (auto& spec : all_eviction_specs()) policies.push_back(std::move(spec));
    } else {
      eviction_canonical_name(p);
      policies.push_back(p);
    }
  }
  return policies;
}

std::string strprintf(const char* fmt, ...) {
  // Sized by a first pass, so a long line (a long trace path) is never cut short.
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, again);
  va_end(again);
  return s;
}

std::string csv_num(const Json& v) {
  return v.is_null() ? "" : strprintf("%.17g", v.get<double>());
}

CacheCapacity parse_budget_option(const std::string& option, const std::string& text) {
  CacheCapacity c;
  try {
    c = CacheCapacity::parse(text);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  if (c.value == 0) throw UsageError(option + ": budget '" + text + "' must be greater than 0");
  return c;
}

CacheCapacity resolve_budget_option(const std::string& option, const CacheCapacity& c,
                                    const traces::TraceInfo& info, uint64_t all_experts_bytes) {
  if (!c.relative()) return c;
  CacheCapacity r;
  try {
    r = c.resolved(info.layers, info.experts, info.top_k, all_experts_bytes);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  return r;
}

uint64_t parse_bytes_option(const std::string& option, const std::string& text) {
  const CacheCapacity c = parse_budget_option(option, text);
  if (c.unit != CacheCapacity::Unit::kBytes)
    throw UsageError(option + ": '" + text + "' needs a byte unit (such as 32GiB)");
  return c.value;
}

CacheScope parse_scope_option(const std::string& option, const std::string& text) {
  try {
    return parse_scope(text);
  } catch (const Error&) {
    throw UsageError(option + ": unknown scope '" + text + "' (known: global, layer)");
  }
}

std::vector<CacheScope> parse_scope_list(const std::string& text) {
  std::vector<CacheScope> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const CacheScope s = parse_scope_option("--scope", item);
    for (CacheScope seen : out)
      if (seen == s)
        throw UsageError("--scope names '" + std::string(scope_name(s)) + "' twice: '" + text + "'");
    out.push_back(s);
  }
  if (out.empty()) throw UsageError("--scope: expected global, layer or global,layer, got '" + text + "'");
  return out;
}

void require_in_range(const std::string& option, uint64_t v, uint64_t lo, uint64_t hi,
                      const std::string& what) {
  if (v < lo || v > hi)
    throw UsageError(option + " must be a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + (what.empty() ? "" : " (" + what + ")") + ", got " +
                     std::to_string(v));
}

void require_at_least(const std::string& option, uint64_t v, uint64_t min) {
  if (v < min)
    throw UsageError(option + " must be at least " + std::to_string(min) + " (got " + std::to_string(v) +
                     ")");
}

uint32_t trace_sequences(const traces::Trace& trace) {
  const auto seq = trace.columns().seq;
  uint32_t n = 0;
  for (size_t i = 0; i < seq.size(); ++i)
    if (i == 0 || seq[i] != seq[i - 1]) ++n;
  return n;
}

void warn_trace_plausibility(const std::string& path, const traces::Trace& trace, uint32_t batch) {
  warn_trace_plausibility(path, trace.info(), trace.records(), trace_sequences(trace), batch);
}

void warn_trace_plausibility(const std::string& path, const traces::TraceInfo& info, uint64_t records,
                             uint64_t seqs, uint32_t batch) {
  const uint64_t missing = info.missing_cells;
  const uint64_t cells = records + missing;
  if (cells > 0 && missing * 20 > cells)
    warn(path + ": " + std::to_string(missing) + " of " + std::to_string(cells) + " cells (" +
         std::to_string(100 * missing / cells) +
         "%) are missing; hit rates and latencies cover only the recorded cells");
  if (batch > seqs)
    warn("--batch " + std::to_string(batch) + " is larger than the trace's " + std::to_string(seqs) +
         " sequence" + (seqs == 1 ? "" : "s") + ": the batch never fills");
}

void check_budget_plausibility(const std::string& option, const CacheCapacity& budget, CacheScope scope,
                               const traces::TraceInfo& info, uint64_t all_experts_bytes,
                               const HardwareProfile* hw, bool force) {
  const std::string what = option + " " + budget.to_string();
  // Everything fits: every policy gives the same (compulsory-miss-only) result.
  const bool all_fit = budget.unit == CacheCapacity::Unit::kExperts
                           ? budget.value >= info.experts
                           : (all_experts_bytes > 0 && budget.value >= all_experts_bytes);
  if (info.experts > 0 && all_fit)
    warn(what + " holds all experts of the model" +
         (all_experts_bytes ? " (" + format_bytes(all_experts_bytes) + ")" : std::string()) +
         ": everything fits, policies cannot differ beyond first-use misses");
  // A global cache smaller than one token's working set (layers x top_k) evicts what the next token's
  // first layers need before they come back: global LRU then hits about 0%.
  if (scope == CacheScope::kGlobal && info.layers > 0 && info.top_k > 0) {
    const uint64_t working_set = uint64_t{info.layers} * info.top_k;
    uint64_t experts = 0;
    bool known = true;
    if (budget.unit == CacheCapacity::Unit::kExperts) {
      experts = budget.value * info.layers;
    } else if (all_experts_bytes > 0 && info.experts > 0) {  // the sizes served (--model's when given)
      const uint64_t mean = all_experts_bytes / (uint64_t{info.layers} * info.experts);
      experts = mean ? budget.value / mean : 0;
    } else if (!info.expert_bytes.empty()) {
      const uint64_t sum = std::accumulate(info.expert_bytes.begin(), info.expert_bytes.end(), uint64_t{0});
      const uint64_t mean = sum / info.expert_bytes.size();
      experts = mean ? budget.value / mean : 0;
    } else {
      known = false;
    }
    if (known && experts < working_set)
      warn(what + " is a global cache of " + std::to_string(experts) + " experts, smaller than one token's " +
           "working set (" + std::to_string(info.layers) + " layers x top-" + std::to_string(info.top_k) +
           " = " + std::to_string(working_set) +
           "): global LRU degenerates (the least recently used expert is the soonest needed)");
  }
  if (hw && hw->memory_capacity > 0 && budget.unit == CacheCapacity::Unit::kBytes &&
      budget.value > hw->memory_capacity) {
    const std::string msg = what + " is more than the memory of " + hw->display_name + " (" +
                            format_bytes(hw->memory_capacity) + ")";
    if (!force) throw UsageError(msg + "; pass --force to simulate it anyway");
    warn(msg + " (--force)");
  }
}

std::string num_or_dash(const Json& v, const char* fmt, double scale) {
  if (v.is_null()) return "-";
  char buf[400];
  const double x = scale * v.get<double>();
  std::snprintf(buf, sizeof buf, fmt, x);
  // A fixed-point format spells a huge value out in hundreds of digits: short exponent form instead
  // (1.2e+300).
  if (std::strlen(buf) > 16) std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace moesim::harness
