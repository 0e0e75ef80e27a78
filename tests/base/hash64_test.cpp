#include "base/hash64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moesim {
namespace {

// Reference values of XXH64 (xxHash's own test vectors and `xxhsum -H64` output).
TEST(Hash64, MatchesReferenceXxh64) {
  EXPECT_EQ(hash64("", 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(hash64("a", 1), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(hash64("abc", 3), 0x44BC2CF5AD770999ull);
}

TEST(Hash64, EveryLengthAndSeedChangesTheHash) {
  std::vector<uint8_t> data(300);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t n = 0; n < data.size(); ++n) {
    const uint64_t h = hash64(data.data(), n);
    EXPECT_NE(h, hash64(data.data(), n, 1)) << n;
    if (n > 0) {
      auto copy = data;
      copy[n / 2] ^= 0x10;  // a single flipped bit anywhere changes the hash
      EXPECT_NE(h, hash64(copy.data(), n)) << n;
      EXPECT_NE(h, hash64(data.data(), n - 1)) << n;
    }
  }
}

TEST(Hash64, UnalignedInputGivesTheSameHash) {
  std::vector<uint8_t> a(100), b(101);
  for (size_t i = 0; i < a.size(); ++i) a[i] = b[i + 1] = static_cast<uint8_t>(i);
  EXPECT_EQ(hash64(a.data(), a.size()), hash64(b.data() + 1, a.size()));
}

TEST(Hash64, StreamingEqualsOneShot) {
  EXPECT_EQ(hash64("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(hash64("abc", 3), 0x44BC2CF5AD770999ULL);
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7 + 3);
  const uint64_t whole = hash64(data.data(), data.size(), 42);
  for (size_t cut : {0, 1, 7, 31, 32, 33, 100, 999, 1000}) {
    Xxh64 h(42);
    h.update(data.data(), cut);
    h.update(data.data() + cut, data.size() - cut);
    EXPECT_EQ(h.digest(), whole) << cut;
  }
}

}  // namespace
}  // namespace moesim
