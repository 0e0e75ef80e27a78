// rho (ZipMoE's exponent compression ratio) and K (shards) read from a packed expert store, for
// `moesim plan --store` and `moesim run --system zipmoe --store`.
#pragma once

#include <string>

#include "base/error.h"
#include "base/warnings.h"
#include "exec/store_reader.h"

namespace moesim::harness {

// rho and K from a packed store: exponent bytes stored / raw exponent bytes over every tensor.
struct StoreLayout {
  double rho = 0;
  uint32_t shards = 0;
};
inline StoreLayout read_store_layout(const std::string& path) {
  const exec::StoreReader reader(path);
  uint64_t e = 0, raw = 0;
  StoreLayout s;
  for (const exec::StoreEntry& entry : reader.entries()) {
    e += entry.e_bytes();
    raw += entry.bf16_bytes() / 2;
    if (s.shards == 0) s.shards = static_cast<uint32_t>(entry.shards.size());
    if (entry.shards.size() != s.shards)
      warn("--store " + path + ": tensors have different shard counts (" + std::to_string(s.shards) +
           " and " + std::to_string(entry.shards.size()) + "); the planner uses the first");
  }
  if (raw == 0) throw Error(path + ": the store holds no tensors to take the exponent ratio from");
  s.rho = static_cast<double>(e) / static_cast<double>(raw);
  return s;
}

}  // namespace moesim::harness
