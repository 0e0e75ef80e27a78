// Seeded, portable random numbers. std:: distributions differ between standard libraries, so every
// draw moesim makes goes through this class: xoshiro256** seeded by SplitMix64, with our own uniform,
// bounded-integer (Lemire) and normal (Marsaglia polar) transforms. Same seed => same stream on every
// platform and every thread count: parallel work derives one stream per work item with split(index),
// never per thread.
#pragma once

#include <cmath>
#include <cstdint>

namespace moesim {

// 128-bit product for Lemire's method; __extension__ keeps -Wpedantic quiet (GCC and clang both have it).
__extension__ typedef unsigned __int128 RngU128;

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }

  // An independent stream for work item `index`, a pure function of (this stream's seed state, index).
  [[nodiscard]] Rng split(uint64_t index) const {
    uint64_t x = s_[0] ^ (index * 0x9E3779B97F4A7C15ull) ^ 0xD1B54A32D192ED03ull;
    return Rng(splitmix64(x) ^ s_[3]);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), unbiased (Lemire's multiply-shift with rejection). n > 0.
  uint64_t below(uint64_t n) {
    RngU128 m = static_cast<RngU128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<RngU128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Standard normal (Marsaglia polar method; the spare value is kept).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2 * uniform() - 1;
      v = 2 * uniform() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double f = std::sqrt(-2 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace moesim
