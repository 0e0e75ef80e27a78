// Kernels throughput per core (ZipMoE §3.1, §4): BF16 split/merge (every ISA variant against the scalar
// reference), decompression + merge of E-chunk shards per codec, and the compression ratio of the split
// format against the order-0 bound (8 + H) / 16. All numbers are per core: one thread, no pool.
//
// Data: LLM-like weights, N(0, 0.02) cast to BF16 (moesim::Rng, seed 2024), a 16 MiB tensor (8 Mi
// values) whose 8 MiB exponent stream is cut into K shards, each one independent frame; the SM stream is
// stored raw. Bytes processed = BF16 bytes recovered (2 per value).
#include <benchmark/benchmark.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_useBlockSplitter for one variant
#include <zstd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/hash64.h"
#include "base/rng.h"
#include "kernels/bf16.h"
#include "kernels/codec.h"
#include "kernels/exponent_stats.h"
#include "kernels/recover.h"

namespace moesim::kernels {
namespace {

constexpr size_t kTensorValues = size_t{8} << 20;  // 16 MiB of BF16

struct Tensor {
  std::vector<uint16_t> bf16;
  std::vector<uint8_t> exp, sm;
  double entropy = 0;
};

const Tensor& gaussian_tensor() {
  static const Tensor t = [] {
    Tensor r;
    Rng rng(2024);
    r.bf16.resize(kTensorValues);
    for (auto& x : r.bf16) x = f32_to_bf16(static_cast<float>(0.02 * rng.normal()));
    r.exp.resize(kTensorValues);
    r.sm.resize(kTensorValues);
    split_bf16(r.bf16.data(), kTensorValues, r.exp.data(), r.sm.data());
    ExponentHistogram h;
    h.add_exponents(r.exp.data(), r.exp.size());
    r.entropy = h.entropy_bits();
    return r;
  }();
  return t;
}

// ---- split / merge --------------------------------------------------------------------------------------

void merge_bench(benchmark::State& state, Bf16Kernels k) {
  const auto n = static_cast<size_t>(state.range(0)) / 2;
  const Tensor& t = gaussian_tensor();
  std::vector<uint16_t> out(n);
  for (auto _ : state) {
    k.merge(t.exp.data(), t.sm.data(), n, out.data());
    benchmark::ClobberMemory();
  }
  if (std::memcmp(out.data(), t.bf16.data(), 2 * n) != 0) state.SkipWithError("merge result differs");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * n));
}

void split_bench(benchmark::State& state, Bf16Kernels k) {
  const auto n = static_cast<size_t>(state.range(0)) / 2;
  const Tensor& t = gaussian_tensor();
  std::vector<uint8_t> e(n), s(n);
  for (auto _ : state) {
    k.split(t.bf16.data(), n, e.data(), s.data());
    benchmark::ClobberMemory();
  }
  if (std::memcmp(e.data(), t.exp.data(), n) != 0) state.SkipWithError("split result differs");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * n));
}

// ---- decompression + merge of E-chunk shards ------------------------------------------------------------

struct Packed {
  std::vector<std::vector<uint8_t>> shards;
  size_t shard_len = 0;
  size_t compressed = 0;
};

const Packed& packed(const std::string& spec, int k) {
  static std::map<std::pair<std::string, int>, Packed> cache;
  auto it = cache.find({spec, k});
  if (it != cache.end()) return it->second;
  const Tensor& t = gaussian_tensor();
  const auto codec = make_codec(spec);
  Packed p;
  p.shard_len = (kTensorValues + static_cast<size_t>(k) - 1) / static_cast<size_t>(k);
  for (size_t off = 0; off < kTensorValues; off += p.shard_len) {
    const size_t len = std::min(p.shard_len, kTensorValues - off);
    p.shards.push_back(compress_to_vector(*codec, t.exp.data() + off, len));
    p.compressed += p.shards.back().size();
  }
  return cache.emplace(std::make_pair(spec, k), std::move(p)).first->second;
}

// How a worker checks a shard's integrity before it is trusted (the same bytes either way).
enum class Integrity {
  kCodec,  // the codec's own content checksum (zstd's XXH64 over the decoded bytes, the lz4 trailer)
  kStore,  // the expert store's path: XXH64 of the stored (compressed) bytes, then a trusted decode
};

