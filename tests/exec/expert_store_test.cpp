#include "exec/expert_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "base/hash64.h"
#include "exec/expert_naming.h"
#include "exec/store_reader.h"
#include "exec/store_writer.h"
#include "exec/weight_source.h"
#include "tests/exec/exec_test_util.h"
#include "tests/fixtures.h"

namespace moesim::exec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

const std::string kFixture = test::test_data("weights/faceres-subset.safetensors");

void expect_round_trip(const std::string& store, const WeightSource& w, unsigned threads, bool direct) {
  const StoreReader r(store, StoreReadOptions{direct});
  ASSERT_EQ(r.entries().size(), w.tensors().size());
  for (const auto& e : r.entries()) {
    const TensorView* t = w.find(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    std::vector<uint16_t> want(t->elements), got(t->elements, 0xDEAD);
    tensor_to_bf16(*t, want.data());
    r.recover(e, got.data(), threads);
    ASSERT_EQ(want, got) << e.label();
    EXPECT_EQ(e.shape, t->shape);
    EXPECT_EQ(e.source_dtype, *t->dtype);
  }
}

TEST(ExpertStore, RoundTripIsBitExactOnRealWeightsForEveryCodecAndK) {
  TempDir dir("store_rt");
  const WeightSource w = WeightSource::open(kFixture);
  const ExpertSelection sel = select_experts(w, true);
  for (const char* codec : {"zstd:19", "zstd:3", "lz4hc:12", "lz4", "raw"}) {
    for (uint32_t k : {1u, 3u, 4u}) {
      SCOPED_TRACE(std::string(codec) + " K=" + std::to_string(k));
      PackOptions o;
      o.codec = codec;
      o.shards = k;
      o.threads = 2;
      const std::string path = dir.file("s.store");
      const PackResult res = write_store(path, sel, o);
      EXPECT_EQ(res.tensors, 8u);
      EXPECT_EQ(res.bf16_bytes, 391876u * 2);
      EXPECT_EQ(res.sm_bytes, 391876u);
      EXPECT_EQ(res.file_size, std::filesystem::file_size(path));
      expect_round_trip(path, w, k, false);
      const StoreReader r(path);
      for (const auto& e : r.entries()) {
        EXPECT_EQ(e.shards.size(), k);
        EXPECT_EQ(e.sm.offset % kStoreAlign, 0u);
        for (const auto& c : e.shards) EXPECT_EQ(c.offset % kStoreAlign, 0u);
      }
      EXPECT_EQ(r.meta()["codec"], kernels::make_codec(codec)->name());
      for (const auto& e : r.entries()) {
        EXPECT_LE(e.e_bytes(), e.elements) << e.label();  // never larger than raw exponents
        if (e.elements > 100000) {
          EXPECT_EQ(e.codec, kernels::make_codec(codec)->id()) << e.label();
        }
      }
      if (std::string(codec) == "raw") {
        EXPECT_EQ(res.e_bytes, 391876u);
      }
      if (std::string(codec) == "zstd:19") {
        EXPECT_LT(res.e_bytes, 391876u * 6 / 10);  // real weights compress
      }
    }
  }
}

TEST(ExpertStore, DirectIoReadsGiveTheSameTensors) {
  TempDir dir("store_dio");
  const WeightSource w = WeightSource::open(kFixture);
  PackOptions o;
  o.codec = "lz4";
  o.shards = 3;
  write_store(dir.file("s.store"), select_experts(w, true), o);
  expect_round_trip(dir.file("s.store"), w, 1, true);  // O_DIRECT, or the buffered fallback where refused
}

TEST(ExpertStore, OutputIsIdenticalForAnyThreadCount) {
  TempDir dir("store_det");
  const WeightSource w = WeightSource::open(kFixture);
  const ExpertSelection sel = select_experts(w, true);
  PackOptions o;
  o.codec = "zstd:3";
  o.shards = 4;
  o.threads = 1;
  write_store(dir.file("a.store"), sel, o);
  o.threads = 4;
  write_store(dir.file("b.store"), sel, o);
  EXPECT_EQ(read_bytes(dir.file("a.store")), read_bytes(dir.file("b.store")));
}

TEST(ExpertStore, EmptyShardsAndTinyTensors) {
  TempDir dir("store_tiny");
  const std::string src = dir.file("t.safetensors");
  {
    SafetensorsWriter sw(src,
                         {{"model.layers.4.mlp.experts.2.gate_proj.weight", DType::BF16, {2}},
                          {"model.layers.4.mlp.experts.2.up_proj.weight", DType::BF16, {0, 3}},
                          {"model.layers.9.mlp.experts.0.down_proj.weight", DType::F16, {1}}},
                         Json::object());
    const uint16_t v[3] = {0x3F80, 0x7FC1, 0x3C00};  // 1.0, a NaN payload (BF16), 1.0 (F16)
    sw.write(v, 6);
    sw.commit();
  }
  const WeightSource w = WeightSource::open(src);
  const ExpertSelection sel = select_experts(w, false);
  EXPECT_EQ(sel.layers, 2u);
  PackOptions o;
  o.codec = "zstd:19";
  o.shards = 5;  // more shards than elements: some shards are empty
  write_store(dir.file("s.store"), sel, o);
  const StoreReader r(dir.file("s.store"));
  ASSERT_EQ(r.entries().size(), 3u);
  EXPECT_EQ(r.entries()[2].layer, 1u);  // checkpoint layer 9 is the second MoE layer
  EXPECT_NE(r.find(0, 2, "up_proj"), nullptr);
  EXPECT_EQ(r.find(0, 2, "nope"), nullptr);
  expect_round_trip(dir.file("s.store"), w, 3, false);
}

// --- corruption -----------------------------------------------------------------------------------------

class CorruptStore : public ::testing::Test {
 protected:
  void SetUp() override {
    w_ = std::make_unique<WeightSource>(WeightSource::open(kFixture));
    PackOptions o;
    o.codec = "zstd:19";
    o.shards = 3;
    write_store(path_, select_experts(*w_, true), o);
    bytes_ = read_bytes(path_);
    const StoreReader r(path_);
    header_ = r.header();
    index_.meta = r.meta();
    index_.entries = r.entries();
  }
  // Recovers every tensor; returns the error message ("" when none).
  std::string recover_all() {
    try {
      const StoreReader r(path_);
      for (const auto& e : r.entries()) {
        std::vector<uint16_t> out(e.elements);
        r.recover(e, out.data(), 2);
      }
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  // Rewrites the index (same size) with valid checksums, so that its *contents* are what is tested.
  void rewrite_index() {
    const auto idx = encode_index(index_);
    ASSERT_EQ(idx.size(), header_.index_size);
    header_.index_checksum = hash64(idx.data(), idx.size());
    std::copy(idx.begin(), idx.end(), bytes_.begin() + static_cast<long>(header_.index_offset));
    const auto h = encode_header(header_);
    std::copy(h.begin(), h.end(), bytes_.begin());
    write_bytes(path_, bytes_);
  }
  TempDir dir_{"store_corrupt"};
  std::string path_ = dir_.file("c.store");
  std::unique_ptr<WeightSource> w_;
  std::vector<uint8_t> bytes_;
  StoreHeader header_;
  StoreIndex index_;
};

TEST_F(CorruptStore, IntactStoreRecovers) {
  EXPECT_EQ(recover_all(), "");
}

TEST_F(CorruptStore, FlippedByteInAnEChunkNamesTheChunk) {
  const auto& e = index_.entries[3];
  bytes_[e.shards[1].offset + e.shards[1].size / 2] ^= 0x40;
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(),
              AllOf(HasSubstr("c.store"), HasSubstr("at byte " + std::to_string(e.shards[1].offset)),
                    HasSubstr("layer 0 expert 3 tensor " + e.role + " E-chunk shard 1"),
                    HasSubstr("checksum mismatch")));
}

TEST_F(CorruptStore, ABufferedChunkReadIsTheSameBytesAndCheckedAlike) {
  // A CPU worker's fused read (through the page cache, even where the reader uses O_DIRECT) returns what the
  // I/O thread's read does, and a corrupt chunk is refused the same way, naming it.
  const auto& e = index_.entries[3];
  {
    const StoreReader r(path_, StoreReadOptions{true, IoBackend::kPread});
    const AlignedBuffer a = r.read_chunk(r.entries()[3], 1), b = r.read_chunk_buffered(r.entries()[3], 1);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_TRUE(std::equal(a.data(), a.data() + a.size(), b.data()));
  }
  bytes_[e.shards[1].offset + e.shards[1].size / 2] ^= 0x40;
  write_bytes(path_, bytes_);
  const StoreReader r(path_);
  try {
    (void)r.read_chunk_buffered(r.entries()[3], 1);
    ADD_FAILURE() << "a corrupt chunk was read";
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), AllOf(HasSubstr("E-chunk shard 1"), HasSubstr("checksum mismatch")));
  }
}

