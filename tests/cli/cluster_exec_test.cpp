// `moesim cluster --platform exec` end to end (docs/cluster-exec.md): a short emulated run (3 server
// processes in network namespaces; root) serves the requests the simulator serves, with the same local and
// remote invocations, and leaves nothing behind; bad options and unsafe or wrong secrets are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/json_io.h"
#include "cluster_exec_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

#define SKIP_WITHOUT_NAMESPACES() \
  if (const std::string why = exec::EmulatedNetwork::unavailable_reason(); !why.empty()) GTEST_SKIP() << why

TEST(ClusterExec, EmulatedRunServesTheSimulatorsRequestsAndLeavesNothing) {
  SKIP_WITHOUT_NAMESPACES();
  const ExecCluster c = make_exec_cluster("emulated", {0.1, 0.6, 1.1, 1.6});
  const EmulatedRunLock lock;
  RunCleanup cleanup{c.spec, "", ""};
  const std::string args = "-q cluster " + c.spec + " --placement prism --duration 2s --json -o ";
  const std::string real_out = (c.dir / "exec.json").string(), sim_out = (c.dir / "sim.json").string();
  const CliResult real = moesim_cli(args + real_out + " --platform exec");
  ASSERT_EQ(real.code, 0) << real.err;
  const Json r = load_json_file(real_out);
  cleanup.run_id = r["platform"]["network"]["run_id"].get<std::string>();
  const std::string rendezvous = r["platform"]["rendezvous"].get<std::string>();
  EXPECT_EQ(r["platform"]["kind"], "exec");
  EXPECT_EQ(r["platform"]["launch"], "netns");
  EXPECT_EQ(r["requests"].get<uint64_t>(), 12u);
  EXPECT_GT(r["remote_invocations"].get<uint64_t>(), 0u);
  EXPECT_GT(r["platform"]["calls"].get<uint64_t>(), 0u);
  ASSERT_EQ(r["links"].size(), 6u);  // 3 links, each direction
  for (const Json& l : r["links"]) EXPECT_GT(l["bytes"].get<uint64_t>(), 0u) << l.dump();

  // The same system on the same arrivals and placement: which expert runs where does not depend on time.
  const CliResult sim = moesim_cli(args + sim_out);
  ASSERT_EQ(sim.code, 0) << sim.err;
  const Json s = load_json_file(sim_out);
  EXPECT_EQ(s["platform"]["kind"], "sim");
  EXPECT_EQ(r["requests"], s["requests"]);
  EXPECT_EQ(r["local_invocations"], s["local_invocations"]);
  EXPECT_EQ(r["remote_invocations"], s["remote_invocations"]);
  EXPECT_EQ(r["local_compute_ratio"]["per_server"], s["local_compute_ratio"]["per_server"]);

  EXPECT_EQ(leftovers(c.spec, cleanup.run_id, rendezvous), "");
  EXPECT_THAT(rendezvous, HasSubstr("/tmp/moesim-cluster-"));
  std::filesystem::remove_all(c.dir);
}

TEST(ClusterExec, BadOptionsAreUsageErrors) {
  const ExecCluster c = make_exec_cluster("options", {0.1});
  const std::string base = "cluster " + c.spec + " --placement prism --platform exec";
  const CliResult no_duration = moesim_cli(base);
  EXPECT_EQ(no_duration.code, 2) << no_duration.err;
  EXPECT_THAT(no_duration.err, HasSubstr("--duration"));
  const CliResult bogus = moesim_cli(base + " --duration 1s --launch bogus");
  EXPECT_EQ(bogus.code, 2) << bogus.err;
  EXPECT_THAT(bogus.err, HasSubstr("--launch"));
  const CliResult no_dir = moesim_cli(base + " --duration 1s --launch none");
  EXPECT_EQ(no_dir.code, 2) << no_dir.err;
  EXPECT_THAT(no_dir.err, HasSubstr("--rendezvous"));
  std::filesystem::remove_all(c.dir);
}

