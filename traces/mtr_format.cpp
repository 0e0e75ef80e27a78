#include "traces/mtr_format.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <stdexcept>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/hash64.h"
#include "base/input_file.h"
#include "traces/lookup_stream.h"

namespace moesim::traces {

// ---- layout shared by writer and reader -------------------------------------------------------------------
namespace {

uint64_t align_up(uint64_t v) {
  return (v + kMtrAlignment - 1) / kMtrAlignment * kMtrAlignment;
}

struct ColumnDef {
  const char* name;
  const char* type;
  uint32_t elem;  // bytes per element
  bool optional;
};
// Column order in the file; the reader accepts any order of offsets as long as columns do not overlap.
constexpr ColumnDef kColumns[] = {
    {"seq", "u32", 4, false},   {"phase", "u8", 1, false},     {"step", "u32", 4, false},
    {"layer", "u16", 2, false}, {"experts", "u16", 2, false},  {"weights", "f32", 4, true},
    {"logits", "f32", 4, true}, {"next_use", "u32", 4, false},
};
constexpr size_t kNumColumns = std::size(kColumns);

// The lookup index section (version 2): its columns, in file order.
constexpr ColumnDef kLookupColumns[] = {
    {"inv_begin", "u32", 4, false}, {"inv_layer", "u16", 2, false}, {"inv_phase", "u8", 1, false},
    {"key", "u32", 4, false},       {"next_use", "u32", 4, false},  {"refresh_begin", "u32", 4, false},
    {"refresh", "u32", 4, false},
};
constexpr size_t kNumLookupColumns = std::size(kLookupColumns);
enum LookupCol { kInvBegin, kInvLayer, kInvPhase, kKey, kNextUse, kRefreshBegin, kRefresh };
constexpr uint64_t kLookupsPreambleBytes = 64;

void require_little_endian() {
  if constexpr (std::endian::native != std::endian::little)
    throw Error(".mtr files are little-endian and this host is big-endian: not supported");
}

struct Encoded {
  std::string header;
  uint64_t offsets[kNumColumns] = {};
  const void* data[kNumColumns] = {};
  uint64_t bytes[kNumColumns] = {};
  uint64_t file_bytes = 0;
  // The lookup index section, when written.
  bool lookups = false;
  LookupStream stream;
  uint64_t section_offset = 0;
  uint64_t l_offsets[kNumLookupColumns] = {};
  const void* l_data[kNumLookupColumns] = {};
  uint64_t l_bytes[kNumLookupColumns] = {};
};

Encoded plan(const Trace& t, const MtrWriteOptions& wo) {
  require_little_endian();
  if (t.records() == 0) throw Error("cannot write an empty trace");
  const auto& c = t.columns();
  const auto& info = t.info();
  Encoded e;
  const std::pair<const void*, uint64_t> spans[kNumColumns] = {
      {c.seq.data(), c.seq.size_bytes()},         {c.phase.data(), c.phase.size_bytes()},
      {c.step.data(), c.step.size_bytes()},       {c.layer.data(), c.layer.size_bytes()},
      {c.experts.data(), c.experts.size_bytes()}, {c.weights.data(), c.weights.size_bytes()},
      {c.logits.data(), c.logits.size_bytes()},   {c.next_use.data(), c.next_use.size_bytes()},
  };
  for (size_t i = 0; i < kNumColumns; ++i) {
    e.data[i] = spans[i].first;
    e.bytes[i] = spans[i].second;
  }
  Json lookups;
  if (wo.lookup_index) {
    e.lookups = true;
    e.stream = build_lookup_stream(t, 1, LookupStreamParts{.tokens = false, .next_use = true});
    const LookupStream& s = e.stream;
    const std::pair<const void*, uint64_t> ls[kNumLookupColumns] = {
        {s.inv_begin.data(), s.inv_begin.size() * 4}, {s.inv_layer.data(), s.inv_layer.size() * 2},
        {s.inv_phase.data(), s.inv_phase.size()},     {s.key.data(), s.key.size() * 4},
        {s.next_use.data(), s.next_use.size() * 4},   {s.refresh_begin.data(), s.refresh_begin.size() * 4},
        {s.refresh.data(), s.refresh.size() * 4},
    };
    for (size_t i = 0; i < kNumLookupColumns; ++i) {
      e.l_data[i] = ls[i].first;
      e.l_bytes[i] = ls[i].second;
    }
    lookups = {{"batch", 1},
               {"invocations", s.invocations()},
               {"lookups", s.lookups()},
               {"refreshes", s.refreshes()},
               {"sequences", t.sequence_ids().size()},
               {"prefill_tokens", t.tokens(Phase::kPrefill)},
               {"decode_tokens", t.tokens(Phase::kDecode)}};
  }
  // Offsets are absolute, so the header's length depends on them: iterate to a fixed point (the header
  // only grows with the offsets' digits, so this converges in two or three rounds).
  uint64_t data_start = kMtrAlignment;
  for (;;) {
    uint64_t o = data_start;
    Json cols = Json::object();
    for (size_t i = 0; i < kNumColumns; ++i) {
      if (kColumns[i].optional && e.bytes[i] == 0) continue;
      e.offsets[i] = o;
      cols[kColumns[i].name] = {{"type", kColumns[i].type}, {"offset", o}, {"bytes", e.bytes[i]}};
      o = align_up(o + e.bytes[i]);
    }
    if (e.lookups) {
      e.section_offset = o;
      o += kLookupsPreambleBytes;
      Json lcols = Json::object();
      for (size_t i = 0; i < kNumLookupColumns; ++i) {
        e.l_offsets[i] = o;
        lcols[kLookupColumns[i].name] = {{"type", kLookupColumns[i].type},
                                         {"offset", o},
                                         {"bytes", e.l_bytes[i]},
                                         {"checksum", hash64(e.l_data[i], e.l_bytes[i])}};
        o = align_up(o + e.l_bytes[i]);
      }
      lookups["offset"] = e.section_offset;
      lookups["bytes"] = o - e.section_offset;
      lookups["columns"] = lcols;
    }
    e.file_bytes = o;
    Json h = Json::object();
    h["format"] = "moesim trace";
    h["version"] = e.lookups ? kMtrVersionLookups : kMtrVersion;
    h["model"] = info.model;
    h["layers"] = info.layers;
    h["experts"] = info.experts;
    h["top_k"] = info.top_k;
    h["expert_bytes"] = info.expert_bytes;
    h["synthetic"] = info.synthetic;
    h["missing_cells"] = info.missing_cells;
    h["provenance"] = info.provenance;
    h["records"] = t.records();
    h["columns"] = cols;
    if (e.lookups) h["lookups"] = lookups;
    // Strings came through sanitize_utf8 or a JSON parser; `replace` keeps a stray byte from ever throwing.
    e.header = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const uint64_t need = align_up(kMtrPreambleBytes + e.header.size());
    if (need <= data_start) break;
    data_start = need;
  }
  return e;
}

template <typename Out>
void emit_body(const Encoded& e, Out&& out) {
  static const char zeros[kMtrAlignment] = {};
  out(e.header.data(), e.header.size());
  uint64_t pos = kMtrPreambleBytes + e.header.size();
  auto pad = [&](uint64_t to) {
    while (pos < to) {
      const uint64_t n = std::min<uint64_t>(to - pos, kMtrAlignment);
      out(zeros, n);
      pos += n;
    }
  };
  for (size_t i = 0; i < kNumColumns; ++i) {
    if (kColumns[i].optional && e.bytes[i] == 0) continue;
    pad(e.offsets[i]);
    out(e.data[i], e.bytes[i]);
    pos += e.bytes[i];
  }
  if (e.lookups) {
    pad(e.section_offset);
    char pre[kLookupsPreambleBytes] = {};
    std::memcpy(pre, kMtrLookupsMagic, 8);
    const uint64_t header_checksum = hash64(e.header.data(), e.header.size());
    std::memcpy(pre + 8, &header_checksum, 8);
    out(pre, kLookupsPreambleBytes);
    pos += kLookupsPreambleBytes;
    for (size_t i = 0; i < kNumLookupColumns; ++i) {
      pad(e.l_offsets[i]);
      out(e.l_data[i], e.l_bytes[i]);
      pos += e.l_bytes[i];
    }
  }
  pad(e.file_bytes);
}

std::string preamble(const Encoded& e) {
  Xxh64 h;
  emit_body(e, [&](const void* p, size_t n) { h.update(p, n); });
  const uint64_t checksum = h.digest();
  const uint32_t version = e.lookups ? kMtrVersionLookups : kMtrVersion,
                 header_bytes = static_cast<uint32_t>(e.header.size());
  std::string p(kMtrPreambleBytes, '\0');
  std::memcpy(p.data(), kMtrMagic, 8);
  std::memcpy(p.data() + 8, &version, 4);
  std::memcpy(p.data() + 12, &header_bytes, 4);
  std::memcpy(p.data() + 16, &e.file_bytes, 8);
  std::memcpy(p.data() + 24, &checksum, 8);
  return p;
}

}  // namespace

void write_mtr(const Trace& trace, const std::string& path, const MtrWriteOptions& wo) {
  const Encoded e = plan(trace, wo);
  AtomicFile f(path);
  f.write(preamble(e));
  emit_body(e, [&](const void* p, size_t n) { f.write(p, n); });
  f.commit();
}

std::string encode_mtr(const Trace& trace, const MtrWriteOptions& wo) {
  const Encoded e = plan(trace, wo);
  std::string out = preamble(e);
  out.reserve(e.file_bytes);
  emit_body(e, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

// ---- reader
// ------------------------------------------------------------------------------------------------
namespace {

// Where the lookup index section's columns lie (offsets absolute) and what its header says.
struct LookupLayout {
  uint64_t section_offset = 0, section_bytes = 0;
  uint64_t invocations = 0, lookups = 0, refreshes = 0;
  uint64_t sequences = 0, prefill_tokens = 0, decode_tokens = 0;
  uint64_t offset[kNumLookupColumns] = {}, bytes[kNumLookupColumns] = {}, checksum[kNumLookupColumns] = {};
};

class Reader {
 public:
  Reader(const unsigned char* base, uint64_t size, std::string origin)
      : base_(base), size_(size), origin_(std::move(origin)) {}

  Trace parse(const MtrReadOptions& opts, std::shared_ptr<const void> owner);
  // nullopt: no magic (not an .mtr file) or no lookup index section.
  // from_records: a file without the section gives the stream built from its records instead of nullopt.
  std::optional<MtrLookups> parse_lookups(const MtrReadOptions& opts, bool with_next_use,
                                          std::shared_ptr<const void> owner, bool from_records = false,
                                          bool with_token_counts = true);

 private:
  [[nodiscard]] Error fail(uint64_t offset, const std::string& field, const std::string& msg) const {
    return binary_input_error(origin_, offset, field, msg);
  }
  uint64_t header_uint(const Json& h, const char* key, uint64_t max,
                       const std::string& where = "header") const;
  void check_preamble(bool verify_checksum);
  void parse_header();
  void parse_lookup_layout();
  // Section checksums (the header's and each column's, next_use only when asked) and structure; fills
  // view_ (next_use only when asked) and decode_lookups_.
  // `deferred` (with verify_checksums): the checksums run on a second thread holding `owner`, and their
  // future is stored there instead of being waited for -- unless the structure fails, when a checksum
  // mismatch is the error reported (a corrupt file is named as such).
  void check_lookups(bool verify_checksums, bool with_next_use, const std::shared_ptr<const void>& owner = {},
                     std::shared_future<void>* deferred = nullptr);
  // The section's checksums as a closure that throws their first mismatch; it holds what it reads by value
  // (the mapping must outlive it), so it may run on another thread.
  std::function<void()> lookups_checksums(bool with_next_use) const;
  // The section's preamble and structure (check_lookups without the checksums).
  void check_lookup_structure(bool with_next_use);
  void compare_lookups(const Trace& t);  // the section equals the stream rebuilt from the records
  TraceColumns columns() const;          // the record columns, as the header places them
  // What the lookup stream reads: phases, layers, canonical order, expert ids; and the header's
  // missing_cells. Returns the number of sequences.
  uint64_t check_records(const TraceColumns& c) const;
  // check_records' checks in one branch-free pass: whether all hold (the sequences counted in `sequences`).
  bool records_valid(const TraceColumns& c, uint64_t& sequences) const;
  // The same with top-k = K known at compile time (K = 0: the header's top_k), so that a record's slots
  // are unrolled.
  template <uint32_t K>
  bool records_valid_k(const TraceColumns& c, uint64_t& sequences) const;
  // check_records' checks one by one, throwing the first failure with its offset.
  void locate_record_error(const TraceColumns& c) const;
  // A file without the section: the batch-1 stream built from the records (see read_mtr_lookup_stream).
  MtrLookups lookups_from_records(const MtrReadOptions& opts, bool with_next_use, bool with_token_counts,
                                  std::shared_ptr<const void> owner);

  const unsigned char* base_;
  uint64_t size_;
  std::string origin_;
  // Filled by check_preamble / parse_header.
  uint32_t version_ = 0, header_bytes_ = 0;
  uint64_t checksum_ = 0;
  Json h_;
  TraceInfo info_;
  uint64_t records_ = 0, slots_ = 0;
  uint64_t offset_[kNumColumns] = {}, bytes_[kNumColumns] = {};
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // record columns, then the section
  bool has_lookups_ = false;
  LookupLayout lk_;
  LookupView view_;
  uint64_t decode_lookups_ = 0;
};

uint64_t Reader::header_uint(const Json& h, const char* key, uint64_t max, const std::string& where) const {
  if (!h.contains(key)) throw fail(kMtrPreambleBytes, where + "." + key, "missing");
  const Json& v = h.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
    throw fail(kMtrPreambleBytes, where + "." + key,
               "must be an unsigned integer <= " + std::to_string(max) + ", got " + v.dump());
  return v.get<uint64_t>();
}

void Reader::check_preamble(bool verify_checksum) {
  require_little_endian();
  if (size_ == 0) throw fail(0, "", "empty file");
  if (size_ < kMtrPreambleBytes)
    throw fail(size_, "preamble", "truncated: " + std::to_string(size_) + " bytes, the preamble alone is 32");
  if (std::memcmp(base_, kMtrMagic, 8) != 0)
    throw fail(0, "magic", "not an .mtr file (no MOESIMTR magic at byte 0)");
  uint64_t file_bytes;
  std::memcpy(&version_, base_ + 8, 4);
  std::memcpy(&header_bytes_, base_ + 12, 4);
  std::memcpy(&file_bytes, base_ + 16, 8);
  std::memcpy(&checksum_, base_ + 24, 8);
  if (version_ != kMtrVersion && version_ != kMtrVersionLookups)
    throw fail(8, "version",
               "format version " + std::to_string(version_) + ", this build reads versions " +
                   std::to_string(kMtrVersion) + " and " + std::to_string(kMtrVersionLookups));
  if (file_bytes != size_)
    throw fail(16, "file_bytes",
               "the preamble says " + std::to_string(file_bytes) + " bytes but the file has " +
                   std::to_string(size_) + (size_ < file_bytes ? " (truncated)" : " (trailing data)"));
  if (header_bytes_ > size_ - kMtrPreambleBytes)
    throw fail(12, "header_bytes", "header of " + std::to_string(header_bytes_) + " bytes runs past the end");
  if (verify_checksum) {
    const uint64_t actual = hash64(base_ + kMtrPreambleBytes, size_ - kMtrPreambleBytes);
    if (actual != checksum_)
      throw fail(24, "checksum",
                 "XXH64 mismatch: the file is corrupt (stored " + std::to_string(checksum_) + ", computed " +
                     std::to_string(actual) + ")");
  }
}

void Reader::parse_header() {
  // Header JSON.
  Json& h = h_;
  if (const void* nul = std::memchr(base_ + kMtrPreambleBytes, 0, header_bytes_))
    throw fail(static_cast<uint64_t>(static_cast<const unsigned char*>(nul) - base_), "header",
               "NUL byte inside the JSON header (wrong header_bytes?)");
  try {
    h = Json::parse(base_ + kMtrPreambleBytes, base_ + kMtrPreambleBytes + header_bytes_);
  } catch (const nlohmann::json::parse_error& e) {
    throw fail(kMtrPreambleBytes + (e.byte ? e.byte - 1 : 0), "header",
               std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range.406: number overflow
    throw fail(kMtrPreambleBytes, "header", std::string("invalid JSON: ") + e.what());
  }
  if (!h.is_object()) throw fail(kMtrPreambleBytes, "header", "not a JSON object");
  TraceInfo& info = info_;
  info.layers = static_cast<uint32_t>(header_uint(h, "layers", 65536));
  info.experts = static_cast<uint32_t>(header_uint(h, "experts", 65536));
  info.top_k = static_cast<uint32_t>(header_uint(h, "top_k", info.experts));
  if (info.layers == 0 || info.experts == 0 || info.top_k == 0)
    throw fail(kMtrPreambleBytes, "header", "layers, experts and top_k must be at least 1");
  if (uint64_t{info.layers} * info.experts > kMaxLayerExperts)
    throw fail(kMtrPreambleBytes, "header.experts",
               "layers x experts above " + std::to_string(kMaxLayerExperts));
  const uint64_t records = records_ = header_uint(h, "records", size_);
  if (records == 0) throw fail(kMtrPreambleBytes, "header.records", "no records");
  const uint64_t slots = slots_ = records * info.top_k;  // records <= size, top_k <= 65536: no overflow
  if (slots >= kNoNextUse) throw fail(kMtrPreambleBytes, "header.records", "more than 2^32-2 expert slots");
  info.missing_cells = header_uint(h, "missing_cells", UINT64_MAX);
  if (!h.contains("model") || !h["model"].is_string())
    throw fail(kMtrPreambleBytes, "header.model", "missing or not a string");
  info.model = h["model"].get<std::string>();
  if (!h.contains("synthetic") || !h["synthetic"].is_boolean())
    throw fail(kMtrPreambleBytes, "header.synthetic", "missing or not a boolean");
  info.synthetic = h["synthetic"].get<bool>();
  if (!h.contains("provenance") || !h["provenance"].is_object())
    throw fail(kMtrPreambleBytes, "header.provenance", "missing or not an object");
  // Moved, not copied: h_ is not read for it again, and a trace imported from many files has a provenance
  // of hundreds of kB (the benchmark's tiled trace: 179 kB of header), which a copy would allocate again.
  info.provenance = std::move(h["provenance"]);
  if (!h.contains("expert_bytes") || !h["expert_bytes"].is_array())
    throw fail(kMtrPreambleBytes, "header.expert_bytes", "missing or not an array");
  for (const Json& v : h["expert_bytes"]) {
    if (!v.is_number_unsigned())
      throw fail(kMtrPreambleBytes, "header.expert_bytes", "not an unsigned integer: " + v.dump());
    info.expert_bytes.push_back(v.get<uint64_t>());
  }
  if (!info.expert_bytes.empty() && info.expert_bytes.size() != info.layers)
    throw fail(
        kMtrPreambleBytes, "header.expert_bytes",
        std::to_string(info.expert_bytes.size()) + " entries for " + std::to_string(info.layers) + " layers");

  // Columns: presence, type, length, bounds, alignment, no overlap.
  if (!h.contains("columns") || !h["columns"].is_object())
    throw fail(kMtrPreambleBytes, "header.columns", "missing or not an object");
  const Json& cols = h["columns"];
  for (const auto& [name, v] : cols.items()) {
    bool known = false;
    for (const auto& d : kColumns) known |= name == d.name;
    if (!known) throw fail(kMtrPreambleBytes, "header.columns." + name, "unknown column");
  }
  const uint64_t counts[kNumColumns] = {
      records, records, records, records, slots, slots, records * info.experts, slots};
  const uint64_t data_start = kMtrPreambleBytes + header_bytes_;
  for (size_t i = 0; i < kNumColumns; ++i) {
    const ColumnDef& d = kColumns[i];
    const std::string field = std::string("header.columns.") + d.name;
    if (!cols.contains(d.name)) {
      if (d.optional) continue;
      throw fail(kMtrPreambleBytes, field, "required column missing");
    }
    const Json& c = cols[d.name];
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string() ||
        c["type"].get<std::string>() != d.type)
      throw fail(kMtrPreambleBytes, field,
                 std::string("must be an object with \"type\": \"") + d.type + "\"");
    offset_[i] = header_uint(c, "offset", UINT64_MAX, field);
    bytes_[i] = header_uint(c, "bytes", UINT64_MAX, field);
    if (counts[i] > size_ || bytes_[i] != counts[i] * d.elem)
      throw fail(kMtrPreambleBytes, field,
                 std::to_string(bytes_[i]) + " bytes, expected " + std::to_string(counts[i]) + " x " +
                     std::to_string(d.elem));
    if (offset_[i] % kMtrAlignment != 0)
      throw fail(offset_[i], field, "offset not aligned to " + std::to_string(kMtrAlignment) + " bytes");
    if (offset_[i] < data_start) throw fail(offset_[i], field, "column overlaps the header");
    if (offset_[i] > size_ || bytes_[i] > size_ - offset_[i])
      throw fail(offset_[i], field, "column runs past the end of the file");
    ranges_.emplace_back(offset_[i], offset_[i] + bytes_[i]);
  }
  // Version 1 has no lookups section; version 2 always has one.
  has_lookups_ = h.contains("lookups");
  if (has_lookups_ && version_ < kMtrVersionLookups)
    throw fail(8, "version",
               "format version " + std::to_string(version_) + " cannot have a lookups section (version " +
                   std::to_string(kMtrVersionLookups) + " needed)");
  if (!has_lookups_ && version_ >= kMtrVersionLookups)
    throw fail(8, "version", "format version " + std::to_string(version_) + " without its lookups section");
  if (has_lookups_) parse_lookup_layout();
  std::sort(ranges_.begin(), ranges_.end());
  for (size_t i = 1; i < ranges_.size(); ++i)
    if (ranges_[i].first < ranges_[i - 1].second)
      throw fail(ranges_[i].first, "header.columns", "columns overlap");
}

void Reader::parse_lookup_layout() {
  const Json& l = h_["lookups"];
  const std::string where = "header.lookups";
  if (!l.is_object()) throw fail(kMtrPreambleBytes, where, "not an object");
  if (header_uint(l, "batch", UINT64_MAX, where) != 1)
    throw fail(kMtrPreambleBytes, where + ".batch", "must be 1");
  lk_.invocations = header_uint(l, "invocations", slots_, where);
  lk_.lookups = header_uint(l, "lookups", slots_, where);
  lk_.refreshes = header_uint(l, "refreshes", slots_, where);
  lk_.sequences = header_uint(l, "sequences", records_, where);
  lk_.prefill_tokens = header_uint(l, "prefill_tokens", UINT64_MAX, where);
  lk_.decode_tokens = header_uint(l, "decode_tokens", UINT64_MAX, where);
  lk_.section_offset = header_uint(l, "offset", UINT64_MAX, where);
  lk_.section_bytes = header_uint(l, "bytes", UINT64_MAX, where);
  if (lk_.invocations == 0 || lk_.lookups < lk_.invocations || lk_.refreshes > lk_.lookups)
    throw fail(kMtrPreambleBytes, where,
               "inconsistent counts: " + std::to_string(lk_.invocations) + " invocations, " +
                   std::to_string(lk_.lookups) + " lookups, " + std::to_string(lk_.refreshes) + " refreshes");
  const uint64_t o = lk_.section_offset;
  if (o % kMtrAlignment != 0) throw fail(o, where + ".offset", "not aligned to 64 bytes");
  if (o < kMtrPreambleBytes + header_bytes_)
    throw fail(o, where + ".offset", "the section overlaps the header");
  if (o > size_ || lk_.section_bytes > size_ - o || lk_.section_bytes < kLookupsPreambleBytes)
    throw fail(o, where + ".bytes", "the section runs past the end of the file");
  if (!l.contains("columns") || !l["columns"].is_object())
    throw fail(kMtrPreambleBytes, where + ".columns", "missing or not an object");
  const Json& cols = l["columns"];
  for (const auto& [name, v] : cols.items()) {
    bool known = false;
    for (const auto& d : kLookupColumns) known |= name == d.name;
    if (!known) throw fail(kMtrPreambleBytes, where + ".columns." + name, "unknown column");
  }
  const uint64_t counts[kNumLookupColumns] = {lk_.invocations + 1, lk_.invocations, lk_.invocations,
                                              lk_.lookups,         lk_.lookups,     lk_.invocations + 1,
                                              lk_.refreshes};
  std::vector<std::pair<uint64_t, uint64_t>> inner{{o, o + kLookupsPreambleBytes}};
  for (size_t i = 0; i < kNumLookupColumns; ++i) {
    const ColumnDef& d = kLookupColumns[i];
    const std::string field = where + ".columns." + d.name;
    if (!cols.contains(d.name)) throw fail(kMtrPreambleBytes, field, "required column missing");
    const Json& c = cols[d.name];
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string() ||
        c["type"].get<std::string>() != d.type)
      throw fail(kMtrPreambleBytes, field,
                 std::string("must be an object with \"type\": \"") + d.type + "\"");
    lk_.offset[i] = header_uint(c, "offset", UINT64_MAX, field);
    lk_.bytes[i] = header_uint(c, "bytes", UINT64_MAX, field);
    lk_.checksum[i] = header_uint(c, "checksum", UINT64_MAX, field);
    if (lk_.bytes[i] != counts[i] * d.elem)
      throw fail(kMtrPreambleBytes, field,
                 std::to_string(lk_.bytes[i]) + " bytes, expected " + std::to_string(counts[i]) + " x " +
                     std::to_string(d.elem));
    if (lk_.offset[i] % kMtrAlignment != 0)
      throw fail(lk_.offset[i], field, "offset not aligned to " + std::to_string(kMtrAlignment) + " bytes");
    if (lk_.offset[i] < o || lk_.offset[i] > o + lk_.section_bytes ||
        lk_.bytes[i] > o + lk_.section_bytes - lk_.offset[i])
      throw fail(lk_.offset[i], field, "column outside the lookups section");
    inner.emplace_back(lk_.offset[i], lk_.offset[i] + lk_.bytes[i]);
  }
  std::sort(inner.begin(), inner.end());
  for (size_t i = 1; i < inner.size(); ++i)
    if (inner[i].first < inner[i - 1].second)
      throw fail(inner[i].first, where + ".columns", "columns overlap");
  ranges_.emplace_back(o, o + lk_.section_bytes);
}

std::function<void()> Reader::lookups_checksums(bool with_next_use) const {
  const uint64_t o = lk_.section_offset;
  uint64_t stored;
  std::memcpy(&stored, base_ + o + 8, 8);
  // Everything by value: the closure may run on another thread after this reader is gone.
  return [base = base_, header_bytes = header_bytes_, lk = lk_, origin = origin_, stored, with_next_use] {
    const uint64_t actual = hash64(base + kMtrPreambleBytes, header_bytes);
    if (actual != stored)
      throw binary_input_error(origin, lk.section_offset + 8, "lookups.header_checksum",
                               "XXH64 of the JSON header mismatch: the file is corrupt (stored " +
                                   std::to_string(stored) + ", computed " + std::to_string(actual) + ")");
    for (size_t i = 0; i < kNumLookupColumns; ++i) {
      if (i == kNextUse && !with_next_use) continue;
      const uint64_t a = hash64(base + lk.offset[i], lk.bytes[i]);
      if (a != lk.checksum[i])
        throw binary_input_error(origin, lk.offset[i], std::string("lookups.") + kLookupColumns[i].name,
                                 "XXH64 mismatch: the column is corrupt (stored " +
                                     std::to_string(lk.checksum[i]) + ", computed " + std::to_string(a) +
                                     ")");
    }
  };
}

void Reader::check_lookups(bool verify_checksums, bool with_next_use,
                           const std::shared_ptr<const void>& owner, std::shared_future<void>* deferred) {
  const uint64_t o = lk_.section_offset;
  if (std::memcmp(base_ + o, kMtrLookupsMagic, 8) != 0)
    throw fail(o, "lookups", "no MTRLOOKS magic at the start of the lookups section");
  for (uint64_t i = 16; i < kLookupsPreambleBytes; ++i)
    if (base_[o + i] != 0) throw fail(o + i, "lookups", "reserved byte of the section preamble is not zero");
  if (!verify_checksums) return check_lookup_structure(with_next_use);
  std::function<void()> checksums = lookups_checksums(with_next_use);
  if (!deferred) {
    checksums();
    return check_lookup_structure(with_next_use);
  }
  *deferred =
      std::async(std::launch::async, [checksums = std::move(checksums), owner] { checksums(); }).share();
  try {
    check_lookup_structure(with_next_use);
  } catch (const Error&) {
    deferred->get();
    throw;
  }
}

void Reader::check_lookup_structure(bool with_next_use) {
  auto col = [&](size_t i) { return base_ + lk_.offset[i]; };
  const uint64_t n_inv = lk_.invocations, n_look = lk_.lookups, n_ref = lk_.refreshes;
  const std::span<const uint32_t> inv_begin{reinterpret_cast<const uint32_t*>(col(kInvBegin)), n_inv + 1};
  const std::span<const uint16_t> inv_layer{reinterpret_cast<const uint16_t*>(col(kInvLayer)), n_inv};
  const std::span<const uint8_t> inv_phase{col(kInvPhase), n_inv};
  const std::span<const uint32_t> key{reinterpret_cast<const uint32_t*>(col(kKey)), n_look};
  const std::span<const uint32_t> next_use{reinterpret_cast<const uint32_t*>(col(kNextUse)), n_look};
  const std::span<const uint32_t> refresh_begin{reinterpret_cast<const uint32_t*>(col(kRefreshBegin)),
                                                n_inv + 1};
  const std::span<const uint32_t> refresh{reinterpret_cast<const uint32_t*>(col(kRefresh)), n_ref};
  auto at = [&](size_t c, uint64_t i) { return lk_.offset[c] + i * kLookupColumns[c].elem; };
  auto bad = [&](size_t c, uint64_t i, const std::string& msg) {
    return fail(at(c, i), std::string("lookups.") + kLookupColumns[c].name, msg);
  };
  if (inv_begin[0] != 0) throw bad(kInvBegin, 0, "must start at 0, got " + std::to_string(inv_begin[0]));
  if (refresh_begin[0] != 0)
    throw bad(kRefreshBegin, 0, "must start at 0, got " + std::to_string(refresh_begin[0]));
  if (inv_begin[n_inv] != n_look)
    throw bad(
        kInvBegin, n_inv,
        "must end at the " + std::to_string(n_look) + " lookups, got " + std::to_string(inv_begin[n_inv]));
  if (refresh_begin[n_inv] != n_ref)
    throw bad(kRefreshBegin, n_inv,
              "must end at the " + std::to_string(n_ref) + " refreshes, got " +
                  std::to_string(refresh_begin[n_inv]));
  const uint32_t experts = info_.experts, layers = info_.layers;
  uint64_t decode = 0;
  for (uint64_t j = 0; j < n_inv; ++j) {
    const uint32_t b = inv_begin[j], e = inv_begin[j + 1];
    if (e <= b || e > n_look)
      throw bad(kInvBegin, j + 1,
                "invocation " + std::to_string(j) + ": offsets must increase (" + std::to_string(b) +
                    ", then " + std::to_string(e) + ")");
    const uint32_t l = inv_layer[j];
    if (l >= layers)
      throw bad(kInvLayer, j, "layer " + std::to_string(l) + " >= layers " + std::to_string(layers));
    if (inv_phase[j] > 1) throw bad(kInvPhase, j, "value " + std::to_string(inv_phase[j]));
    if (inv_phase[j] == 1) decode += e - b;
    const uint32_t base = l * experts;
    for (uint32_t i = b; i < e; ++i)
      if (key[i] - base >= experts)
        throw bad(kKey, i,
                  "key " + std::to_string(key[i]) + " is not an expert of layer " + std::to_string(l) +
                      " (invocation " + std::to_string(j) + ")");
    const uint32_t rb = refresh_begin[j], re = refresh_begin[j + 1];
    if (re < rb || re > n_ref)
      throw bad(kRefreshBegin, j + 1,
                "offsets must not decrease (" + std::to_string(rb) + ", then " + std::to_string(re) + ")");
    for (uint32_t r = rb; r < re; ++r)
      if (refresh[r] < b || refresh[r] >= e)
        throw bad(kRefresh, r,
                  "lookup " + std::to_string(refresh[r]) + " is not in invocation " + std::to_string(j));
    if (with_next_use)
      for (uint32_t i = b; i < e; ++i)
        if (next_use[i] != kNoNextUse && (next_use[i] <= j || next_use[i] >= n_inv))
          throw bad(kNextUse, i,
                    "next use " + std::to_string(next_use[i]) + " is not an invocation after " +
                        std::to_string(j) + " and before " + std::to_string(n_inv));
  }
  view_.inv_begin = inv_begin;
  view_.inv_layer = inv_layer;
  view_.inv_phase = inv_phase;
  view_.key = key;
  view_.next_use = with_next_use ? next_use : std::span<const uint32_t>{};
  view_.refresh_begin = refresh_begin;
  view_.refresh = refresh;
  decode_lookups_ = decode;
}

void Reader::compare_lookups(const Trace& t) {
  const LookupStream s = build_lookup_stream(t, 1, LookupStreamParts{.tokens = false, .next_use = true});
  auto check_count = [&](const char* what, uint64_t stored, uint64_t actual) {
    if (stored != actual)
      throw fail(kMtrPreambleBytes, std::string("header.lookups.") + what,
                 std::to_string(stored) + ", but the records give " + std::to_string(actual));
  };
  check_count("invocations", lk_.invocations, s.invocations());
  check_count("lookups", lk_.lookups, s.lookups());
  check_count("refreshes", lk_.refreshes, s.refreshes());
  check_count("sequences", lk_.sequences, t.sequence_ids().size());
  check_count("prefill_tokens", lk_.prefill_tokens, t.tokens(Phase::kPrefill));
  check_count("decode_tokens", lk_.decode_tokens, t.tokens(Phase::kDecode));
  auto same = [&](size_t c, const auto& rebuilt,
                  std::span<const std::remove_cvref_t<decltype(rebuilt[0])>> stored) {
    for (size_t i = 0; i < rebuilt.size(); ++i)
      if (rebuilt[i] != stored[i])
        throw fail(lk_.offset[c] + i * kLookupColumns[c].elem,
                   std::string("lookups.") + kLookupColumns[c].name,
                   "element " + std::to_string(i) + ": " + std::to_string(stored[i]) +
                       ", but the records give " + std::to_string(rebuilt[i]));
  };
  same(kInvBegin, s.inv_begin, view_.inv_begin);
  same(kInvLayer, s.inv_layer, view_.inv_layer);
  same(kInvPhase, s.inv_phase, view_.inv_phase);
  same(kKey, s.key, view_.key);
  same(kNextUse, s.next_use, view_.next_use);
  same(kRefreshBegin, s.refresh_begin, view_.refresh_begin);
  same(kRefresh, s.refresh, view_.refresh);
}

TraceColumns Reader::columns() const {
  const uint64_t records = records_, slots = slots_;
  const Json& cols = h_["columns"];
  TraceColumns c;
  auto at = [&](size_t i) { return base_ + offset_[i]; };
  c.seq = {reinterpret_cast<const uint32_t*>(at(0)), records};
  c.phase = {at(1), records};
  c.step = {reinterpret_cast<const uint32_t*>(at(2)), records};
  c.layer = {reinterpret_cast<const uint16_t*>(at(3)), records};
  c.experts = {reinterpret_cast<const uint16_t*>(at(4)), slots};
  if (cols.contains("weights")) c.weights = {reinterpret_cast<const float*>(at(5)), slots};
  if (cols.contains("logits")) c.logits = {reinterpret_cast<const float*>(at(6)), records * info_.experts};
  c.next_use = {reinterpret_cast<const uint32_t*>(at(7)), slots};
  return c;
}

uint64_t Reader::check_records(const TraceColumns& c) const {
  uint64_t sequences = 0;
  if (records_valid(c, sequences)) return sequences;
  locate_record_error(c);
  // The two passes are twins of one set of checks: a file the fast pass refuses that no check names is a
  // bug of this reader, never a file to go on with (its sequence count was not kept).
  throw std::logic_error("mtr reader: " + origin_ +
                         ": the records fail the one-pass check but no record check names the failure");
}

bool Reader::records_valid(const TraceColumns& c, uint64_t& sequences) const {
  switch (info_.top_k) {  // the top-k of the bundled model presets (data/models)
    case 1:
      return records_valid_k<1>(c, sequences);
    case 2:
      return records_valid_k<2>(c, sequences);
    case 4:
      return records_valid_k<4>(c, sequences);
    case 6:
      return records_valid_k<6>(c, sequences);
    case 8:
      return records_valid_k<8>(c, sequences);
    case 10:
      return records_valid_k<10>(c, sequences);
    default:
      return records_valid_k<0>(c, sequences);
  }
}

template <uint32_t K>
bool Reader::records_valid_k(const TraceColumns& c, uint64_t& sequences) const {
  const uint32_t k = K != 0 ? K : info_.top_k, layers = info_.layers, experts = info_.experts;
  const uint64_t n = records_;
  const uint16_t* ids = c.experts.data();
  // Stamps of the record that last named an expert id; sized for every u16, so that an id out of range
  // indexes it too (it fails the range check below).
  std::vector<uint32_t> mark(65536, UINT32_MAX);
  uint32_t bad = 0;
  uint64_t missing = 0, seqs = 0, group_start = 0;
  uint32_t max_step = 0;
  uint64_t prev_hi = 0, prev_lo = 0;
  // Expert ids in range: one pass of its own over the column, a maximum the compiler vectorizes, so that the
  // record loop's slots only check duplicates (mark has a stamp for every u16, an id out of range included).
  uint16_t max_id = 0;
  for (uint64_t i = 0, slots = n * k; i < slots; ++i) max_id = std::max(max_id, ids[i]);
  bad |= static_cast<uint32_t>(n * k > 0 && max_id >= experts);
  for (uint64_t r = 0; r < n; ++r) {
    const uint8_t ph = c.phase[r];
    const uint16_t l = c.layer[r];
    const uint32_t step = c.step[r];
    bad |= static_cast<uint32_t>(ph > 1) | static_cast<uint32_t>(l >= layers);
    // The canonical order (traces/trace.h canonical_compare), strictly increasing.
    const uint64_t hi = uint64_t{c.seq[r]} << 8 | ph;
    const uint64_t lo = ph == 0 ? uint64_t{l} << 32 | step : uint64_t{step} << 16 | l;
    if (r > 0) {
      bad |= static_cast<uint32_t>(!(prev_hi < hi || (prev_hi == hi && prev_lo < lo)));
      if (hi != prev_hi) {  // a new (sequence, phase) group: count_missing_cells of the one it ends
        missing += (uint64_t{max_step} + 1) * layers - (r - group_start);
        group_start = r;
        max_step = 0;
        seqs += (hi >> 8) != (prev_hi >> 8);
      }
    } else {
      seqs = 1;
    }
    prev_hi = hi;
    prev_lo = lo;
    max_step = std::max(max_step, step);
    const uint16_t* e = ids + r * k;
    const auto stamp = static_cast<uint32_t>(r);
    for (uint32_t s = 0; s < k; ++s) {
      bad |= static_cast<uint32_t>(mark[e[s]] == stamp);
      mark[e[s]] = stamp;
    }
  }
  if (n > 0) missing += (uint64_t{max_step} + 1) * layers - (n - group_start);
  sequences = seqs;
  return bad == 0 && missing == info_.missing_cells;
}

void Reader::locate_record_error(const TraceColumns& c) const {
  const TraceInfo& info = info_;
  const uint64_t records = records_;
  const uint64_t* offset = offset_;
  // Per record: phase, layer, canonical order (strict, so no duplicate cells), expert ids.
  const uint32_t k = info.top_k;
  std::vector<uint64_t> mark(info.experts, UINT64_MAX);
  for (uint64_t r = 0; r < records; ++r) {
    if (c.phase[r] > 1)
      throw fail(offset[1] + r, "phase",
                 "record " + std::to_string(r) + ": value " + std::to_string(c.phase[r]));
    if (c.layer[r] >= info.layers)
      throw fail(offset[3] + 2 * r, "layer",
                 "record " + std::to_string(r) + ": layer " + std::to_string(c.layer[r]) + " >= layers " +
                     std::to_string(info.layers));
    if (r > 0) {
      const int cmp = canonical_compare(c.seq[r - 1], c.phase[r - 1], c.step[r - 1], c.layer[r - 1], c.seq[r],
                                        c.phase[r], c.step[r], c.layer[r]);
      if (cmp >= 0)
        throw fail(
            offset[0] + 4 * r, "seq/phase/step/layer",
            "record " + std::to_string(r) + (cmp == 0 ? ": duplicate cell" : ": out of canonical order"));
    }
    for (uint32_t s = 0; s < k; ++s) {
      const uint16_t e = c.experts[r * k + s];
      if (e >= info.experts)
        throw fail(offset[4] + 2 * (r * k + s), "experts",
                   "record " + std::to_string(r) + ": expert id " + std::to_string(e) + " >= experts " +
                       std::to_string(info.experts));
      if (mark[e] == r)
        throw fail(
            offset[4] + 2 * (r * k + s), "experts",
            "record " + std::to_string(r) + ": expert id " + std::to_string(e) + " twice in one top-k");
      mark[e] = r;
    }
  }
  const uint64_t missing = count_missing_cells(c, info.layers);
  if (missing != info.missing_cells)
    throw fail(kMtrPreambleBytes, "header.missing_cells",
               std::to_string(info.missing_cells) + ", but the records leave " + std::to_string(missing) +
                   " cells missing");
}

// Index of the first float that is NaN or infinite (exponent bits all ones), or n. The scan over the bits is
// branch-free, so the compiler vectorizes it; only a file that has one pays the second, locating pass.
size_t first_non_finite(const float* f, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, f + i, 4);
    any |= static_cast<uint32_t>((b & 0x7F800000u) == 0x7F800000u);
  }
  if (!any) return n;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(f[i])) return i;
  return n;
}

