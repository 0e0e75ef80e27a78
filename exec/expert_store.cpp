#include "exec/expert_store.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <tuple>

#include "base/error.h"
#include "base/hash64.h"
#include "exec/raw_weights.h"

namespace moesim::exec {
namespace {

static_assert(std::endian::native == std::endian::little, "the store is little-endian, as are our targets");

class ByteWriter {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void put_bytes(const std::string& s) { out.insert(out.end(), s.begin(), s.end()); }
  std::vector<uint8_t> out;
};

// Bounds-checked reading: every read names the absolute file offset it failed at.
class ByteCursor {
 public:
  ByteCursor(const uint8_t* d, size_t n, uint64_t base, const std::string& origin)
      : d_(d), n_(n), base_(base), origin_(origin) {}
  template <typename T>
  T get(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, d_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string get_string(size_t len, const std::string& field) {
    need(len, field);
    std::string s(reinterpret_cast<const char*>(d_ + pos_), len);
    pos_ += len;
    return s;
  }
  uint64_t offset() const { return base_ + pos_; }
  size_t remaining() const { return n_ - pos_; }

 private:
  void need(size_t len, const std::string& field) {
    if (len > n_ - pos_)
      throw binary_input_error(origin_, offset(), field,
                               "index ends early (needs " + std::to_string(len) + " bytes, " +
                                   std::to_string(n_ - pos_) + " left)");
  }
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
  uint64_t base_;
  const std::string& origin_;
};

uint8_t dtype_code(DType d) {
  return static_cast<uint8_t>(d == DType::BF16 ? 0 : d == DType::F16 ? 1 : 2);
}

void put_chunk(ByteWriter& w, const StoreChunk& c, bool with_raw) {
  w.put<uint64_t>(c.offset);
  w.put<uint64_t>(c.size);
  if (with_raw) w.put<uint64_t>(c.raw_size);
  w.put<uint64_t>(c.checksum);
}

}  // namespace

const char* dtype_label(DType d) {
  return d == DType::BF16 ? "BF16" : d == DType::F16 ? "F16" : "F32";
}

uint64_t shard_begin(uint64_t n, uint32_t k, uint32_t K) {
  // floor(n * k / K) without a 128-bit product: n = qK + r gives q*k + floor(r*k / K), and r*k < K*K < 2^32.
  return (n / K) * k + (n % K) * k / K;
}

uint64_t StoreEntry::e_bytes() const {
  uint64_t s = 0;
  for (const auto& c : shards) s += c.size;
  return s;
}

uint64_t StoreEntry::shard_begin(uint32_t k) const {
  return exec::shard_begin(elements, k, static_cast<uint32_t>(shards.size()));
}

std::string StoreEntry::label() const {
  return "layer " + std::to_string(layer) + " expert " + std::to_string(expert) + " tensor " + role;
}

std::string StoreEntry::chunk_label(int shard) const {
  return label() + (shard < 0 ? " SM-chunk" : " E-chunk shard " + std::to_string(shard));
}

std::vector<uint8_t> encode_header(const StoreHeader& h) {
  ByteWriter w;
  w.out.insert(w.out.end(), kStoreMagic, kStoreMagic + 8);
  w.put<uint32_t>(h.version);
  w.put<uint32_t>(h.flags);
  w.put<uint64_t>(h.index_offset);
  w.put<uint64_t>(h.index_size);
  w.put<uint64_t>(h.file_size);
  w.put<uint64_t>(h.index_checksum);
  w.put<uint64_t>(0);  // reserved
  w.put<uint64_t>(hash64(w.out.data(), w.out.size()));
  return w.out;
}

std::vector<uint8_t> encode_index(const StoreIndex& idx) {
  ByteWriter w;
  const std::string meta = idx.meta.dump();
  w.put<uint32_t>(static_cast<uint32_t>(idx.entries.size()));
  w.put<uint32_t>(static_cast<uint32_t>(meta.size()));
  w.put_bytes(meta);
  for (const auto& e : idx.entries) {
    w.put<uint32_t>(e.layer);
    w.put<uint32_t>(e.expert);
    w.put<uint16_t>(static_cast<uint16_t>(e.role.size()));
    w.put_bytes(e.role);
    w.put<uint16_t>(static_cast<uint16_t>(e.name.size()));
    w.put_bytes(e.name);
    w.put<uint8_t>(dtype_code(e.source_dtype));
    w.put<uint8_t>(static_cast<uint8_t>(e.codec));
    w.put<uint8_t>(static_cast<uint8_t>(e.shape.size()));
    w.put<uint8_t>(0);
    w.put<int32_t>(e.level);
    w.put<uint32_t>(static_cast<uint32_t>(e.shards.size()));
    for (auto d : e.shape) w.put<uint64_t>(d);
    put_chunk(w, e.sm, false);
    for (const auto& c : e.shards) put_chunk(w, c, true);
  }
  return w.out;
}

StoreHeader decode_header(const uint8_t* data, size_t size, uint64_t actual_file_size,
                          const std::string& origin) {
  if (size < kStoreHeaderSize || actual_file_size < kStoreHeaderSize)
    throw binary_input_error(
        origin, 0, "header",
        "file is too short for the " + std::to_string(kStoreHeaderSize) + "-byte store header");
  if (std::memcmp(data, kStoreMagic, 8) != 0)
    throw binary_input_error(origin, 0, "magic", "not a moesim expert store (expected magic MOESTORE)");
  StoreHeader h;
  std::memcpy(&h.version, data + 8, 4);
  std::memcpy(&h.flags, data + 12, 4);
  std::memcpy(&h.index_offset, data + 16, 8);
  std::memcpy(&h.index_size, data + 24, 8);
  std::memcpy(&h.file_size, data + 32, 8);
  std::memcpy(&h.index_checksum, data + 40, 8);
  uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, data + 56, 8);
  if (h.version != kStoreVersion)
    throw binary_input_error(origin, 8, "version",
                             "store format version " + std::to_string(h.version) +
                                 "; this moesim reads version " + std::to_string(kStoreVersion) +
                                 " (re-run moesim pack)");
  if (hash64(data, 56) != stored_sum)
    throw binary_input_error(origin, 56, "header checksum", "mismatch: header is corrupt");
  if (h.flags != 0) throw binary_input_error(origin, 12, "flags", "unknown flags " + std::to_string(h.flags));
  if (h.index_offset < kStoreHeaderSize || h.index_offset % kStoreAlign != 0)
    throw binary_input_error(origin, 16, "index offset",
                             std::to_string(h.index_offset) + " is not a 4 KiB boundary after the header");
  if (h.index_size < 8 || h.index_size > (uint64_t{1} << 32))
    throw binary_input_error(origin, 24, "index size", std::to_string(h.index_size) + " out of range");
  if (h.index_offset > actual_file_size || h.index_size > actual_file_size - h.index_offset)
    throw binary_input_error(origin, h.index_offset, "index",
                             "[" + std::to_string(h.index_offset) + ", +" + std::to_string(h.index_size) +
                                 ") extends past the end of the file (" + std::to_string(actual_file_size) +
                                 " bytes): truncated file");
  return h;
}

namespace {

// A chunk's byte range in the file, for the overlap check.
struct ChunkRange {
  uint64_t begin, end;
  size_t entry;
  int shard;
};

// An entry's fixed fields that shape the rest of it: its dimension and shard counts, and its codec.
struct EntryCodes {
  uint8_t ndim = 0;
  uint32_t K = 0;
  std::unique_ptr<kernels::Codec> codec;
};

// Decodes the index's entries one by one, checking each against the file and collecting the chunks' ranges.
class IndexDecoder {
 public:
  IndexDecoder(ByteCursor& c, const StoreHeader& h, uint64_t actual_file_size, const std::string& origin)
      : c_(c),
        origin_(origin),
        file_size_(actual_file_size),
        data_start_((h.index_offset + h.index_size + kStoreAlign - 1) / kStoreAlign * kStoreAlign) {}

