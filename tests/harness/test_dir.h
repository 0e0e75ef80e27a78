// A fixture whose every test gets an empty folder of its own under the temporary directory (fresh_test_dir,
// named after the suite and the test, so parallel test processes never share one), removed afterwards.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace moesim::test {

class TestDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fresh_test_dir(std::string("moesim-") + info->test_suite_name(), info->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

}  // namespace moesim::test
