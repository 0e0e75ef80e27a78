#include "core/memory_model.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <limits>

#include "base/error.h"
#include "base/units.h"

namespace moesim {

const char* dense_placement_name(DensePlacement d) {
  return d == DensePlacement::kMmap ? "mmap" : "pinned";
}

DensePlacement parse_dense_placement(const std::string& s) {
  if (s == "pinned") return DensePlacement::kPinned;
  if (s == "mmap") return DensePlacement::kMmap;
  throw UsageError("--dense: '" + s + "' is not a placement of the dense weights (pinned or mmap)");
}

const char* memory_place_name(MemoryPlace p) {
  return p == MemoryPlace::kGpu ? "gpu" : "dram";
}

uint64_t ModelMemory::kv_bytes(uint64_t tokens) const {
  const uint64_t full = kv_bytes_per_token - kv_windowed_bytes_per_token;
  const uint64_t windowed_tokens = kv_window_tokens ? std::min(tokens, kv_window_tokens) : tokens;
  return kv_fixed_bytes + full * tokens + kv_windowed_bytes_per_token * windowed_tokens;
}

ModelMemory model_memory(const ModelSpec& spec) {
  ModelMemory m;
  m.embedding_bytes = spec.embedding_bytes();
  m.lm_head_bytes = spec.lm_head_bytes();  // 0 when tied
  m.tied = spec.tie_word_embeddings;
  const uint64_t non_expert = spec.non_expert_bytes();
  const uint64_t outer = m.embedding_bytes + m.lm_head_bytes;
  m.dense_bytes = non_expert > outer ? non_expert - outer : 0;
  m.kv_bytes_per_token = spec.kv_bytes_per_token();
  m.kv_fixed_bytes = spec.kv_cache_bytes(0);
  if (spec.sliding_window > 0) {
    const uint64_t w = spec.sliding_window;
    // A token beyond the window adds only the full-attention layers' KV.
    const uint64_t beyond = spec.kv_cache_bytes(w + 1) - spec.kv_cache_bytes(w);
    m.kv_window_tokens = w;
    m.kv_windowed_bytes_per_token = m.kv_bytes_per_token > beyond ? m.kv_bytes_per_token - beyond : 0;
  }
  const uint64_t ffn = std::max({spec.expert_intermediate_size * spec.top_k,
                                 spec.shared_expert_intermediate_size * spec.shared_experts,
                                 static_cast<uint64_t>(spec.dense_intermediate_size)});
  m.activation_bytes_per_token = 4 * (4 * spec.hidden_size + 2 * ffn + spec.vocab_size);
  m.all_experts_bytes = spec.all_experts_bytes();
  m.source = "model preset " + spec.name + " (" + spec.origin + ")";
  return m;
}

namespace {

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > kUnbounded - b ? kUnbounded : a + b;
}
uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return b && a > kUnbounded / b ? kUnbounded : a * b;
}