TEST_F(CorruptStore, FlippedByteInAnSmChunkNamesTheChunk) {
  const auto& e = index_.entries[0];
  bytes_[e.sm.offset + 5] ^= 1;
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("layer 0 expert 0 tensor " + e.role + " SM-chunk"),
                                   HasSubstr("checksum mismatch")));
}

TEST_F(CorruptStore, CorruptFrameWithMatchingChecksumIsACodecErrorNamingTheChunk) {
  auto& e = index_.entries[0];
  auto& c = e.shards[2];
  for (uint64_t i = c.offset + 4; i < c.offset + c.size; i += 7) bytes_[i] ^= 0x5A;
  c.checksum = hash64(bytes_.data() + c.offset, c.size);
  rewrite_index();
  const std::string msg = recover_all();
  EXPECT_THAT(msg, HasSubstr("layer 0 expert 0 tensor " + e.role + " E-chunk shard 2"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("checksum")));
}

TEST_F(CorruptStore, TruncatedFileNamesTheFirstLostChunk) {
  const auto& last = index_.entries.back();
  bytes_.resize(last.shards[1].offset + 10);
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("tensor " + last.role + " E-chunk shard 1"),
                                   HasSubstr("extends past the end of the file")));
  bytes_.resize(bytes_.size() - 11);  // cut exactly at the chunk boundary
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), HasSubstr("E-chunk shard 1"));
  bytes_.resize(100);
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), HasSubstr("truncated"));
  bytes_.resize(10);
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), HasSubstr("too short"));
}

