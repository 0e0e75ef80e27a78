// Exponent statistics (ZipMoE §2.2, Fig. 2/3): histogram of the BF16 exponent byte and its order-0
// entropy. The bound (8 + H) / 16 is what an ideal order-0 coder reaches on the split format: the SM byte
// (sign + mantissa, near-uniform) is stored raw, the exponent byte costs H bits.
#include "kernels/exponent_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace moesim::kernels {

namespace {

// Four sub-histograms break the store-to-load dependency when neighbouring values share an exponent
// (the common case for weights), then they are summed.
template <typename Get>
void count4(std::array<uint64_t, 256>& out, size_t n, Get get) {
  std::array<std::array<uint32_t, 256>, 4> c{};
  size_t i = 0;
  while (i < n) {
    // uint32_t sub-counts cannot overflow within one block of 4 * 2^30 values.
    const size_t block_end = i + std::min<size_t>(n - i, size_t{1} << 32);
    for (; i + 4 <= block_end; i += 4) {
      ++c[0][get(i)];
      ++c[1][get(i + 1)];
      ++c[2][get(i + 2)];
      ++c[3][get(i + 3)];
    }
    for (; i < block_end; ++i) ++c[0][get(i)];
    for (int v = 0; v < 256; ++v) {
      out[v] += uint64_t{c[0][v]} + c[1][v] + c[2][v] + c[3][v];
      c[0][v] = c[1][v] = c[2][v] = c[3][v] = 0;
    }
  }
}

}  // namespace

void ExponentHistogram::add_bf16(const uint16_t* data, size_t n) {
  count4(count, n, [data](size_t i) {
    uint16_t x;
    std::memcpy(&x, data + i, sizeof x);
    return (x >> 7) & 0xFF;
  });
  total += n;
}

void ExponentHistogram::add_exponents(const uint8_t* exps, size_t n) {
  count4(count, n, [exps](size_t i) { return exps[i]; });
  total += n;
}

void ExponentHistogram::merge(const ExponentHistogram& o) {
  for (int v = 0; v < 256; ++v) count[v] += o.count[v];
  total += o.total;
}

double ExponentHistogram::entropy_bits() const {
  if (total == 0) return 0.0;
  const double t = static_cast<double>(total);
  double h = 0.0;
  for (uint64_t c : count) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / t;
    h -= p * std::log2(p);
  }
  return h;
}

uint32_t ExponentHistogram::distinct() const {
  uint32_t d = 0;
  for (uint64_t c : count) d += c != 0 ? 1 : 0;
  return d;
}

}  // namespace moesim::kernels