Trace Reader::parse(const MtrReadOptions& opts, std::shared_ptr<const void> owner) {
  check_preamble(opts.verify_checksum);
  parse_header();
  const TraceInfo& info = info_;
  const uint64_t* offset = offset_;
  const TraceColumns c = columns();
  check_records(c);
  if (const size_t i = first_non_finite(c.weights.data(), c.weights.size()); i < c.weights.size())
    throw fail(offset[5] + 4 * i, "weights", "NaN or infinite weight");
  if (const size_t i = first_non_finite(c.logits.data(), c.logits.size()); i < c.logits.size())
    throw fail(offset[6] + 4 * i, "logits", "NaN or infinite logit");
  // next-use index: recomputed by the same backward scan as TraceBuilder and compared slot by slot.
  {
    const uint32_t k = info.top_k;
    std::vector<uint32_t> last(size_t{info.layers} * info.experts, kNoNextUse);
    for (uint64_t r = records_; r-- > 0;) {
      const uint32_t base = uint32_t{c.layer[r]} * info.experts;
      for (uint64_t pos = r * k + k; pos-- > r * k;) {
        const uint32_t key = base + c.experts[pos];
        if (c.next_use[pos] != last[key])
          throw fail(offset[7] + 4 * pos, "next_use",
                     "slot " + std::to_string(pos) + ": " + std::to_string(c.next_use[pos]) + ", expected " +
                         std::to_string(last[key]));
        last[key] = static_cast<uint32_t>(pos);
      }
    }
  }
  Trace t(info, c, std::move(owner));
  if (has_lookups_) {
    check_lookups(opts.verify_checksum, true);
    compare_lookups(t);
  }
  return t;
}

