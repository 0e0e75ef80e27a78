// read_mtr_lookup_stream (traces/mtr_format.h): the lookup stream of any .mtr file -- built from the records
// of a version-1 file, read from the section of a version-2 one -- equals build_lookup_stream of the trace,
// with the trace's counts; the checksum and the checks of what the stream is made of still hold, and what
// replay never reads (weights) is left to read_mtr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_io.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::HasSubstr;

Trace tiny() {
  return import_bigmoe(read_file(test::test_data("traces/tiny.route.csv")), "tiny");
}
Trace qwen() {
  return load_trace(test::bundled_data("traces/qwen3-30b-a3b.route.csv"));
}

template <typename A, typename B>
void expect_same(const A& a, const B& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << " " << i;
}

void expect_stream(const MtrLookups& m, const Trace& t, bool next_use) {
  const LookupStream s = build_lookup_stream(t, 1);
  expect_same(m.view.inv_begin, s.inv_begin, "inv_begin");
  expect_same(m.view.inv_layer, s.inv_layer, "inv_layer");
  expect_same(m.view.inv_phase, s.inv_phase, "inv_phase");
  expect_same(m.view.key, s.key, "key");
  expect_same(m.view.refresh_begin, s.refresh_begin, "refresh_begin");
  expect_same(m.view.refresh, s.refresh, "refresh");
  if (next_use)
    expect_same(m.view.next_use, s.next_use, "next_use");
  else
    EXPECT_TRUE(m.view.next_use.empty());
  EXPECT_EQ(m.records, t.records());
  EXPECT_EQ(m.sequences, t.sequence_ids().size());
  EXPECT_EQ(m.prefill_tokens, t.tokens(Phase::kPrefill));
  EXPECT_EQ(m.decode_tokens, t.tokens(Phase::kDecode));
  EXPECT_EQ(m.decode_lookups, s.decode_lookups());
  EXPECT_EQ(m.has_weights, t.has_weights());
}

std::string error_of(const std::string& bytes, MtrReadOptions o = {}) {
  try {
    (void)decode_mtr_lookup_stream(bytes, "c.mtr", true, true, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

uint64_t column_offset(const std::string& b, const char* name) {
  uint32_t n;
  std::memcpy(&n, b.data() + 12, 4);
  return Json::parse(b.substr(kMtrPreambleBytes, n))["columns"][name]["offset"].get<uint64_t>();
}

TEST(MtrLookupStream, BuiltFromTheRecordsOrReadFromTheSectionAlike) {
  for (const Trace& t : {tiny(), qwen()})
    for (bool index : {false, true})
      for (bool next_use : {false, true}) {
        const std::string b = encode_mtr(t, MtrWriteOptions{.lookup_index = index});
        const auto m = decode_mtr_lookup_stream(b, "c.mtr", next_use, true);
        ASSERT_TRUE(m.has_value());
        expect_stream(*m, t, next_use);
      }
}

TEST(MtrLookupStream, ThroughAMappedFileTheBuiltArraysOutliveTheReader) {
  const Trace t = qwen();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("moesim_mls_" + std::to_string(getpid()) + ".mtr")).string();
  write_mtr(t, path,
            MtrWriteOptions{.lookup_index = false});  // a version-1 file: the stream is built at load
  std::optional<MtrLookups> m = read_mtr_lookup_stream(path, true, false);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->prefill_tokens, 0u);  // not asked for
  EXPECT_EQ(m->sequences, t.sequence_ids().size());
  const MtrLookups kept = *m;
  m.reset();
  std::filesystem::remove(path);
  EXPECT_EQ(kept.view.key.back(), build_lookup_stream(t, 1).key.back());
  // Not an .mtr file, or no file: nothing (the caller loads it as usual and reports what is wrong).
  EXPECT_FALSE(decode_mtr_lookup_stream("turn,phase\n", "x.csv", true, true).has_value());
  EXPECT_FALSE(read_mtr_lookup_stream(path, true, true).has_value());
}

TEST(MtrLookupStream, CorruptionIsAnErrorNamingTheFileAndByte) {
  const std::string good = encode_mtr(tiny(), MtrWriteOptions{.lookup_index = false});
  // Any flipped byte of the records fails the whole-file checksum.
  std::string b = good;
  b[column_offset(b, "experts")] ^= 0x01;
  EXPECT_THAT(error_of(b), HasSubstr("c.mtr: at byte 24: checksum: XXH64 mismatch"));
  // Without the checksum, what the stream is made of is still checked: an expert id out of range.
  MtrReadOptions nocheck;
  nocheck.verify_checksum = false;
  b = good;
  const uint64_t e = column_offset(b, "experts");
  b[e] = static_cast<char>(0xFF);
  b[e + 1] = static_cast<char>(0xFF);
  EXPECT_THAT(error_of(b, nocheck), HasSubstr("c.mtr: at byte " + std::to_string(e) + ": experts: record 0"));
  // A layer out of range.
  b = good;
  const uint64_t l = column_offset(b, "layer");
  b[l] = static_cast<char>(0x7F);
  EXPECT_THAT(error_of(b, nocheck), HasSubstr("c.mtr: at byte " + std::to_string(l) + ": layer: record 0"));
  // A NaN weight is no concern of the stream (no replay reads weights); the full reader rejects it.
  b = good;
  const float nan = std::nanf("");
  std::memcpy(b.data() + column_offset(b, "weights"), &nan, 4);
  EXPECT_EQ(error_of(b, nocheck), "");
  try {
    (void)decode_mtr(b, "c.mtr", nocheck);
    ADD_FAILURE() << "a NaN weight was accepted by the full reader";
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("weights: NaN or infinite weight"));
  }
}