std::string line_of(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string line_of(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace

MemoryBreakdown memory_breakdown(const HardwareProfile& hw, const ModelMemory& m, const MemoryRequest& r) {
  MemoryBreakdown b;
  b.unified = hw.unified_memory;
  b.dram_capacity = hw.memory_capacity;
  b.gpu_capacity = hw.unified_memory ? 0 : hw.gpu_memory_capacity;
  // The model's side lives in GPU memory on a discrete GPU, in DRAM on unified memory.
  const MemoryPlace model_place = hw.unified_memory ? MemoryPlace::kDram : MemoryPlace::kGpu;
  const bool evictable = r.dense == DensePlacement::kMmap;
  const uint64_t activation_tokens =
      std::max<uint64_t>(r.batch, std::min(r.context_tokens, kPrefillChunkTokens));
  b.parts.push_back({"os reserve", hw.memory_reserve, MemoryPlace::kDram, false});
  if (!hw.unified_memory && hw.gpu_memory_reserve > 0)
    b.parts.push_back({"gpu reserve", hw.gpu_memory_reserve, MemoryPlace::kGpu, false});
  b.parts.push_back({"dense weights", m.dense_bytes, model_place, evictable});
  b.parts.push_back(
      {m.tied ? "embeddings and head (tied)" : "embeddings", m.embedding_bytes, model_place, evictable});
  if (m.lm_head_bytes) b.parts.push_back({"output head", m.lm_head_bytes, model_place, evictable});
  b.parts.push_back({"KV cache", saturating_mul(m.kv_bytes(r.context_tokens), r.batch), model_place, false});
  b.parts.push_back(
      {"activations", saturating_mul(m.activation_bytes_per_token, activation_tokens), model_place, false});
  b.parts.push_back({"expert cache", r.gpu_budget, model_place, false});
  if (r.host_budget > 0) b.parts.push_back({"host expert cache", r.host_budget, MemoryPlace::kDram, false});
  for (const MemoryPart& p : b.parts) {
    if (p.evictable) {
      b.mmapped_bytes = saturating_add(b.mmapped_bytes, p.bytes);
      continue;
    }
    uint64_t& pinned = p.place == MemoryPlace::kGpu ? b.gpu_pinned : b.dram_pinned;
    pinned = saturating_add(pinned, p.bytes);
  }
  b.page_cache_bytes = b.dram_capacity > b.dram_pinned ? b.dram_capacity - b.dram_pinned : 0;
  return b;
}

namespace {

// The largest value in [0, hi] for which `fits(v)` holds, fits being monotone (true up to some value); hi
// when it holds there, and kUnbounded - 1 is not reached by callers.
template <typename Fits>
uint64_t largest_fitting(uint64_t hi, Fits fits) {
  if (!fits(0)) return 0;
  if (fits(hi)) return hi;
  uint64_t lo = 0;  // fits(lo), !fits(hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

uint64_t largest_gpu_budget(const HardwareProfile& hw, const ModelMemory& m, MemoryRequest r) {
  if (!hw.unified_memory && hw.gpu_memory_capacity == 0) return kUnbounded;
  const uint64_t cap = hw.unified_memory ? hw.memory_capacity : hw.gpu_memory_capacity;
  return largest_fitting(cap, [&](uint64_t v) {
    r.gpu_budget = v;
    return memory_breakdown(hw, m, r).fits();
  });
}

uint64_t largest_host_budget(const HardwareProfile& hw, const ModelMemory& m, MemoryRequest r) {
  return largest_fitting(hw.memory_capacity, [&](uint64_t v) {
    r.host_budget = v;
    return memory_breakdown(hw, m, r).fits();
  });
}

uint64_t longest_context(const HardwareProfile& hw, const ModelMemory& m, MemoryRequest r) {
  constexpr uint64_t kFar = uint64_t{1} << 40;  // a context no memory of this century holds the KV of
  const uint64_t v = largest_fitting(kFar, [&](uint64_t tokens) {
    r.context_tokens = tokens;
    return memory_breakdown(hw, m, r).fits();
  });
  return v == kFar ? kUnbounded : v;
}

Json memory_breakdown_json(const MemoryBreakdown& b, const ModelMemory& m) {
  auto memory = [](uint64_t capacity, uint64_t pinned) {
    return Json{{"capacity_bytes", capacity},
                {"pinned_bytes", pinned},
                {"free_bytes", capacity > pinned ? capacity - pinned : 0},
                {"over_bytes", pinned > capacity ? pinned - capacity : 0}};
  };
  Json j;
  j["unified"] = b.unified;
  j["dram"] = memory(b.dram_capacity, b.dram_pinned);
  if (!b.unified) j["gpu"] = b.gpu_capacity ? memory(b.gpu_capacity, b.gpu_pinned) : Json(nullptr);
  j["page_cache_bytes"] = b.page_cache_bytes;
  j["mmapped_bytes"] = b.mmapped_bytes;
  Json parts = Json::array();
  for (const MemoryPart& p : b.parts)
    parts.push_back({{"name", p.name},
                     {"bytes", p.bytes},
                     {"place", memory_place_name(p.place)},
                     {"evictable", p.evictable}});
  j["parts"] = parts;
  j["kv_bytes_per_token"] = m.kv_bytes_per_token;
  j["all_experts_bytes"] = m.all_experts_bytes;
  j["fits"] = b.fits();
  j["source"] = m.source;
  return j;
}

std::string memory_breakdown_text(const MemoryBreakdown& b) {
  std::string t;
  for (const MemoryPart& p : b.parts)
    t += line_of("  %-28s %12s  %s%s\n", p.name.c_str(), format_bytes(p.bytes).c_str(),
                 memory_place_name(p.place), p.evictable ? " (mmapped: evictable, in the page cache)" : "");
  auto line = [&](const char* name, uint64_t capacity, uint64_t pinned) {
    if (pinned > capacity)
      t += line_of("  %-28s %12s  of %s: OVER by %s\n", name, format_bytes(pinned).c_str(),
                   format_bytes(capacity).c_str(), format_bytes(pinned - capacity).c_str());
    else
      t += line_of("  %-28s %12s  of %s: %s free\n", name, format_bytes(pinned).c_str(),
                   format_bytes(capacity).c_str(), format_bytes(capacity - pinned).c_str());
  };
  if (!b.unified) {
    if (b.gpu_capacity)
      line("GPU memory, pinned", b.gpu_capacity, b.gpu_pinned);
    else
      t += "  GPU memory: the profile gives no gpu.memory_capacity; not checked\n";
  }
  line(b.unified ? "memory (unified), pinned" : "DRAM, pinned", b.dram_capacity, b.dram_pinned);
  t += line_of("  %-28s %12s\n", "left for the page cache", format_bytes(b.page_cache_bytes).c_str());
  return t;
}

}  // namespace moesim
