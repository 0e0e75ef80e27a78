#include "core/eviction.h"

#include <cctype>
#include <charconv>

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
  bool has_unit = false;
  for (char ch : text) has_unit = has_unit || std::isalpha(static_cast<unsigned char>(ch));
  if (!has_unit)
    throw Error(
        "capacity '" + text +
        "': a plain number must be a whole count of experts per layer; sizes need a unit (e.g. 3000MiB)");
  c.unit = Unit::kBytes;
  c.value = parse_bytes(text);
  return c;
}

std::string CacheCapacity::to_string() const {
  if (unit == Unit::kExperts) return std::to_string(value) + " experts/layer";
  return format_bytes(value);
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

std::string eviction_canonical_name(const std::string& spec) {
  return EvictionRegistry::instance().params(spec, "eviction").canonical();
}

std::unique_ptr<EvictionPolicy> make_eviction_policy(const std::string& spec, const CacheConfig& cfg) {
  return EvictionRegistry::instance().create(spec, "eviction", cfg);
}

ExpertCache::ExpertCache(const std::string& spec, const CacheConfig& cfg)
    : cfg_(std::make_unique<CacheConfig>(cfg)),
      policy_(make_eviction_policy(spec, cfg)),
      cache_(std::make_unique<BasicCache<EvictionPolicy>>(*cfg_, *policy_)),
      canonical_(eviction_canonical_name(spec)) {
  cfg_->key_frequency = {};
}

}  // namespace moesim
