#include "kernels/codec.h"

#include <gtest/gtest.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_d_forceIgnoreChecksum tells whether trusted mode can skip
#include <zstd.h>

#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "kernels/bf16.h"
#include "base/rng.h"

namespace moesim::kernels {
namespace {

const char* const kSpecs[] = {"raw", "zstd:1",  "zstd:3",  "zstd:19", "zstd:22",
                              "lz4", "lz4hc:1", "lz4hc:9", "lz4hc:12"};

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.next());
  return v;
}

// Exponent stream of LLM-like weights: N(0, 0.02) cast to BF16, split.
std::vector<uint8_t> gaussian_exponents(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint16_t> w(n);
  for (auto& x : w) x = f32_to_bf16(static_cast<float>(0.02 * rng.normal()));
  std::vector<uint8_t> e(n), s(n);
  split_bf16(w.data(), n, e.data(), s.data());
  return e;
}

std::vector<std::pair<std::string, std::vector<uint8_t>>> datasets() {
  return {{"empty", {}},
          {"one byte", {42}},
          {"random 100000", random_bytes(100000, 1)},
          {"constant 70000", std::vector<uint8_t>(70000, 0x7A)},
          {"gaussian exponents 262144", gaussian_exponents(262144, 2)}};
}

TEST(Codec, RoundTripsEveryCodecOnEveryDataset) {
  for (const char* spec : kSpecs) {
    const auto c = make_codec(spec);
    for (const auto& [label, data] : datasets()) {
      SCOPED_TRACE(std::string(spec) + " on " + label);
      const auto packed = compress_to_vector(*c, data.data(), data.size());
      EXPECT_LE(packed.size(), c->max_compressed_size(data.size()));
      std::vector<uint8_t> back(data.size() + 1, 0xCC);  // one guard byte past the end
      c->decompress(packed.data(), packed.size(), back.data(), data.size(), "test shard");
      EXPECT_EQ(back.back(), 0xCC);
      back.pop_back();
      EXPECT_EQ(back, data);
    }
  }
}

TEST(Codec, CompressesGaussianExponentsNearTheOrder0Bound) {
  // Gaussian exponents carry ~2.6 bits of 8; zstd (Huffman literals) gets close, lz4 (no entropy
  // coding) does not.
  const auto e = gaussian_exponents(262144, 9);
  const auto z = compress_to_vector(*make_codec("zstd:19"), e.data(), e.size());
  EXPECT_LT(static_cast<double>(z.size()) / e.size(), 0.36);
  const auto l = compress_to_vector(*make_codec("lz4"), e.data(), e.size());
  EXPECT_LT(l.size(), e.size());
  const auto c = compress_to_vector(*make_codec("zstd:3"), std::vector<uint8_t>(70000, 1).data(), 70000);
  EXPECT_LT(c.size(), 100u);
}

TEST(Codec, ParsesSpecsAndNamesThemCanonically) {
  EXPECT_EQ(make_codec("zstd")->name(), "zstd:3");
  EXPECT_EQ(make_codec("zstd:19")->name(), "zstd:19");
  EXPECT_EQ(make_codec("zstd:19")->level(), 19);
  EXPECT_EQ(make_codec("zstd:19")->id(), CodecId::kZstd);
  EXPECT_EQ(make_codec("lz4hc")->name(), "lz4hc:9");
  EXPECT_EQ(make_codec("lz4hc:12")->id(), CodecId::kLz4hc);
  EXPECT_EQ(make_codec("lz4")->name(), "lz4");
  EXPECT_EQ(make_codec("raw")->id(), CodecId::kRaw);
  EXPECT_EQ(make_codec(CodecId::kZstd, 7)->name(), "zstd:7");
  EXPECT_EQ(make_codec(CodecId::kLz4hc, 0)->name(), "lz4hc:9");
  EXPECT_EQ(make_codec(CodecId::kLz4, 0)->name(), "lz4");
  for (const char* spec : kSpecs)
    EXPECT_EQ(make_codec(make_codec(spec)->name())->name(), make_codec(spec)->name());
}

