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
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hash64.h"

namespace moesim::traces {

// ---- layout shared by writer and reader -------------------------------------------------------------------
namespace {

uint64_t align_up(uint64_t v) { return (v + kMtrAlignment - 1) / kMtrAlignment * kMtrAlignment; }

struct ColumnDef {
  const char* name;
  const char* type;
  uint32_t elem;  // bytes per element
  bool optional;
};
// Column order in the file; the reader accepts any order of offsets as long as columns do not overlap.
constexpr ColumnDef kColumns[] = {
    {"seq", "u32", 4, false},     {"phase", "u8", 1, false},    {"step", "u32", 4, false},
    {"layer", "u16", 2, false},   {"experts", "u16", 2, false}, {"weights", "f32", 4, true},
    {"logits", "f32", 4, true},   {"next_use", "u32", 4, false},
};
constexpr size_t kNumColumns = std::size(kColumns);

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
};

Encoded plan(const Trace& t) {
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
    e.file_bytes = o;
    Json h = Json::object();
    h["format"] = "moesim trace";
    h["version"] = kMtrVersion;
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
  pad(e.file_bytes);
}

std::string preamble(const Encoded& e) {
  Xxh64 h;
  emit_body(e, [&](const void* p, size_t n) { h.update(p, n); });
  const uint64_t checksum = h.digest();
  const uint32_t version = kMtrVersion, header_bytes = static_cast<uint32_t>(e.header.size());
  std::string p(kMtrPreambleBytes, '\0');
  std::memcpy(p.data(), kMtrMagic, 8);
  std::memcpy(p.data() + 8, &version, 4);
  std::memcpy(p.data() + 12, &header_bytes, 4);
  std::memcpy(p.data() + 16, &e.file_bytes, 8);
  std::memcpy(p.data() + 24, &checksum, 8);
  return p;
}

}  // namespace

void write_mtr(const Trace& trace, const std::string& path) {
  const Encoded e = plan(trace);
  AtomicFile f(path);
  f.write(preamble(e));
  emit_body(e, [&](const void* p, size_t n) { f.write(p, n); });
  f.commit();
}

