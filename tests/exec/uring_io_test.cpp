// io_uring reads (exec/uring_io.h) give the same verified chunks as pread; the microbenchmarks
// (exec/microbench.h) produce every point they plan. Skipped, with the reason, where io_uring is unavailable.
#include "exec/uring_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "core/model_spec.h"
#include "exec/expert_naming.h"
#include "exec/microbench.h"
#include "exec/store_reader.h"
#include "exec/store_writer.h"
#include "exec/weight_source.h"
#include "exec/weight_synth.h"
#include "tests/exec/exec_test_util.h"
#include "tests/fixtures.h"

namespace moesim::exec {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

const std::string kFixture = test::test_data("weights/faceres-subset.safetensors");

std::string pack(const TempDir& dir, const char* codec, uint32_t shards) {
  const WeightSource w = WeightSource::open(kFixture);
  PackOptions o;
  o.codec = codec;
  o.shards = shards;
  const std::string path =
      dir.file(std::string("s-") + (std::strcmp(codec, "raw") == 0 ? "raw" : "z") + ".store");
  write_store(path, select_experts(w, true), o);
  return path;
}

TEST(UringIo, ParsesTheBackendAndRejectsOthers) {
  EXPECT_EQ(parse_io_backend("--io", "pread"), IoBackend::kPread);
  EXPECT_EQ(parse_io_backend("--io", "uring"), IoBackend::kUring);
  try {
    (void)parse_io_backend("--io", "aio");
    FAIL() << "aio accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--io: 'aio' is not an I/O backend (pread or uring)"));
  }
  EXPECT_STREQ(io_backend_name(IoBackend::kUring), "uring");
}

TEST(UringIo, ChunksReadThroughIoUringEqualPreadsAndAreVerified) {
  const std::string why = uring_probe();
  if (!why.empty()) GTEST_SKIP() << "io_uring is unavailable here: " << why;
  TempDir dir("uring");
  const std::string path = pack(dir, "zstd:3", 3);
  for (bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "O_DIRECT" : "buffered");
    const StoreReader p(path, StoreReadOptions{direct, IoBackend::kPread});
    const StoreReader u(path, StoreReadOptions{direct, IoBackend::kUring});
    EXPECT_EQ(u.io_backend(), IoBackend::kUring);
    EXPECT_EQ(u.io_fallback(), "");
    EXPECT_EQ(p.io_backend(), IoBackend::kPread);
    for (const StoreEntry& e : p.entries()) {
      std::vector<int> all{-1};
      for (size_t k = 0; k < e.shards.size(); ++k) all.push_back(static_cast<int>(k));
      const std::vector<AlignedBuffer> batch = u.read_chunks(e, all);  // every chunk in flight at once
      ASSERT_EQ(batch.size(), all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        const AlignedBuffer want = p.read_chunk(e, all[i]);
        const AlignedBuffer one = u.read_chunk(e, all[i]);
        ASSERT_EQ(want.size(), batch[i].size()) << e.chunk_label(all[i]);
        EXPECT_EQ(0, std::memcmp(want.data(), batch[i].data(), want.size())) << e.chunk_label(all[i]);
        EXPECT_EQ(0, std::memcmp(want.data(), one.data(), want.size())) << e.chunk_label(all[i]);
      }
      std::vector<uint16_t> a(e.elements), b(e.elements);
      p.recover(e, a.data(), 2);
      u.recover(e, b.data(), 2);
      EXPECT_EQ(a, b) << e.label();
    }
  }
}

TEST(UringIo, ACorruptChunkIsNamedThroughIoUringToo) {
  const std::string why = uring_probe();
  if (!why.empty()) GTEST_SKIP() << "io_uring is unavailable here: " << why;
  TempDir dir("uring_bad");
  const std::string path = pack(dir, "raw", 2);
  uint64_t offset = 0;
  std::string label;
  {
    const StoreReader r(path);
    const StoreEntry& e = r.entries().front();
    offset = e.shards[1].offset + 3;
    label = e.chunk_label(1);
  }
  std::vector<uint8_t> bytes = testing::read_bytes(path);
  bytes[offset] ^= 0x10;
  testing::write_bytes(path, bytes);
  const StoreReader u(path, StoreReadOptions{true, IoBackend::kUring});
  const StoreEntry& e = u.entries().front();
  try {
    (void)u.read_chunks(e, {-1, 0, 1});
    FAIL() << "the corrupt chunk was accepted";
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr(label));
    EXPECT_THAT(err.what(), HasSubstr("checksum mismatch"));
  }
}

TEST(Microbench, NeedsASwiGLUExpertAndSaysSo) {
  TempDir dir("micro_bad");
  const std::string path = pack(dir, "zstd:3", 2);  // the fixture's tensors are no gate/up/down expert
  const StoreReader r(path);
  MicroOptions o;
  o.budget_s = 0.2;
  try {
    (void)run_microbenchmarks(r, o);
    FAIL() << "a store without SwiGLU experts was benchmarked";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("gate/up/down"));
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
}

TEST(Microbench, MeasuresEveryPlannedPointAndJoinsItsThreads) {
  TempDir dir("micro");
  const ModelSpec m = load_model(test::test_data("models/tiny-moe.json"));
  const std::string w = dir.file("w.safetensors");
  SynthOptions so;
  so.seed = 1;
  write_synth_weights(w, synth_layout_for_model(m, 2, 4), so, Json::object());
  PackOptions po;
  po.codec = "zstd:3";
  po.shards = 2;
  const std::string path = dir.file("t.store");
  write_store(path, select_experts(WeightSource::open(w), false), po);
  for (IoBackend io : {IoBackend::kPread, IoBackend::kUring}) {
    SCOPED_TRACE(io_backend_name(io));
    const StoreReader r(path, StoreReadOptions{true, IoBackend::kPread});
    MicroOptions o;
    o.threads = 2;
    o.max_depth = 2;
    o.budget_s = 0.3;
    o.io = io;
    o.codecs = {"lz4"};
    uint64_t last = 0, total = 0;
    o.progress = [&](uint64_t d, uint64_t t) {
      EXPECT_EQ(d, last + 1);
      last = d;
      total = t;
    };
    const MicroResults res = run_microbenchmarks(r, o);
    EXPECT_EQ(last, total);  // every planned point ran
    EXPECT_EQ(res.hidden, 256u);
    EXPECT_EQ(res.inter, 128u);
    EXPECT_EQ(res.io, uring_probe().empty() ? io_backend_name(io) : "pread");
    ASSERT_FALSE(res.reads.empty());
    for (const auto& p : res.reads) {
      EXPECT_GE(p.requests, 4u * p.depth);
      EXPECT_GT(p.latency_s, 0);
      EXPECT_GT(p.bandwidth, 0);
    }
    // zstd:3 (the store's) and lz4, each at 1 and 2 threads, every frame size.
    EXPECT_EQ(res.decompress.size() % 4, 0u);
    EXPECT_EQ(res.decompress.front().codec, "zstd:3");
    for (const auto& p : res.decompress) {
      EXPECT_GE(p.ops, 3u * p.threads);
      EXPECT_LT(p.stored, p.bytes + 64);
    }
    EXPECT_EQ(res.recover.size() % 2, 0u);
    EXPECT_EQ(res.compute.size(), 7u + 4u);
    ASSERT_EQ(res.interference.size(), 3u);
    for (const auto& i : res.interference) {
      EXPECT_GE(i.alone_ops, 3u);
      EXPECT_GE(i.together_ops, 3u);
    }
  }
}

}  // namespace
}  // namespace moesim::exec
