// The .mtr format: XXH64 test vectors, round trips (memory and mmap'd file), layout (64-byte aligned
// columns), and corruption of every kind detected with an error naming the byte offset and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/hash64.h"
#include "base/json_io.h"
#include "tests/fixtures.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

Trace fixture() {
  return import_bigmoe(read_file(test::test_data("traces/tiny.route.csv")), "tiny");
}

std::string mtr_error(const std::string& bytes, MtrReadOptions o = {}) {
  try {
    (void)decode_mtr(bytes, "c.mtr", o);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "corruption not detected";
  return "";
}

void fix_checksum(std::string& b) {
  const uint64_t h = hash64(b.data() + kMtrPreambleBytes, b.size() - kMtrPreambleBytes);
  std::memcpy(b.data() + 24, &h, 8);
}

Json header_of(const std::string& b) {
  uint32_t n;
  std::memcpy(&n, b.data() + 12, 4);
  return Json::parse(b.substr(kMtrPreambleBytes, n));
}

uint64_t column_offset(const std::string& b, const char* name) {
  return header_of(b)["columns"][name]["offset"].get<uint64_t>();
}

// Replaces the first occurrence of `from` in the header by `to` (same length) and fixes the checksum.
std::string patch_header(std::string b, const std::string& from, const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  const size_t p = b.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  EXPECT_LT(p, 1024u);
  if (p != std::string::npos) b.replace(p, from.size(), to);
  fix_checksum(b);
  return b;
}

TEST(Mtr, RoundTripsInMemoryAndThroughAMappedFile) {
  const Trace t = fixture();
  const std::string bytes = encode_mtr(t);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("moesim_mtr_test_" + std::to_string(getpid()) + ".mtr"))
          .string();
  write_mtr(t, path);
  EXPECT_EQ(read_file(path), bytes);
  for (const Trace& u : {decode_mtr(bytes, "mem"), read_mtr(path)}) {
    EXPECT_EQ(u.info().model, t.info().model);
    EXPECT_EQ(u.info().layers, 2u);
    EXPECT_EQ(u.info().experts, 4u);
    EXPECT_EQ(u.info().top_k, 2u);
    EXPECT_EQ(u.info().expert_bytes, t.info().expert_bytes);
    EXPECT_EQ(u.info().missing_cells, 1u);
    EXPECT_EQ(u.info().provenance, t.info().provenance);
    ASSERT_EQ(u.records(), t.records());
    EXPECT_TRUE(
        std::equal(u.columns().experts.begin(), u.columns().experts.end(), t.columns().experts.begin()));
    EXPECT_TRUE(
        std::equal(u.columns().weights.begin(), u.columns().weights.end(), t.columns().weights.begin()));
    EXPECT_TRUE(
        std::equal(u.columns().next_use.begin(), u.columns().next_use.end(), t.columns().next_use.begin()));
    EXPECT_EQ(u.tokens(Phase::kDecode), 2u);
  }
  // The mapping outlives the loader: a copy of the Trace keeps it alive.
  Trace copy;
  {
    const Trace u = read_mtr(path);
    copy = u;
  }
  std::filesystem::remove(path);
  EXPECT_EQ(copy.experts(0)[0], t.experts(0)[0]);
}

TEST(Mtr, LayoutIsAlignedAndDocumented) {
  const std::string b = encode_mtr(fixture());
  EXPECT_EQ(b.substr(0, 8), "MOESIMTR");
  const Json h = header_of(b);
  EXPECT_EQ(h["records"], 7);
  EXPECT_FALSE(h["columns"].contains("logits"));
  for (const auto& [name, c] : h["columns"].items()) {
    EXPECT_EQ(c["offset"].get<uint64_t>() % 64, 0u) << name;
    EXPECT_LE(c["offset"].get<uint64_t>() + c["bytes"].get<uint64_t>(), b.size()) << name;
  }
  EXPECT_EQ(b.size() % 64, 0u);
}

TEST(Mtr, EveryFlippedByteIsDetected) {
  const std::string good = encode_mtr(fixture());
  for (size_t pos = 0; pos < good.size(); ++pos) {
    std::string b = good;
    b[pos] = static_cast<char>(b[pos] ^ 0x10);
    try {
      (void)decode_mtr(b, "c.mtr");
      ADD_FAILURE() << "flipped byte at " << pos << " not detected";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("c.mtr: at byte "));
    }
  }
}

TEST(Mtr, TruncationEmptyMagicVersion) {
  const std::string good = encode_mtr(fixture(), MtrWriteOptions{.lookup_index = false});
  EXPECT_THAT(mtr_error(""), HasSubstr("c.mtr: at byte 0: empty file"));
  EXPECT_THAT(mtr_error(good.substr(0, 20)), HasSubstr("preamble: truncated"));
  for (size_t n : {size_t{32}, size_t{100}, good.size() - 64, good.size() - 1})
    EXPECT_THAT(mtr_error(good.substr(0, n)), HasSubstr("at byte 16: file_bytes")) << n;
  EXPECT_THAT(mtr_error(good + "x"), HasSubstr("trailing data"));
  std::string magic = good;
  magic[3] = 'X';
  EXPECT_THAT(mtr_error(magic),
              HasSubstr("at byte 0: magic: not an .mtr file (no MOESIMTR magic at byte 0)"));
  std::string version = good;
  version[8] = 2;
  EXPECT_THAT(mtr_error(version), HasSubstr("at byte 8: version: format version 2"));
  std::string hb = good;
  const uint32_t huge = 1u << 30;
  std::memcpy(hb.data() + 12, &huge, 4);
  EXPECT_THAT(mtr_error(hb), HasSubstr("at byte 12: header_bytes"));
}

