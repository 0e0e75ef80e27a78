// A profile's CPU contention model (runtime.cpu_cores, runtime.gpu_stream_on_cpu; sim/cpu_cores.h) as
// `moesim run` reads it: bad values are clear errors naming the profile, and fewer cores never make a run
// faster.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/json_io.h"
#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace {

using moesim::Json;
using moesim::test::moesim_cli;
using moesim::test::read_text;
using moesim::test::temp_path;

const std::string kQwen = moesim::test::bundled_data("traces/qwen3-30b-a3b.route.csv");
const std::string kBase = moesim::test::bundled_data("hardware/jetson-agx-orin-64gb.json");

// A test's value as a profile field: a profile file's fields carry a source.
Json sourced(const Json& v) {
  Json f = v.is_object() ? v : Json{{"value", v}};
  if (!f.contains("source") && !f.contains("assumption")) f["source"] = "test";
  return f;
}

// The bundled Jetson profile with a runtime section: no runtime costs, `runtime` merged in.
std::string profile_with(const std::string& name, const Json& runtime) {
  Json p = Json::parse(read_text(kBase));
  p["name"] = name;
  p["runtime"] = {
      {"dispatch_latency", sourced(0.0)}, {"pipeline_latency", sourced(0.0)}, {"wake_latency", sourced(0.0)}};
  for (const auto& [k, v] : runtime.items()) p["runtime"][k] = sourced(v);
  const std::string path = temp_path(name + ".json");
  std::ofstream(path) << p.dump(2);
  return path;
}

double makespan(const std::string& profile) {
  const auto r = moesim_cli("-q run " + kQwen +
                            " --model qwen3-30b-a3b-w4 --system zipmoe --recover-on cpu "
                            "--budget 1GiB --workers 2 --json --hw " +
                            profile);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? Json::parse(r.out)["metrics"]["makespan_s"].get<double>() : 0.0;
}

TEST(ContentionCli, BadCoresOrFlagNameTheProfileAndTheField) {
  for (const Json& bad : {Json(0), Json(1.5), Json("two")}) {
    const std::string p = profile_with("bad-cores", {{"cpu_cores", {{"value", bad}}}});
    const auto r =
        moesim_cli("run " + kQwen + " --model qwen3-30b-a3b-w4 --system zipmoe --budget 1GiB --hw " + p);
    EXPECT_NE(r.code, 0) << bad.dump();
    EXPECT_NE(r.err.find("bad-cores.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cpu_cores"), std::string::npos) << r.err;
  }
  const std::string p = profile_with("bad-flag", {{"gpu_stream_on_cpu", {{"value", "yes"}}}});
  const auto r =
      moesim_cli("run " + kQwen + " --model qwen3-30b-a3b-w4 --system zipmoe --budget 1GiB --hw " + p);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("runtime.gpu_stream_on_cpu must be true or false"), std::string::npos) << r.err;
}