TEST_F(CorruptStore, BadOffsetsInTheIndexNameTheChunk) {
  index_.entries[2].shards[0].offset += 1;
  rewrite_index();
  EXPECT_THAT(recover_all(),
              AllOf(HasSubstr("expert 2 tensor " + index_.entries[2].role + " E-chunk shard 0"),
                    HasSubstr("not 4 KiB-aligned")));
  index_.entries[2].shards[0].offset = uint64_t{1} << 50;
  rewrite_index();
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("E-chunk shard 0"), HasSubstr("past the end")));
  index_.entries[2].shards[0].offset = index_.entries[1].sm.offset;  // overlaps another chunk
  rewrite_index();
  EXPECT_THAT(recover_all(), HasSubstr("overlaps"));
  index_.entries[2].shards[0].offset = kStoreAlign;  // inside the index
  rewrite_index();
  EXPECT_THAT(recover_all(), HasSubstr("inside the header or index"));
}

TEST_F(CorruptStore, InconsistentSizesAndCodecsInTheIndex) {
  auto saved = index_.entries[1];
  index_.entries[1].shards[1].raw_size += 1;
  rewrite_index();
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("E-chunk shard 1"), HasSubstr("the shape needs")));
  index_.entries[1] = saved;
  index_.entries[1].shape[0] += 1;
  rewrite_index();
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("SM-chunk"), HasSubstr("differs from the element count")));
  index_.entries[1] = saved;
  index_.entries[1].codec = static_cast<kernels::CodecId>(9);
  rewrite_index();
  EXPECT_THAT(recover_all(), HasSubstr("unknown codec id 9"));
  index_.entries[1] = saved;
  index_.entries[1].role = index_.entries[0].role;
  index_.entries[1].expert = index_.entries[0].expert;
  // Same key twice (the role strings may differ in length, so rebuild the header size too).
  const auto idx = encode_index(index_);
  header_.index_size = idx.size();
  if (idx.size() <= bytes_.size() - header_.index_offset) {
    rewrite_index();
    EXPECT_THAT(recover_all(), HasSubstr("appears twice"));
  }
}

TEST_F(CorruptStore, WrongMagicVersionAndHeaderCorruption) {
  auto orig = bytes_;
  bytes_[0] = 'X';
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("at byte 0"), HasSubstr("magic")));
  bytes_ = orig;
  header_.version = 2;
  const auto h = encode_header(header_);
  std::copy(h.begin(), h.end(), bytes_.begin());
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), AllOf(HasSubstr("version 2"), HasSubstr("reads version 1")));
  bytes_ = orig;
  bytes_[24] ^= 1;  // index size, without fixing the header checksum
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), HasSubstr("header checksum"));
  bytes_ = orig;
  bytes_[header_.index_offset + 20] ^= 1;
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), HasSubstr("index checksum"));
  bytes_ = orig;
  bytes_.push_back(0);  // appended garbage
  write_bytes(path_, bytes_);
  EXPECT_THAT(recover_all(), HasSubstr("appended"));
}

}  // namespace
}  // namespace moesim::exec
