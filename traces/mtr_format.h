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
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/input_file.h"
#include "core/cache_config.h"
#include "traces/trace.h"

namespace moesim::traces {

inline constexpr char kMtrMagic[8] = {'M', 'O', 'E', 'S', 'I', 'M', 'T', 'R'};
// Version 1: records only. Version 2: the header may name the optional lookup index section (below);
// a file without the section is still written as version 1, so older builds read it.
inline constexpr uint32_t kMtrVersion = 1;
inline constexpr uint32_t kMtrVersionLookups = 2;
inline constexpr char kMtrLookupsMagic[8] = {'M', 'T', 'R', 'L', 'O', 'O', 'K', 'S'};
inline constexpr uint64_t kMtrPreambleBytes = 32;
inline constexpr uint64_t kMtrAlignment = 64;

struct MtrReadOptions {
  // Fuzz targets turn this off to reach the structural and semantic checks behind it; users never do.
  bool verify_checksum = true;
  // The lookups readers only (read_mtr_lookups, read_mtr_lookup_stream), with verify_checksum: the checksums
  // run on a second thread and the read returns once the structure is checked (every value that indexes
  // anything is in range, so replaying the view is safe), possibly before they finish. The caller must call
  // MtrLookups::verify() before it reports anything computed from the view: it waits for them and throws the
  // mismatch. For `moesim replay`, which replays while the file is hashed.
  bool defer_checksum = false;
};

struct MtrWriteOptions {
  // Append the lookup index section (format version 2): the batch-1 lookup stream of the trace
  // (traces/lookup_stream.h) with its next-use index, built once here so that `moesim replay` can run
  // from it without reading the records (read_mtr_lookups).
  bool lookup_index = true;
};

// Writes atomically (base/atomic_file.h): a failure leaves no file.
void write_mtr(const Trace& trace, const std::string& path, const MtrWriteOptions& wo = {});
// The same bytes in memory (tests, fuzz seeds).
std::string encode_mtr(const Trace& trace, const MtrWriteOptions& wo = {});

// The reader maps the file, so a pipe or another stream is refused with kMtrNeedsAFile's advice.
inline constexpr const char* kMtrNeedsAFile = "the .mtr reader maps the file";
Trace read_mtr(const std::string& path, const MtrReadOptions& opts = {});
// The same for an input already opened (load_trace detected the format from its first bytes).
Trace read_mtr(const InputFile& in, const MtrReadOptions& opts = {});
// Parses a copy of `bytes` (so any alignment of the input works); `origin` names it in errors.
Trace decode_mtr(std::string_view bytes, const std::string& origin, const MtrReadOptions& opts = {});

// ---- the lookup index section (version 2) ----------------------------------------------------------------
//
// The batch-1 lookup stream of the trace as the caches replay it (core/cache_config.h LookupView), kept
// after the record columns: a 64-byte section preamble (magic "MTRLOOKS", u64 XXH64 of the JSON header,
// zeros), then the columns inv_begin u32 [I+1], inv_layer u16 [I], inv_phase u8 [I], key u32 [M],
// next_use u32 [M], refresh_begin u32 [I+1], refresh u32 [R], each 64-byte aligned with its own XXH64 in
// the header. docs/trace-format.md has the byte layout.
//
// read_mtr() (the whole trace) checks the section completely: its checksums, its structure, and that it
// equals the stream rebuilt from the records. read_mtr_lookups() reads the header and the section only (not
// the records): it verifies the header's checksum, the checksums of the columns it returns and their
// structure -- every value that indexes anything is in range (invocation offsets increasing and ending at
// M, layers, phases, every key inside its invocation's layer, next uses later than their invocation and
// inside the stream, refreshes inside their invocation) -- so a corrupt section is a clear error naming
// the file and offset, never a crash; equality with the records is left to read_mtr().
struct MtrLookups {
  TraceInfo info;
  uint64_t records = 0;
  bool has_weights = false, has_logits = false;
  uint64_t sequences = 0, prefill_tokens = 0, decode_tokens = 0;
  uint64_t decode_lookups = 0;
  LookupView view;                      // next_use empty unless asked for
  std::shared_ptr<const void> storage;  // keeps the mapping alive
  // The checksums still running when the read deferred them (MtrReadOptions::defer_checksum); invalid
  // otherwise. Destroying the last copy waits for them.
  std::shared_future<void> pending_checksum;
  // Waits for the deferred checksums and throws their mismatch (moesim::Error); nothing to do otherwise.
  void verify() const {
    if (pending_checksum.valid()) pending_checksum.get();
  }
  size_t invocations() const { return view.invocations(); }
  size_t lookups() const { return view.key.size(); }
};

// nullopt when `path` is not an .mtr file (no magic) or has no lookup index section: the caller then
// loads the trace as usual (and load_trace reports whatever is wrong with it). A path that is not a regular
// file (a pipe, /dev/stdin from a pipe) is nullopt without being opened, so its bytes are left to load_trace.
std::optional<MtrLookups> read_mtr_lookups(const std::string& path, bool with_next_use,
                                           const MtrReadOptions& opts = {});
std::optional<MtrLookups> decode_mtr_lookups(std::string_view bytes, const std::string& origin,
                                             bool with_next_use, const MtrReadOptions& opts = {});

// The batch-1 lookup stream of ANY .mtr file, for `moesim replay`: the lookup index section when the file has
// one (as read_mtr_lookups), otherwise the stream built from the records (version 1, or a version-2 file
// rewritten without it). That build reads and checks only what the stream is made of -- phases, layers,
// canonical order, expert ids, and the header's missing_cells -- with the whole-file checksum verified (on a
// second thread, while the stream is built) before anything is returned; it does not look at the weights,
// logits or the slot next-use column, which no replay reads (read_mtr checks those). `storage` then owns the
// built arrays, and prefill_tokens and decode_tokens are counted only with `with_token_counts` (0 otherwise;
// the section's header always has them). nullopt as read_mtr_lookups for what is not an .mtr file (or not a
// regular file).
std::optional<MtrLookups> read_mtr_lookup_stream(const std::string& path, bool with_next_use,
                                                 bool with_token_counts, const MtrReadOptions& opts = {});
std::optional<MtrLookups> decode_mtr_lookup_stream(std::string_view bytes, const std::string& origin,
                                                   bool with_next_use, bool with_token_counts,
                                                   const MtrReadOptions& opts = {});

}  // namespace moesim::traces
