// Residency with compression states (docs/architecture.md §9; ZipMoE §3.2 and §3.4): where every expert's
// bytes are, in named byte pools that live in memory tiers.
//
// A Residency answers, for one (layer, expert) key, the expert's state before this use (F, C, S, E or M,
// core/compression_state.h) and the tier of its full copy (a discrete GPU keeps F copies in device memory
// and in host memory; a host F copy costs a host-to-device transfer, not an SSD read). After answering,
// the residency applies its own admission rule (the classic caches admit every miss as F; ZipMoE's
// dispatch keeps the components of the pool the expert's rank falls in, or nothing) and reports every
// change of bytes as a MemoryEvent to its listener: admissions, demotions (F -> C -> S/E: a state change
// that frees the components no longer kept), promotions and evictions.
//
// "In flight" is not a residency state: the pipeline knows which loads are still running (a prefetch
// admits its components at once and its reads run meanwhile) and makes a lookup that finds its expert in
// flight wait for them (serving/pipeline.h).
//
// Protocol (the lookup semantics of docs/architecture.md §4, for every implementation):
//   begin_invocation(layer, decode)
//   lookup(key, next_use, tokens)   once per UNIQUE key of the invocation, in router order
//   refresh(key)                    for each refresh of the invocation (traces/lookup_stream.h): a key
//                                   looked up earlier in it is touched again; recency only, no counter
//   end_invocation(lookups)         eviction/demotion runs now, after all admissions, and never removes
//                                   a component of a key this invocation uses unless the pool cannot hold
//                                   the invocation's own experts (pass-through, counted as degenerate)
//   prefetch(layer, key, next_use)  between invocations: bring `key` in as its own admission rule says
//                                   (evicting others, never keys of the current invocation)
// peek() answers the state without touching recency or counters (routing policies use it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cache_config.h"
#include "core/compression_state.h"
#include "core/op_graph.h"

namespace moesim {

// Where a pool's bytes live. UMA devices (Jetson, phones, Apple silicon) have one shared tier; a discrete
// GPU has device memory (VRAM) and host memory (DRAM) behind a link.
enum class MemoryTier : uint8_t { kUnified, kDevice, kHost };
const char* memory_tier_name(MemoryTier t);  // "unified", "device", "host"

struct PoolInfo {
  std::string name;  // "F", "C", "S", "E" (ZipMoE), "full-tensor pool" (classic), "F@host", ...
  MemoryTier tier = MemoryTier::kUnified;
  uint64_t capacity_bytes = 0;  // 0: counted in experts (a classic cache with an expert capacity)
};

// One change of the bytes held in a pool. `part` names the component (whole tensors, SM-chunks or
// E-chunks of every tensor of the expert); bytes are that component's bytes for the whole expert.
// kAdmit adds an expert's bytes to `pool`, kEvict removes them (it leaves the residency). A move between
// pools (demotion F -> C -> S/E, or promotion) is two events of the same kind: the removal from the old pool
// (`leaving` = true) and the addition to the new one (`leaving` = false).
struct MemoryEvent {
  enum class Kind : uint8_t { kAdmit, kEvict, kDemote, kPromote };
  Kind kind = Kind::kAdmit;
  uint32_t pool = 0;  // index into Residency::pools()
  uint32_t key = 0;   // layer * experts + expert
  TensorPart part = TensorPart::kWhole;
  uint64_t bytes = 0;
  bool leaving = false;  // kDemote/kPromote: the old pool's side of the move
  bool adds() const {
    return kind == Kind::kAdmit || ((kind == Kind::kDemote || kind == Kind::kPromote) && !leaving);
  }
};

class MemoryListener {
 public:
  virtual ~MemoryListener() = default;
  virtual void memory_event(const MemoryEvent& e) = 0;
};

struct LookupResult {
  ExpertState state = ExpertState::kMissed;  // before this use
  MemoryTier tier = MemoryTier::kUnified;    // where the F copy is (state F only)
};

class Residency {
 public:
  virtual ~Residency() = default;
  virtual std::vector<PoolInfo> pools() const = 0;
  // Canonical policy description with every parameter ("lru", "zipmoe-dispatch:delta=2,evict=freq").
  virtual std::string name() const = 0;
  virtual void set_listener(MemoryListener* listener) { listener_ = listener; }

  virtual void begin_invocation(uint32_t layer, bool decode) = 0;
  virtual LookupResult lookup(uint32_t key, uint32_t next_use, uint32_t tokens) = 0;
  virtual void refresh(uint32_t key) = 0;
  virtual void end_invocation(uint32_t lookups) = 0;
  // Admits `key` ahead of its use. Returns the state it had (kMissed/...: what must be loaded) and sets
  // `*target` to the state it now has; returns its current state with *target == that state when the
  // residency declines (already resident, or its rule keeps nothing for this key).
  virtual ExpertState prefetch(uint32_t layer, uint32_t key, uint32_t next_use, ExpertState* target) = 0;
  virtual LookupResult peek(uint32_t key) const = 0;
  // The classic single-pool counters (hit/miss, evictions, degenerate invocations). Implementations with
  // several states count what maps: a hit is a lookup in state F.
  virtual CacheCounters counters() const = 0;
  // Experts the residency holds at most (reports; 0 when not meaningful).
  virtual uint64_t capacity_experts() const = 0;

 protected:
  void emit(const MemoryEvent& e) {
    if (listener_) listener_->memory_event(e);
  }
  MemoryListener* listener_ = nullptr;
};

}  // namespace moesim
