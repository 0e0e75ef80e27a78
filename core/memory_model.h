// The whole device's memory: what a model holds besides its routed experts, where each part lives, and what
// DRAM has left for the OS page cache (pure arithmetic over a HardwareProfile and a ModelMemory; no I/O).
//
// Memories. A unified-memory device (memory.unified) has one: DRAM, memory.capacity, shared by CPU and GPU. A
// discrete GPU has two: its own memory (gpu.memory_capacity) and the host's DRAM. Each loses its reserve
// first (memory.os_reserve: the OS, the engine's process; gpu.memory_reserve: the CUDA context and
// workspaces).
//
// Parts (MemoryBreakdown::parts, in this order):
//   reserve            the OS/runtime reserve of each memory
//   dense weights      attention, router, shared experts of the MoE layers; the dense layers' FFN
//   embeddings, head   the token embedding and the output head (one part when tied)
//   KV cache           kv_bytes_per_token x context tokens x batch (the K and V of each attention layer;
//   MLA's
//                      latent and rope key; sliding-window layers hold at most their window)
//   activations        runtime buffers of the tokens computed at once: max(batch, prefill chunk) tokens of
//                      activation_bytes_per_token (the residual stream, the layer's widest intermediate and
//                      the logits, FP32)
//   expert cache       the GPU tier's budget (--budget), in GPU memory (DRAM on unified memory)
//   host expert cache  the host tier's budget (--host-budget), in DRAM
// On a discrete GPU the weights, KV cache, activations and GPU expert cache live in GPU memory; on unified
// memory everything is DRAM. Dense weights, embeddings and head are pinned (resident, never evicted) or
// mmapped (DensePlacement::kMmap: pages of a mapped file that the kernel may evict and fault back in; they
// are listed but not subtracted from the page cache, whose pages they then are).
//
// page_cache_bytes: DRAM left after every pinned DRAM part, 0 when over. A request fits when no memory's
// pinned parts exceed its capacity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"

namespace moesim {

// Tokens a prefill step computes at once (llama.cpp's default n_ubatch, 512): the activations' batch for a
// prompt, whatever its length.
inline constexpr uint64_t kPrefillChunkTokens = 512;

enum class DensePlacement : uint8_t { kPinned, kMmap };
const char* dense_placement_name(DensePlacement d);
DensePlacement parse_dense_placement(const std::string& s);  // "pinned" or "mmap"; throws UsageError

// What a model's memory holds besides its routed experts, in the bytes a run serves (its quantization).
struct ModelMemory {
  uint64_t dense_bytes = 0;                  // non-expert weights besides embeddings and head
  uint64_t embedding_bytes = 0;              // the token embedding
  uint64_t lm_head_bytes = 0;                // the output head; 0 when tied to the embedding
  uint64_t kv_bytes_per_token = 0;           // of one sequence, all layers
  uint64_t kv_window_tokens = 0;             // 0: the KV cache grows with the whole context
  uint64_t kv_windowed_bytes_per_token = 0;  // the share of kv_bytes_per_token held by sliding-window layers
  uint64_t kv_fixed_bytes =
      0;  // of one sequence whatever its length (linear-attention layers' recurrent state)
  uint64_t activation_bytes_per_token = 0;
  uint64_t all_experts_bytes = 0;  // every routed expert of every layer
  bool tied = false;               // the head is the embedding (tie_word_embeddings)
  std::string source;              // where the numbers came from (a preset, a trace's sizes)
  // KV bytes of one sequence of `tokens` tokens (the windowed layers hold at most kv_window_tokens).
  uint64_t kv_bytes(uint64_t tokens) const;
};

// A preset's memory in its own dtype: dense = non_expert_bytes() less embeddings and head; the KV cache from
// kv_bytes_per_token() and kv_cache_bytes() (f16 elements; the windowed layers' share is what a token beyond
// the window no longer adds); activations per token = 4 bytes x (4 x hidden + 2 x the widest FFN intermediate
// of a token (routed top_k, shared, dense) + vocab): the residual stream and its normed copy, the attention
// and FFN outputs, the FFN's gate and up projections and the logits, FP32 as llama.cpp's compute buffer holds
// them.
ModelMemory model_memory(const ModelSpec& spec);

enum class MemoryPlace : uint8_t { kDram, kGpu };
const char* memory_place_name(MemoryPlace p);

struct MemoryPart {
  std::string name;
  uint64_t bytes = 0;
  MemoryPlace place = MemoryPlace::kDram;
  bool evictable = false;  // pages of a mapped file (not subtracted from the page cache)
};

struct MemoryRequest {
  uint64_t gpu_budget = 0;      // expert cache of the GPU tier (bytes)
  uint64_t host_budget = 0;     // expert cache of the host tier (bytes)
  uint64_t context_tokens = 0;  // tokens of each sequence (prompt + generated)
  uint32_t batch = 1;
  DensePlacement dense = DensePlacement::kPinned;
};

struct MemoryBreakdown {
  std::vector<MemoryPart> parts;
  bool unified = true;
  uint64_t dram_capacity = 0, gpu_capacity = 0;  // gpu_capacity 0: unified, or not given by the profile
  uint64_t dram_pinned = 0, gpu_pinned = 0;      // the pinned parts of each memory, reserve included
  uint64_t page_cache_bytes = 0;                 // DRAM left after the pinned parts (0 when over)
  uint64_t mmapped_bytes = 0;                    // evictable parts (they live in the page cache)
  bool dram_over() const { return dram_pinned > dram_capacity; }
  bool gpu_over() const { return gpu_capacity > 0 && gpu_pinned > gpu_capacity; }
  bool fits() const { return !dram_over() && !gpu_over(); }
};

MemoryBreakdown memory_breakdown(const HardwareProfile& hw, const ModelMemory& m, const MemoryRequest& r);

// The largest budget of the GPU tier (host_budget held as given) and of the host tier (gpu_budget held) that
// fits with the rest of `r`; 0 when nothing fits. On a discrete GPU whose memory the profile does not give,
// the GPU tier is unbounded by this model: UINT64_MAX.
uint64_t largest_gpu_budget(const HardwareProfile& hw, const ModelMemory& m, MemoryRequest r);
uint64_t largest_host_budget(const HardwareProfile& hw, const ModelMemory& m, MemoryRequest r);
// The longest context (tokens per sequence) that fits with r's budgets; 0 when none does, UINT64_MAX when the
// KV cache never outgrows the memory (a model whose every layer is windowed, or none has KV).
uint64_t longest_context(const HardwareProfile& hw, const ModelMemory& m, MemoryRequest r);

// {"dram": {capacity, pinned, free}, "gpu": {...} (discrete only), "page_cache_bytes", "parts": [{name,
// bytes, place, evictable}], "fits", "source"}.
Json memory_breakdown_json(const MemoryBreakdown& b, const ModelMemory& m);
// A few lines of text: each part's bytes and place, what is left, and the memory that is over when one is.
std::string memory_breakdown_text(const MemoryBreakdown& b);

}  // namespace moesim
