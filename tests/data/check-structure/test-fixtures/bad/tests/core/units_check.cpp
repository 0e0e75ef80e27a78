// A test that builds its paths itself, twice.
#include "core/units.h"
#include "tests/fixtures.h"

std::string model() { return std::string(MOESIM_TEST_DATA_DIR) + "/models/tiny.json"; }
std::string trace() { return std::string(MOESIM_SOURCE_DIR) + "/data/traces/x.csv"; }
std::string other() { return test_data("x"); }
int check() { return units(); }