// The stream is built beside the record check (build_lookup_view is memory-safe on records that fail it):
// records overwritten with large values -- ids and layers far out of range, steps and sequences out of order
// -- are refused with the record check's error, the full reader's own, with or without next uses.
TEST(MtrLookupStream, RecordsThatFailTheCheckAreRefusedWithTheChecksError) {
  const std::string good = encode_mtr(qwen(), MtrWriteOptions{.lookup_index = false});
  MtrReadOptions nocheck;
  nocheck.verify_checksum = false;
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  const char* columns[] = {"seq", "phase", "step", "layer", "experts"};
  const uint64_t records = qwen().records();
  const uint64_t bytes[] = {4 * records, records, 4 * records, 2 * records, 12 * records};
  int refused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::string b = good;
    const int c = trial % 5;
    const uint64_t at = column_offset(b, columns[c]);
    for (int i = 0; i < 64; ++i) b[at + next() % bytes[c]] = static_cast<char>(0xFF - next() % 4);
    std::string full;
    try {
      (void)decode_mtr(b, "c.mtr", nocheck);
    } catch (const Error& e) {
      full = e.what();
    }
    for (bool next_use : {false, true}) {
      std::string err;
      try {
        (void)decode_mtr_lookup_stream(b, "c.mtr", next_use, true, nocheck);
      } catch (const Error& e) {
        err = e.what();
      }
      ASSERT_FALSE(err.empty()) << columns[c] << " trial " << trial;
      EXPECT_EQ(err, full);
      ++refused;
    }
  }
  EXPECT_EQ(refused, 80);
}

// Deferred checksums (MtrReadOptions::defer_checksum, what `moesim replay` asks for): the read returns once
// the structure holds, and verify() reports the mismatch the synchronous read throws; a structure that
// fails as well is reported as the mismatch, as without deferral.
TEST(MtrLookupStream, ADeferredChecksumIsReportedByVerify) {
  const MtrReadOptions deferred{.defer_checksum = true};
  auto verify_error = [&](const std::string& bytes) -> std::string {
    const auto m = decode_mtr_lookup_stream(bytes, "c.mtr", true, true, deferred);
    if (!m) return "no stream";
    try {
      m->verify();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  for (bool index : {false, true}) {
    const std::string good = encode_mtr(qwen(), MtrWriteOptions{.lookup_index = index});
    const auto m = decode_mtr_lookup_stream(good, "c.mtr", true, true, deferred);
    ASSERT_TRUE(m.has_value());
    EXPECT_NO_THROW(m->verify());
    EXPECT_NO_THROW(m->verify());  // as often as asked
    expect_stream(*m, qwen(), true);
  }
  // Version 1: a flipped weight bit leaves the stream's columns valid; only the whole-file checksum sees it.
  std::string b = encode_mtr(qwen(), MtrWriteOptions{.lookup_index = false});
  b[column_offset(b, "weights") + 1] ^= 0x01;
  EXPECT_THAT(verify_error(b), HasSubstr("c.mtr: at byte 24: checksum: XXH64 mismatch"));
  EXPECT_EQ(error_of(b), verify_error(b));
  // Version 2: a key changed to another expert of its layer (qwen3 has 128 per layer) passes the structure
  // checks; the key column's checksum catches it.
  b = encode_mtr(qwen(), MtrWriteOptions{.lookup_index = true});
  uint32_t hb;
  std::memcpy(&hb, b.data() + 12, 4);
  const uint64_t key =
      Json::parse(b.substr(kMtrPreambleBytes, hb))["lookups"]["columns"]["key"]["offset"].get<uint64_t>();
  b[key] ^= 0x01;
  EXPECT_THAT(verify_error(b),
              HasSubstr("c.mtr: at byte " + std::to_string(key) + ": lookups.key: XXH64 mismatch"));
  EXPECT_EQ(error_of(b), verify_error(b));
  // A key out of its layer fails the structure too: the error is still the checksum's.
  b[key + 3] = static_cast<char>(0x7F);
  EXPECT_THAT(error_of(b, deferred), HasSubstr("lookups.key: XXH64 mismatch"));
  EXPECT_EQ(error_of(b), error_of(b, deferred));
}

}  // namespace
}  // namespace moesim::traces
