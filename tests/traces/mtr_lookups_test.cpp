// The .mtr lookup index section (format version 2, traces/mtr_format.h): round trips against the stream
// built from the records, files without it unchanged (version 1), and corruption detected with an error
// naming the file, byte offset and field -- by the checksums, by the structural checks of the fast reader
// (read_mtr_lookups) and by the full reader's comparison with the records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/hash64.h"
#include "base/json_io.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

// Two layers, a prefill pass with a duplicate touch (so the stream has a refresh) and two decode tokens.
Trace tiny() {
  return import_bigmoe(read_file(test::test_data("traces/tiny.route.csv")), "tiny");
}

Trace qwen() {
  return load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"));
}

const MtrWriteOptions kIndex{.lookup_index = true};
const MtrWriteOptions kPlain{.lookup_index = false};  // version 1, what files from before the index hold

Json header_of(const std::string& b) {
  uint32_t n;
  std::memcpy(&n, b.data() + 12, 4);
  return Json::parse(b.substr(kMtrPreambleBytes, n));
}

uint64_t lookup_column(const std::string& b, const char* name) {
  return header_of(b)["lookups"]["columns"][name]["offset"].get<uint64_t>();
}

template <typename T>
void put(std::string& b, uint64_t offset, T v) {
  std::memcpy(b.data() + offset, &v, sizeof v);
}
template <typename T>
T get(const std::string& b, uint64_t offset) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof v);
  return v;
}

