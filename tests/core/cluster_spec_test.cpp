// SERVERS.json (core/cluster_spec.h): the documented example parses to the numbers it says, the topology
// is the mesh with overrides (or the links alone), and every bad input names its JSON path.
#include "core/cluster_spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/error_of.h"

namespace moesim {
namespace {

using test::error_of;

Json two_servers() {
  return parse_json_text(R"({"model": "deepseek-v2-lite",
    "network": {"bandwidth": "500Mbit/s", "latency": "1ms"},
    "servers": [{"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "6GiB",
                 "traces": ["a.mtr"], "arrival": "poisson:10s"},
                {"name": "b", "hw": "desktop-rtx4090", "gpus": 2, "gpu_memory": "4GiB",
                 "traces": ["/abs/b.mtr", "sub/b2.mtr"], "arrival": "poisson:20s"}],
    "links": [{"from": "a", "to": "b", "bandwidth": "100Mbit/s", "latency": "5ms"}]})",
                         "s.json");
}

TEST(ClusterSpec, ParsesTheDocumentedExample) {
  const ClusterSpec s = cluster_spec_from_json(two_servers(), "s.json", "/data/run");
  EXPECT_EQ(s.model, "deepseek-v2-lite");
  ASSERT_TRUE(s.network.has_value());
  EXPECT_DOUBLE_EQ(s.network->bandwidth, 500e6 / 8);
  EXPECT_DOUBLE_EQ(s.network->latency, 1e-3);
  ASSERT_EQ(s.servers.size(), 2u);
  EXPECT_EQ(s.servers[0].gpu_memory, uint64_t{6} << 30);
  EXPECT_EQ(s.servers[1].gpus, 2u);
  EXPECT_EQ(s.servers[0].traces, std::vector<std::string>{"/data/run/a.mtr"});
  EXPECT_EQ(s.servers[1].traces, (std::vector<std::string>{"/abs/b.mtr", "/data/run/sub/b2.mtr"}));
  EXPECT_EQ(s.servers[0].arrival.kind, ArrivalSpec::Kind::kPoisson);
  EXPECT_DOUBLE_EQ(s.servers[1].arrival.mean_interval_s, 20);
  // The link overrides the mesh's a-b pair.
  const auto topo = s.topology();
  ASSERT_EQ(topo.size(), 1u);
  EXPECT_DOUBLE_EQ(topo[0].params.bandwidth, 100e6 / 8);
  EXPECT_DOUBLE_EQ(topo[0].params.latency, 5e-3);
}

TEST(ClusterSpec, MeshWithOverridesOrLinksAlone) {
  Json j = two_servers();
  j["servers"].push_back(j["servers"][0]);
  j["servers"][2]["name"] = "c";
  const auto mesh = cluster_spec_from_json(j, "s.json", "").topology();
  ASSERT_EQ(mesh.size(), 3u);  // a-b (overridden), a-c, b-c
  EXPECT_DOUBLE_EQ(mesh[0].params.latency, 5e-3);
  EXPECT_DOUBLE_EQ(mesh[1].params.latency, 1e-3);
  j["network"] = nullptr;
  // Links alone that leave a server unreachable are refused by the spec, naming the file and the path.
  EXPECT_EQ(error_of([&] { (void)cluster_spec_from_json(j, "s.json", ""); }),
            "s.json: links: the links do not connect every server: \"a\" cannot reach \"c\"");
  j["links"].push_back({{"from", "c"}, {"to", "b"}, {"bandwidth", "1Gbit/s"}, {"latency", "2ms"}});
  const auto alone = cluster_spec_from_json(j, "s.json", "").topology();
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_EQ(alone[0].a, 0u);
  EXPECT_EQ(alone[0].b, 1u);
  EXPECT_EQ(alone[1].a, 1u);
  EXPECT_EQ(alone[1].b, 2u);
}

