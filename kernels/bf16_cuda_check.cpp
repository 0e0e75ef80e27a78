#include "kernels/bf16_cuda_check.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/bf16_cuda.h"

namespace moesim::kernels {

namespace {

// splitmix64: a self-contained generator, so this file needs nothing outside the standard library.
uint64_t next(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Runs one case; returns a description of the first wrong value, or "".
std::string compare(const std::vector<uint8_t>& e, const std::vector<uint8_t>& s, size_t n, size_t eo,
                    size_t so, size_t oo, std::vector<uint16_t>& ref, std::vector<uint16_t>& got) {
  merge_bf16_scalar(e.data(), s.data(), n, ref.data());
  std::fill(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n), uint16_t{0xDEAD});
  merge_bf16_cuda_roundtrip(e.data(), s.data(), n, got.data(), eo, so, oo);
  const auto bad = std::mismatch(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(n), got.begin());
  if (bad.first == ref.begin() + static_cast<std::ptrdiff_t>(n)) return "";
  const size_t i = static_cast<size_t>(bad.first - ref.begin());
  return "n=" + std::to_string(n) + " offsets exp/sm/out " + std::to_string(eo) + "/" + std::to_string(so) +
         "/" + std::to_string(oo) + ": value " + std::to_string(i) + " is " + std::to_string(*bad.second) +
         ", expected " + std::to_string(*bad.first);
}

}  // namespace

CudaCheckResult check_merge_bf16_cuda() {
  CudaCheckResult r;
  const size_t kMax = (size_t{1} << 20) + 1;
  std::vector<uint8_t> e(kMax), s(kMax);
  std::vector<uint16_t> ref(kMax), got(kMax);
  auto run = [&](size_t n, size_t eo, size_t so, size_t oo) {
    if (!r.error.empty()) return;
    ++r.cases;
    r.error = compare(e, s, n, eo, so, oo, ref, got);
  };
  // Every bit pattern (NaN payloads, infinities, signed zeros, subnormals).
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  split_bf16_scalar(all.data(), all.size(), e.data(), s.data());
  run(all.size(), 0, 0, 0);
  run(all.size(), 3, 3, 6);
  run(all.size(), 1, 2, 5);
  // Random streams, many lengths and alignments.
  uint64_t seed = 99;
  for (size_t i = 0; i < kMax; ++i) {
    const uint64_t v = next(seed);
    e[i] = static_cast<uint8_t>(v);
    s[i] = static_cast<uint8_t>(v >> 8);
  }
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (size_t n : {511u, 4096u, 4097u, 65535u, 65536u, 100003u, 1048575u, 1048576u, 1048577u}) {
    lengths.push_back(n);
  }
  for (size_t n : lengths) {
    for (size_t k = 0; k < 16; ++k) {
      run(n, k, k, (2 * k) % 16);                              // consistent: the vectorized body
      run(n, k, (k * 5 + n) % 16, (k * 11 + 3 * n) % 16);      // unrelated: the element-wise kernel
      if (n > 4096 && k > 2) break;                            // large lengths: a few alignments suffice
    }
  }
  return r;
}

}  // namespace moesim::kernels