std::string fast_error(const std::string& bytes, MtrReadOptions o = {}) {
  try {
    (void)decode_mtr_lookups(bytes, "c.mtr", true, o);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the lookups reader accepted it";
  return "";
}

std::string full_error(const std::string& bytes, MtrReadOptions o = {}) {
  try {
    (void)decode_mtr(bytes, "c.mtr", o);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the full reader accepted it";
  return "";
}

template <typename A, typename B>
void expect_same(const A& a, const B& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << " element " << i;
}

void expect_view_equals_stream(const MtrLookups& m, const LookupStream& s, bool with_next_use) {
  expect_same(m.view.inv_begin, s.inv_begin, "inv_begin");
  expect_same(m.view.inv_layer, s.inv_layer, "inv_layer");
  expect_same(m.view.inv_phase, s.inv_phase, "inv_phase");
  expect_same(m.view.key, s.key, "key");
  if (with_next_use)
    expect_same(m.view.next_use, s.next_use, "next_use");
  else
    EXPECT_TRUE(m.view.next_use.empty());
  expect_same(m.view.refresh_begin, s.refresh_begin, "refresh_begin");
  expect_same(m.view.refresh, s.refresh, "refresh");
  EXPECT_EQ(m.decode_lookups, s.decode_lookups());
}

TEST(MtrLookups, EveryFileHasTheIndexByDefaultAndVersion1IsAnOption) {
  const Trace t = tiny();
  EXPECT_EQ(encode_mtr(t), encode_mtr(t, kIndex));
  EXPECT_EQ(get<uint32_t>(encode_mtr(t), 8), 2u);
  const std::string plain = encode_mtr(t, kPlain);
  EXPECT_EQ(get<uint32_t>(plain, 8), 1u);
  EXPECT_FALSE(header_of(plain).contains("lookups"));
  EXPECT_FALSE(decode_mtr_lookups(plain, "p.mtr", true).has_value());
  // Not an .mtr file at all: no index, the caller loads it as usual.
  EXPECT_FALSE(decode_mtr_lookups("turn,phase\n", "x.csv", true).has_value());
  EXPECT_FALSE(decode_mtr_lookups("", "empty", true).has_value());
}

TEST(MtrLookups, RoundTripEqualsTheStreamBuiltFromTheRecords) {
  for (const Trace& t : {tiny(), qwen()}) {
    const std::string b = encode_mtr(t, kIndex);
    EXPECT_EQ(get<uint32_t>(b, 8), 2u);
    EXPECT_EQ(b.size() % 64, 0u);
    const LookupStream s = build_lookup_stream(t, 1);
    ASSERT_GT(s.refreshes(), 0u);  // the refresh columns are exercised
    // The full reader: the same records as without the index.
    const Trace u = decode_mtr(b, "mem");
    const Trace v = decode_mtr(encode_mtr(t, kPlain), "mem");
    expect_same(u.columns().experts, v.columns().experts, "experts");
    expect_same(u.columns().step, v.columns().step, "step");
    expect_same(u.columns().weights, v.columns().weights, "weights");
    EXPECT_EQ(u.info().provenance, v.info().provenance);
    // The lookups reader, with and without the next-use index.
    for (bool nu : {true, false}) {
      const auto m = decode_mtr_lookups(b, "mem", nu);
      ASSERT_TRUE(m.has_value());
      expect_view_equals_stream(*m, s, nu);
      EXPECT_EQ(m->records, t.records());
      EXPECT_EQ(m->sequences, t.sequence_ids().size());
      EXPECT_EQ(m->prefill_tokens, t.tokens(Phase::kPrefill));
      EXPECT_EQ(m->decode_tokens, t.tokens(Phase::kDecode));
      EXPECT_EQ(m->has_weights, t.has_weights());
      EXPECT_EQ(m->has_logits, t.has_logits());
      EXPECT_EQ(m->info.model, t.info().model);
      EXPECT_EQ(m->info.expert_bytes, t.info().expert_bytes);
      EXPECT_EQ(m->info.missing_cells, t.info().missing_cells);
    }
  }
}

TEST(MtrLookups, ThroughAMappedFileAndRewrittenWithoutIt) {
  const Trace t = qwen();
  const std::string dir =
      std::filesystem::temp_directory_path() / ("moesim_mtrl_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string with = dir + "/with.mtr", without = dir + "/without.mtr";
  write_mtr(t, with, kIndex);
  EXPECT_EQ(read_file(with), encode_mtr(t, kIndex));
  std::optional<MtrLookups> m = read_mtr_lookups(with, true);
  ASSERT_TRUE(m.has_value());
  expect_view_equals_stream(*m, build_lookup_stream(t, 1), true);
  // The view outlives the reader: the mapping is kept by `storage`.
  const MtrLookups kept = *m;
  m.reset();
  EXPECT_EQ(kept.view.key[0], build_lookup_stream(t, 1).key[0]);
  // A file with the index reads as a plain trace; saved as version 1 it has no index.
  write_mtr(read_mtr(with), without, kPlain);
  EXPECT_EQ(read_file(without), encode_mtr(t, kPlain));
  EXPECT_FALSE(read_mtr_lookups(without, true).has_value());
  std::filesystem::remove_all(dir);
}

TEST(MtrLookups, EveryFlippedByteIsDetected) {
  const std::string good = encode_mtr(tiny(), kIndex);
  const Json h = header_of(good);
  // What the lookups reader reads: the preamble (but the whole-file checksum at bytes 24-31, which covers
  // the records it never reads), the JSON header, the section preamble and the section's columns (not the
  // records, nor the zero padding between columns).
  std::vector<bool> read(good.size(), false);
  for (uint64_t i = 0; i < kMtrPreambleBytes + get<uint32_t>(good, 12); ++i) read[i] = i < 24 || i >= 32;
  const uint64_t section = h["lookups"]["offset"].get<uint64_t>();
  for (uint64_t i = section; i < section + 64; ++i) read[i] = true;
  for (const auto& [name, c] : h["lookups"]["columns"].items())
    for (uint64_t i = 0; i < c["bytes"].get<uint64_t>(); ++i) read[c["offset"].get<uint64_t>() + i] = true;
  for (size_t pos = 0; pos < good.size(); ++pos) {
    std::string b = good;
    b[pos] = static_cast<char>(b[pos] ^ 0x10);
    // The full reader: the whole-file checksum (and the version) cover every byte.
    EXPECT_THAT(full_error(b), HasSubstr("c.mtr: at byte ")) << pos;
    // The lookups reader: a flipped magic makes the file "not an .mtr" (no index: the caller's full load
    // then reports it); any other byte it reads is an error.
    if (pos < 8) {
      EXPECT_FALSE(decode_mtr_lookups(b, "c.mtr", true).has_value()) << pos;
      continue;
    }
    if (read[pos]) {
      EXPECT_THAT(fast_error(b), HasSubstr("c.mtr: at byte ")) << pos;
    }
  }
}

TEST(MtrLookups, ChecksumErrorsNameTheColumnAndItsOffset) {
  std::string b = encode_mtr(qwen(), kIndex);
  const uint64_t key = lookup_column(b, "key");
  b[key + 4 * 100] ^= 1;
  EXPECT_THAT(fast_error(b), HasSubstr("c.mtr: at byte " + std::to_string(key) +
                                       ": lookups.key: XXH64 mismatch: the column is corrupt"));
  EXPECT_THAT(full_error(b), HasSubstr("c.mtr: at byte 24: checksum: XXH64 mismatch"));
  // The next-use column is verified only when it is read.
  std::string n = encode_mtr(qwen(), kIndex);
  const uint64_t nu = lookup_column(n, "next_use");
  n[nu + 8] ^= 1;
  EXPECT_THAT(fast_error(n),
              HasSubstr("at byte " + std::to_string(nu) + ": lookups.next_use: XXH64 mismatch"));
  EXPECT_TRUE(decode_mtr_lookups(n, "c.mtr", false).has_value());
  // The header: a changed model name keeps the JSON valid; the section's header checksum catches it.
  std::string hdr = encode_mtr(qwen(), kIndex);
  const size_t p = hdr.find("\"model\":\"") + 9;
  hdr[p] ^= 0x01;
  const uint64_t section = header_of(encode_mtr(qwen(), kIndex))["lookups"]["offset"].get<uint64_t>();
  EXPECT_THAT(fast_error(hdr), HasSubstr("at byte " + std::to_string(section + 8) +
                                         ": lookups.header_checksum: XXH64 of the JSON header mismatch"));
}

// Structural corruption behind the checksums (a file rewritten with fixed-up checksums, or a bug): the
// checks that keep every index in range, each naming the element's byte offset.
TEST(MtrLookups, StructuralCorruptionIsAClearError) {
  const std::string good = encode_mtr(tiny(), kIndex);
  const MtrReadOptions nocheck{.verify_checksum = false};
  const LookupStream s = build_lookup_stream(tiny(), 1);
  auto with = [&](const char* col, uint64_t index, auto value) {
    std::string b = good;
    put(b, lookup_column(b, col) + index * sizeof(value), value);
    return b;
  };
  auto at = [&](const char* col, uint64_t index, size_t elem) {
    return "c.mtr: at byte " + std::to_string(lookup_column(good, col) + index * elem) + ": lookups." + col +
           ": ";
  };
  // A key of layer 1 in an invocation of layer 0 (invocation 0 is layer 0's prefill pass).
  ASSERT_EQ(s.inv_layer[0], 0u);
  EXPECT_THAT(fast_error(with("key", 0, uint32_t{4}), nocheck),
              HasSubstr(at("key", 0, 4) + "key 4 is not an expert of layer 0 (invocation 0)"));
  EXPECT_THAT(fast_error(with("key", 0, uint32_t{1u << 30}), nocheck), HasSubstr(at("key", 0, 4)));
  // Invocation offsets.
  EXPECT_THAT(fast_error(with("inv_begin", 0, uint32_t{1}), nocheck),
              HasSubstr(at("inv_begin", 0, 4) + "must start at 0"));
  EXPECT_THAT(fast_error(with("inv_begin", 1, uint32_t{0}), nocheck),
              HasSubstr(at("inv_begin", 1, 4) + "invocation 0: offsets must increase"));
  EXPECT_THAT(
      fast_error(with("inv_begin", s.invocations(), uint32_t{99}), nocheck),
      HasSubstr(at("inv_begin", s.invocations(), 4) + "must end at the " + std::to_string(s.lookups())));
  EXPECT_THAT(fast_error(with("inv_layer", 1, uint16_t{2}), nocheck),
              HasSubstr(at("inv_layer", 1, 2) + "layer 2 >= layers 2"));
  EXPECT_THAT(fast_error(with("inv_phase", 2, uint8_t{7}), nocheck),
              HasSubstr(at("inv_phase", 2, 1) + "value 7"));
  // Next uses must point forward, inside the stream.
  EXPECT_THAT(fast_error(with("next_use", 0, uint32_t{0}), nocheck),
              HasSubstr(at("next_use", 0, 4) + "next use 0 is not an invocation after 0"));
  EXPECT_THAT(fast_error(with("next_use", 0, uint32_t{1000}), nocheck), HasSubstr(at("next_use", 0, 4)));
  // Refreshes must name a lookup of their own invocation.
  ASSERT_GT(s.refreshes(), 0u);
  EXPECT_THAT(
      fast_error(with("refresh", 0, static_cast<uint32_t>(s.lookups() - 1)), nocheck),
      HasSubstr(at("refresh", 0, 4) + "lookup " + std::to_string(s.lookups() - 1) + " is not in invocation"));
  EXPECT_THAT(fast_error(with("refresh_begin", 0, uint32_t{1}), nocheck),
              HasSubstr(at("refresh_begin", 0, 4) + "must start at 0"));
  // The section's own magic.
  std::string m = good;
  m[header_of(good)["lookups"]["offset"].get<uint64_t>()] ^= 0x20;
  EXPECT_THAT(fast_error(m, nocheck), HasSubstr("lookups: no MTRLOOKS magic"));
}

// A structurally valid section that does not match the records (two keys of one invocation swapped): the
// full reader compares with the stream rebuilt from the records; the lookups reader leaves that to it.
TEST(MtrLookups, TheFullReaderComparesTheSectionWithTheRecords) {
  const std::string good = encode_mtr(tiny(), kIndex);
  const LookupStream s = build_lookup_stream(tiny(), 1);
  ASSERT_GE(s.inv_begin[1] - s.inv_begin[0], 2u);
  std::string b = good;
  const uint64_t key = lookup_column(b, "key");
  put(b, key, s.key[1]);
  put(b, key + 4, s.key[0]);
  const MtrReadOptions nocheck{.verify_checksum = false};
  EXPECT_THAT(full_error(b, nocheck), HasSubstr("c.mtr: at byte " + std::to_string(key) +
                                                ": lookups.key: element 0: " + std::to_string(s.key[1]) +
                                                ", but the records give " + std::to_string(s.key[0])));
  EXPECT_TRUE(decode_mtr_lookups(b, "c.mtr", true, nocheck).has_value());
}

TEST(MtrLookups, HeaderAndVersionErrors) {
  const std::string good = encode_mtr(tiny(), kIndex);
  const MtrReadOptions nocheck{.verify_checksum = false};
  std::string v1 = good;
  put(v1, 8, uint32_t{1});
  EXPECT_THAT(full_error(v1, nocheck),
              HasSubstr("at byte 8: version: format version 1 cannot have a lookups section"));
  std::string v3 = good;
  put(v3, 8, uint32_t{3});
  EXPECT_THAT(full_error(v3),
              HasSubstr("at byte 8: version: format version 3, this build reads versions 1 and 2"));
  EXPECT_THAT(fast_error(v3), HasSubstr("at byte 8: version: format version 3"));
  EXPECT_THAT(fast_error(good.substr(0, good.size() - 64)), HasSubstr("at byte 16: file_bytes"));
  // Counts in the header that contradict the column sizes.
  std::string counts = good;
  const std::string from =
      "\"invocations\":" + std::to_string(build_lookup_stream(tiny(), 1).invocations()) + ",";
  const size_t p = counts.find(from);
  ASSERT_NE(p, std::string::npos);
  counts[p + from.size() - 2] = '9';
  EXPECT_THAT(fast_error(counts, nocheck), HasSubstr("at byte 32: header.lookups.columns.inv_begin"));
}

}  // namespace
}  // namespace moesim::traces
