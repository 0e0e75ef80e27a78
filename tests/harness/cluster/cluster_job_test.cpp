// `moesim cluster --platform sim` called directly (harness/cluster/cluster_job.h) on clusters of tiny-moe
// servers (4 layers x 16 experts of 192 KiB, top-2: 12 MiB of experts) serving synthetic traces of sequences
// of 3 prompt and 4 generated tokens: every request is 5 steps (the prompt's pass and 4 tokens) x 4 layers =
// 20 passes. One server alone holds every expert, so nothing runs remotely and no link exists; in a cluster
// the passes add up over the servers, the network's busy time is its links', and the same seed gives the same
// answer.
#include "harness/cluster/cluster_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "harness/trace_synth_job.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::HasSubstr;

const std::string kModel = test::test_data("models/tiny-moe.json");

class ClusterJob : public test::TestDir {
 protected:
  // A trace of `sequences` sequences at Zipf seed `seed`, named `name`.
  void trace(const std::string& name, uint64_t seed, uint32_t sequences = 3) const {
    TraceSynthArgs t;
    t.model = kModel;
    t.tokens = 4;
    t.prompt_tokens = 3;
    t.sequences = sequences;
    t.seed = seed;
    t.zipf = 0.8;
    t.out = path(name);
    synth_trace(t);
  }
  Json simulate(const std::string& servers, const std::string& placement, uint64_t seed = 1) const {
    std::ofstream(path("servers.json")) << R"({"model": ")" << kModel << R"(", "network": {"bandwidth":
      "500Mbit/s", "latency": "1ms"}, "servers": [)"
                                        << servers << "]}";
    ClusterArgs a;
    a.spec = path("servers.json");
    a.placement = placement;
    a.duration = "2m";
    a.seed = seed;
    a.json = true;
    Json j = Json::parse(cluster_output(a));
    j.erase("header");  // the date and host
    return j;
  }
};

TEST_F(ClusterJob, OneServerRunsEveryPassLocally) {
  trace("a.mtr", 1);
  std::ofstream(path("times.txt")) << "0\n10\n20\n";
  const Json j = simulate(R"({"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "16MiB",
                              "traces": ["a.mtr"], "arrival": "timestamps:times.txt"})",
                          "uniform");
  EXPECT_EQ(j["requests"], 3);
  EXPECT_EQ(j["passes"]["overall"]["passes"], 3 * 20);
  EXPECT_EQ(j["remote_invocations"], 0);
  EXPECT_EQ(j["local_compute_ratio"]["overall"], 1.0);
  EXPECT_TRUE(j["links"].empty());
  EXPECT_EQ(j["latency"]["count"], 3);
}

TEST_F(ClusterJob, PassesAndLinkTimesAddUpAndTheSeedDecides) {
  trace("a.mtr", 1);
  trace("b.mtr", 2);
  const std::string servers =
      R"({"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB", "traces": ["a.mtr"],
          "arrival": "poisson:10s"},
         {"name": "b", "hw": "jetson-agx-orin-64gb", "gpus": 1, "gpu_memory": "8MiB", "traces": ["b.mtr"],
          "arrival": "poisson:10s"})";
  const Json j = simulate(servers, "prism");
  const uint64_t requests = j["requests"].get<uint64_t>();
  ASSERT_GT(requests, 0u);
  const Json& p = j["passes"]["overall"];
  EXPECT_EQ(p["passes"].get<uint64_t>(), 20 * requests);
  uint64_t per_server = 0;
  for (const auto& [name, v] : j["passes"]["per_server"].items()) per_server += v["passes"].get<uint64_t>();
  EXPECT_EQ(per_server, p["passes"].get<uint64_t>());
  ASSERT_EQ(j["links"].size(), 2u);  // a -> b and b -> a
  double busy = 0;
  for (const Json& l : j["links"]) busy += l["busy_s"].get<double>();
  EXPECT_DOUBLE_EQ(p["network_busy_s"].get<double>(), busy);
  EXPECT_EQ(simulate(servers, "prism"), j);
  EXPECT_NE(simulate(servers, "prism", 2), j);
}

TEST_F(ClusterJob, RefusesABadPlacementAndAReversedTimelineWindow) {
  trace("a.mtr", 1);
  const std::string server = R"({"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "8MiB",
                                 "traces": ["a.mtr"], "arrival": "poisson:10s"})";
  EXPECT_THAT(error_of([&] { simulate(server, "nowhere"); }), HasSubstr("nowhere"));
  ClusterArgs a;
  a.spec = path("servers.json");
  a.placement = "uniform";
  a.timeline = path("t.json");
  a.timeline_window = "2m:1m";
  EXPECT_THAT(error_of([&] { cluster_output(a); }), HasSubstr("the window ends before it starts"));
}

}  // namespace
}  // namespace moesim::harness
