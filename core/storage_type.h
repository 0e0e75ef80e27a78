// StorageType: how a weight tensor is stored, and the exact bytes that follow from its shape. Bytes follow
// from the type; work (FLOPs) follows from element counts and never from bytes (a 4-bit weight is one
// multiply-add, as a 16-bit one is). The formats and their definitions (docs/model-format.md, "Storage
// types"):
//   bf16, f16 (2 bytes an element), f32 (4);
//   fp8_e4m3, fp8_e5m2: 1 byte an element and one f32 scale per tensor; with "_b128" (DeepSeek-V3's
//     weight_block_size [128, 128]) one f32 scale per 128 x 128 block of the last two dimensions instead;
//   int8_gG, int4_gG: 8 or 4 bits an element and one f16 scale per group of G consecutive elements of a row
//     (symmetric; G in 1..4096, e.g. int4_g128);
//   mxfp4: OCP Microscaling FP4, blocks of 32 elements: 16 bytes of E2M1 pairs + 1 byte E8M0 scale = 17
//   bytes; the GGUF types, blocks along a row (ggml's block structs): Q4_0 18 B / 32, Q4_1 20 / 32, Q5_0 22 /
//   32,
//     Q5_1 24 / 32, Q8_0 34 / 32, IQ4_NL 18 / 32, Q2_K 84 / 256, Q3_K 110 / 256, Q4_K 144 / 256,
//     Q5_K 176 / 256, Q6_K 210 / 256, IQ4_XS 136 / 256, IQ3_S 110 / 256, IQ3_XXS 98 / 256, IQ2_S 82 / 256,
//     IQ2_XS 74 / 256, IQ2_XXS 66 / 256, IQ1_M 56 / 256, IQ1_S 50 / 256.
// A row is the tensor's last dimension. A block type needs rows that are a multiple of its block (GGUF cannot
// store a partial block): bytes() throws naming the row and block; gguf_fallback() gives the type llama.cpp
// substitutes for such a tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moesim {

enum class StorageKind : uint8_t {
  BF16,
  F16,
  F32,
  FP8_E4M3,
  FP8_E5M2,
  INT8,
  INT4,
  MXFP4,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q8_0,
  IQ4_NL,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K,
  IQ4_XS,
  IQ3_S,
  IQ3_XXS,
  IQ2_S,
  IQ2_XS,
  IQ2_XXS,
  IQ1_M,
  IQ1_S,
};

struct StorageType {
  StorageKind kind = StorageKind::BF16;
  uint32_t group = 0;  // int8/int4: elements per scale; fp8: 128 with block scales, 0 with one per tensor

  // Elements per block and bytes per block of the block formats (mxfp4 and GGUF); {1, element bytes}
  // otherwise.
  uint32_t block_elements() const;
  uint32_t block_bytes() const;
  bool is_block_format() const;  // mxfp4 and the GGUF types: rows must hold whole blocks
  bool is_gguf() const;
  // Exact bytes of a tensor of this shape. Throws Error when a row is not a whole number of blocks.
  uint64_t bytes(const std::vector<uint64_t>& shape) const;
  // Bytes of `elements` stored as rows of `row` elements (row must divide elements).
  uint64_t bytes(uint64_t elements, uint64_t row) const;
  // Bits per element, averaged, for listings (bytes of one 256 x 4096 tensor x 8 / its elements).
  double bits_per_element() const;
  bool lossless_16bit() const { return kind == StorageKind::BF16 || kind == StorageKind::F16; }
  std::string name() const;  // as parse_storage_type reads it: "bf16", "q4_k", "int4_g128", "fp8_e4m3_b128"
  bool operator==(const StorageType&) const = default;
};

// Case-insensitive; also bfloat16/float16/float32 and fp16/fp32. Throws Error listing the types.
StorageType parse_storage_type(const std::string& s);
// llama.cpp's substitute when a row is not a multiple of a k-quant's 256-element block (llama-quant.cpp):
// Q2_K/Q3_K/IQ* -> IQ4_NL, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0; the type itself otherwise.
StorageType gguf_fallback(StorageType t);
// Every type name, for help and error texts.
std::string storage_type_names();

}  // namespace moesim