std::optional<MtrLookups> Reader::parse_lookups(const MtrReadOptions& opts, bool with_next_use,
                                                std::shared_ptr<const void> owner, bool from_records,
                                                bool with_token_counts) {
  if (size_ < 8 || std::memcmp(base_, kMtrMagic, 8) != 0) return std::nullopt;
  check_preamble(false);  // the whole-file checksum covers the records, which this path does not read
  if (version_ < kMtrVersionLookups && !from_records) return std::nullopt;
  parse_header();
  if (!has_lookups_) {
    if (!from_records) return std::nullopt;
    return lookups_from_records(opts, with_next_use, with_token_counts, std::move(owner));
  }
  MtrLookups m;
  check_lookups(opts.verify_checksum, with_next_use, owner,
                opts.defer_checksum ? &m.pending_checksum : nullptr);
  m.info = std::move(info_);  // the reader is done with it
  m.records = records_;
  m.has_weights = h_["columns"].contains("weights");
  m.has_logits = h_["columns"].contains("logits");
  m.sequences = lk_.sequences;
  m.prefill_tokens = lk_.prefill_tokens;
  m.decode_tokens = lk_.decode_tokens;
  m.decode_lookups = decode_lookups_;
  m.view = view_;
  m.storage = std::move(owner);
  return m;
}

