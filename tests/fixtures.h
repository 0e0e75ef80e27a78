// Where a test finds its inputs: one way for every test. The macros behind these (tests/CMakeLists.txt sets
// MOESIM_SOURCE_DIR and MOESIM_TEST_DATA_DIR for every test target) are used here only; a test names a file
// relative to the folder that holds it.
//   test_data("models/tiny-moe.json")  tests/data/: fixtures made for the tests (golden tables too)
//   bundled_data("hardware/jetson-agx-orin-64gb.json")  data/: what moesim ships and reads at run time
//   source_path("experiments/slurm/single-node.sh")  anything else in the source tree (scripts, experiments)
#pragma once

#include <string>
#include <string_view>

namespace moesim::test {

inline std::string source_path(std::string_view rel) {
  return std::string(MOESIM_SOURCE_DIR) + "/" + std::string(rel);
}
inline std::string test_data(std::string_view rel) {
  return std::string(MOESIM_TEST_DATA_DIR) + "/" + std::string(rel);
}
inline std::string bundled_data(std::string_view rel) {
  return source_path("data/" + std::string(rel));
}

}  // namespace moesim::test