  // Entry i (the i-th in the index, and in StoreIndex::entries).
  StoreEntry read_entry(uint32_t i) {
    const uint64_t at = c_.offset();
    const std::string ef = "index entry " + std::to_string(i);
    StoreEntry e;
    e.layer = c_.get<uint32_t>(ef + " layer");
    e.expert = c_.get<uint32_t>(ef + " expert");
    e.role = c_.get_string(c_.get<uint16_t>(ef + " role length"), ef + " role");
    e.name = c_.get_string(c_.get<uint16_t>(ef + " name length"), ef + " name");
    const std::string lf = ef + " (" + e.label() + ")";
    const EntryCodes codes = read_codes(e, at, lf);
    read_shape(e, codes.ndim, at, lf);
    if (!keys_.insert({e.layer, e.expert, e.role}).second)
      throw binary_input_error(origin_, at, lf, "appears twice in the index");
    read_sm_chunk(e, lf, i);
    read_shards(e, codes, at, lf, i);
    return e;
  }

  // No two chunks of the index share a byte.
  void check_overlaps(const std::vector<StoreEntry>& entries) {
    auto& ranges = ranges_;
    std::sort(ranges.begin(), ranges.end(),
              [](const ChunkRange& a, const ChunkRange& b) { return a.begin < b.begin; });
    for (size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].begin < ranges[i - 1].end)
        throw binary_input_error(
            origin_, ranges[i].begin, entries[ranges[i].entry].chunk_label(ranges[i].shard),
            "overlaps " + entries[ranges[i - 1].entry].chunk_label(ranges[i - 1].shard));
  }

