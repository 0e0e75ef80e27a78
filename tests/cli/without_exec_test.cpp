// A moesim built without exec (-DMOESIM_EXEC=OFF, docs/build.md): it simulates, its commands that need exec
// stay registered and refuse with a UsageError (exit 2) naming the build, and its binary needs none of the
// libraries exec brings (gRPC, protobuf, liburing, the CUDA runtime). Each test skips, saying why, in a build
// with exec (tests/cli/exec_cli_test.cpp and the others test exec there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/fixtures.h"

namespace moesim::test {
namespace {

using ::testing::HasSubstr;

// The mirror of MOESIM_SKIP_WITHOUT_EXEC (tests/cli/cli_test_util.h).
#define MOESIM_SKIP_WITH_EXEC() \
  if (MOESIM_TEST_HAS_EXEC) GTEST_SKIP() << "this moesim was built with exec (tests of a build without)"

const std::string kNoExec = "this moesim was built without exec (-DMOESIM_EXEC=OFF): ";

std::string tiny_model() {
  return test::test_data("models/tiny-moe.json");
}

std::string tiny_trace() {
  const std::string path = temp_path("without_exec.mtr");
  const ShellResult r = moesim_combined("-q trace synth --model " + tiny_model() +
                                        " --tokens 20 --zipf 0.9 --seed 1 -o " + path);
  EXPECT_EQ(r.status, 0) << r.out;
  return path;
}

TEST(WithoutExec, TheBinaryLinksNoLibraryOfExec) {
  MOESIM_SKIP_WITH_EXEC();
  const ShellResult r = run_shell("ldd " + std::string(MOESIM_CLI_PATH));
  if (r.status != 0) GTEST_SKIP() << "ldd is not available here";
  ASSERT_THAT(r.out, HasSubstr("libc.so"));  // ldd listed the libraries
  for (const char* lib : {"libgrpc", "libprotobuf", "liburing", "libcudart", "libcuda."})
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr(lib))) << lib;
}

TEST(WithoutExec, SimulatedCommandsRun) {
  MOESIM_SKIP_WITH_EXEC();
  const std::string trace = tiny_trace();
  const ShellResult run =
      moesim_combined("run " + trace + " --model " + tiny_model() + " --budget 1MiB --json");
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("\"metrics\""));
  const ShellResult cmp = moesim_combined("compare --trace " + trace + " --model " + tiny_model() +
                                          " --policy lru,fifo --budget 1MiB");
  EXPECT_EQ(cmp.status, 0) << cmp.out;
}

TEST(WithoutExec, CommandsThatNeedExecAreUsageErrorsNamingTheBuild) {
  MOESIM_SKIP_WITH_EXEC();
  const std::string trace = tiny_trace();
  const std::string store = temp_path("no.store");
  const std::string spec = test::test_data("models/tiny-moe.json");
  for (const std::string& args :
       {"exec " + trace + " --model " + tiny_model() + " --store " + store + " --budget 1MiB",
        "validate " + trace + " --model " + tiny_model() + " --store " + store + " --budget 1MiB",
        "calibrate --micro --store " + store + " -o " + temp_path("p.json"),
        "calibrate " + trace + " --model " + tiny_model() + " --store " + store + " -o " +
            temp_path("p.json"),
        "cluster " + spec + " --placement uniform --platform exec --duration 1m", "cluster-server " + spec}) {
    const ShellResult r = moesim_combined(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(kNoExec)) << args;
  }
}

}  // namespace
}  // namespace moesim::test