MtrLookups Reader::lookups_from_records(const MtrReadOptions& opts, bool with_next_use,
                                        bool with_token_counts, std::shared_ptr<const void> owner) {
  // The whole-file checksum runs on a thread of its own: deferred, once the records are checked and the
  // stream built, so that it runs while the caller replays (on a core the replay leaves idle, where during
  // the load it would take a core from the check or the build); otherwise from the start, beside them.
  // Nothing is returned before it matched unless the caller deferred it, and a mismatch is the error reported
  // even when the records also fail their checks (a corrupt file is named as such). The thread holds the
  // mapping and lets it go when done, so that unmapping the file is its work, not the caller's.
  std::shared_future<void> checksum;
  auto start_checksum = [&] {
    if (!opts.verify_checksum || checksum.valid()) return;
    checksum =
        std::async(std::launch::async, [base = base_, size = size_, stored = checksum_, origin = origin_,
                                        held = owner]() mutable {
          const std::shared_ptr<const void> mapping = std::move(held);  // unmapped on this thread
          const uint64_t actual = hash64(base + kMtrPreambleBytes, size - kMtrPreambleBytes);
          if (actual != stored)
            throw binary_input_error(origin, 24, "checksum",
                                     "XXH64 mismatch: the file is corrupt (stored " + std::to_string(stored) +
                                         ", computed " + std::to_string(actual) + ")");
        }).share();
  };
  auto verify = [&] {
    start_checksum();
    if (checksum.valid()) checksum.get();
  };
  if (!opts.defer_checksum) start_checksum();
  BuiltLookupView built;
  MtrLookups m;
  try {
    const TraceColumns c = columns();
    // The trace the build and the checks read, without the provenance (none of them reads it, and its copy
    // would be a deep one).
    Json provenance = std::move(info_.provenance);
    const Trace t(info_, c, owner);
    info_.provenance = std::move(provenance);
    // The stream is built on a thread of its own while the records are checked here (the build is
    // memory-safe on records that fail the check) and used only once they passed; the future waits for the
    // build however the check ends, before the trace it reads goes. Once its check is done this thread faults
    // in the view's pages ahead of the builder's writes (LookupViewBuilder::prefault): the kernel's work for
    // them is most of the builder's time, the longer of the two. (A third thread doing it from the start
    // competed with both for the two cores and was not faster: bench/results/replay.md.)
    LookupViewBuilder builder(t, with_next_use);
    std::future<BuiltLookupView> build =
        std::async(std::launch::async, [&builder] { return builder.build(); });
    const uint64_t sequences = check_records(c);
    builder.prefault();
    built = build.get();
    m.has_weights = !c.weights.empty();
    m.has_logits = !c.logits.empty();
    m.sequences = sequences;
    if (with_token_counts) {  // passes over the records (and sorts of each prompt's steps): only when asked
      m.prefill_tokens = t.tokens(Phase::kPrefill);
      m.decode_tokens = t.tokens(Phase::kDecode);
    }
  } catch (const Error&) {
    verify();
    throw;
  }
  start_checksum();
  owner.reset();  // the checksum's thread (if any) holds the mapping now
  if (opts.defer_checksum)
    m.pending_checksum = checksum;
  else
    verify();
  m.info = std::move(info_);  // the reader is done with it
  m.records = records_;
  m.decode_lookups = built.decode_lookups;
  m.view = built.view;
  m.storage = std::move(built.storage);
  return m;
}