 private:
  EntryCodes read_codes(StoreEntry& e, uint64_t at, const std::string& lf) {
    EntryCodes r;
    const uint8_t dt = c_.get<uint8_t>(lf + " dtype");
    const uint8_t codec = c_.get<uint8_t>(lf + " codec");
    r.ndim = c_.get<uint8_t>(lf + " ndim");
    const uint8_t reserved = c_.get<uint8_t>(lf + " reserved");
    e.level = c_.get<int32_t>(lf + " codec level");
    r.K = c_.get<uint32_t>(lf + " shard count");
    if (dt > 2) throw binary_input_error(origin_, at, lf, "unknown source dtype code " + std::to_string(dt));
    e.source_dtype = dt == 0 ? DType::BF16 : dt == 1 ? DType::F16 : DType::F32;
    if (codec > 3) throw binary_input_error(origin_, at, lf, "unknown codec id " + std::to_string(codec));
    e.codec = static_cast<kernels::CodecId>(codec);
    try {
      r.codec = kernels::make_codec(e.codec, e.level);
    } catch (const Error& err) {
      throw binary_input_error(origin_, at, lf, std::string("codec: ") + err.what());
    }
    if (r.ndim > kStoreMaxDims || reserved != 0)
      throw binary_input_error(origin_, at, lf, "bad ndim " + std::to_string(r.ndim) + " or reserved byte");
    if (r.K == 0 || r.K > kStoreMaxShards)
      throw binary_input_error(
          origin_, at, lf,
          "shard count " + std::to_string(r.K) + " out of range 1.." + std::to_string(kStoreMaxShards));
    return r;
  }

  void read_shape(StoreEntry& e, uint8_t ndim, uint64_t at, const std::string& lf) {
    e.elements = 1;
    for (uint8_t d = 0; d < ndim; ++d) {
      const uint64_t dim = c_.get<uint64_t>(lf + " shape");
      // Every element needs one stored SM byte inside the file, which bounds the product.
      if (dim != 0 && e.elements > file_size_ / dim)
        throw binary_input_error(origin_, at, lf, "shape has more elements than the file has bytes");
      e.elements *= dim;
      e.shape.push_back(dim);
    }
  }

  void read_sm_chunk(StoreEntry& e, const std::string& lf, size_t entry) {
    e.sm.offset = c_.get<uint64_t>(lf + " SM offset");
    e.sm.size = c_.get<uint64_t>(lf + " SM size");
    e.sm.raw_size = e.sm.size;
    e.sm.checksum = c_.get<uint64_t>(lf + " SM checksum");
    if (e.sm.size != e.elements)
      throw binary_input_error(origin_, e.sm.offset, e.chunk_label(-1),
                               "size " + std::to_string(e.sm.size) + " differs from the element count " +
                                   std::to_string(e.elements));
    // The SM chunk is raw; check it against the raw rules.
    if (e.sm.offset % kStoreAlign != 0 || e.sm.offset < data_start_ || e.sm.offset > file_size_ ||
        e.sm.size > file_size_ - e.sm.offset)
      throw binary_input_error(origin_, e.sm.offset, e.chunk_label(-1),
                               "chunk [" + std::to_string(e.sm.offset) + ", +" + std::to_string(e.sm.size) +
                                   ") is misaligned, inside the index, or past the end of the file (" +
                                   std::to_string(file_size_) + " bytes)");
    if (e.sm.size > 0) ranges_.push_back({e.sm.offset, e.sm.offset + e.sm.size, entry, -1});
  }

  void read_shards(StoreEntry& e, const EntryCodes& codes, uint64_t at, const std::string& lf, size_t entry) {
    const uint32_t K = codes.K;
    if (K > c_.remaining() / 32) throw binary_input_error(origin_, at, lf, "shard table ends early");
    e.shards.resize(K);
    for (uint32_t k = 0; k < K; ++k) {
      auto& ch = e.shards[k];
      ch.offset = c_.get<uint64_t>(lf + " shard offset");
      ch.size = c_.get<uint64_t>(lf + " shard size");
      ch.raw_size = c_.get<uint64_t>(lf + " shard raw size");
      ch.checksum = c_.get<uint64_t>(lf + " shard checksum");
      const uint64_t expect = shard_begin(e.elements, k + 1, K) - shard_begin(e.elements, k, K);
      if (ch.raw_size != expect)
        throw binary_input_error(origin_, ch.offset, e.chunk_label(static_cast<int>(k)),
                                 "uncompressed size " + std::to_string(ch.raw_size) + ", the shape needs " +
                                     std::to_string(expect));
      check_e_chunk(e, ch, static_cast<int>(k), *codes.codec, entry);
    }
  }

