// Where the fixture tree's tests find their inputs.
#pragma once

#include <string>

inline std::string test_data(const std::string& rel) { return std::string(MOESIM_TEST_DATA_DIR) + "/" + rel; }