// Per shard: check, decompress the E-chunk frame into the worker's scratch buffer and merge it with the
// raw SM slice into the output tensor (kernels::recover_shard, exactly what exec's store reader runs).
// This is one worker's whole CPU-side recovery work; the SM and compressed bytes are already in memory.
void decompress_merge_bench(benchmark::State& state, std::string spec, Integrity integrity) {
  const int k = static_cast<int>(state.range(0));
  const Tensor& t = gaussian_tensor();
  const Packed& p = packed(spec, k);
  const auto codec = make_codec(spec);
  std::vector<uint64_t> sums;
  for (const auto& frame : p.shards) sums.push_back(hash64(frame.data(), frame.size()));
  std::vector<uint16_t> out(kTensorValues);
  for (auto _ : state) {
    size_t off = 0;
    for (size_t i = 0; i < p.shards.size(); ++i) {
      const auto& frame = p.shards[i];
      const size_t len = std::min(p.shard_len, kTensorValues - off);
      FrameCheck check = FrameCheck::kVerify;
      if (integrity == Integrity::kStore) {
        if (hash64(frame.data(), frame.size()) != sums[i]) state.SkipWithError("chunk checksum mismatch");
        check = FrameCheck::kTrusted;
      }
      recover_shard(*codec, frame.data(), frame.size(), t.sm.data() + off, len, out.data() + off,
                    "benchmark shard", check, MergeStores::kStream);
      off += len;
    }
    benchmark::ClobberMemory();
  }
  if (out != t.bf16) state.SkipWithError("recovered tensor differs");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * kTensorValues));
  // Split-format ratio: (compressed E-chunks + raw SM-chunk) / BF16 bytes; bound (8 + H) / 16.
  const double bf16_bytes = 2.0 * kTensorValues;
  state.counters["ratio"] = static_cast<double>(p.compressed + kTensorValues) / bf16_bytes;
  state.counters["bound"] = (8.0 + t.entropy) / 16.0;
  state.counters["exp_ratio"] = static_cast<double>(p.compressed) / static_cast<double>(kTensorValues);
  state.counters["shard_KiB"] = static_cast<double>(p.shard_len) / 1024.0;
}

