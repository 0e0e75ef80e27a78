#include "core/eviction.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "base/units.h"

namespace moesim {

const char* scope_name(CacheScope s) {
  return s == CacheScope::kGlobal ? "global" : "layer";
}

CacheScope parse_scope(const std::string& s) {
  if (s == "global") return CacheScope::kGlobal;
  if (s == "layer" || s == "per-layer") return CacheScope::kPerLayer;
  throw Error("unknown cache scope '" + s + "' (known: global, layer)");
}

namespace {

// A positive decimal ("25", "12.5") scaled by `scale` and rounded down: digits, at most one point, at most
// six decimals; nullopt otherwise.
std::optional<uint64_t> scaled_decimal(std::string_view t, uint64_t scale) {
  if (t.empty() || t.size() > 24) return std::nullopt;
  uint64_t whole = 0, frac = 0, frac_scale = 1;
  bool point = false, any = false;
  for (char ch : t) {
    if (ch == '.' && !point) {
      point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
    any = true;
    if (!point) {
      if (whole > 1'000'000'000) return std::nullopt;
      whole = whole * 10 + static_cast<uint64_t>(ch - '0');
    } else {
      if (frac_scale >= 1'000'000) return std::nullopt;
      frac = frac * 10 + static_cast<uint64_t>(ch - '0');
      frac_scale *= 10;
    }
  }
  if (!any) return std::nullopt;
  return whole * scale + frac * scale / frac_scale;
}

std::string lower_no_space(const std::string& text) {
  std::string t;
  for (char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch)))
      t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return t;
}

// "12.5" from parts per `scale`, without trailing zeros.
std::string decimal_text(uint64_t v, uint64_t scale) {
  std::string s = std::to_string(v / scale);
  uint64_t frac = v % scale;
  if (frac == 0) return s;
  std::string f;
  for (uint64_t d = scale / 10; d > 0; d /= 10) {
    f += static_cast<char>('0' + frac / d);
    frac %= d;
  }
  while (!f.empty() && f.back() == '0') f.pop_back();
  return s + "." + f;
}

}  // namespace

CacheCapacity CacheCapacity::parse(const std::string& text) {
  if (text.empty())
    throw Error("capacity: empty value (give experts per layer, e.g. 32, or bytes, e.g. 3000MiB)");
  bool digits = true;
  for (char c : text) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  CacheCapacity c;
  if (digits) {
    c.unit = Unit::kExperts;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), c.value);
    if (ec != std::errc() || p != text.data() + text.size())
      throw Error("capacity '" + text + "' is too large");
    return c;
  }
  const std::string t = lower_no_space(text);
  if (t.back() == '%') {
    const auto ppm = scaled_decimal(std::string_view(t).substr(0, t.size() - 1), 10'000);
    if (!ppm || *ppm == 0 || *ppm > 1'000'000)
      throw Error("capacity '" + text +
                  "': a share of the model's experts is a percentage above 0 and at most 100 (e.g. 25%)");
    c.unit = Unit::kShareOfExperts;
    c.value = *ppm;
    return c;
  }
  for (const char* suffix : {"xtop-k", "xtopk", "x-top-k", "x-topk", "*top-k", "*topk"}) {
    const std::string_view sv(suffix);
    if (t.size() > sv.size() && t.compare(t.size() - sv.size(), sv.size(), sv) == 0) {
      const auto m = scaled_decimal(std::string_view(t).substr(0, t.size() - sv.size()), 1000);
      if (!m || *m == 0 || *m > 1'000'000)
        throw Error(
            "capacity '" + text +
            "': a multiple of top-k is a number above 0 and at most 1000 before 'x top-k' (e.g. 2xtopk)");
      c.unit = Unit::kTopKMultiple;
      c.value = *m;
      return c;
    }
  }
  bool has_unit = false;
  for (char ch : text) has_unit = has_unit || std::isalpha(static_cast<unsigned char>(ch));
  if (!has_unit)
    throw Error(
        "capacity '" + text +
        "': a plain number must be a whole count of experts per layer; sizes need a unit (e.g. 3000MiB), "
        "shares a % (25%), multiples of top-k an 'xtopk' (2xtopk)");
  c.unit = Unit::kBytes;
  c.value = parse_bytes(text);
  return c;
}

