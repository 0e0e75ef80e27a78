// base/output_guard: two outputs on one path, an output inside an input folder (existing or not yet), and the
// registry of declared outputs that the input openers consult (base/input_file.h), lasting as long as its
// scope.
#include "base/output_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "base/input_file.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class OutputGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("moesim_output_guard_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text = "") const {
    const std::string p = (dir_ / name).string();
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(OutputGuard, TwoOutputsOnOnePathAreRefused) {
  const std::string y = file("y.json");
  // Neither exists yet: compared as normalised absolute paths.
  EXPECT_THAT(test::error_of([&] {
                refuse_outputs_over_inputs({{y, "-o"}, {y, "--timeline"}}, {});
              }),
              HasSubstr("-o '" + y + "' and --timeline '" + y + "' are one path"));
  fs::create_directories(dir_ / "sub");
  EXPECT_THROW(refuse_outputs_over_inputs({{y, "-o"}, {file("sub/../y.json"), "--csv"}}, {}), UsageError);
  // Both exist: one file through a symbolic link.
  file("y.json", "{}\n");
  fs::create_symlink(y, dir_ / "link.json");
  EXPECT_THROW(refuse_outputs_over_inputs({{y, "-o"}, {file("link.json"), "--csv"}}, {}), UsageError);
  // Different paths, standard output twice and a device twice are fine.
  EXPECT_NO_THROW(refuse_outputs_over_inputs({{y, "-o"}, {file("t.json"), "--timeline"}}, {}));
  EXPECT_NO_THROW(refuse_outputs_over_inputs({{"-", "-o"}, {"-", "--csv"}}, {}));
  EXPECT_NO_THROW(refuse_outputs_over_inputs({{"/dev/null", "-o"}, {"/dev/null", "--csv"}}, {}));
}

TEST_F(OutputGuard, AnOutputInsideAnInputFolderIsRefused) {
  fs::create_directories(dir_ / "w");
  const std::string shard = file("w/a.safetensors", "weights");
  const std::string w = (dir_ / "w").string();
  // An existing file of the folder, and a new one.
  EXPECT_THAT(test::error_of([&] {
                refuse_outputs_over_inputs({{shard, "-o"}}, {{w, "--weights"}});
              }),
              HasSubstr("-o '" + shard + "' lies inside input folder '" + w + "' (--weights)"));
  EXPECT_THROW(refuse_outputs_over_inputs({{file("w/new.store"), "-o"}}, {{w, "--weights"}}), UsageError);
  // Deeper, in folders that do not exist yet.
  EXPECT_THROW(refuse_outputs_over_inputs({{file("w/x/y/z.store"), "-o"}}, {{w, "--weights"}}), UsageError);
  // Beside the folder is fine.
  EXPECT_NO_THROW(refuse_outputs_over_inputs({{file("s.store"), "-o"}}, {{w, "--weights"}}));
}

TEST_F(OutputGuard, DeclaredOutputsAreRefusedByTheInputOpenersWhileDeclared) {
  const std::string out = file("out.json", "old\n"), other = file("other.json", "x\n");
  {
    const DeclaredOutputs declared({{out, "--output"}, {"-", "--csv"}});
    EXPECT_THAT(test::error_of([&] { check_not_an_output(out, "the hardware profile, preset x"); }),
                HasSubstr("--output '" + out + "' is the same file as input '" + out +
                          "' (the hardware profile, preset x)"));
    // Any spelling of the file: here a hard link.
    fs::create_hard_link(out, dir_ / "hard.json");
    EXPECT_THROW(check_not_an_output(file("hard.json"), "x"), UsageError);
    // base/input_file.h consults the registry.
    EXPECT_THAT(test::error_of([&] { InputFile in(out); }), HasSubstr("(read by the command)"));
    EXPECT_NO_THROW(InputFile in(other));
    EXPECT_NO_THROW(check_not_an_output(file("missing.json"), "x"));
  }
  // The scope ended: the file is an input like any other.
  EXPECT_NO_THROW(InputFile in(out));
}

// An output that does not exist when it is declared cannot replace anything: nothing is registered.
TEST_F(OutputGuard, AnOutputNotThereYetRegistersNothing) {
  const std::string out = file("new.json");
  const DeclaredOutputs declared({{out, "-o"}});
  std::ofstream(out) << "written later\n";
  EXPECT_NO_THROW(InputFile in(out));
}

}  // namespace
}  // namespace moesim
