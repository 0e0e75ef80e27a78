// `moesim cluster` end to end: the JSON keys docs/cluster.md lists, the timeline, same seed -> identical
// output, and bad input with its exit code (1 for a bad SERVERS.json, 2 for a bad option or an output over
// an input).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/json_io.h"
#include "cli_test_util.h"
#include "tests/fixtures.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace moesim::test {
namespace {

// A tiny-moe trace (4 layers x 16 experts, top-2): `seqs` sequences of 3 prompt and 4 generated tokens,
// whose experts lean towards `base` (task skew: each server its own).
void write_trace(const std::string& path, uint32_t base, uint32_t seqs) {
  traces::TraceInfo info;
  info.model = "tiny-moe";
  info.layers = 4;
  info.experts = 16;
  info.top_k = 2;
  traces::TraceBuilder b(info, false, false, path);
  uint64_t line = 0;
  for (uint32_t s = 0; s < seqs; ++s)
    for (uint32_t phase = 0; phase < 2; ++phase)
      for (uint32_t step = 0; step < (phase == 0 ? 3u : 4u); ++step)
        for (uint32_t l = 0; l < 4; ++l) {
          const uint32_t first = (base + step + s) % 16;
          const uint32_t e[] = {first, (first + 1 + (l + 3 * step) % 15) % 16};
          b.add(s, static_cast<traces::Phase>(phase), step, l, e, {}, {}, ++line);
        }
  traces::save_mtr(std::move(b).finish(), path);
}

struct Cluster {
  std::filesystem::path dir;
  std::string spec;
};

Cluster make_cluster(const std::string& test, const std::string& links_json = "",
                     const std::string& network = R"({"bandwidth": "500Mbit/s", "latency": "1ms"})") {
  Cluster c;
  c.dir = fresh_test_dir("moesim_cluster_cli", test);
  write_trace((c.dir / "a.mtr").string(), 0, 6);
  write_trace((c.dir / "b.mtr").string(), 8, 6);
  write_trace((c.dir / "c.mtr").string(), 4, 6);
  c.spec = (c.dir / "servers.json").string();
  std::ofstream(c.spec) << R"({"model": ")" << test::test_data("models/tiny-moe.json") << R"(",
    "network": )" << network
                        << R"(,
    "servers": [
      {"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "4MiB", "traces": ["a.mtr"], "arrival": "poisson:10s"},
      {"name": "b", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "4MiB", "traces": ["b.mtr"], "arrival": "poisson:10s"},
      {"name": "c", "hw": "jetson-agx-orin-64gb", "gpus": 2, "gpu_memory": "4MiB", "traces": ["c.mtr"], "arrival": "poisson:20s"}])"
                        << links_json << "}\n";
  return c;
}

