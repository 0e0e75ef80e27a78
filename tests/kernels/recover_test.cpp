#include "kernels/recover.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/rng.h"
#include "kernels/bf16.h"

namespace moesim::kernels {
namespace {

std::vector<uint16_t> gaussian_bf16(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint16_t> w(n);
  for (auto& x : w) x = f32_to_bf16(static_cast<float>(0.02 * rng.normal()));
  return w;
}

// Splits, compresses the exponents as one frame and recovers; the result must be the input, bit for bit.
void expect_round_trip(const Codec& c, const std::vector<uint16_t>& w, FrameCheck check) {
  const size_t n = w.size();
  std::vector<uint8_t> e(n), s(n);
  split_bf16(w.data(), n, e.data(), s.data());
  const auto frame = compress_to_vector(c, e.data(), n);
  std::vector<uint16_t> out(n + 1, 0xBEEF);  // a guard value past the end
  recover_shard(c, frame.data(), frame.size(), s.data(), n, out.data(), "shard", check);
  EXPECT_EQ(out.back(), 0xBEEF);
  out.pop_back();
  EXPECT_EQ(out, w);
}

TEST(RecoverShard, EqualsTheInputForEveryCodecAndSize) {
  // Sizes from empty to larger than the first scratch buffer, in an order that grows and shrinks the
  // per-thread scratch, and a size past 2 MiB of output where the merge switches to streaming stores.
  for (const char* spec : {"raw", "zstd:3", "zstd:19", "lz4", "lz4hc:12"}) {
    const auto c = make_codec(spec);
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{100000}, size_t{17}, size_t{1} << 20,
                     size_t{4097}}) {
      for (FrameCheck check : {FrameCheck::kVerify, FrameCheck::kTrusted}) {
        SCOPED_TRACE(std::string(spec) + " n=" + std::to_string(n) +
                     (check == FrameCheck::kTrusted ? " trusted" : " verified"));
        expect_round_trip(*c, gaussian_bf16(n, n + 1), check);
      }
    }
  }
}

TEST(RecoverShard, AllBf16BitPatternsSurvive) {
  std::vector<uint16_t> w(65536);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(i * 40503u);  // a permutation
  for (const char* spec : {"zstd:19", "lz4hc:12"}) {
    expect_round_trip(*make_codec(spec), w, FrameCheck::kVerify);
  }
}

TEST(RecoverShard, CorruptFrameThrowsNamingTheShard) {
  const auto w = gaussian_bf16(5000, 3);
  std::vector<uint8_t> e(w.size()), s(w.size());
  split_bf16(w.data(), w.size(), e.data(), s.data());
  const auto c = make_codec("zstd:19");
  auto frame = compress_to_vector(*c, e.data(), e.size());
  frame[frame.size() / 2] ^= 0x10;
  std::vector<uint16_t> out(w.size());
  try {
    recover_shard(*c, frame.data(), frame.size(), s.data(), w.size(), out.data(), "layer 2 expert 7 shard 1");
    ADD_FAILURE() << "a corrupt frame was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("layer 2 expert 7 shard 1"), std::string::npos) << err.what();
  }
}

TEST(RecoverShard, ThreadsEachUseTheirOwnScratch) {
  const auto c = make_codec("zstd:3");
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const auto w =
            gaussian_bf16(30000 + 1000 * static_cast<size_t>(t), static_cast<uint64_t>(t * 100 + i));
        std::vector<uint8_t> e(w.size()), s(w.size());
        split_bf16(w.data(), w.size(), e.data(), s.data());
        const auto frame = compress_to_vector(*c, e.data(), e.size());
        std::vector<uint16_t> out(w.size());
        recover_shard(*c, frame.data(), frame.size(), s.data(), w.size(), out.data(), "s");
        ok[static_cast<size_t>(t)] += out == w;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int v : ok) EXPECT_EQ(v, 10);
}

}  // namespace
}  // namespace moesim::kernels