TEST(ClusterSpec, Units) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Gbit/s"), 1.25e8);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100 kbit/s"), 12500);
  EXPECT_DOUBLE_EQ(parse_bandwidth("62.5MB/s"), 62.5e6);
  EXPECT_DOUBLE_EQ(parse_duration("30m"), 1800);
  EXPECT_DOUBLE_EQ(parse_duration("5min"), 300);
  EXPECT_DOUBLE_EQ(parse_duration("2h"), 7200);
  EXPECT_DOUBLE_EQ(parse_duration("250ms"), 0.25);
  EXPECT_NE(error_of([] { parse_bandwidth("500Mbps"); }).find("Mbit/s"), std::string::npos);
  EXPECT_NE(error_of([] { parse_duration("xm"); }).find("'xm'"), std::string::npos);
}

std::string spec_error(const std::function<void(Json&)>& edit) {
  Json j = two_servers();
  edit(j);
  return error_of([&] { cluster_spec_from_json(j, "s.json", ""); });
}

TEST(ClusterSpec, ErrorsNameTheJsonPath) {
  EXPECT_NE(spec_error([](Json& j) {
              j["links"][0]["to"] = "z";
            }).find("s.json: links[0].to: unknown server \"z\""),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j["servers"][1]["name"] = "a";
            }).find("s.json: servers[1].name: duplicate server name \"a\" (also servers[0])"),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j["servers"][0]["gpu_memory"] = "6 parsecs";
            }).find("servers[0].gpu_memory: "),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) { j["network"]["bandwidth"] = "500"; }).find("network.bandwidth: "),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j["servers"][0]["traces"] = Json::array();
            }).find("servers[0].traces: expected at least one trace file"),
            std::string::npos);
  EXPECT_NE(
      spec_error([](Json& j) { j["servers"][0]["arrival"] = "uniform:3s"; }).find("servers[0].arrival: "),
      std::string::npos);
  EXPECT_NE(spec_error([](Json& j) { j["servers"][0]["arrival"] = "poisson:0s"; }).find("positive"),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) { j["servers"][0]["gpus"] = 0; }).find("servers[0].gpus: "),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j["servers"][0]["memory"] = "1GiB";
            }).find("servers[0].memory: unknown field"),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j["links"][0]["to"] = "a";
            }).find("links[0]: a link from server \"a\" to itself"),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j["links"].push_back(j["links"][0]);
              j["links"][1]["from"] = "b";
              j["links"][1]["to"] = "a";
            }).find("links[1]: links \"a\" and \"b\" again (also links[0])"),
            std::string::npos);
  EXPECT_NE(
      spec_error([](Json& j) { j["servers"] = Json::array(); }).find("servers: expected at least one server"),
      std::string::npos);
  EXPECT_NE(spec_error([](Json& j) {
              j.erase("network");
              j.erase("links");
            }).find("not connected"),
            std::string::npos);
  EXPECT_NE(spec_error([](Json& j) { j["servers"][1]["nic"] = "fast"; }).find("servers[1].nic: "),
            std::string::npos);
}

TEST(ClusterSpec, AnInterfaceBandwidthIsOptional) {
  Json j = two_servers();
  j["servers"][1]["nic"] = "1Gbit/s";
  const ClusterSpec s = cluster_spec_from_json(j, "s.json", "");
  EXPECT_EQ(s.servers[0].nic_bandwidth, 0);  // none: the links alone queue
  EXPECT_DOUBLE_EQ(s.servers[1].nic_bandwidth, 1e9 / 8);
}

TEST(ClusterSpec, TimestampsFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("moesim_cluster_spec_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.txt") << "# arrivals\n0\n1.5s\n\n2500ms\n";
  std::ofstream(dir / "bad.txt") << "3\n2\n";
  Json j = two_servers();
  j["servers"][0]["arrival"] = "timestamps:t.txt";
  const ClusterSpec s = cluster_spec_from_json(j, "s.json", dir.string());
  EXPECT_EQ(s.servers[0].arrival.kind, ArrivalSpec::Kind::kTimestamps);
  EXPECT_EQ(s.servers[0].arrival.times_s, (std::vector<double>{0, 1.5, 2.5}));
  j["servers"][0]["arrival"] = "timestamps:bad.txt";
  const std::string e = error_of([&] { cluster_spec_from_json(j, "s.json", dir.string()); });
  EXPECT_NE(e.find("servers[0].arrival: "), std::string::npos) << e;
  EXPECT_NE(e.find("bad.txt:2"), std::string::npos) << e;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moesim
