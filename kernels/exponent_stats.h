// Exponent statistics of BF16 data (the data behind ZipMoE Fig. 2 and Fig. 3): histogram of the 8-bit
// exponent field, its order-0 Shannon entropy H in bits, the number of distinct values, and the bound
// on the compressed size ratio of the split format, (8 + H) / 16 (the SM byte is stored raw).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace moesim::kernels {

struct ExponentHistogram {
  std::array<uint64_t, 256> count{};
  uint64_t total = 0;

  void add_bf16(const uint16_t* data, size_t n);
  void add_exponents(const uint8_t* exps, size_t n);
  void merge(const ExponentHistogram& o);
  double entropy_bits() const;  // order-0 Shannon entropy of the exponent byte, in bits
  uint32_t distinct() const;
  double bound_ratio() const { return (8.0 + entropy_bits()) / 16.0; }
};

}  // namespace moesim::kernels