TEST(ClusterCli, JsonKeysAndTimeline) {
  const Cluster c = make_cluster("keys");
  const std::string out = (c.dir / "out.json").string(), tl = (c.dir / "timeline.json").string();
  const CliResult r =
      moesim_cli("cluster " + c.spec + " --placement prism --duration 5m --migrate-every 1m --json -o " +
                 out + " --timeline " + tl);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = load_json_file(out);
  EXPECT_EQ(j["header"]["command"], "cluster");
  EXPECT_GT(j["requests"].get<uint64_t>(), 20u);
  for (const char* k : {"count", "mean_s", "p50_s", "p90_s", "p99_s"}) {
    EXPECT_TRUE(j["latency"].contains(k)) << k;
    EXPECT_TRUE(j["latency"]["per_server"]["c"].contains(k)) << k;
    EXPECT_TRUE(j["ttft"].contains(k)) << k;
    EXPECT_TRUE(j["tpot"].contains(k)) << k;
  }
  EXPECT_GT(j["latency"]["mean_s"].get<double>(), j["ttft"]["mean_s"].get<double>());
  const double lcr = j["local_compute_ratio"]["overall"].get<double>();
  EXPECT_GT(lcr, 0);
  EXPECT_LT(lcr, 1);
  EXPECT_EQ(j["local_compute_ratio"]["over_time"]["overall"].size(), 5u);  // 1-minute buckets over 5 minutes
  EXPECT_TRUE(j["local_compute_ratio"]["per_server"].contains("b"));
  // Arrivals span the 5 minutes: a mean latency per 1-minute arrival bucket, each within the run's extremes.
  const Json& lot = j["latency"]["over_time"]["mean_s"];
  ASSERT_EQ(lot.size(), 5u);
  for (const Json& v : lot) {
    ASSERT_TRUE(v.is_number());
    EXPECT_LE(v.get<double>(), j["latency"]["max_s"].get<double>());
    EXPECT_GT(v.get<double>(), 0);
  }
  EXPECT_GT(j["remote_invocations"].get<uint64_t>(), 0u);
  EXPECT_GT(j["proxy_cost"].get<double>(), 0);
  EXPECT_EQ(j["links"].size(), 6u);  // 3 links of the mesh, both directions
  // Where the time went: every request's 5 steps (a prompt pass and 4 tokens) x 4 layers are passes, some of
  // them remote; the network's busy time is its links'; each link's utilisation is its busy share of the run.
  const Json& p = j["passes"]["overall"];
  EXPECT_EQ(p["passes"].get<uint64_t>(), 20 * j["requests"].get<uint64_t>());
  uint64_t per_server = 0;
  for (const auto& [name, v] : j["passes"]["per_server"].items()) per_server += v["passes"].get<uint64_t>();
  EXPECT_EQ(per_server, p["passes"].get<uint64_t>());
  EXPECT_GT(p["remote_pass_share"].get<double>(), 0);
  EXPECT_LE(p["remote_pass_share"].get<double>(), 1);
  EXPECT_GT(p["local_compute_s"].get<double>(), 0);
  EXPECT_GT(p["remote_round_trip_s"].get<double>(), 0);
  double busy = 0;
  for (const Json& l : j["links"]) {
    busy += l["busy_s"].get<double>();
    EXPECT_DOUBLE_EQ(l["utilisation"].get<double>(),
                     l["busy_s"].get<double>() / j["simulated_s"].get<double>());
  }
  EXPECT_DOUBLE_EQ(p["network_busy_s"].get<double>(), busy);
  ASSERT_EQ(j["config"]["links"].size(), 3u);
  EXPECT_EQ(j["config"]["links"][0]["bandwidth_bytes_per_s"], 62.5e6);
  EXPECT_TRUE(j["migrations"].is_array());
  EXPECT_EQ(j["migration_checks"], 4);
  const Json t = parse_json_text(read_text(tl), tl);
  ASSERT_TRUE(t.is_array());
  bool server_a = false, link_ab = false;
  for (const Json& e : t) {
    if (e["ph"] != "M") continue;
    server_a = server_a || e["args"]["name"] == "server a";
    link_ab = link_ab || e["args"]["name"] == "link a - b";
  }
  EXPECT_TRUE(server_a);
  EXPECT_TRUE(link_ab);
}

TEST(ClusterCli, TimelineWindow) {
  const Cluster c = make_cluster("window");
  const std::string tl = (c.dir / "timeline.json").string();
  const CliResult r = moesim_cli("cluster " + c.spec + " --placement uniform --duration 5m --timeline " + tl +
                                 " --timeline-window 1m:2m -o " + (c.dir / "out.txt").string());
  ASSERT_EQ(r.code, 0) << r.err;
  size_t slices = 0;
  for (const Json& e : parse_json_text(read_text(tl), tl)) {
    if (e["ph"] != "X") continue;
    ++slices;
    EXPECT_GE(e["ts"].get<double>(), 60e6);
    EXPECT_LE(e["ts"].get<double>(), 120e6);
  }
  EXPECT_GT(slices, 0u);
  const CliResult bad =
      moesim_cli("cluster " + c.spec + " --placement uniform --timeline " + tl + " --timeline-window 2m:1m");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--timeline-window: the window ends before it starts"), std::string::npos)
      << bad.err;
}