  void check_e_chunk(const StoreEntry& e, const StoreChunk& ch, int shard, const kernels::Codec& codec,
                     size_t entry) {
    const std::string cf = e.chunk_label(shard);
    if (ch.offset % kStoreAlign != 0)
      throw binary_input_error(origin_, ch.offset, cf, "offset is not 4 KiB-aligned");
    if (ch.offset < data_start_)
      throw binary_input_error(origin_, ch.offset, cf, "offset lies inside the header or index");
    if (ch.offset > file_size_ || ch.size > file_size_ - ch.offset)
      throw binary_input_error(origin_, ch.offset, cf,
                               "chunk [" + std::to_string(ch.offset) + ", +" + std::to_string(ch.size) +
                                   ") extends past the end of the file (" + std::to_string(file_size_) +
                                   " bytes): truncated or bad offset");
    if ((ch.size == 0) != (ch.raw_size == 0))
      throw binary_input_error(origin_, ch.offset, cf, "an empty chunk must have an empty payload");
    if (ch.raw_size > 0 && ch.size > codec.max_compressed_size(ch.raw_size))
      throw binary_input_error(origin_, ch.offset, cf, "stored size exceeds the codec's bound");
    if (e.codec == kernels::CodecId::kRaw && ch.size != ch.raw_size)
      throw binary_input_error(origin_, ch.offset, cf, "raw chunk size differs from its uncompressed size");
    if (ch.size > 0) ranges_.push_back({ch.offset, ch.offset + ch.size, entry, shard});
  }

  ByteCursor& c_;
  const std::string& origin_;
  uint64_t file_size_;
  uint64_t data_start_;  // the first byte a chunk may use: the index's end, aligned up
  std::set<std::tuple<uint32_t, uint32_t, std::string>> keys_;
  std::vector<ChunkRange> ranges_;
};

Json decode_meta(ByteCursor& c, uint32_t meta_size, const std::string& origin) {
  const uint64_t meta_at = c.offset();
  const std::string meta = c.get_string(meta_size, "metadata");
  Json j;
  try {
    j = Json::parse(meta);
  } catch (const nlohmann::json::exception& e) {
    throw binary_input_error(origin, meta_at, "metadata", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw binary_input_error(origin, meta_at, "metadata", "is not a JSON object");
  return j;
}

}  // namespace

StoreIndex decode_index(const uint8_t* data, size_t size, const StoreHeader& h, uint64_t actual_file_size,
                        const std::string& origin) {
  if (size != h.index_size) throw binary_input_error(origin, h.index_offset, "index", "short read");
  if (hash64(data, size) != h.index_checksum)
    throw binary_input_error(origin, h.index_offset, "index checksum", "mismatch: the index is corrupt");
  StoreIndex idx;
  ByteCursor c(data, size, h.index_offset, origin);
  const uint32_t count = c.get<uint32_t>("entry count");
  const uint32_t meta_size = c.get<uint32_t>("metadata size");
  idx.meta = decode_meta(c, meta_size, origin);
  // Each entry takes at least 24 bytes + 24 (SM chunk) + 32 per shard (K >= 1): bound the count before
  // reserving.
  if (count > c.remaining() / 80)
    throw binary_input_error(origin, h.index_offset, "entry count",
                             std::to_string(count) + " entries cannot fit");
  IndexDecoder dec(c, h, actual_file_size, origin);
  idx.entries.reserve(count);
  for (uint32_t i = 0; i < count; ++i) idx.entries.push_back(dec.read_entry(i));
  if (c.remaining() != 0)
    throw binary_input_error(origin, c.offset(), "index", std::to_string(c.remaining()) + " trailing bytes");
  dec.check_overlaps(idx.entries);
  if (h.file_size != actual_file_size)
    throw binary_input_error(origin, actual_file_size, "file size",
                             "file is " + std::to_string(actual_file_size) + " bytes, the header says " +
                                 std::to_string(h.file_size) + " (truncated or appended to)");
  return idx;
}

}  // namespace moesim::exec
