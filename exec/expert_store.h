// The expert store: one file per model holding every expert tensor in ZipMoE's split format (ZipMoE §3.1,
// Fig. 5 (1)-(2)): each BF16 tensor is split into its exponent bytes, cut into K contiguous shards that are
// compressed as independent codec frames (E-chunks, so K threads decompress one tensor in parallel), and its
// sign+mantissa bytes stored raw (SM-chunk). The byte layout is specified in docs/store-format.md; this
// header holds the format's constants, the in-memory index and its (de)serialisation with full validation.
//
// File layout (all integers little-endian):
//   [0, 64)            header: magic "MOESTORE", version, flags, index offset/size, file size, checksums
//   [4096, ...)        index (entries: layer, expert, tensor names, dtype, shape, codec, K, chunk table)
//   4 KiB-aligned      chunks: per tensor its SM-chunk, then E-shards 0..K-1, each starting on a 4 KiB
//                      boundary so that O_DIRECT can read it without a bounce copy of the whole file
// Every chunk carries a 64-bit checksum (base/hash64.h) of its stored bytes; the index and the header carry
// their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/model_spec.h"
#include "kernels/codec.h"

namespace moesim::exec {

inline constexpr char kStoreMagic[8] = {'M', 'O', 'E', 'S', 'T', 'O', 'R', 'E'};
inline constexpr uint32_t kStoreVersion = 1;
inline constexpr uint64_t kStoreAlign = 4096;
inline constexpr uint64_t kStoreHeaderSize = 64;
inline constexpr uint32_t kStoreMaxShards = 65536;
inline constexpr uint32_t kStoreMaxDims = 8;

struct StoreChunk {
  uint64_t offset = 0;    // absolute, a multiple of kStoreAlign
  uint64_t size = 0;      // stored bytes
  uint64_t raw_size = 0;  // bytes after decompression
  uint64_t checksum = 0;  // hash64 of the stored bytes
};

struct StoreEntry {
  uint32_t layer = 0;
  uint32_t expert = 0;
  std::string role;  // tensor role within the expert ("gate_proj"), or the full name with --all-tensors
  std::string name;  // the tensor's name in the source checkpoint
  DType source_dtype = DType::BF16;
  std::vector<uint64_t> shape;
  uint64_t elements = 0;
  kernels::CodecId codec = kernels::CodecId::kRaw;
  int32_t level = 0;
  StoreChunk sm;                   // raw sign+mantissa bytes (raw_size == size == elements)
  std::vector<StoreChunk> shards;  // K exponent shards; shard k covers [shard_begin(k), shard_begin(k+1))

  uint64_t e_bytes() const;  // stored bytes of all E-chunks
  uint64_t bf16_bytes() const { return elements * 2; }
  uint64_t shard_begin(uint32_t k) const;    // element index where shard k starts (n * k / K, rounded down)
  std::string label() const;                 // "layer 3 expert 7 tensor gate_proj" (for messages)
  std::string chunk_label(int shard) const;  // label + " SM-chunk" or " E-chunk shard S"
};

struct StoreHeader {
  uint32_t version = kStoreVersion;
  uint32_t flags = 0;
  uint64_t index_offset = 0;
  uint64_t index_size = 0;
  uint64_t file_size = 0;
  uint64_t index_checksum = 0;
};

struct StoreIndex {
  Json meta = Json::object();  // provenance: source, source_format, layout, codec, shards, raw_shape
  std::vector<StoreEntry> entries;
};

// Element index where shard k of K starts in a tensor of n elements.
uint64_t shard_begin(uint64_t n, uint32_t k, uint32_t K);

std::vector<uint8_t> encode_header(const StoreHeader& h);  // kStoreHeaderSize bytes
std::vector<uint8_t> encode_index(const StoreIndex& idx);
// Validates magic, version, flags, header checksum, and that the index lies within `actual_file_size`.
StoreHeader decode_header(const uint8_t* data, size_t size, uint64_t actual_file_size,
                          const std::string& origin);
// Parses the index bytes (at file offset `index_offset`), checks its checksum and every entry: known codec,
// sane shape, K, shard sizes consistent with the shape, every chunk 4 KiB-aligned, after the index, within
// `actual_file_size` (naming the chunk, so a truncated file names the first lost chunk), no overlaps, no
// duplicate (layer, expert, role). Throws moesim::Error naming the file, byte offset and chunk.
StoreIndex decode_index(const uint8_t* data, size_t size, const StoreHeader& h, uint64_t actual_file_size,
                        const std::string& origin);

const char* dtype_label(DType d);  // "BF16", "F16", "F32"

}  // namespace moesim::exec
