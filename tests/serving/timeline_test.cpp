// Timelines of the bundled Qwen3 trace and of small hand-made workloads: the step window, names,
// counters, markers, op labels, the size estimate and guard, determinism.
#include "serving/timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "base/warnings.h"
#include "serving/classic_residency.h"
#include "serving/model_costs.h"
#include "serving/workload_view.h"
#include "serving/zipmoe_loads.h"
#include "sim/sim_platform.h"
#include "tests/core/tiny_workload.h"
#include "tests/fixtures.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace moesim {
namespace {

const std::string kRealTrace = test::bundled_data("traces/qwen3-30b-a3b.route.csv");

// A run of the real trace with the cache kept, so that its final residency can be compared.
struct RealRun {
  traces::Trace trace = traces::load_trace(kRealTrace);
  serving::SourcedCosts costs = serving::model_costs(trace.info(), std::nullopt);
  traces::LookupStream stream = traces::build_lookup_stream(trace, 1);
  CacheConfig cc;
  std::unique_ptr<Residency> cache;
  PipelineResult result;

  explicit RealRun(TimelineWindow w = {}, const std::string& budget = "2GiB") {
    const auto& info = trace.info();
    cc = make_cache_config(info.layers, info.experts, info.top_k, CacheScope::kGlobal,
                           CacheCapacity::parse(budget), costs.costs.expert_bytes);
    cache = serving::make_classic_residency(PolicySpec::parse("lru"), cc, MemoryTier::kUnified, nullptr);
    auto routing = make_routing_policy("identity", RoutingSetup{info.layers, info.experts, info.top_k});
    auto scheduling = make_scheduling_policy("fcfs");
    PipelineOptions po;
    po.record_timeline = true;
    po.timeline_first_step = w.first;
    po.timeline_last_step = w.last;
    Pipeline p(costs.costs, po, *cache, *routing, *scheduling);
    sim::SimPlatform platform(load_hardware("jetson-agx-orin-64gb"));
    result = p.run(serving::workload_view(stream), platform);
  }
  // Bytes of the experts resident in the cache now.
  uint64_t resident_bytes() const {
    uint64_t b = 0;
    for (uint32_t k = 0; k < cc.keys(); ++k)
      if (cache->peek(k).state == ExpertState::kFull) b += costs.costs.expert_bytes[k / cc.experts];
    return b;
  }
};

std::string to_string(const PipelineResult& r, const ModelCosts& costs, const TimelineWriteOptions& o = {}) {
  std::string out;
  write_chrome_trace([&](std::string_view s) { out += s; }, r, costs, o);
  return out;
}

Json parse(const std::string& text) {
  return parse_json_text(text, "timeline");
}

TEST(Timeline, ParseTimelineSteps) {
  auto eq = [](const TimelineWindow& w, uint32_t first, uint32_t last) {
    EXPECT_EQ(w.first, first);
    EXPECT_EQ(w.last, last);
  };
  eq(parse_timeline_steps("3:7"), 3, 7);
  eq(parse_timeline_steps("5:5"), 5, 5);
  eq(parse_timeline_steps("12:"), 12, UINT32_MAX);
  eq(parse_timeline_steps(":40"), 0, 40);
  for (const char* bad :
       {"", ":", "7", "7:3", "a:5", "1:b", "1:2:3", "-1:4", " 1:2", "1.5:3", "99999999999:"}) {
    try {
      parse_timeline_steps(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--timeline-steps: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("A:B"), std::string::npos) << e.what();
    }
  }
}

TEST(Timeline, WindowPastTheEndIsAUsageError) {
  check_timeline_window({128, 500}, 129);
  try {
    check_timeline_window({129, UINT32_MAX}, 129);
    ADD_FAILURE() << "accepted a window past the end";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--timeline-steps: step 129 is past the end (the workload has 129 steps, 0..128)");
  }
  EXPECT_THROW(check_timeline_window({0, 0}, 0), UsageError);
}

TEST(Timeline, WindowKeepsOnlyItsStepsInMemoryAndInTheFile) {
  const RealRun all;
  const RealRun w(parse_timeline_steps("5:7"));
  std::map<uint32_t, size_t> per_step;
  for (const auto& e : all.result.timeline) ++per_step[e.step];
  EXPECT_EQ(w.result.timeline.size(), per_step[5] + per_step[6] + per_step[7]);
  for (const auto& e : w.result.timeline) {
    EXPECT_GE(e.step, 5u);
    EXPECT_LE(e.step, 7u);
  }
  const double start = all.result.steps[5].start, end = all.result.steps[7].end;
  EXPECT_LT(w.result.counter_samples.size(), all.result.counter_samples.size() / 10);
  for (const auto& c : w.result.counter_samples) {
    EXPECT_GE(c.time, start);
    EXPECT_LE(c.time, end);
  }
  // Markers: steps 5..7 and their invocations only.
  const Json t = parse(to_string(w.result, w.costs.costs));
  std::set<uint64_t> steps, layer_steps;
  for (const auto& e : t) {
    if (e["ph"] != "X") continue;
    if (e["tid"] == 1001) steps.insert(e["args"]["step"].get<uint64_t>());
    if (e["tid"] == 1002) layer_steps.insert(e["args"]["step"].get<uint64_t>());
    if (e["pid"] != 1) {
      EXPECT_TRUE(e["args"]["step"] >= 5 && e["args"]["step"] <= 7) << e.dump();
    }
  }
  EXPECT_EQ(steps, (std::set<uint64_t>{5, 6, 7}));
  EXPECT_EQ(layer_steps, (std::set<uint64_t>{5, 6, 7}));
}

TEST(Timeline, ProcessAndThreadNames) {
  const RealRun run(parse_timeline_steps("0:2"));
  const Json t = parse(to_string(run.result, run.costs.costs));
  std::map<uint64_t, std::string> processes;
  std::set<uint64_t> process_sorted, thread_sorted;
  std::map<uint64_t, std::string> threads;
  std::set<uint64_t> used_tids;
  for (const auto& e : t) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_sort_index") process_sorted.insert(e["pid"].get<uint64_t>());
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") thread_sorted.insert(e["tid"].get<uint64_t>());
    if (e["ph"] == "X") used_tids.insert(e["tid"].get<uint64_t>());
  }
  // Full-tensor offloading decompresses nothing, but the CPU workers' queue is a track all the same.
  EXPECT_EQ(processes, (std::map<uint64_t, std::string>{{1, "steps"},
                                                        {2, "expert cache"},
                                                        {3, "I/O thread"},
                                                        {4, "SSD"},
                                                        {5, "CPU workers"},
                                                        {6, "link"},
                                                        {7, "GPU"}}));
  EXPECT_EQ(process_sorted.size(), processes.size());
  EXPECT_EQ(threads[1001], "steps");
  EXPECT_EQ(threads[1002], "layers");
  EXPECT_EQ(threads[4000], "slot 0");
  EXPECT_EQ(threads[6000], "link 0");
  EXPECT_EQ(threads[7000], "stream 0");
  for (uint64_t tid : used_tids) {
    EXPECT_TRUE(threads.count(tid)) << "thread " << tid << " has no name";
    EXPECT_TRUE(thread_sorted.count(tid)) << "thread " << tid << " has no sort index";
  }
}