TEST(Mtr, BadOffsetsAndSizes) {
  const std::string good = encode_mtr(fixture());
  const std::string ex = std::to_string(column_offset(good, "experts"));
  const std::string ex1 = std::to_string(column_offset(good, "experts") + 1);
  ASSERT_EQ(ex.size(), ex1.size());
  EXPECT_THAT(mtr_error(patch_header(good, "\"offset\":" + ex, "\"offset\":" + ex1)),
              HasSubstr("header.columns.experts: offset not aligned"));
  std::string other;  // another column's offset with as many digits, so the header keeps its length
  for (const char* c : {"layer", "step", "phase", "seq", "weights"})
    if (std::to_string(column_offset(good, c)).size() == ex.size())
      other = std::to_string(column_offset(good, c));
  ASSERT_FALSE(other.empty());
  EXPECT_THAT(mtr_error(patch_header(good, "\"offset\":" + ex, "\"offset\":" + other)),
              HasSubstr("columns overlap"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"bytes\":28", "\"bytes\":24")),
              HasSubstr("header.columns.seq: 24 bytes, expected 7 x 4"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"u16\"", "\"u32\"")),
              HasSubstr("header.columns.layer: must be an object with \"type\": \"u16\""));
  EXPECT_THAT(mtr_error(patch_header(good, "\"records\":7", "\"records\":9")),
              HasSubstr("header.columns.seq: 28 bytes, expected 9 x 4"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"layers\":2", "\"layers\":0")), HasSubstr("at least 1"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"top_k\":2", "\"top_k\":\"")),
              HasSubstr(": header: invalid JSON"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"step\"", "\"stop\"")),
              HasSubstr("header.columns.stop: unknown column"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"synthetic\":false", "\"synthetic\":0    ")),
              HasSubstr("header.synthetic"));
  // A column pushed past the end of the file.
  const std::string nu = std::to_string(column_offset(good, "next_use"));
  std::string past = std::to_string(column_offset(good, "next_use") + 640);
  ASSERT_EQ(past.size(), nu.size());
  EXPECT_THAT(mtr_error(patch_header(good, "\"offset\":" + nu, "\"offset\":" + past)),
              HasSubstr("past the end"));
}

// Values changed with the checksum recomputed: the semantic checks catch what a careless writer could do.
TEST(Mtr, SemanticCorruptionWithAValidChecksum) {
  const std::string good = encode_mtr(fixture());
  auto poke = [&](const char* col, uint64_t index, uint64_t value, size_t width) {
    std::string b = good;
    std::memcpy(b.data() + column_offset(b, col) + index * width, &value, width);
    fix_checksum(b);
    return mtr_error(b);
  };
  EXPECT_THAT(poke("experts", 3, 4, 2), HasSubstr("experts: record 1: expert id 4 >= experts 4"));
  EXPECT_THAT(poke("experts", 3, 2, 2), HasSubstr("experts: record 1: expert id 2 twice"));
  EXPECT_THAT(poke("layer", 0, 2, 2), HasSubstr("layer: record 0: layer 2 >= layers 2"));
  EXPECT_THAT(poke("phase", 2, 7, 1), HasSubstr("phase: record 2: value 7"));
  EXPECT_THAT(poke("step", 1, 0, 4), HasSubstr("record 1: duplicate cell"));
  EXPECT_THAT(poke("seq", 0, 1, 4), HasSubstr("record 1: out of canonical order"));
  EXPECT_THAT(poke("next_use", 0, 5, 4), HasSubstr("next_use: slot 0: 5, expected 3"));
  const uint32_t nan_bits = 0x7FC00000u;
  EXPECT_THAT(poke("weights", 5, nan_bits, 4), HasSubstr("weights: NaN or infinite"));
  EXPECT_THAT(mtr_error(patch_header(good, "\"missing_cells\":1", "\"missing_cells\":2")),
              HasSubstr("header.missing_cells: 2, but the records leave 1"));
  // A shifted step keeps the order but breaks the missing-cell count / next_use: still caught.
  EXPECT_THAT(poke("step", 6, 9, 4), HasSubstr("missing_cells"));
}

TEST(Mtr, ChecksumCanBeSkippedOnlyOnRequest) {
  std::string b = encode_mtr(fixture());
  b[24] ^= 1;  // the stored checksum itself
  EXPECT_THAT(mtr_error(b), HasSubstr("at byte 24: checksum"));
  MtrReadOptions o;
  o.verify_checksum = false;
  EXPECT_NO_THROW((void)decode_mtr(b, "c.mtr", o));
}

TEST(Mtr, LoadTraceDetectsMtrAndRefusesFields) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("moesim_mtr_detect_" + std::to_string(getpid()) + ".mtr"))
          .string();
  save_mtr(fixture(), path);
  EXPECT_EQ(load_trace(path).records(), 7u);
  LoadOptions lo;
  lo.fields = "token=pos";
  EXPECT_THROW((void)load_trace(path, lo), Error);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace moesim::traces
