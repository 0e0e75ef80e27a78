// libFuzzer target: the .mtr reader on arbitrary bytes (decode_mtr copies them into aligned memory; no
// disk). The checksum is skipped so that mutations reach the structural and semantic validation behind
// it (with it on, almost every mutation stops there). moesim::Error is expected; anything else is a bug.
// A file that validates must be safe to use: tokens, lookup stream, export, and re-encoding. A lookup index
// section that the lookups reader accepts must be safe to replay (LRU and Belady over its view).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "replay/cache_replay.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace moesim::traces;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  MtrReadOptions o;
  o.verify_checksum = false;
  try {
    if (const auto m = decode_mtr_lookups(bytes, "fuzz.mtr", true, o)) {
      const moesim::replay::ReplayInput in(m->view, m->info.layers, m->info.experts, m->info.top_k, m->info.expert_bytes);
      for (const char* policy : {"lru", "belady"})
        (void)moesim::replay::replay(in, {policy, moesim::CacheScope::kGlobal,
                                       {moesim::CacheCapacity::Unit::kExperts, m->info.top_k}});
    }
  } catch (const moesim::Error&) {
  }
  Trace t;
  try {
    t = decode_mtr(bytes, "fuzz.mtr", o);
  } catch (const moesim::Error&) {
    return 0;
  }
  (void)t.tokens(Phase::kPrefill);
  (void)t.tokens(Phase::kDecode);
  (void)build_lookup_stream(t, 2);
  (void)export_jsonl(t);
  const Trace again = decode_mtr(encode_mtr(t), "again.mtr");  // a validated trace re-encodes cleanly
  if (again.records() != t.records()) std::abort();
  return 0;
}