// Decompression alone (no merge, no integrity check of ours) into a shard-sized buffer: the codec
// library's own decoding speed on this data, the ceiling that decompress + merge is compared with.
void decompress_bench(benchmark::State& state, std::string spec, FrameCheck check) {
  const int k = static_cast<int>(state.range(0));
  const Packed& p = packed(spec, k);
  const auto codec = make_codec(spec);
  std::vector<uint8_t> scratch(p.shard_len);
  for (auto _ : state) {
    size_t off = 0;
    for (const auto& frame : p.shards) {
      const size_t len = std::min(p.shard_len, kTensorValues - off);
      codec->decompress(frame.data(), frame.size(), scratch.data(), len, "benchmark shard", check);
      off += len;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(2 * kTensorValues));
}

// libzstd's decoding speed on the exponent stream for zstd parameter variants (one 2 MiB frame per shard,
// K = 4, no content checksum): is there a level-19 frame that decodes faster at the same ratio? Uses the
// zstd API directly, since the codec interface exposes only the level.
struct ZstdVariant {
  const char* name;
  int level, min_match, target_length, strategy;  // 0 = zstd's default for the level
  bool no_block_splitter;
};
constexpr ZstdVariant kZstdVariants[] = {
    {"L19", 19, 0, 0, 0, false},          {"L19_minmatch4", 19, 4, 0, 0, false},
    {"L19_minmatch7", 19, 7, 0, 0, false}, {"L19_targetlength999", 19, 0, 999, 0, false},
    {"L19_btopt", 19, 0, 0, ZSTD_btopt, false}, {"L19_nosplit", 19, 0, 0, 0, true},
    {"L16", 16, 0, 0, 0, false},          {"L22", 22, 0, 0, 0, false},
};

void zstd_variant_decode_bench(benchmark::State& state, ZstdVariant v) {
  const Tensor& t = gaussian_tensor();
  constexpr size_t kShards = 4, kLen = kTensorValues / kShards;
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> c(ZSTD_createCCtx(), ZSTD_freeCCtx);
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> d(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::vector<std::vector<uint8_t>> frames;
  size_t compressed = 0;
  for (size_t k = 0; k < kShards; ++k) {
    std::vector<uint8_t> f(ZSTD_compressBound(kLen));
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, v.level);
    if (v.min_match) ZSTD_CCtx_setParameter(c.get(), ZSTD_c_minMatch, v.min_match);
    if (v.target_length) ZSTD_CCtx_setParameter(c.get(), ZSTD_c_targetLength, v.target_length);
    if (v.strategy) ZSTD_CCtx_setParameter(c.get(), ZSTD_c_strategy, v.strategy);
    if (v.no_block_splitter) ZSTD_CCtx_setParameter(c.get(), ZSTD_c_useBlockSplitter, ZSTD_ps_disable);
    const size_t r = ZSTD_compress2(c.get(), f.data(), f.size(), t.exp.data() + k * kLen, kLen);
    ZSTD_CCtx_reset(c.get(), ZSTD_reset_session_and_parameters);
    if (ZSTD_isError(r)) return state.SkipWithError(ZSTD_getErrorName(r));
    f.resize(r);
    compressed += r;
    frames.push_back(std::move(f));
  }
  std::vector<uint8_t> scratch(kLen);
  for (auto _ : state) {
    for (const auto& f : frames) {
      if (ZSTD_decompressDCtx(d.get(), scratch.data(), kLen, f.data(), f.size()) != kLen) {
        return state.SkipWithError("decode failed");
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kTensorValues));
  state.counters["exp_ratio"] = static_cast<double>(compressed) / static_cast<double>(kTensorValues);
}

void register_all() {
  for (const auto& k : bf16_kernel_variants()) {
    for (const char* what : {"merge", "split"}) {
      auto* b = benchmark::RegisterBenchmark((std::string(what) + "/" + k.isa).c_str(),
                                             std::string(what) == "merge" ? merge_bench : split_bench, k);
      // Output sizes: in L2, in L3-ish, and well past the caches.
      b->Arg(256 << 10)->Arg(4 << 20)->Arg(16 << 20);
    }
  }
  for (const char* spec : {"zstd:19", "zstd:3", "lz4", "lz4hc:12"}) {
    // K shards of a 16 MiB tensor: 2 MiB, 1 MiB, 512 KiB, 256 KiB of exponents per shard.
    // "decompress_merge" checks the codec's content checksum; "recover_store" is the store reader's path
    // (XXH64 over the stored bytes, then a trusted decode): both verify every shard.
    benchmark::RegisterBenchmark((std::string("decompress_merge/") + spec).c_str(), decompress_merge_bench,
                                 std::string(spec), Integrity::kCodec)
        ->Arg(4)
        ->Arg(8)
        ->Arg(16)
        ->Arg(32)
        ->ArgName("K")
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("recover_store/") + spec).c_str(), decompress_merge_bench,
                                 std::string(spec), Integrity::kStore)
        ->Arg(4)
        ->Arg(32)
        ->ArgName("K")
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("decompress_only/") + spec).c_str(), decompress_bench,
                                 std::string(spec), FrameCheck::kVerify)
        ->Arg(4)
        ->Arg(32)
        ->ArgName("K")
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("decode_only_unchecked/") + spec).c_str(), decompress_bench,
                                 std::string(spec), FrameCheck::kTrusted)
        ->Arg(4)
        ->ArgName("K")
        ->Unit(benchmark::kMillisecond);
  }
  // Bytes here are exponent bytes decoded (not BF16): the codec's own rate, as zstd -b reports it.
  for (const ZstdVariant& v : kZstdVariants) {
    benchmark::RegisterBenchmark((std::string("zstd_variant_decode/") + v.name).c_str(),
                                 zstd_variant_decode_bench, v)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace moesim::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("merge_bf16_isa", moesim::kernels::merge_bf16_isa());
  moesim::kernels::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
