// Golden hit/miss counts: what `--policy all` runs (every registered eviction policy with its defaults, the
// variants of harness::all_eviction_specs) x capacities {16, 32, 64} experts per layer x both scopes x the
// three bundled real traces, against tests/data/golden/replay.csv.
//
// Regenerate (after an intended change of semantics, and say why in the commit):
//   MOESIM_REGEN_GOLDEN=1 ./build/tests/tests_replay --gtest_filter='ReplayGolden.*'
// The cross-check against the independent reference implementations below guards LRU, FIFO and Belady
// against a regeneration that would bless a bug.
#include <cstdlib>
#include <sstream>

#include "base/atomic_file.h"
#include "harness/arguments.h"
#include "tests/fixtures.h"
#include "tests/replay/replay_test_util.h"
#include "traces/mtr_format.h"

namespace moesim::testing {
namespace {

const std::string kGoldenPath = test::test_data("golden/replay.csv");
constexpr uint64_t kCapacities[] = {16, 32, 64};

std::string current_table() {
  std::ostringstream out;
  out << "trace,policy,scope,capacity_per_layer,lookups,hits,decode_lookups,decode_hits,evictions,"
         "over_capacity_invocations,read_bytes\n";
  const std::vector<std::string> specs = harness::all_eviction_specs();
  for (const auto& t : real_traces())
    for (const auto& spec : specs)
      for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
        for (uint64_t cap : kCapacities) {
          const auto r = replay::replay(*t->input, experts_config(spec, scope, cap));
          const auto& c = r.counters;
          // A canonical name with several parameters has commas: quoted, so the columns stay columns.
          const bool quote = r.policy.find(',') != std::string::npos;
          out << t->name << ',' << (quote ? "\"" + r.policy + "\"" : r.policy) << ',' << scope_name(scope)
              << ',' << cap << ',' << c.lookups << ',' << c.hits << ',' << c.decode_lookups << ','
              << c.decode_hits << ',' << c.evictions << ',' << c.over_capacity_invocations << ','
              << c.read_bytes << '\n';
        }
  return out.str();
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

TEST(ReplayGolden, MatchesCommittedTable) {
  const std::string now = current_table();
  const char* regen = std::getenv("MOESIM_REGEN_GOLDEN");
  if (regen && std::string(regen) == "1") {
    write_file_atomic(kGoldenPath, now);
    GTEST_SKIP() << "regenerated " << kGoldenPath;
  }
  const auto want = lines(read_file(kGoldenPath));
  const auto got = lines(now);
  ASSERT_EQ(got.size(), want.size())
      << "row count differs (a policy added? regenerate with MOESIM_REGEN_GOLDEN=1)";
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "golden row " << i;
}

// The lookup index of an .mtr file (traces/mtr_format.h, `trace import --lookup-index`) replays to the same
// counts as the stream built from the records, for every golden configuration.
TEST(ReplayGolden, TheMtrLookupIndexGivesTheSameCounts) {
  const std::vector<std::string> specs = harness::all_eviction_specs();
  for (const auto& t : real_traces()) {
    const std::string bytes = traces::encode_mtr(t->trace, traces::MtrWriteOptions{.lookup_index = true});
    const auto m = traces::decode_mtr_lookups(bytes, t->name + ".mtr", true);
    ASSERT_TRUE(m.has_value());
    const auto& info = t->trace.info();
    const replay::ReplayInput indexed(m->view, info.layers, info.experts, info.top_k, info.expert_bytes);
    for (const auto& spec : specs)
      for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
        for (uint64_t cap : kCapacities) {
          SCOPED_TRACE(t->name + " " + spec + " " + scope_name(scope) + " " + std::to_string(cap));
          const auto want = replay::replay(*t->input, experts_config(spec, scope, cap));
          const auto got = replay::replay(indexed, experts_config(spec, scope, cap));
          EXPECT_EQ(got.counters, want.counters);
          EXPECT_EQ(got.capacity_experts, want.capacity_experts);
          EXPECT_EQ(got.capacity_bytes, want.capacity_bytes);
        }
  }
}

TEST(ReplayGolden, LruFifoBeladyMatchIndependentReference) {
  for (const auto& t : real_traces())
    for (CacheScope scope : {CacheScope::kPerLayer, CacheScope::kGlobal})
      for (uint64_t cap : kCapacities)
        for (auto [name, ref] : {std::pair{"lru", RefPolicy::kLru}, std::pair{"fifo", RefPolicy::kFifo},
                                 std::pair{"belady", RefPolicy::kBelady}}) {
          const auto got = replay::replay(*t->input, experts_config(name, scope, cap)).counters;
          const RefCounts want = reference_replay(t->stream, ref, scope, cap);
          SCOPED_TRACE(t->name + " " + name + " " + scope_name(scope) + " " + std::to_string(cap));
          EXPECT_EQ(got.lookups, want.lookups);
          EXPECT_EQ(got.hits, want.hits);
          EXPECT_EQ(got.decode_hits, want.decode_hits);
          EXPECT_EQ(got.evictions, want.evictions);
        }
}

}  // namespace
}  // namespace moesim::testing
