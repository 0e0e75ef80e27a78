// The vocabulary of cache-pool planning (core/planning.h): pool names and sets, the --pools option, pool
// sizes, the planner's input checks and a plan's JSON. The ZipMoE planner itself is
// policies/planning/zipmoe_planner.cpp.
#include "core/planning.h"

#include <cctype>
#include <cmath>
#include <string>

#include "base/error.h"
#include "base/units.h"

namespace moesim {

void check_exponent_ratio(double rho, const std::string& name) {
  if (!(rho > 0 && rho <= kMaxExponentRatio))
    throw UsageError(name + " must be a number in (0, " + format_number(kMaxExponentRatio) +
                     "] (rho, compressed / raw exponent bytes), got " + format_number(rho));
}

void check_shards(uint64_t k, const std::string& name) {
  if (k < 1 || k > kMaxShards)
    throw UsageError(name + " must be a whole number from 1 to " + std::to_string(kMaxShards) +
                     " (E-chunk shards per tensor, as a packed store allows), got " + std::to_string(k));
}
const char* pool_name(Pool p) {
  static const char* const names[kPools] = {"F", "C", "S", "E"};
  return names[static_cast<int>(p)];
}

namespace {

// Index of a pool name ("F", "c", ...), or -1.
int pool_index(const std::string& name) {
  if (name.size() != 1) return -1;
  const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  for (int p = 0; p < kPools; ++p)
    if (pool_name(static_cast<Pool>(p))[0] == c) return p;
  return -1;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

int PoolSet::size() const {
  return static_cast<int>(std::count(active.begin(), active.end(), true));
}

std::string PoolSet::str() const {
  std::string s;
  for (int p = 0; p < kPools; ++p)
    if (active[p]) s += (s.empty() ? "" : ",") + std::string(pool_name(static_cast<Pool>(p)));
  return s;
}

PoolSet PoolSet::parse(const std::string& text, const std::string& option) {
  PoolSet set;
  for (const std::string& item : split_commas(text)) {
    const int p = pool_index(item);
    if (p < 0)
      throw UsageError(option + ": unknown pool '" + item + "' in '" + text + "' (known: F, C, S, E)");
    if (set.active[p]) throw UsageError(option + ": pool " + item + " named twice in '" + text + "'");
    set.active[p] = true;
  }
  return set;
}

PoolRatios parse_pool_ratios(const std::string& text, const std::string& option) {
  PoolRatios r{};
  std::array<bool, kPools> seen{};
  double sum = 0;
  for (const std::string& item : split_commas(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw UsageError(option + ": '" + item + "' in '" + text +
                       "' is not POOL=RATIO (e.g. F=0.2,C=0.5,S=0.3)");
    const std::string name = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    const int p = pool_index(name);
    if (p < 0)
      throw UsageError(option + ": unknown pool '" + name + "' in '" + text + "' (known: F, C, S, E)");
    if (seen[p]) throw UsageError(option + ": pool " + name + " named twice in '" + text + "'");
    seen[p] = true;
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.empty() || used != value.size() || !std::isfinite(x))
      throw UsageError(option + ": ratio of pool " + name + " is not a number: '" + value + "'");
    if (x < 0 || x > 1)
      throw UsageError(option + ": ratio of pool " + name + " must be in [0, 1] (got " + value + ")");
    r[p] = x;
    sum += x;
  }
  if (std::fabs(sum - 1.0) > 1e-9) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.12g", sum);
    throw UsageError(option + ": the ratios in '" + text + "' must sum to 1 (they sum to " + buf + ")");
  }
  return r;
}

PoolsOption parse_pools_option(const std::string& text, const std::string& option) {
  PoolsOption o;
  if (text.find('=') == std::string::npos) {
    o.set = PoolSet::parse(text, option);
    return o;
  }
  o.ratios = parse_pool_ratios(text, option);
  for (const std::string& item : split_commas(text))
    o.set.active[pool_index(trim(item.substr(0, item.find('='))))] = true;
  return o;
}

std::string pool_ratios_str(const PoolRatios& r) {
  std::string s;
  for (int p = 0; p < kPools; ++p) {
    if (r[p] <= 0) continue;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s=%.6g", pool_name(static_cast<Pool>(p)), r[p]);
    s += (s.empty() ? "" : ",") + std::string(buf);
  }
  return s;
}

std::array<uint64_t, kPools> pool_expert_bytes(uint64_t expert_bytes, const TensorLayout& layout) {
  const uint64_t sm =
      static_cast<uint64_t>(std::llround(layout.sm_fraction * static_cast<double>(expert_bytes)));
  const uint64_t e_raw = expert_bytes - std::min(sm, expert_bytes);
  const uint64_t e = static_cast<uint64_t>(std::ceil(layout.e_ratio * static_cast<double>(e_raw)));
  return {expert_bytes, sm + e, sm, e};
}

uint64_t PoolPlan::used_bytes_per_layer() const {
  uint64_t b = 0;
  for (int p = 0; p < kPools; ++p) b += static_cast<uint64_t>(experts[p]) * expert_bytes[p];
  return b;
}

void validate_planning_input(const PlanningInput& in) {
  auto bad = [](const std::string& field, const std::string& msg) {
    throw Error("planning input: " + field + ": " + msg);
  };
  if (in.layers == 0) bad("layers", "must be at least 1");
  if (in.experts == 0) bad("experts", "must be at least 1");
  if (in.k == 0 || in.k >= in.experts)
    bad("k", "must be in [1, experts - 1] = [1, " + std::to_string(in.experts - 1) + "] (got " +
                 std::to_string(in.k) + ")");
  if (in.expert_bytes == 0) bad("expert_bytes", "must be positive");
  if (in.budget_bytes / in.layers == 0) bad("budget_bytes", "less than one byte per layer");
  if (in.f.size() != in.experts)
    bad("f",
        "has " + std::to_string(in.f.size()) + " entries for " + std::to_string(in.experts) + " experts");
  double sum = 0;
  for (size_t r = 0; r < in.f.size(); ++r) {
    if (!(in.f[r] >= 0 && in.f[r] < 1))
      bad("f", "f_" + std::to_string(r + 1) + " = " + std::to_string(in.f[r]) + " is outside [0, 1)");
    if (r > 0 && in.f[r] > in.f[r - 1])
      bad("f", "must be sorted by rank, descending (f_" + std::to_string(r + 1) + " > f_" +
                   std::to_string(r) + ")");
    sum += in.f[r];
  }
  if (std::fabs(sum - in.k) > 1e-6)
    bad("f", "sums to " + std::to_string(sum) + ", not k = " + std::to_string(in.k));
  const TensorLayout& l = in.layout;
  if (!(l.sm_fraction > 0 && l.sm_fraction < 1)) bad("layout.sm_fraction", "must be in (0, 1)");
  if (!(l.e_ratio > 0 && std::isfinite(l.e_ratio))) bad("layout.e_ratio", "rho must be positive");
  if (l.shards == 0) bad("layout.shards", "K must be at least 1");
  const PlanDelays& d = in.delays;
  if (d.L == 0 || d.K == 0 || d.n == 0) bad("delays", "L, K and n must be at least 1");
  for (double x : {d.c, d.u, d.v, d.u_dev, d.v_dev})
    if (!(x >= 0 && std::isfinite(x)))
      bad("delays", "c, v, u, u_dev and v_dev must be finite and non-negative");
  if (in.pools.size() == 0) bad("pools", "no pool is active");
  if (!(in.grid > 0 && in.grid <= 1)) bad("grid", "the step must be in (0, 1]");
  const double steps = std::round(1 / in.grid);
  if (std::fabs(steps * in.grid - 1) > 1e-9)
    bad("grid", "1 / step must be an integer (got step " + std::to_string(in.grid) + ")");
  if (steps > 1000) bad("grid", "at most 1000 steps per unit (step >= 0.001)");
}

Json pool_plan_json(const PoolPlan& p) {
  Json pools = Json::object();
  for (int i = 0; i < kPools; ++i)
    pools[pool_name(static_cast<Pool>(i))] = {{"ratio", p.ratio[i]},
                                              {"budget_bytes_per_layer", p.budget_bytes[i]},
                                              {"experts_per_layer", p.experts[i]},
                                              {"ranks_covered", p.ranks[i]},
                                              {"bytes_per_expert", p.expert_bytes[i]},
                                              {"expected_hits", p.expected_hits[i]}};
  return {{"ratios", pool_ratios_str(p.ratio)},
          {"pools", pools},
          {"expected_misses", p.expected_misses},
          {"used_bytes_per_layer", p.used_bytes_per_layer()},
          {"expected_makespan_s", p.expected_makespan}};
}

}  // namespace moesim