TEST(Timeline, CountersAreMonotoneAndEndAtTheCachesState) {
  const RealRun run;
  const PipelineResult& r = run.result;
  ASSERT_FALSE(r.counter_tracks.empty());
  ASSERT_EQ(r.counter_tracks[0].kind, CounterTrack::Kind::kPoolBytes);
  std::vector<double> last_time(r.counter_tracks.size(), -1);
  std::vector<uint64_t> last_value(r.counter_tracks.size(), 0);
  std::vector<size_t> samples(r.counter_tracks.size(), 0);
  const uint64_t capacity = run.cc.total_capacity_bytes();
  for (const auto& c : r.counter_samples) {
    EXPECT_GE(c.time, last_time[c.track]);
    last_time[c.track] = c.time;
    last_value[c.track] = c.value;
    ++samples[c.track];
    if (c.track == 0) {
      EXPECT_LE(c.value, capacity);
    }
  }
  EXPECT_EQ(last_value[0], run.resident_bytes());
  EXPECT_GT(run.resident_bytes(), capacity / 2);
  for (size_t q = 1; q < r.counter_tracks.size(); ++q) {
    EXPECT_EQ(r.counter_tracks[q].kind, CounterTrack::Kind::kQueueLength);
    EXPECT_EQ(last_value[q], 0u) << r.counter_tracks[q].name << " does not end empty";
  }
  EXPECT_GT(samples[1], 100u);  // reads wait for the blocking I/O thread

  // In the file: the same last values, times in order per track, and no sample repeating its value.
  const Json t = parse(to_string(r, run.costs.costs));
  std::map<std::pair<uint64_t, std::string>, std::pair<double, int64_t>> track;  // (pid, name) -> last
  for (const auto& e : t) {
    if (e["ph"] != "C") continue;
    const auto key = std::make_pair(e["pid"].get<uint64_t>(), e["name"].get<std::string>());
    const auto& args = e["args"];
    ASSERT_EQ(args.size(), 1u);
    const int64_t v = args.begin().value().get<int64_t>();
    EXPECT_GE(v, 0);
    auto it = track.find(key);
    if (it != track.end()) {
      EXPECT_GE(e["ts"].get<double>(), it->second.first);
      EXPECT_NE(v, it->second.second) << e.dump();
    }
    track[key] = {e["ts"].get<double>(), v};
  }
  EXPECT_EQ(track[std::make_pair(uint64_t{2}, std::string("full-tensor pool"))].second,
            static_cast<int64_t>(run.resident_bytes()));
  for (uint64_t pid = 3; pid <= 7; ++pid) EXPECT_EQ(track[std::make_pair(pid, std::string("ops"))].second, 0);
}