TEST(ClusterCli, SameSeedSameOutput) {
  const Cluster c = make_cluster("seed");
  const std::string args = "cluster " + c.spec + " --placement redundance --duration 3m --draw random --json";
  const CliResult one = moesim_cli(args + " --seed 5"), two = moesim_cli(args + " --seed 5"),
                  other = moesim_cli(args + " --seed 6");
  ASSERT_EQ(one.code, 0) << one.err;
  Json a = parse_json_text(one.out, "1"), b = parse_json_text(two.out, "2"),
       o = parse_json_text(other.out, "3");
  for (Json* j : {&a, &b, &o}) j->erase("header");  // the date and host
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_NE(a.dump(), o.dump());
}

TEST(ClusterCli, TextSummary) {
  const Cluster c = make_cluster("text");
  const CliResult r = moesim_cli("cluster " + c.spec + " --placement eplb --duration 2m");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cluster: 3 servers, model tiny-moe, placement eplb"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("local compute ratio"), std::string::npos) << r.out;
}

// --system moe-infinity: each server alone with its experts offloaded; it places none, so --placement is
// refused, and prism still requires one.
TEST(ClusterCli, MoeInfinityPlacesNoExperts) {
  const Cluster c = make_cluster("moe_infinity");
  CliResult r = moesim_cli("cluster " + c.spec + " --system moe-infinity:redirect=1 --duration 2m");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cluster: 3 servers, model tiny-moe, system moe-infinity:redirect=1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  offload a "), std::string::npos) << r.out;
  r = moesim_cli("cluster " + c.spec + " --system moe-infinity --duration 2m --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_TRUE(j["config"]["placement"].is_null());
  EXPECT_EQ(j["remote_invocations"], 0);
  EXPECT_GT(j["offload"]["c"]["lookups"].get<uint64_t>(), 0u);
  r = moesim_cli("cluster " + c.spec + " --system moe-infinity --placement uniform --duration 2m");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("places no experts"), std::string::npos) << r.err;
  r = moesim_cli("cluster " + c.spec + " --duration 2m");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--placement is required"), std::string::npos) << r.err;
  r = moesim_cli("cluster " + c.spec + " --system moe-infinity --platform exec --duration 1m");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("simulated cluster only"), std::string::npos) << r.err;
}

// The spec's own files are inputs too: an output over a trace or a timestamps file it names is refused
// (exit 2, naming the JSON path), and the file is left as it was.
TEST(ClusterCli, NoOutputOverAFileTheSpecNames) {
  const Cluster c = make_cluster("output_over_spec_file");
  const std::string trace = (c.dir / "b.mtr").string(), before = read_text(trace);
  CliResult r = moesim_cli("cluster " + c.spec + " --placement prism --duration 1m -o " + trace);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("servers[1].traces[0]"));
  EXPECT_EQ(read_text(trace), before);
  r = moesim_cli("cluster " + c.spec + " --placement prism --duration 1m --timeline " + trace);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(read_text(trace), before);
  // validate --cluster runs on exec: a build without it refuses it whatever the output
  // (without_exec_test.cpp).
  if (MOESIM_TEST_HAS_EXEC) {
    r = moesim_cli("validate --cluster " + c.spec + " --placement prism -o " + trace);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr("servers[1].traces[0]"));
    EXPECT_EQ(read_text(trace), before);
  }

  std::ofstream(c.dir / "times.txt") << "0\n1\n";
  std::string json = read_text(c.spec);
  json.replace(json.find("poisson:20s"), std::string("poisson:20s").size(), "timestamps:times.txt");
  std::ofstream(c.spec) << json;
  r = moesim_cli("cluster " + c.spec + " --placement prism --duration 1m -o " +
                 (c.dir / "times.txt").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("servers[2].arrival"));
  EXPECT_EQ(read_text((c.dir / "times.txt").string()), "0\n1\n");
}