struct Mapping {
  void* addr = nullptr;
  size_t len = 0;
  ~Mapping() {
    if (addr) ::munmap(addr, len);
  }
};

// Maps the whole of an opened regular file (the caller checked that it is one).
std::shared_ptr<Mapping> map_file(const InputFile& in) {
  struct stat st {};
  if (::fstat(in.fd(), &st) != 0) throw Error(in.path() + ": cannot stat: " + std::strerror(errno));
  auto m = std::make_shared<Mapping>();
  m->len = static_cast<size_t>(st.st_size);
  if (m->len > 0) {
    void* p = ::mmap(nullptr, m->len, PROT_READ, MAP_PRIVATE, in.fd(), 0);
    if (p == MAP_FAILED) throw Error(in.path() + ": cannot map: " + std::strerror(errno));
    m->addr = p;
  }
  return m;
}

}  // namespace

Trace read_mtr(const InputFile& in, const MtrReadOptions& opts) {
  in.require_regular(kMtrNeedsAFile);
  const auto m = map_file(in);
  Reader r(static_cast<const unsigned char*>(m->addr), m->len, in.path());
  return r.parse(opts, m);
}

Trace read_mtr(const std::string& path, const MtrReadOptions& opts) {
  return read_mtr(InputFile(path), opts);
}

