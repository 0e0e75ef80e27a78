// libCacheSim's oracleGeneral export of a lookup stream (traces/export_oracle_general.h), checked field by
// field against the tiny trace's stream worked out by hand.
#include "traces/export_oracle_general.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "tests/fixtures.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

struct Req {
  uint32_t time;
  uint64_t id;
  uint32_t size;
  int64_t next;
  bool operator==(const Req&) const = default;
};

std::vector<Req> parse(const std::string& b) {
  std::vector<Req> v;
  for (size_t o = 0; o + kOracleGeneralRecordBytes <= b.size(); o += kOracleGeneralRecordBytes) {
    Req r;
    std::memcpy(&r.time, b.data() + o, 4);
    std::memcpy(&r.id, b.data() + o + 4, 8);
    std::memcpy(&r.size, b.data() + o + 12, 4);
    std::memcpy(&r.next, b.data() + o + 16, 8);
    v.push_back(r);
  }
  return v;
}

TEST(OracleGeneral, TheTinyStreamByHand) {
  const Trace t = import_bigmoe(read_file(test::test_data("traces/tiny.route.csv")), "tiny");
  const LookupStream s = build_lookup_stream(t, 1);
  const std::string b = oracle_general_bytes(s, t.info().expert_bytes);
  ASSERT_EQ(b.size(), 13 * kOracleGeneralRecordBytes);
  // Keys are layer * 4 + expert. Invocation 0: the prefill pass of layer 0 touches 1, 3, then 2, 1 (unique:
  // 1, 3, 2; the second touch of 1 is a refresh, not a request). Invocation 1: layer 1's prefill (step 1
  // only: 0, 3). Then decode steps 2 and 3, layers 0 and 1: {1, 0}, {2, 3}, {3, 2}, {0, 1}. Sizes: 1000
  // bytes per expert on layer 0, 2000 on layer 1. next: the 1-based number of the next request of the key.
  const std::vector<Req> want = {
      {0, 1, 1000, 6},  {0, 3, 1000, 10}, {0, 2, 1000, 11}, {1, 4, 2000, 12}, {1, 7, 2000, 9},
      {2, 1, 1000, -1}, {2, 0, 1000, -1}, {3, 6, 2000, -1}, {3, 7, 2000, -1}, {4, 3, 1000, -1},
      {4, 2, 1000, -1}, {5, 4, 2000, -1}, {5, 5, 2000, -1},
  };
  EXPECT_EQ(parse(b), want);
  // Unknown expert sizes: every object is 1 byte.
  for (const Req& r : parse(oracle_general_bytes(s, {}))) EXPECT_EQ(r.size, 1u);
  // The file form writes the same bytes.
  const std::string path = ::testing::TempDir() + "tiny.oracleGeneral";
  write_oracle_general(s, t.info().expert_bytes, path);
  EXPECT_EQ(read_file(path), b);
}

TEST(OracleGeneral, AnExpertTooLargeForTheSizeFieldIsAnError) {
  const Trace t = import_bigmoe(read_file(test::test_data("traces/tiny.route.csv")), "tiny");
  const LookupStream s = build_lookup_stream(t, 1);
  const std::vector<uint64_t> huge = {1000, uint64_t{1} << 33};
  try {
    (void)oracle_general_bytes(s, huge);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("expert size of layer 1 (8589934592 bytes) does not fit"));
  }
}

}  // namespace
}  // namespace moesim::traces