std::string encode_mtr(const Trace& trace) {
  const Encoded e = plan(trace);
  std::string out = preamble(e);
  out.reserve(e.file_bytes);
  emit_body(e, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

// ---- reader ------------------------------------------------------------------------------------------------
namespace {

class Reader {
 public:
  Reader(const unsigned char* base, uint64_t size, std::string origin)
      : base_(base), size_(size), origin_(std::move(origin)) {}

  Trace parse(const MtrReadOptions& opts, std::shared_ptr<const void> owner);

 private:
  [[nodiscard]] Error fail(uint64_t offset, const std::string& field, const std::string& msg) const {
    return binary_input_error(origin_, offset, field, msg);
  }
  uint64_t header_uint(const Json& h, const char* key, uint64_t max, const std::string& where = "header") const;

  const unsigned char* base_;
  uint64_t size_;
  std::string origin_;
};

uint64_t Reader::header_uint(const Json& h, const char* key, uint64_t max, const std::string& where) const {
  if (!h.contains(key)) throw fail(kMtrPreambleBytes, where + "." + key, "missing");
  const Json& v = h.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
    throw fail(kMtrPreambleBytes, where + "." + key,
               "must be an unsigned integer <= " + std::to_string(max) + ", got " + v.dump());
  return v.get<uint64_t>();
}

Trace Reader::parse(const MtrReadOptions& opts, std::shared_ptr<const void> owner) {
  require_little_endian();
  if (size_ == 0) throw fail(0, "", "empty file");
  if (size_ < kMtrPreambleBytes)
    throw fail(size_, "preamble", "truncated: " + std::to_string(size_) + " bytes, the preamble alone is 32");
  if (std::memcmp(base_, kMtrMagic, 8) != 0) throw fail(0, "magic", "not an .mtr file (no MOESIMTR magic at byte 0)");
  uint32_t version, header_bytes;
  uint64_t file_bytes, checksum;
  std::memcpy(&version, base_ + 8, 4);
  std::memcpy(&header_bytes, base_ + 12, 4);
  std::memcpy(&file_bytes, base_ + 16, 8);
  std::memcpy(&checksum, base_ + 24, 8);
  if (version != kMtrVersion)
    throw fail(8, "version", "format version " + std::to_string(version) + ", this build reads version " +
                                 std::to_string(kMtrVersion));
  if (file_bytes != size_)
    throw fail(16, "file_bytes",
               "the preamble says " + std::to_string(file_bytes) + " bytes but the file has " +
                   std::to_string(size_) + (size_ < file_bytes ? " (truncated)" : " (trailing data)"));
  if (header_bytes > size_ - kMtrPreambleBytes)
    throw fail(12, "header_bytes", "header of " + std::to_string(header_bytes) + " bytes runs past the end");
  if (opts.verify_checksum) {
    const uint64_t actual = hash64(base_ + kMtrPreambleBytes, size_ - kMtrPreambleBytes);
    if (actual != checksum)
      throw fail(24, "checksum", "XXH64 mismatch: the file is corrupt (stored " + std::to_string(checksum) +
                                     ", computed " + std::to_string(actual) + ")");
  }

  // Header JSON.
  Json h;
  if (const void* nul = std::memchr(base_ + kMtrPreambleBytes, 0, header_bytes))
    throw fail(static_cast<uint64_t>(static_cast<const unsigned char*>(nul) - base_), "header",
               "NUL byte inside the JSON header (wrong header_bytes?)");
  try {
    h = Json::parse(base_ + kMtrPreambleBytes, base_ + kMtrPreambleBytes + header_bytes);
  } catch (const nlohmann::json::parse_error& e) {
    throw fail(kMtrPreambleBytes + (e.byte ? e.byte - 1 : 0), "header", std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range.406: number overflow
    throw fail(kMtrPreambleBytes, "header", std::string("invalid JSON: ") + e.what());
  }
  if (!h.is_object()) throw fail(kMtrPreambleBytes, "header", "not a JSON object");
  TraceInfo info;
  info.layers = static_cast<uint32_t>(header_uint(h, "layers", 65536));
  info.experts = static_cast<uint32_t>(header_uint(h, "experts", 65536));
  info.top_k = static_cast<uint32_t>(header_uint(h, "top_k", info.experts));
  if (info.layers == 0 || info.experts == 0 || info.top_k == 0)
    throw fail(kMtrPreambleBytes, "header", "layers, experts and top_k must be at least 1");
  if (uint64_t{info.layers} * info.experts > kMaxLayerExperts)
    throw fail(kMtrPreambleBytes, "header.experts", "layers x experts above " + std::to_string(kMaxLayerExperts));
  const uint64_t records = header_uint(h, "records", size_);
  if (records == 0) throw fail(kMtrPreambleBytes, "header.records", "no records");
  const uint64_t slots = records * info.top_k;  // records <= size, top_k <= 65536: no overflow
  if (slots >= kNoNextUse) throw fail(kMtrPreambleBytes, "header.records", "more than 2^32-2 expert slots");
  info.missing_cells = header_uint(h, "missing_cells", UINT64_MAX);
  if (!h.contains("model") || !h["model"].is_string()) throw fail(kMtrPreambleBytes, "header.model", "missing or not a string");
  info.model = h["model"].get<std::string>();
  if (!h.contains("synthetic") || !h["synthetic"].is_boolean())
    throw fail(kMtrPreambleBytes, "header.synthetic", "missing or not a boolean");
  info.synthetic = h["synthetic"].get<bool>();
  if (!h.contains("provenance") || !h["provenance"].is_object())
    throw fail(kMtrPreambleBytes, "header.provenance", "missing or not an object");
  info.provenance = h["provenance"];
  if (!h.contains("expert_bytes") || !h["expert_bytes"].is_array())
    throw fail(kMtrPreambleBytes, "header.expert_bytes", "missing or not an array");
  for (const Json& v : h["expert_bytes"]) {
    if (!v.is_number_unsigned()) throw fail(kMtrPreambleBytes, "header.expert_bytes", "not an unsigned integer: " + v.dump());
    info.expert_bytes.push_back(v.get<uint64_t>());
  }
  if (!info.expert_bytes.empty() && info.expert_bytes.size() != info.layers)
    throw fail(kMtrPreambleBytes, "header.expert_bytes",
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
  const uint64_t counts[kNumColumns] = {records, records, records, records, slots, slots,
                                        records * info.experts, slots};
  uint64_t offset[kNumColumns] = {}, bytes[kNumColumns] = {};
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  const uint64_t data_start = kMtrPreambleBytes + header_bytes;
  for (size_t i = 0; i < kNumColumns; ++i) {
    const ColumnDef& d = kColumns[i];
    const std::string field = std::string("header.columns.") + d.name;
    if (!cols.contains(d.name)) {
      if (d.optional) continue;
      throw fail(kMtrPreambleBytes, field, "required column missing");
    }
    const Json& c = cols[d.name];
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string() || c["type"].get<std::string>() != d.type)
      throw fail(kMtrPreambleBytes, field, std::string("must be an object with \"type\": \"") + d.type + "\"");
    offset[i] = header_uint(c, "offset", UINT64_MAX, field);
    bytes[i] = header_uint(c, "bytes", UINT64_MAX, field);
    if (counts[i] > size_ || bytes[i] != counts[i] * d.elem)
      throw fail(kMtrPreambleBytes, field,
                 std::to_string(bytes[i]) + " bytes, expected " + std::to_string(counts[i]) + " x " +
                     std::to_string(d.elem));
    if (offset[i] % kMtrAlignment != 0)
      throw fail(offset[i], field, "offset not aligned to " + std::to_string(kMtrAlignment) + " bytes");
    if (offset[i] < data_start) throw fail(offset[i], field, "column overlaps the header");
    if (offset[i] > size_ || bytes[i] > size_ - offset[i]) throw fail(offset[i], field, "column runs past the end of the file");
    ranges.emplace_back(offset[i], offset[i] + bytes[i]);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) throw fail(ranges[i].first, "header.columns", "columns overlap");

  TraceColumns c;
  auto at = [&](size_t i) { return base_ + offset[i]; };
  c.seq = {reinterpret_cast<const uint32_t*>(at(0)), records};
  c.phase = {at(1), records};
  c.step = {reinterpret_cast<const uint32_t*>(at(2)), records};
  c.layer = {reinterpret_cast<const uint16_t*>(at(3)), records};
  c.experts = {reinterpret_cast<const uint16_t*>(at(4)), slots};
  if (cols.contains("weights")) c.weights = {reinterpret_cast<const float*>(at(5)), slots};
  if (cols.contains("logits")) c.logits = {reinterpret_cast<const float*>(at(6)), records * info.experts};
  c.next_use = {reinterpret_cast<const uint32_t*>(at(7)), slots};

  // Values. Per record: phase, layer, canonical order (strict, so no duplicate cells), expert ids.
  const uint32_t k = info.top_k;
  std::vector<uint64_t> mark(info.experts, UINT64_MAX);
  for (uint64_t r = 0; r < records; ++r) {
    if (c.phase[r] > 1) throw fail(offset[1] + r, "phase", "record " + std::to_string(r) + ": value " + std::to_string(c.phase[r]));
    if (c.layer[r] >= info.layers)
      throw fail(offset[3] + 2 * r, "layer",
                 "record " + std::to_string(r) + ": layer " + std::to_string(c.layer[r]) + " >= layers " +
                     std::to_string(info.layers));
    if (r > 0) {
      const int cmp = canonical_compare(c.seq[r - 1], c.phase[r - 1], c.step[r - 1], c.layer[r - 1], c.seq[r],
                                        c.phase[r], c.step[r], c.layer[r]);
      if (cmp >= 0)
        throw fail(offset[0] + 4 * r, "seq/phase/step/layer",
                   "record " + std::to_string(r) + (cmp == 0 ? ": duplicate cell" : ": out of canonical order"));
    }
    for (uint32_t s = 0; s < k; ++s) {
      const uint16_t e = c.experts[r * k + s];
      if (e >= info.experts)
        throw fail(offset[4] + 2 * (r * k + s), "experts",
                   "record " + std::to_string(r) + ": expert id " + std::to_string(e) + " >= experts " +
                       std::to_string(info.experts));
      if (mark[e] == r)
        throw fail(offset[4] + 2 * (r * k + s), "experts",
                   "record " + std::to_string(r) + ": expert id " + std::to_string(e) + " twice in one top-k");
      mark[e] = r;
    }
  }
  for (uint64_t i = 0; i < c.weights.size(); ++i)
    if (!std::isfinite(c.weights[i])) throw fail(offset[5] + 4 * i, "weights", "NaN or infinite weight");
  for (uint64_t i = 0; i < c.logits.size(); ++i)
    if (!std::isfinite(c.logits[i])) throw fail(offset[6] + 4 * i, "logits", "NaN or infinite logit");
  // next-use index: recomputed by the same backward scan as TraceBuilder and compared slot by slot.
  {
    std::vector<uint32_t> last(size_t{info.layers} * info.experts, kNoNextUse);
    for (uint64_t pos = slots; pos-- > 0;) {
      const uint32_t key = uint32_t{c.layer[pos / k]} * info.experts + c.experts[pos];
      if (c.next_use[pos] != last[key])
        throw fail(offset[7] + 4 * pos, "next_use",
                   "slot " + std::to_string(pos) + ": " + std::to_string(c.next_use[pos]) + ", expected " +
                       std::to_string(last[key]));
      last[key] = static_cast<uint32_t>(pos);
    }
  }
  const uint64_t missing = count_missing_cells(c, info.layers);
  if (missing != info.missing_cells)
    throw fail(kMtrPreambleBytes, "header.missing_cells",
               std::to_string(info.missing_cells) + ", but the records leave " + std::to_string(missing) +
                   " cells missing");
  return Trace(std::move(info), c, std::move(owner));
}

struct Mapping {
  void* addr = nullptr;
  size_t len = 0;
  ~Mapping() {
    if (addr) ::munmap(addr, len);
  }
};

}  // namespace

Trace read_mtr(const std::string& path, const MtrReadOptions& opts) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(err));
  }
  auto m = std::make_shared<Mapping>();
  m->len = static_cast<size_t>(st.st_size);
  if (m->len > 0) {
    void* p = ::mmap(nullptr, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot map: " + std::strerror(err));
    }
    m->addr = p;
  }
  ::close(fd);
  Reader r(static_cast<const unsigned char*>(m->addr), m->len, path);
  return r.parse(opts, m);
}

Trace decode_mtr(std::string_view bytes, const std::string& origin, const MtrReadOptions& opts) {
  // Copy into 8-byte aligned storage: column offsets are 64-byte aligned relative to the start.
  auto buf = std::shared_ptr<uint64_t[]>(new uint64_t[bytes.size() / 8 + 1]);
  if (!bytes.empty()) std::memcpy(buf.get(), bytes.data(), bytes.size());
  Reader r(reinterpret_cast<const unsigned char*>(buf.get()), bytes.size(), origin);
  return r.parse(opts, std::shared_ptr<const void>(buf, buf.get()));
}

}  // namespace moesim::traces