// Distributions of the runtime's costs (runtime.*_quantiles): a bad one is an error naming the profile and
// the field; a distribution of one value is that fixed cost; a run is reproducible under its --seed.
TEST(ContentionCli, RuntimeCostDistributions) {
  for (const Json& bad :
       {Json::array(), Json::array({2e-5, 1e-5}), Json::array({-1e-6}), Json::array({"20us"}), Json(2e-5)}) {
    const std::string p =
        profile_with("bad-quantiles", {{"dispatch_latency_cpu_quantiles", {{"value", bad}}}});
    const auto r =
        moesim_cli("run " + kQwen + " --model qwen3-30b-a3b-w4 --system zipmoe --budget 1GiB --hw " + p);
    EXPECT_NE(r.code, 0) << bad.dump();
    EXPECT_NE(r.err.find("bad-quantiles.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("runtime.dispatch_latency_cpu_quantiles must be"), std::string::npos) << r.err;
  }
  const double fixed = makespan(profile_with("fixed", {{"dispatch_latency_cpu", {{"value", 3e-5}}}}));
  EXPECT_EQ(makespan(profile_with("one-value",
                                  {{"dispatch_latency_cpu", {{"value", 9e-5}}},
                                   {"dispatch_latency_cpu_quantiles", {{"value", Json::array({3e-5})}}}})),
            fixed);
  const std::string spread = profile_with(
      "spread", {{"dispatch_latency_cpu_quantiles", {{"value", Json::array({1e-6, 1e-5, 1e-4, 3e-4})}}},
                 {"wake_latency_quantiles", {{"value", Json::array({1e-6, 5e-5})}}}});
  auto run = [&](int seed) {
    const auto r = moesim_cli("-q run " + kQwen +
                              " --model qwen3-30b-a3b-w4 --system zipmoe --recover-on cpu "
                              "--budget 1GiB --workers 2 --json --seed " +
                              std::to_string(seed) + " --hw " + spread);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? Json::parse(r.out)["metrics"]["makespan_s"].get<double>() : 0.0;
  };
  const double a = run(1);
  EXPECT_EQ(run(1), a);
  EXPECT_NE(run(2), a);
}

// Two workers and the GPU stream's thread: on plenty of cores the model changes nothing; on fewer, the run
// is slower; on one core slower still.
TEST(ContentionCli, FewerCoresNeverMakeARunFaster) {
  const double none = makespan(profile_with("no-model", Json::object()));
  const double plenty =
      makespan(profile_with("cores8", {{"cpu_cores", {{"value", 8}}}, {"gpu_stream_on_cpu", true}}));
  const double two =
      makespan(profile_with("cores2", {{"cpu_cores", {{"value", 2}}}, {"gpu_stream_on_cpu", true}}));
  const double one =
      makespan(profile_with("cores1", {{"cpu_cores", {{"value", 1}}}, {"gpu_stream_on_cpu", true}}));
  EXPECT_NEAR(plenty, none, 1e-9 * none);  // the same up to rounding (an op's end is computed piecewise)
  EXPECT_GT(two, none);
  EXPECT_GT(one, two);
}

// The I/O thread's CPU work per read (ssd.read_cpu_overhead, ssd.read_cpu_bandwidth): a bad value names the
// profile and the field; the reads take longer with it; with the cores modelled the work shares them with the
// CPU workers and the GPU stream's thread (plenty of cores: the same as adding it to each read; fewer:
// slower).
TEST(ContentionCli, ReadCpuWorkSharesTheCores) {
  auto with_read_cpu = [](const std::string& name, const Json& runtime, const Json& ssd) {
    const std::string path = profile_with(name, runtime);
    Json p = Json::parse(read_text(path));
    for (const auto& [k, v] : ssd.items()) p["ssd"][k] = sourced(v);
    std::ofstream(path) << p.dump(2);
    return path;
  };
  for (const auto& [field, bad] : {std::pair{"read_cpu_overhead", Json(-1e-5)},
                                   {"read_cpu_bandwidth", Json(0)},
                                   {"read_cpu_bandwidth", Json("fast")},
                                   {"prefill_read_cpu_overhead", Json("-3us")},
                                   {"prefill_read_cpu_bandwidth", Json(-1)}}) {
    const std::string p = with_read_cpu("bad-read-cpu", Json::object(), {{field, {{"value", bad}}}});
    const auto r =
        moesim_cli("run " + kQwen + " --model qwen3-30b-a3b-w4 --system zipmoe --budget 1GiB --hw " + p);
    EXPECT_NE(r.code, 0) << field << " " << bad.dump();
    EXPECT_NE(r.err.find("bad-read-cpu.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string("ssd.") + field), std::string::npos) << r.err;
  }
  const Json cpu = {{"read_cpu_overhead", {{"value", "60us"}}}, {"read_cpu_bandwidth", {{"value", "2GB/s"}}}};
  const double none = makespan(profile_with("no-read-cpu", Json::object()));
  const double plain = makespan(with_read_cpu("read-cpu", Json::object(), cpu));
  const Json on = {{"gpu_stream_on_cpu", true}};
  auto cores = [&](int n) {
    Json r = on;
    r["cpu_cores"] = {{"value", n}};
    return r;
  };
  const double plenty = makespan(with_read_cpu("read-cpu8", cores(8), cpu));
  const double two = makespan(with_read_cpu("read-cpu2", cores(2), cpu));
  const double one = makespan(with_read_cpu("read-cpu1", cores(1), cpu));
  const double two_without = makespan(profile_with("cores2-only", cores(2)));
  EXPECT_GT(plain, none);
  EXPECT_NEAR(plenty, plain, 1e-9 * plain);
  EXPECT_GT(two, plenty);
  EXPECT_GT(one, two);
  EXPECT_GT(two, two_without);
  // A prefill's reads take their own (absent: the decode step's): more CPU per prefill read, a longer TTFT.
  auto ttft = [&](const std::string& profile) {
    const auto r = moesim_cli("-q run " + kQwen +
                              " --model qwen3-30b-a3b-w4 --system zipmoe --recover-on cpu "
                              "--budget 1GiB --workers 2 --json --hw " +
                              profile);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? Json::parse(r.out)["metrics"]["ttft"]["mean_s"].get<double>() : 0.0;
  };
  Json more = cpu;
  more["prefill_read_cpu_overhead"] = {{"value", "200us"}};
  EXPECT_GT(ttft(with_read_cpu("read-cpu2-prefill", cores(2), more)),
            ttft(with_read_cpu("read-cpu2b", cores(2), cpu)));
}

}  // namespace