TEST(ClusterCli, BadInput) {
  const Cluster unknown = make_cluster(
      "unknown", R"(, "links": [{"from": "a", "to": "z", "bandwidth": "1Gbit/s", "latency": "1ms"}])");
  CliResult r = moesim_cli("cluster " + unknown.spec + " --placement prism");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("links[0].to: unknown server \"z\""), std::string::npos) << r.err;

  const Cluster split = make_cluster(
      "split", R"(, "links": [{"from": "a", "to": "b", "bandwidth": "1Gbit/s", "latency": "1ms"}])", "null");
  r = moesim_cli("cluster " + split.spec + " --placement prism");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("\"a\" cannot reach \"c\""), std::string::npos) << r.err;

  const Cluster missing = make_cluster("missing");
  std::filesystem::remove(missing.dir / "b.mtr");
  r = moesim_cli("cluster " + missing.spec + " --placement prism");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("servers.json: servers[1].traces[0]: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("b.mtr"), std::string::npos) << r.err;

  const Cluster ok = make_cluster("options");
  r = moesim_cli("cluster " + ok.spec + " --placement nearest");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown placement policy 'nearest'"), std::string::npos) << r.err;
  r = moesim_cli("cluster " + ok.spec + " --placement prism --duration soon");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--duration"), std::string::npos) << r.err;
  r = moesim_cli("cluster " + ok.spec + " --placement prism --migrate-every 10ms");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("checks more than 10000 times"), std::string::npos) << r.err;
  r = moesim_cli("cluster " + ok.spec + " --placement prism -o " + ok.spec);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is the same file as input"), std::string::npos) << r.err;
  EXPECT_NE(read_text(ok.spec).find("\"servers\""), std::string::npos);  // untouched
}