namespace {
// The lookups readers' mapping of `path`: only a regular file can hold what the caller would use; anything
// else (a pipe above all) must not even be opened here, since the caller reads it next and a pipe can be read
// once.
std::optional<MtrLookups> parse_regular_file(const std::string& path, const MtrReadOptions& opts,
                                             bool with_next_use, bool from_records, bool with_token_counts) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const InputFile in(path);
  if (!in.regular()) return std::nullopt;
  const auto m = map_file(in);
  Reader r(static_cast<const unsigned char*>(m->addr), m->len, path);
  return r.parse_lookups(opts, with_next_use, m, from_records, with_token_counts);
}
}  // namespace

std::optional<MtrLookups> read_mtr_lookups(const std::string& path, bool with_next_use,
                                           const MtrReadOptions& opts) {
  return parse_regular_file(path, opts, with_next_use, false, true);
}

std::optional<MtrLookups> read_mtr_lookup_stream(const std::string& path, bool with_next_use,
                                                 bool with_token_counts, const MtrReadOptions& opts) {
  return parse_regular_file(path, opts, with_next_use, true, with_token_counts);
}

namespace {
// Copy into 8-byte aligned storage: column offsets are 64-byte aligned relative to the start.
std::shared_ptr<uint64_t[]> aligned_copy(std::string_view bytes) {
  auto buf = std::shared_ptr<uint64_t[]>(new uint64_t[bytes.size() / 8 + 1]);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  return buf;
}
}  // namespace