void write_secret(const std::filesystem::path& path, const std::string& secret, std::filesystem::perms mode) {
  std::ofstream(path) << secret << "\n";
  std::filesystem::permissions(path, mode);
}

TEST(ClusterExec, ServerRefusesASecretFileOthersCanRead) {
  const ExecCluster c = make_exec_cluster("secret_mode", {0.1});
  const auto secret = c.dir / "secret";
  using P = std::filesystem::perms;
  write_secret(secret, "0123456789abcdef0123456789abcdef",
               P::owner_read | P::owner_write | P::group_read | P::others_read);
  RunCleanup cleanup{c.spec, "", ""};
  const CliResult r = moesim_cli("cluster-server " + c.spec + " --server a --rendezvous " + c.dir.string());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(secret.string()));
  EXPECT_THAT(r.err, HasSubstr("chmod 600"));
  EXPECT_TRUE(cluster_servers_of(c.spec).empty());
  std::filesystem::remove_all(c.dir);
}

// A server started by hand (--launch none's flow, on 127.0.0.1) and a coordinator holding another secret:
// the coordinator's stderr, and whether the server was still up after it.
struct WrongSecretRun {
  int code = -1;
  std::string err;
  size_t servers_after = 0;
};
WrongSecretRun run_with_wrong_secret(const std::string& test) {
  const ExecCluster c = make_exec_cluster(test, {0.1});
  const std::string spec = (c.dir / "one.json").string();
  std::ofstream(spec) << R"({"model": ")" << test::test_data("models/tiny-moe.json") << R"(",
    "network": {"bandwidth": "100Mbit/s", "latency": "1ms"},
    "servers": [{"name": "a", "hw": "desktop-rtx4090", "gpus": 1, "gpu_memory": "64MiB", "traces": ["a.mtr"],
                 "arrival": "timestamps:a.times"}]})";
  const auto rendezvous = c.dir / "rendezvous";
  std::filesystem::create_directories(rendezvous);
  using P = std::filesystem::perms;
  write_secret(rendezvous / "secret", "0123456789abcdef0123456789abcdef", P::owner_read | P::owner_write);
  write_secret(c.dir / "other", "fedcba9876543210fedcba9876543210", P::owner_read | P::owner_write);
  RunCleanup cleanup{spec, "", ""};
  WrongSecretRun w;
  if (run_shell(std::string(MOESIM_CLI_PATH) + " -q cluster-server " + spec + " --server a --rendezvous " +
                rendezvous.string() + " > " + (c.dir / "server.log").string() + " 2>&1 &")
          .status != 0)
    return w;
  const CliResult r =
      moesim_cli("-q cluster " + spec + " --placement prism --platform exec --launch none --rendezvous " +
                 rendezvous.string() + " --secret-file " + (c.dir / "other").string() + " --duration 2s");
  w.code = r.code;
  w.err = r.err;
  w.servers_after = cluster_servers_of(spec).size();
  std::filesystem::remove_all(c.dir);
  return w;
}

TEST(ClusterExec, CoordinatorWithAnotherSecretIsRefused) {
  const WrongSecretRun w = run_with_wrong_secret("wrong_secret");
  EXPECT_EQ(w.code, 1) << w.err;
  EXPECT_THAT(w.err, HasSubstr("wrong x-moesim-secret"));
  // The refused coordinator could not shut the server down: it was still up, and only the clean-up ended it.
  EXPECT_EQ(w.servers_after, 1u);
}

// The control client's errors name the gRPC status, as the expert client's do (docs/cluster-exec.md).
TEST(ClusterExec, WrongSecretIsReportedAsUnauthenticated) {
  const WrongSecretRun w = run_with_wrong_secret("wrong_secret_status");
  EXPECT_EQ(w.code, 1) << w.err;
  EXPECT_THAT(w.err, HasSubstr("UNAUTHENTICATED"));
}

}  // namespace
}  // namespace moesim::test