using ::testing::HasSubstr;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `moesim sweep` runs cluster points (a SERVERS.json and a placement each) through `moesim cluster` itself: a
// point's CSV row holds what the command's own JSON says, and a cluster point that names a run parameter, or
// lacks its placement, is refused with the spec's JSON path.
TEST(ClusterCli, SweepRunsClusterPoints) {
  const Cluster c = make_cluster("sweep");
  const std::string spec = (c.dir / "spec.json").string();
  std::ofstream(spec)
      << R"({"command": "cluster", "grid": {"servers": ["servers.json"], "placement": ["uniform", "prism"],
      "duration": ["3m"], "seed": [5]}})";
  const CliResult r = moesim_cli("-q sweep " + spec + " -o " + (c.dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = read_text((c.dir / "out" / "results.csv").string());
  const auto lines = split_lines(csv);
  ASSERT_EQ(lines.size(), 3u) << csv;
  const std::vector<std::string> head = split_csv_row(lines[0]);
  const auto col = [&](const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    EXPECT_NE(it, head.end()) << name;
    return static_cast<size_t>(it - head.begin());
  };
  for (size_t row = 1; row <= 2; ++row) {
    const std::vector<std::string> cells = split_csv_row(lines[row]);
    const std::string placement = row == 1 ? "uniform" : "prism";
    EXPECT_EQ(cells[col("placement")], "\"" + placement + "\"");
    const std::string own = (c.dir / (placement + ".json")).string();
    ASSERT_EQ(moesim_cli("-q cluster " + c.spec + " --placement " + placement +
                         " --duration 3m --seed 5 --json -o " + own)
                  .code,
              0);
    const Json j = load_json_file(own);
    EXPECT_EQ(std::stod(cells[col("latency_mean_s")]), j["latency"]["mean_s"].get<double>());
    EXPECT_EQ(std::stod(cells[col("local_compute_ratio")]),
              j["local_compute_ratio"]["overall"].get<double>());
    EXPECT_EQ(std::stoull(cells[col("remote_invocations")]), j["remote_invocations"].get<uint64_t>());
    EXPECT_TRUE(cells[col("hit_rate")].empty());  // a cluster run has no expert cache
  }
  std::ofstream(spec)
      << R"({"command": "cluster", "points": [{"servers": "servers.json", "placement": "prism", "budget": "8GiB"}]})";
  CliResult bad = moesim_cli("-q sweep " + spec + " -o " + (c.dir / "bad").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, HasSubstr("/points/0/budget: `moesim cluster` points take no budget"));
  std::ofstream(spec) << R"({"command": "cluster", "points": [{"servers": "servers.json"}]})";
  bad = moesim_cli("-q sweep " + spec + " -o " + (c.dir / "bad").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, HasSubstr("a cluster point has no placement"));
}

// Overload is said: a one-GPU server of the bundled data-centre profile serving the bundled Qwen3 trace keeps
// up with an arrival a second (about 2.4 requests/s is its capacity) and is not warned about; at four a
// second its queue grows, and the warning, the JSON's load figures and the text say so, with the throughput
// that is its steady-state figure.
TEST(ClusterCli, OverloadIsDetectedAndSaid) {
  const auto dir = fresh_test_dir("moesim_cluster_cli", "overload");
  auto run = [&](const std::string& arrival) {
    const std::string spec = (dir / ("one-" + arrival + ".json")).string();
    std::ofstream(spec) << R"({"servers": [{"name": "a", "hw": "server-h100-nvme", "gpus": 1, "gpu_memory": )"
                        << R"("80GiB", "traces": [")" << test::bundled_data("traces/qwen3-30b-a3b.route.csv")
                        << R"("], "arrival": "poisson:)" << arrival << R"("}]})";
    const CliResult r = moesim_cli("cluster " + spec + " --placement prism --duration 2m --json");
    EXPECT_EQ(r.code, 0) << r.err;
    return Json::parse(r.out);
  };
  const Json stable = run("1s"), over = run("0.25s");
  const Json &s = stable["load"]["overall"], &o = over["load"]["overall"];
  EXPECT_FALSE(s["overloaded"].get<bool>());
  EXPECT_NEAR(s["utilisation"].get<double>(), 1.0, 0.05);
  EXPECT_TRUE(stable["warnings"].empty()) << stable["warnings"].dump();
  EXPECT_TRUE(o["overloaded"].get<bool>());
  EXPECT_GT(o["utilisation"].get<double>(), 1.2);
  EXPECT_LT(o["throughput_requests_per_s"].get<double>(), o["arrival_rate_per_s"].get<double>());
  EXPECT_GT(o["latency_slope_s_per_s"].get<double>(), 0);
  EXPECT_TRUE(over["load"]["per_server"]["a"]["overloaded"].get<bool>());
  ASSERT_EQ(over["warnings"].size(), 1u);
  EXPECT_THAT(over["warnings"][0].get<std::string>(), HasSubstr("server a is overloaded"));
  EXPECT_THAT(over["warnings"][0].get<std::string>(), HasSubstr("no steady-state figure"));
  const CliResult text =
      moesim_cli("-q cluster " + (dir / "one-0.25s.json").string() + " --placement prism --duration 2m");
  EXPECT_THAT(text.out, HasSubstr("OVERLOADED"));
  // --plot: its latency and local compute ratio over time.
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0) {
    const std::string png = (dir / "over-time.png").string();
    const CliResult p = moesim_cli("-q cluster " + (dir / "one-0.25s.json").string() +
                                   " --placement prism --duration 2m --plot " + png);
    ASSERT_EQ(p.code, 0) << p.err;
    EXPECT_GT(std::filesystem::file_size(png), 1000u);
  }
}

}  // namespace
}  // namespace moesim::test