Trace decode_mtr(std::string_view bytes, const std::string& origin, const MtrReadOptions& opts) {
  const auto buf = aligned_copy(bytes);
  Reader r(reinterpret_cast<const unsigned char*>(buf.get()), bytes.size(), origin);
  return r.parse(opts, std::shared_ptr<const void>(buf, buf.get()));
}

std::optional<MtrLookups> decode_mtr_lookups(std::string_view bytes, const std::string& origin,
                                             bool with_next_use, const MtrReadOptions& opts) {
  const auto buf = aligned_copy(bytes);
  Reader r(reinterpret_cast<const unsigned char*>(buf.get()), bytes.size(), origin);
  return r.parse_lookups(opts, with_next_use, std::shared_ptr<const void>(buf, buf.get()));
}

std::optional<MtrLookups> decode_mtr_lookup_stream(std::string_view bytes, const std::string& origin,
                                                   bool with_next_use, bool with_token_counts,
                                                   const MtrReadOptions& opts) {
  const auto buf = aligned_copy(bytes);
  Reader r(reinterpret_cast<const unsigned char*>(buf.get()), bytes.size(), origin);
  return r.parse_lookups(opts, with_next_use, std::shared_ptr<const void>(buf, buf.get()), true,
                         with_token_counts);
}

}  // namespace moesim::traces
