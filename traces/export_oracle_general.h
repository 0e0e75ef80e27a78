// Export of a lookup stream as libCacheSim's "oracleGeneral" binary trace, so that the same lookups can be
// replayed by libCacheSim's `cachesim` (bench/replay_vs_libcachesim.sh compares the two side by side).
//
// One 24-byte record per lookup of the stream, in stream order, little-endian and packed (the layout of
// libCacheSim's traceReader/customizedReader/oracle/oracleGeneralBin.h):
//   u32 clock_time          the lookup's invocation index (the stream's unit of time)
//   u64 obj_id              the key, layer * experts + expert
//   u32 obj_size            bytes of one expert of the key's layer, or 1 when the sizes are unknown
//   i64 next_access_vtime   1-based number of the next request for the same key (libCacheSim's virtual
//                           time, as its traceConv writes it), -1 when there is none
// Refreshes (duplicate touches inside an invocation, traces/lookup_stream.h) are not requests and are not
// written; libCacheSim also has no notion of an invocation whose keys cannot evict one another, so its hit
// counts may differ slightly from moesim's on the same requests.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "traces/lookup_stream.h"

namespace moesim::traces {

inline constexpr size_t kOracleGeneralRecordBytes = 24;

// expert_bytes: per layer (or one value for all), or empty (sizes 1). Throws when a size exceeds 2^32-1.
std::string oracle_general_bytes(const LookupStream& s, std::span<const uint64_t> expert_bytes);
// The same bytes, written atomically (base/atomic_file.h).
void write_oracle_general(const LookupStream& s, std::span<const uint64_t> expert_bytes, const std::string& path);

}  // namespace moesim::traces
