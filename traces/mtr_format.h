// The canonical binary trace format, .mtr (docs/trace-format.md has the byte-level specification).
//
//   [0, 32)   preamble: magic "MOESIMTR", u32 version (1), u32 header_bytes, u64 file_bytes,
//             u64 checksum = XXH64 (seed 0) of bytes [32, file_bytes)
//   [32, ..)  JSON header (TraceInfo fields, records, and every column's type, offset and byte length)
//   columns   each at a 64-byte aligned absolute offset, zero padding between:
//             seq u32, phase u8, step u32, layer u16, experts u16 [R*k], weights f32 [R*k] (optional),
//             logits f32 [R*E] (optional), next_use u32 [R*k]; all little-endian
//
// The reader maps the file read-only and returns a Trace whose columns point into the mapping (the
// Trace's storage owns it). Before any column is trusted it validates everything: magic, version, sizes,
// checksum, header JSON and types, column offsets/lengths/alignment/overlap, then every value (phase,
// layer < layers, expert < experts, distinct ids per record, finite weights/logits, strictly canonical
// order -- which also excludes duplicate cells --, next-use index and missing_cells recomputed and
// compared). Errors are moesim::Error "FILE: at byte OFFSET: FIELD: message".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/trace.h"

namespace moesim::traces {

inline constexpr char kMtrMagic[8] = {'M', 'O', 'E', 'S', 'I', 'M', 'T', 'R'};
inline constexpr uint32_t kMtrVersion = 1;
inline constexpr uint64_t kMtrPreambleBytes = 32;
inline constexpr uint64_t kMtrAlignment = 64;

struct MtrReadOptions {
  // Fuzz targets turn this off to reach the structural and semantic checks behind it; users never do.
  bool verify_checksum = true;
};

// Writes atomically (core/atomic_file.h): a failure leaves no file.
void write_mtr(const Trace& trace, const std::string& path);
// The same bytes in memory (tests, fuzz seeds).
std::string encode_mtr(const Trace& trace);

Trace read_mtr(const std::string& path, const MtrReadOptions& opts = {});
// Parses a copy of `bytes` (so any alignment of the input works); `origin` names it in errors.
Trace decode_mtr(std::string_view bytes, const std::string& origin, const MtrReadOptions& opts = {});


}  // namespace moesim::traces
