#include "exec/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

#include "base/atomic_file.h"
#include "base/error.h"
#include "kernels/bf16.h"

namespace moesim::exec {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; moesim targets little-endian hosts (x86-64, aarch64)");

// The reference implementation refuses headers above 100 MB; so do we (it also bounds our allocation).
constexpr uint64_t kMaxHeader = 100'000'000;

struct DTypeInfo {
  const char* name;
  uint32_t size;
};
constexpr DTypeInfo kDTypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
                                 {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
                                 {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};

std::string tensor_field(const std::string& name) {
  return "tensor '" + name + "'";
}

}  // namespace

uint32_t safetensors_dtype_size(const std::string& dtype_name) {
  for (const auto& d : kDTypes)
    if (dtype_name == d.name) return d.size;
  return 0;
}

const char* safetensors_dtype_name(DType d) {
  switch (d) {
    case DType::BF16:
      return "BF16";
    case DType::F16:
      return "F16";
    case DType::F32:
      return "F32";
  }
  return "?";
}

namespace {

// The 8-byte header length, checked against the file and the limit.
uint64_t read_header_length(const uint8_t* data, size_t size, const std::string& origin) {
  if (size < 8)
    throw binary_input_error(
        origin, 0, "header length",
        "file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  uint64_t n = 0;
  std::memcpy(&n, data, 8);
  if (n > size - 8)
    throw binary_input_error(
        origin, 0, "header length",
        "header length " + std::to_string(n) + " exceeds the file (" + std::to_string(size) + " bytes)");
  if (n > kMaxHeader)
    throw binary_input_error(origin, 0, "header length",
                             "header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n < 2)
    throw binary_input_error(origin, 8, "header",
                             "header is " + std::to_string(n) + " bytes, not a JSON object");
  return n;
}

// The n-byte JSON header after the length: an object without duplicate names.
Json parse_header(const uint8_t* data, uint64_t n, const std::string& origin) {
  // Duplicate names are rejected: nlohmann would silently keep the last one.
  std::set<std::string> seen;
  std::string duplicate;
  auto on_event = [&](int depth, nlohmann::json::parse_event_t ev, Json& parsed) {
    if (depth == 1 && ev == nlohmann::json::parse_event_t::key) {
      const auto& k = parsed.get_ref<const std::string&>();
      if (!seen.insert(k).second && duplicate.empty()) duplicate = k;
    }
    return true;
  };
  Json header;
  const char* text = reinterpret_cast<const char*>(data + 8);
  try {
    header = Json::parse(text, text + n, on_event);
  } catch (const nlohmann::json::parse_error& e) {
    throw binary_input_error(origin, 8 + (e.byte > 0 ? e.byte - 1 : 0), "header",
                             std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range.406: a number overflowing a double
    throw binary_input_error(origin, 8, "header", std::string("invalid JSON: ") + e.what());
  }
  if (!duplicate.empty())
    throw binary_input_error(origin, 8, tensor_field(duplicate), "appears twice in the header");
  if (!header.is_object()) throw binary_input_error(origin, 8, "header", "is not a JSON object");
  return header;
}

void check_metadata(const Json& v, const std::string& origin) {
  if (!v.is_object()) throw binary_input_error(origin, 8, "__metadata__", "is not an object");
  for (auto m = v.begin(); m != v.end(); ++m)
    if (!m.value().is_string())
      throw binary_input_error(origin, 8, "__metadata__." + m.key(), "is not a string");
}

// A tensor entry has exactly the fields dtype, shape and data_offsets, of the right JSON types.
void check_tensor_fields(const std::string& name, const Json& v, const std::string& origin) {
  const std::string field = tensor_field(name);
  if (name.empty()) throw binary_input_error(origin, 8, field, "empty tensor name");
  if (!v.is_object()) throw binary_input_error(origin, 8, field, "entry is not an object");
  for (auto f = v.begin(); f != v.end(); ++f)
    if (f.key() != "dtype" && f.key() != "shape" && f.key() != "data_offsets")
      throw binary_input_error(origin, 8, field, "unknown field '" + f.key() + "'");
  if (!v.contains("dtype") || !v["dtype"].is_string())
    throw binary_input_error(origin, 8, field, "missing or non-string 'dtype'");
  if (!v.contains("shape") || !v["shape"].is_array())
    throw binary_input_error(origin, 8, field, "missing or non-array 'shape'");
  if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
    throw binary_input_error(origin, 8, field, "'data_offsets' must be an array [begin, end]");
}

// One tensor entry of the header, its data located in the data section (of data_size bytes).
TensorView parse_tensor(const std::string& name, const Json& v, const uint8_t* data, uint64_t data_start,
                        uint64_t data_size, const std::string& origin) {
  const std::string field = tensor_field(name);
  check_tensor_fields(name, v, origin);
  TensorView t;
  t.name = name;
  t.dtype_name = v["dtype"].get<std::string>();
  const uint32_t esize = safetensors_dtype_size(t.dtype_name);
  if (esize == 0) throw binary_input_error(origin, 8, field, "unknown dtype '" + t.dtype_name + "'");
  if (t.dtype_name == "BF16") t.dtype = DType::BF16;
  if (t.dtype_name == "F16") t.dtype = DType::F16;
  if (t.dtype_name == "F32") t.dtype = DType::F32;
  uint64_t elements = 1;
  for (const auto& d : v["shape"]) {
    if (!d.is_number_unsigned())
      throw binary_input_error(origin, 8, field, "shape entries must be non-negative integers");
    const uint64_t dim = d.get<uint64_t>();
    if (dim != 0 && elements > UINT64_MAX / 8 / dim)
      throw binary_input_error(origin, 8, field, "shape overflows 64 bits");
    elements *= dim;
    t.shape.push_back(dim);
  }
  for (const auto& o : v["data_offsets"])
    if (!o.is_number_unsigned())
      throw binary_input_error(origin, 8, field, "data_offsets must be non-negative integers");
  const uint64_t begin = v["data_offsets"][0].get<uint64_t>();
  const uint64_t end = v["data_offsets"][1].get<uint64_t>();
  if (begin > end)
    throw binary_input_error(
        origin, data_start, field,
        "data_offsets begin " + std::to_string(begin) + " > end " + std::to_string(end));
  if (end > data_size)
    throw binary_input_error(origin, data_start + begin, field,
                             "data [" + std::to_string(begin) + ", " + std::to_string(end) +
                                 ") extends past the end of the data section (" +
                                 std::to_string(data_size) + " bytes)");
  t.elements = elements;
  t.size_bytes = end - begin;
  if (elements * esize != t.size_bytes)
    throw binary_input_error(origin, data_start + begin, field,
                             "data is " + std::to_string(t.size_bytes) + " bytes but shape and dtype " +
                                 t.dtype_name + " need " + std::to_string(elements * esize));
  t.file = origin;
  t.file_offset = data_start + begin;
  t.data = data + t.file_offset;
  return t;
}

// Sorts the tensors by file offset and rejects two whose data overlap.
void sort_and_check_overlaps(std::vector<TensorView>& tensors, const std::string& origin) {
  std::stable_sort(tensors.begin(), tensors.end(),
                   [](const TensorView& a, const TensorView& b) { return a.file_offset < b.file_offset; });
  for (size_t i = 1; i < tensors.size(); ++i) {
    const auto& p = tensors[i - 1];
    const auto& t = tensors[i];
    if (t.file_offset < p.file_offset + p.size_bytes)
      throw binary_input_error(origin, t.file_offset, tensor_field(t.name),
                               "data overlaps " + tensor_field(p.name));
  }
}

}  // namespace

SafetensorsImage parse_safetensors(const uint8_t* data, size_t size, const std::string& origin) {
  const uint64_t n = read_header_length(data, size, origin);
  const Json header = parse_header(data, n, origin);
  SafetensorsImage img;
  img.data_start = 8 + n;
  const uint64_t data_size = size - img.data_start;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const Json& v = it.value();
    if (name == "__metadata__") {
      check_metadata(v, origin);
      img.metadata = v;
      continue;
    }
    img.tensors.push_back(parse_tensor(name, v, data, img.data_start, data_size, origin));
  }
  sort_and_check_overlaps(img.tensors, origin);
  return img;
}

void tensor_to_bf16(const TensorView& t, uint16_t* out) {
  if (!t.dtype)
    throw Error(t.file + ": " + tensor_field(t.name) + ": dtype " + t.dtype_name +
                " cannot be cast to BF16 (moesim reads BF16, F16, F32)");
  switch (*t.dtype) {
    case DType::BF16:
      if (t.elements) std::memcpy(out, t.data, t.elements * 2);  // an empty tensor may have no data pointer
      return;
    case DType::F16:
    case DType::F32: {
      // The mapped data is not necessarily aligned for float/uint16_t: cast through an aligned block.
      constexpr size_t kBlock = 16384;
      const size_t esize = *t.dtype == DType::F32 ? 4 : 2;
      std::vector<float> fbuf(kBlock);
      std::vector<uint16_t> hbuf(kBlock);
      for (uint64_t i = 0; i < t.elements; i += kBlock) {
        const size_t m = static_cast<size_t>(std::min<uint64_t>(kBlock, t.elements - i));
        if (esize == 4) {
          std::memcpy(fbuf.data(), t.data + i * 4, m * 4);
          kernels::f32_to_bf16(fbuf.data(), m, out + i);
        } else {
          std::memcpy(hbuf.data(), t.data + i * 2, m * 2);
          kernels::f16_to_bf16(hbuf.data(), m, out + i);
        }
      }
      return;
    }
  }
}

uint64_t SafetensorsEntry::size_bytes() const {
  uint64_t n = dtype_size(dtype);
  for (auto d : shape) n *= d;
  return n;
}

struct SafetensorsWriter::Impl {
  AtomicFile file;
  std::vector<SafetensorsEntry> entries;
  size_t current = 0;
  uint64_t written_in_current = 0;
  explicit Impl(const std::string& path) : file(path) {}
};

SafetensorsWriter::SafetensorsWriter(const std::string& path, std::vector<SafetensorsEntry> entries,
                                     const Json& metadata)
    : impl_(std::make_unique<Impl>(path)) {
  Json h = Json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t off = 0;
  std::set<std::string> names;
  for (const auto& e : entries) {
    if (!names.insert(e.name).second) throw Error(path + ": tensor '" + e.name + "' written twice");
    const uint64_t sz = e.size_bytes();
    h[e.name] = {
        {"dtype", safetensors_dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {off, off + sz}}};
    off += sz;
  }
  std::string text = h.dump();
  // Pad with spaces so the data section starts 8-byte aligned, as the reference writer does.
  while ((text.size() % 8) != 0) text.push_back(' ');
  const uint64_t n = text.size();
  impl_->file.write(&n, 8);
  impl_->file.write(text);
  impl_->entries = std::move(entries);
  while (impl_->current < impl_->entries.size() && impl_->entries[impl_->current].size_bytes() == 0)
    ++impl_->current;
}

SafetensorsWriter::~SafetensorsWriter() = default;

void SafetensorsWriter::write(const void* data, size_t size) {
  auto& im = *impl_;
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    if (im.current >= im.entries.size())
      throw Error(im.file.path() + ": more tensor data written than the header declares");
    const uint64_t need = im.entries[im.current].size_bytes() - im.written_in_current;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(need, size));
    im.file.write(p, take);
    p += take;
    size -= take;
    im.written_in_current += take;
    if (im.written_in_current == im.entries[im.current].size_bytes()) {
      im.written_in_current = 0;
      ++im.current;
      while (im.current < im.entries.size() && im.entries[im.current].size_bytes() == 0) ++im.current;
    }
  }
}

void SafetensorsWriter::commit() {
  if (impl_->current != impl_->entries.size())
    throw Error(impl_->file.path() + ": tensor '" + impl_->entries[impl_->current].name +
                "' was not fully written");
  impl_->file.commit();
}

}  // namespace moesim::exec