// One layer, two experts of two tensors; two decode steps of expert 0 (3 tokens), the second a hit.
struct Tiny : test::TinyWorkload {
  Tiny() : TinyWorkload({{{0}}, {{0}}}, {"w1", "w2"}, 3, 1000) {}
  PipelineResult run(const TensorLayout& layout = {}, bool fused = false) const {
    PipelineOptions po;
    if (layout.compressed) po.loads = serving::zipmoe_loads(layout, fused);
    po.record_timeline = true;
    sim::SimPlatform platform(load_hardware("jetson-agx-orin-64gb"));
    return TinyWorkload::run(platform, po);
  }
};

std::map<std::string, Json> slices_by_name(const Json& t) {
  std::map<std::string, Json> m;
  for (const auto& e : t)
    if (e["ph"] == "X") m[e["name"].get<std::string>()] = e;
  return m;
}

TEST(Timeline, OpNamesAndArgs) {
  const Tiny tiny;
  const PipelineResult r = tiny.run();
  const auto m = slices_by_name(parse(to_string(r, tiny.costs)));
  ASSERT_TRUE(m.count("ssd_read L0 E0 w1")) << "names: tensors by name, not T<index>";
  EXPECT_EQ(m.at("ssd_read L0 E0 w1")["args"],
            Json::parse(R"({"step":0,"layer":0,"expert":0,"tensor":"w1","bytes":500000})"));
  EXPECT_EQ(m.at("transfer L0 E0 w2")["args"]["tensor"], "w2");
  EXPECT_EQ(m.at("expert_compute L0 E0")["args"],
            Json::parse(R"({"step":1,"layer":0,"expert":0,"bytes":1000000,"tokens":3})"));
  EXPECT_EQ(m.at("dense_compute L0")["args"]["tokens"], 1);
  // Markers.
  ASSERT_TRUE(m.count("step 0 decode (1 token)"));
  EXPECT_EQ(m.at("step 1 decode (1 token)")["args"],
            Json::parse(R"({"step":1,"phase":"decode","tokens":1})"));
  EXPECT_EQ(m.at("L0 decode")["args"], Json::parse(R"({"layer":0,"step":1})"));
  // Without tensor names: tensor<index>.
  ModelCosts unnamed = tiny.costs;
  unnamed.tensor_names.clear();
  EXPECT_TRUE(slices_by_name(parse(to_string(r, unnamed))).count("ssd_read L0 E0 tensor1"));
  // label_args = false keeps the labels in the name only.
  TimelineWriteOptions o;
  o.label_args = false;
  EXPECT_EQ(slices_by_name(parse(to_string(r, tiny.costs, o))).at("ssd_read L0 E0 w1")["args"],
            Json::parse(R"({"step":0,"bytes":500000})"));
}

