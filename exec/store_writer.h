// Packs selected checkpoint tensors into an expert store (ZipMoE §3.1 offline initialisation: bit-field
// decomposition, K exponent shards compressed independently, raw SM-chunks, serialised with metadata).
//
// Determinism: the bytes written depend only on the inputs and options, never on `threads`: tensors are
// compressed in parallel but written strictly in index order, and each codec frame is produced by one
// single-threaded compression call. Memory: at most threads + 1 tensors are in flight.
// The file is written through AtomicFile: an error leaves no partial store.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/json_io.h"
#include "exec/expert_naming.h"

namespace moesim::exec {

struct PackOptions {
  std::string codec = "zstd:19";
  uint32_t shards = 4;  // K
  unsigned threads = 1;
  Json meta = Json::object();  // provenance stored in the index (source, layout, ...)
};

struct PackResult {
  uint64_t tensors = 0;
  uint64_t bf16_bytes = 0;
  uint64_t e_bytes = 0;
  uint64_t sm_bytes = 0;
  uint64_t file_size = 0;
};

// `progress(done, total)` counts weights (tensor elements) compressed so far out of all selected ones. It is
// called after every exponent shard, from the compressing threads, possibly concurrently: it must be
// thread-safe (moesim::Progress::set is). Successive calls from different threads may arrive slightly out
// of order.
PackResult write_store(const std::string& out_path, const ExpertSelection& sel, const PackOptions& opts,
                       const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace moesim::exec