std::string CacheCapacity::to_string() const {
  switch (unit) {
    case Unit::kExperts:
      return std::to_string(value) + " experts/layer";
    case Unit::kShareOfExperts:
      return decimal_text(value, 10'000) + "% of the experts";
    case Unit::kTopKMultiple:
      return decimal_text(value, 1000) + " x top-k experts/layer";
    case Unit::kBytes:
      break;
  }
  return format_bytes(value);
}

CacheCapacity CacheCapacity::resolved(uint32_t layers, uint32_t experts, uint32_t top_k,
                                      uint64_t all_experts_bytes) const {
  if (!relative()) return *this;
  CacheCapacity c;
  if (unit == Unit::kTopKMultiple) {
    c.unit = Unit::kExperts;
    c.value = uint64_t{top_k} * value / 1000;
    if (c.value == 0)
      throw Error("capacity " + to_string() + " is less than one expert per layer (top-k " +
                  std::to_string(top_k) + ")");
    return c;
  }
  if (all_experts_bytes > 0) {
    c.unit = Unit::kBytes;
    // all x ppm / 10^6 without overflow (all may be petabytes, ppm up to 10^6).
    c.value = all_experts_bytes / 1'000'000 * value + all_experts_bytes % 1'000'000 * value / 1'000'000;
  } else {
    c.unit = Unit::kExperts;
    c.value = uint64_t{experts} * value / 1'000'000;
  }
  if (c.value == 0)
    throw Error("capacity " + to_string() + " is less than one expert (" + std::to_string(layers) + " x " +
                std::to_string(experts) + " experts)");
  return c;
}

uint64_t CacheConfig::total_capacity_experts() const {
  uint64_t sum = 0;
  for (uint64_t c : capacity) sum += c;
  if (!weights_are_bytes) return sum;
  uint64_t bytes = 0;
  for (uint64_t b : expert_bytes) bytes += b;
  return bytes == 0 ? 0 : sum * layers / bytes;  // bytes / mean expert size
}

uint64_t CacheConfig::total_capacity_bytes() const {
  if (expert_bytes.empty()) return 0;
  if (weights_are_bytes) return capacity[0];
  if (scope == CacheScope::kGlobal) {
    // A global cache counted in experts has a fixed byte size only when all experts weigh the same.
    for (uint64_t b : expert_bytes)
      if (b != expert_bytes[0]) return 0;
    return capacity[0] * expert_bytes[0];
  }
  uint64_t sum = 0;
  for (uint32_t p = 0; p < partitions(); ++p) sum += capacity[p] * expert_bytes[p];
  return sum;
}

CacheConfig make_cache_config(uint32_t layers, uint32_t experts, uint32_t top_k, CacheScope scope,
                              CacheCapacity capacity, std::span<const uint64_t> expert_bytes) {
  if (layers == 0 || experts == 0) throw Error("cache: the trace has no layers or no experts");
  if (uint64_t{layers} * experts >= kNoKey) throw Error("cache: too many (layer, expert) keys");
  CacheConfig c;
  c.layers = layers;
  c.experts = experts;
  c.top_k = top_k;
  c.scope = scope;
  if (capacity.relative()) {
    uint64_t all = 0;  // the routed experts' bytes, when sizes are known
    for (size_t l = 0; l < (expert_bytes.size() == 1 ? layers : expert_bytes.size()); ++l)
      all += expert_bytes[expert_bytes.size() == 1 ? 0 : l] * experts;
    capacity = capacity.resolved(layers, experts, top_k, all);
  }
  c.requested = capacity;
  if (expert_bytes.size() == 1) {
    c.expert_bytes.assign(layers, expert_bytes[0]);
  } else if (!expert_bytes.empty()) {
    if (expert_bytes.size() != layers)
      throw Error("cache: expert sizes given for " + std::to_string(expert_bytes.size()) +
                  " layers, the trace has " + std::to_string(layers));
    c.expert_bytes.assign(expert_bytes.begin(), expert_bytes.end());
  }
  for (uint32_t l = 0; l < c.expert_bytes.size(); ++l)
    if (c.expert_bytes[l] == 0)
      throw Error("cache: expert size of layer " + std::to_string(l) + " is 0 bytes");
  c.key_weight.assign(c.keys(), 1);
  const std::string need_k = " (top-k = " + std::to_string(top_k) +
                             ": a single decode token would not fit; choose a larger capacity)";

  if (capacity.unit == CacheCapacity::Unit::kExperts) {
    if (capacity.value == 0) throw Error("capacity must be at least one expert per layer, got 0");
    if (capacity.value < top_k)
      throw Error("capacity of " + std::to_string(capacity.value) +
                  " experts per layer is smaller than one layer's top-k" + need_k);
    const uint64_t cap = scope == CacheScope::kGlobal ? capacity.value * layers : capacity.value;
    c.capacity.assign(c.partitions(), cap);
    return c;
  }

  // Bytes.
  if (c.expert_bytes.empty())
    throw Error("capacity " + format_bytes(capacity.value) +
                " is in bytes but expert sizes are unknown: pass --model, or use a trace whose header gives "
                "expert_bytes (or give the capacity in experts per layer)");
  if (scope == CacheScope::kPerLayer) {
    const uint64_t per_layer = capacity.value / layers;
    for (uint32_t l = 0; l < layers; ++l) {
      const uint64_t n = per_layer / c.expert_bytes[l];
      if (n == 0)
        throw Error("capacity " + format_bytes(capacity.value) + " gives each layer " +
                    format_bytes(per_layer) + ", less than one expert of layer " + std::to_string(l) + " (" +
                    format_bytes(c.expert_bytes[l]) + ")");
      if (n < top_k)
        throw Error("capacity " + format_bytes(capacity.value) + " gives layer " + std::to_string(l) +
                    " room for " + std::to_string(n) + " experts, fewer than its top-k" + need_k);
      c.capacity.push_back(n);
    }
    return c;
  }
  bool uniform = true;
  uint64_t max_bytes = 0;
  for (uint64_t b : c.expert_bytes) {
    uniform = uniform && b == c.expert_bytes[0];
    max_bytes = std::max(max_bytes, b);
  }
  if (capacity.value < max_bytes)
    throw Error("capacity " + format_bytes(capacity.value) + " is smaller than one expert (" +
                format_bytes(max_bytes) + ")");
  if (capacity.value / max_bytes < top_k)
    throw Error("capacity " + format_bytes(capacity.value) + " holds fewer experts than one layer's top-k" +
                need_k);
  if (uniform) {
    c.capacity.assign(1, capacity.value / c.expert_bytes[0]);
  } else {
    c.weights_are_bytes = true;
    c.capacity.assign(1, capacity.value);
    for (uint32_t l = 0; l < layers; ++l)
      for (uint32_t e = 0; e < experts; ++e) c.key_weight[l * experts + e] = c.expert_bytes[l];
  }
  return c;
}

std::vector<uint64_t> key_frequencies(std::span<const uint32_t> keys, uint32_t num_keys) {
  std::vector<uint64_t> f(num_keys, 0);
  for (uint32_t k : keys) {
    if (k >= num_keys) throw Error("lookup key " + std::to_string(k) + " out of range");
    ++f[k];
  }
  return f;
}

std::string eviction_canonical_name(const PolicySpec& spec) {
  return EvictionRegistry::instance().params(spec, "eviction").canonical();
}

std::string eviction_canonical_name(const std::string& spec) {
  return eviction_canonical_name(PolicySpec::parse(spec));
}

std::unique_ptr<EvictionPolicy> make_eviction_policy(const PolicySpec& spec, const CacheConfig& cfg) {
  return EvictionRegistry::instance().create(spec, "eviction", cfg);
}

std::unique_ptr<EvictionPolicy> make_eviction_policy(const std::string& spec, const CacheConfig& cfg) {
  return make_eviction_policy(PolicySpec::parse(spec), cfg);
}

ExpertCache::ExpertCache(const std::string& spec, const CacheConfig& cfg)
    : ExpertCache(PolicySpec::parse(spec), cfg) {}

ExpertCache::ExpertCache(const PolicySpec& spec, const CacheConfig& cfg)
    : cfg_(std::make_unique<CacheConfig>(cfg)),
      policy_(make_eviction_policy(spec, cfg)),
      cache_(std::make_unique<BasicCache<EvictionPolicy>>(*cfg_, *policy_)),
      canonical_(eviction_canonical_name(spec)) {
  cfg_->key_frequency = {};
}

}  // namespace moesim