TEST(Timeline, SplitLayoutNamesChunks) {
  const Tiny tiny;
  TensorLayout layout;
  layout.compressed = true;
  layout.shards = 2;
  layout.e_ratio = 0.5;
  const auto m = slices_by_name(parse(to_string(tiny.run(layout), tiny.costs)));
  ASSERT_TRUE(m.count("ssd_read L0 E0 w1.e1"));
  EXPECT_EQ(m.at("ssd_read L0 E0 w1.e1")["args"]["part"], "e");
  EXPECT_EQ(m.at("ssd_read L0 E0 w1.e1")["args"]["shard"], 1);
  EXPECT_EQ(m.at("decompress L0 E0 w2.e0")["args"]["part"], "e");
  EXPECT_EQ(m.at("ssd_read L0 E0 w2.sm")["args"]["part"], "sm");
  EXPECT_FALSE(m.at("ssd_read L0 E0 w2.sm")["args"].contains("shard"));
  EXPECT_FALSE(m.at("recover L0 E0 w2")["args"].contains("part"));
  EXPECT_FALSE(m.at("decompress L0 E0 w2.e0")["args"].contains("read_bytes"));
  // Fused reads (zipmoe:io=fused): no E-chunk read of its own; the decompression says what its worker read.
  const auto f = slices_by_name(parse(to_string(tiny.run(layout, true), tiny.costs)));
  EXPECT_FALSE(f.count("ssd_read L0 E0 w1.e1"));
  ASSERT_TRUE(f.count("decompress L0 E0 w1.e1"));
  const Json& a = f.at("decompress L0 E0 w1.e1")["args"];
  EXPECT_GT(a["read_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(a["read_bytes"].get<uint64_t>() * 2, a["bytes"].get<uint64_t>());  // rho 0.5
  EXPECT_TRUE(f.count("ssd_read L0 E0 w2.sm"));
}

TEST(Timeline, TimesAreExactNanosecondsAndSlicesOfAThreadDoNotOverlap) {
  const RealRun run(parse_timeline_steps("0:3"));
  const Json t = parse(to_string(run.result, run.costs.costs));
  // Read as some Perfetto versions do, (int64)(us * 1000.0): every op starts at its exact nanosecond.
  const auto perfetto_ns = [](const Json& v) { return static_cast<int64_t>(v.get<double>() * 1000.0); };
  std::map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> by_tid;
  size_t i = 0;
  for (const auto& e : t) {
    if (e["ph"] != "X" || e["pid"] == 1) continue;
    ASSERT_LT(i, run.result.timeline.size());
    const OpTiming& timing = run.result.timeline[i++].timing;
    const int64_t start = perfetto_ns(e["ts"]);
    EXPECT_EQ(start, std::llround(timing.start * 1e9)) << e.dump();
    EXPECT_LE(std::abs(start + perfetto_ns(e["dur"]) - std::llround(timing.end * 1e9)), 1) << e.dump();
    by_tid[e["tid"]].emplace_back(start, start + perfetto_ns(e["dur"]));
  }
  EXPECT_EQ(i, run.result.timeline.size());
  // The GPU stream and the link serve one op at a time: rounding never makes neighbours overlap.
  for (uint64_t tid : {uint64_t{6000}, uint64_t{7000}}) {
    auto v = by_tid[tid];
    ASSERT_GT(v.size(), 10u);
    std::sort(v.begin(), v.end());
    for (size_t k = 1; k < v.size(); ++k) EXPECT_LE(v[k - 1].second, v[k].first) << tid;
  }
}

TEST(Timeline, SameRunGivesAByteIdenticalFile) {
  const RealRun a(parse_timeline_steps("10:20")), b(parse_timeline_steps("10:20"));
  const std::string ta = to_string(a.result, a.costs.costs);
  EXPECT_EQ(ta, to_string(b.result, b.costs.costs));
  EXPECT_GT(ta.size(), 100'000u);
}

TEST(Timeline, SizeEstimatesBracketTheFile) {
  const RealRun run;
  const uint64_t actual = to_string(run.result, run.costs.costs).size();
  const TimelineSize post = estimate_timeline_size(run.result);
  EXPECT_NEAR(static_cast<double>(post.bytes), static_cast<double>(actual),
              0.15 * static_cast<double>(actual));
  EXPECT_EQ(post.steps, run.result.steps.size());
  const WorkloadView w = serving::workload_view(run.stream);
  const TimelineSize low = estimate_timeline_size(w, run.costs.costs, {}, {}, 0.0);
  const TimelineSize high = estimate_timeline_size(w, run.costs.costs, {}, {}, 1.0);
  EXPECT_TRUE(low.lower_bound);
  EXPECT_LT(low.bytes, actual);
  EXPECT_GT(high.bytes, actual);
  const double miss =
      1.0 - static_cast<double>(run.result.cache.hits) / static_cast<double>(run.result.cache.lookups);
  const TimelineSize pre = estimate_timeline_size(w, run.costs.costs, {}, {}, miss);
  EXPECT_NEAR(static_cast<double>(pre.bytes), static_cast<double>(actual),
              0.15 * static_cast<double>(actual));
  // A window: proportionally smaller; past the end: nothing.
  const TimelineSize ten =
      estimate_timeline_size(w, run.costs.costs, parse_timeline_steps("20:29"), {}, miss);
  EXPECT_EQ(ten.steps, 10u);
  EXPECT_EQ(ten.first_step, 20u);
  EXPECT_LT(ten.bytes, pre.bytes / 5);
  EXPECT_EQ(estimate_timeline_size(w, run.costs.costs, parse_timeline_steps("100000:"), {}, miss).bytes, 0u);
}

TEST(Timeline, SizeGuardWarnsWithAWindowThatFits) {
  const RealRun run(parse_timeline_steps("1:20"));  // decode steps (the prefill step alone is larger)
  const auto dir =
      std::filesystem::temp_directory_path() / ("moesim_timeline_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.json").string();
  set_warnings_printed(false);
  clear_warnings();
  TimelineWriteOptions o;
  o.warn_above_bytes = 1'000'000'000;
  write_chrome_trace(path, run.result, run.costs.costs, o);
  EXPECT_TRUE(warnings().empty());
  const auto size = std::filesystem::file_size(path);
  o.warn_above_bytes = size / 4;  // about 5 of the 20 steps fit
  write_chrome_trace(path, run.result, run.costs.costs, o);
  ASSERT_EQ(warnings().size(), 1u);
  const std::string msg = warnings()[0];
  EXPECT_EQ(msg.rfind("timeline " + path + " will be ~", 0), 0u) << msg;
  EXPECT_NE(msg.find(" MB ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("events); cut it with --timeline-steps A:B (e.g. --timeline-steps 1:"),
            std::string::npos)
      << msg;
  EXPECT_EQ(std::filesystem::file_size(path), size);  // warned, and written all the same
  const Json t = load_json_file(path);
  EXPECT_TRUE(t.is_array());
  // The suggested window fits under the threshold.
  const auto colon = msg.find("1:", msg.find("e.g."));
  const uint32_t last = static_cast<uint32_t>(std::stoul(msg.substr(colon + 2)));
  EXPECT_GE(last, 3u);
  EXPECT_LE(last, 8u);
  const RealRun cut(TimelineWindow{1, last});
  EXPECT_LE(to_string(cut.result, cut.costs.costs).size(), size / 4 * 1.2);
  // Before a run: a lower bound says "at least".
  clear_warnings();
  TimelineSize low;
  low.bytes = 300'000'000;
  low.events = 2'000'000;
  low.steps = 100;
  low.step_bytes.assign(100, 3'000'000);
  low.lower_bound = true;
  EXPECT_TRUE(warn_if_timeline_large("x.json", low));
  EXPECT_NE(warnings().at(0).find("will be at least ~300 MB (2000000 events)"), std::string::npos)
      << warnings()[0];
  EXPECT_NE(warnings()[0].find("--timeline-steps 0:32 for ~99 MB"), std::string::npos) << warnings()[0];
  EXPECT_FALSE(warn_if_timeline_large("x.json", low, 0));  // 0: no check
  clear_warnings();
  set_warnings_printed(true);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moesim