TEST(Codec, RejectsUnknownCodecsAndBadLevelsListingTheKnownOnes) {
  for (const char* bad : {"gzip", "", "zstd:0", "zstd:23", "zstd:-1", "zstd:x", "zstd:", "lz4hc:13", "lz4:3",
                          "raw:1", "zstd:3:4", "ZSTD"}) {
    try {
      (void)make_codec(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("known codecs: raw, zstd"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(make_codec(CodecId::kZstd, 40), Error);
  EXPECT_THROW(make_codec(static_cast<CodecId>(9), 0), Error);
}

void expect_rejected(const Codec& c, const std::vector<uint8_t>& frame, const std::vector<uint8_t>& original,
                     const std::string& how, int* benign) {
  std::vector<uint8_t> out(original.size() + 1, 0xCC);
  try {
    c.decompress(frame.data(), frame.size(), out.data(), original.size(), "expert 3 shard 1");
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("expert 3 shard 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.name()), std::string::npos) << msg;
    EXPECT_EQ(out.back(), 0xCC) << c.name() << " " << how << ": wrote past the end";
    return;
  }
  EXPECT_EQ(out.back(), 0xCC) << c.name() << " " << how << ": wrote past the end";
  out.pop_back();
  // Accepting a modified frame is only harmless if it still decodes to exactly the original data.
  EXPECT_EQ(out, original) << c.name() << " " << how << ": corrupt frame decoded to wrong data silently";
  ++*benign;
}

TEST(Codec, CorruptFramesThrowNamingTheShardAndNeverOverrun) {
  const auto data = gaussian_exponents(3000, 5);
  for (const char* spec : kSpecs) {
    if (std::string(spec) == "raw") continue;  // no framing: covered by the size test below
    const auto c = make_codec(spec);
    const auto frame = compress_to_vector(*c, data.data(), data.size());
    int benign = 0;
    for (size_t pos = 0; pos < frame.size(); ++pos) {
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
        auto bad = frame;
        bad[pos] ^= flip;
        expect_rejected(*c, bad, data, "flip " + std::to_string(flip) + " at " + std::to_string(pos),
                        &benign);
      }
    }
    for (size_t len = 0; len < frame.size(); ++len) {
      const std::vector<uint8_t> cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(len));
      std::vector<uint8_t> out(data.size());
      EXPECT_THROW(c->decompress(cut.data(), cut.size(), out.data(), out.size(), "shard"), Error)
          << spec << " truncated to " << len;
    }
    auto longer = frame;
    longer.push_back(0);
    std::vector<uint8_t> out(data.size() + 1);
    EXPECT_THROW(c->decompress(longer.data(), longer.size(), out.data(), data.size(), "shard"), Error)
        << spec;
    // Wrong expected size, both ways.
    EXPECT_THROW(c->decompress(frame.data(), frame.size(), out.data(), data.size() - 1, "shard"), Error)
        << spec;
    EXPECT_THROW(c->decompress(frame.data(), frame.size(), out.data(), data.size() + 1, "shard"), Error)
        << spec;
    // Bytes that are not a frame at all.
    const auto junk = random_bytes(500, 77);
    EXPECT_THROW(c->decompress(junk.data(), junk.size(), out.data(), data.size(), "shard"), Error) << spec;
    // zstd's entropy-coded sections have a few bits whose flip decodes to the same data (and thus the same
    // checksum): harmless, since the output is exact, but rare; lz4 frames have none thanks to the
    // checksum over the compressed bytes.
    const int flips = static_cast<int>(3 * frame.size());
    if (c->id() == CodecId::kZstd) {
      EXPECT_LT(benign, flips / 100) << spec;
    } else {
      EXPECT_EQ(benign, 0) << spec;
    }
  }
  const auto raw = make_codec("raw");
  std::vector<uint8_t> out(10);
  EXPECT_THROW(raw->decompress(data.data(), 9, out.data(), 10, "shard"), Error);
  EXPECT_THROW(raw->decompress(data.data(), 11, out.data(), 10, "shard"), Error);
}

TEST(Codec, FramesFromOneCodecAreRejectedByAnother) {
  const auto data = gaussian_exponents(5000, 6);
  const auto z = compress_to_vector(*make_codec("zstd:3"), data.data(), data.size());
  const auto l = compress_to_vector(*make_codec("lz4"), data.data(), data.size());
  std::vector<uint8_t> out(data.size());
  EXPECT_THROW(make_codec("lz4")->decompress(z.data(), z.size(), out.data(), out.size(), "s"), Error);
  EXPECT_THROW(make_codec("zstd:3")->decompress(l.data(), l.size(), out.data(), out.size(), "s"), Error);
}

TEST(Codec, ZstdFramesWithoutChecksumOrContentSizeAreRejected) {
  const auto data = gaussian_exponents(5000, 12);
  std::vector<uint8_t> plain(ZSTD_compressBound(data.size()));
  // ZSTD_compress writes the content size but no checksum.
  plain.resize(ZSTD_compress(plain.data(), plain.size(), data.data(), data.size(), 3));
  std::vector<uint8_t> out(data.size());
  try {
    make_codec("zstd:3")->decompress(plain.data(), plain.size(), out.data(), out.size(), "expert 9");
    ADD_FAILURE() << "accepted a frame without checksum";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no content checksum"), std::string::npos) << e.what();
  }
}

TEST(Codec, TrustedModeRoundTripsEveryCodecOnEveryDataset) {
  for (const char* spec : kSpecs) {
    const auto c = make_codec(spec);
    for (const auto& [label, data] : datasets()) {
      SCOPED_TRACE(std::string(spec) + " on " + label);
      const auto packed = compress_to_vector(*c, data.data(), data.size());
      std::vector<uint8_t> back(data.size() + 1, 0xCC);
      c->decompress(packed.data(), packed.size(), back.data(), data.size(), "s", FrameCheck::kTrusted);
      EXPECT_EQ(back.back(), 0xCC);
      back.pop_back();
      EXPECT_EQ(back, data);
    }
  }
}

// The content checksum is the last 4 bytes of both frame formats (zstd: XXH64 of the content, low 32 bits;
// ours for lz4: the trailer). Damaging only it must fail verification and be ignored in trusted mode, and
// a trusted call must not leave the (per-thread) decoder ignoring checksums for the next verified call.
TEST(Codec, TrustedModeSkipsOnlyTheContentChecksum) {
  const auto data = gaussian_exponents(20000, 13);
  for (const char* spec : {"lz4", "lz4hc:12", "zstd:3", "zstd:19"}) {
    SCOPED_TRACE(spec);
    const auto c = make_codec(spec);
    auto frame = compress_to_vector(*c, data.data(), data.size());
    frame[frame.size() - 2] ^= 0x5A;
    std::vector<uint8_t> out(data.size());
#ifndef ZSTD_d_forceIgnoreChecksum
    if (c->id() == CodecId::kZstd) GTEST_SKIP() << "zstd < 1.4.7 cannot skip its checksum; always verifies";
#endif
    c->decompress(frame.data(), frame.size(), out.data(), out.size(), "s", FrameCheck::kTrusted);
    EXPECT_EQ(out, data);
    try {
      c->decompress(frame.data(), frame.size(), out.data(), out.size(), "expert 4 shard 0");
      ADD_FAILURE() << "verified decode accepted a damaged checksum";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("expert 4 shard 0"), std::string::npos) << e.what();
    }
    // Structure and sizes are still checked in trusted mode.
    std::vector<uint8_t> longer(data.size() + 1);
    EXPECT_THROW(c->decompress(frame.data(), frame.size(), longer.data(), longer.size(), "s",
                               FrameCheck::kTrusted),
                 Error);
    EXPECT_THROW(c->decompress(frame.data(), frame.size() / 2, out.data(), out.size(), "s",
                               FrameCheck::kTrusted),
                 Error);
  }
}

TEST(Codec, ConcurrentUseFromManyThreads) {
  const auto data = gaussian_exponents(65536, 8);
  const auto c = make_codec("zstd:3");
  const auto frame = compress_to_vector(*c, data.data(), data.size());
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> out(data.size());
      for (int i = 0; i < 20; ++i) {
        const auto f = compress_to_vector(*c, data.data(), data.size());
        c->decompress(f.data(), f.size(), out.data(), out.size(), "s");
        ok[t] += out == data && f == frame;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int v : ok) EXPECT_EQ(v, 20);
}

}  // namespace
}  // namespace moesim::kernels
