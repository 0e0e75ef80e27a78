#include "core/storage_type.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"

namespace moesim {

namespace {

struct KindInfo {
  StorageKind kind;
  const char* name;
  uint32_t block_elements, block_bytes;  // per block; {1, element bytes} for the element formats
  bool gguf;
};

// Block sizes of the GGUF types are sizeof(block_*) in ggml-common.h, e.g. block_q4_K = d, dmin (2 x f16) +
// scales[12] + qs[128] = 144 bytes for 256 elements; MXFP4 is the OCP MX v1.0 block of 32 E2M1 + one E8M0.
constexpr KindInfo kKinds[] = {
    {StorageKind::BF16, "bf16", 1, 2, false},         {StorageKind::F16, "f16", 1, 2, false},
    {StorageKind::F32, "f32", 1, 4, false},           {StorageKind::FP8_E4M3, "fp8_e4m3", 1, 1, false},
    {StorageKind::FP8_E5M2, "fp8_e5m2", 1, 1, false}, {StorageKind::INT8, "int8", 1, 1, false},
    {StorageKind::INT4, "int4", 2, 1, false},         {StorageKind::MXFP4, "mxfp4", 32, 17, false},
    {StorageKind::Q4_0, "q4_0", 32, 18, true},        {StorageKind::Q4_1, "q4_1", 32, 20, true},
    {StorageKind::Q5_0, "q5_0", 32, 22, true},        {StorageKind::Q5_1, "q5_1", 32, 24, true},
    {StorageKind::Q8_0, "q8_0", 32, 34, true},        {StorageKind::IQ4_NL, "iq4_nl", 32, 18, true},
    {StorageKind::Q2_K, "q2_k", 256, 84, true},       {StorageKind::Q3_K, "q3_k", 256, 110, true},
    {StorageKind::Q4_K, "q4_k", 256, 144, true},      {StorageKind::Q5_K, "q5_k", 256, 176, true},
    {StorageKind::Q6_K, "q6_k", 256, 210, true},      {StorageKind::IQ4_XS, "iq4_xs", 256, 136, true},
    {StorageKind::IQ3_S, "iq3_s", 256, 110, true},    {StorageKind::IQ3_XXS, "iq3_xxs", 256, 98, true},
    {StorageKind::IQ2_S, "iq2_s", 256, 82, true},     {StorageKind::IQ2_XS, "iq2_xs", 256, 74, true},
    {StorageKind::IQ2_XXS, "iq2_xxs", 256, 66, true}, {StorageKind::IQ1_M, "iq1_m", 256, 56, true},
    {StorageKind::IQ1_S, "iq1_s", 256, 50, true},
};

const KindInfo& info(StorageKind k) {
  for (const auto& i : kKinds)
    if (i.kind == k) return i;
  throw Error("unknown storage kind");
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

uint32_t StorageType::block_elements() const {
  return info(kind).block_elements;
}
uint32_t StorageType::block_bytes() const {
  return info(kind).block_bytes;
}
bool StorageType::is_gguf() const {
  return info(kind).gguf;
}
bool StorageType::is_block_format() const {
  return kind == StorageKind::MXFP4 || is_gguf();
}

uint64_t StorageType::bytes(uint64_t elements, uint64_t row) const {
  if (row == 0 || elements % row != 0) throw Error("a tensor's elements must be whole rows");
  const uint64_t rows = elements / row;
  switch (kind) {
    case StorageKind::BF16:
    case StorageKind::F16:
      return elements * 2;
    case StorageKind::F32:
      return elements * 4;
    case StorageKind::FP8_E4M3:
    case StorageKind::FP8_E5M2:
      // One f32 scale per tensor, or per 128 x 128 block of (rows, row) with block scales.
      return elements + 4 * (group ? ceil_div(rows, group) * ceil_div(row, group) : 1);
    case StorageKind::INT8:
      return elements + 2 * rows * ceil_div(row, group);
    case StorageKind::INT4:
      return rows * ceil_div(row, 2) + 2 * rows * ceil_div(row, group);
    default:
      break;
  }
  const KindInfo& i = info(kind);
  if (row % i.block_elements != 0)
    throw Error(std::string(i.name) + " stores rows in blocks of " + std::to_string(i.block_elements) +
                " elements; a row of " + std::to_string(row) + " is not a whole number of blocks");
  return rows * (row / i.block_elements) * i.block_bytes;
}

uint64_t StorageType::bytes(const std::vector<uint64_t>& shape) const {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  if (shape.empty()) return bytes(1, 1);
  // The fp8 block scales tile the last two dimensions; rows are everything before the last one.
  return bytes(n, shape.back());
}

double StorageType::bits_per_element() const {
  const uint64_t rows = 256, row = 4096;
  return 8.0 * static_cast<double>(bytes(rows * row, row)) / static_cast<double>(rows * row);
}

std::string StorageType::name() const {
  std::string n = info(kind).name;
  if ((kind == StorageKind::INT8 || kind == StorageKind::INT4)) n += "_g" + std::to_string(group);
  if ((kind == StorageKind::FP8_E4M3 || kind == StorageKind::FP8_E5M2) && group)
    n += "_b" + std::to_string(group);
  return n;
}

std::string storage_type_names() {
  std::string s;
  for (const auto& i : kKinds) {
    if (!s.empty()) s += ", ";
    s += i.name;
    if (i.kind == StorageKind::INT8 || i.kind == StorageKind::INT4) s += "_gG";
    if (i.kind == StorageKind::FP8_E4M3 || i.kind == StorageKind::FP8_E5M2)
      s += std::string(" (") + i.name + "_b128)";
  }
  return s;
}

StorageType parse_storage_type(const std::string& text) {
  const std::string s = lower(text);
  auto fail = [&]() -> StorageType {
    throw Error("unknown storage type '" + text + "' (use one of: " + storage_type_names() + ")");
  };
  if (s == "bfloat16") return {StorageKind::BF16, 0};
  if (s == "fp16" || s == "float16") return {StorageKind::F16, 0};
  if (s == "fp32" || s == "float32") return {StorageKind::F32, 0};
  for (const auto& i : kKinds) {
    const std::string n = i.name;
    if (i.kind == StorageKind::INT8 || i.kind == StorageKind::INT4) {
      if (!s.starts_with(n + "_g")) continue;
      const std::string g = s.substr(n.size() + 2);
      if (g.empty() || g.size() > 4 || !std::all_of(g.begin(), g.end(), ::isdigit)) return fail();
      const uint32_t group = static_cast<uint32_t>(std::stoul(g));
      if (group < 1 || group > 4096) return fail();
      return {i.kind, group};
    }
    if (i.kind == StorageKind::FP8_E4M3 || i.kind == StorageKind::FP8_E5M2) {
      if (s == n) return {i.kind, 0};
      if (s == n + "_b128") return {i.kind, 128};
      continue;
    }
    if (s == n) return {i.kind, 0};
  }
  return fail();
}

StorageType gguf_fallback(StorageType t) {
  switch (t.kind) {
    case StorageKind::Q2_K:
    case StorageKind::Q3_K:
    case StorageKind::IQ4_XS:
    case StorageKind::IQ3_S:
    case StorageKind::IQ3_XXS:
    case StorageKind::IQ2_S:
    case StorageKind::IQ2_XS:
    case StorageKind::IQ2_XXS:
    case StorageKind::IQ1_M:
    case StorageKind::IQ1_S:
      return {StorageKind::IQ4_NL, 0};
    case StorageKind::Q4_K:
      return {StorageKind::Q5_0, 0};
    case StorageKind::Q5_K:
      return {StorageKind::Q5_1, 0};
    case StorageKind::Q6_K:
      return {StorageKind::Q8_0, 0};
    default:
      return t;
  }
}

}  // namespace moesim
