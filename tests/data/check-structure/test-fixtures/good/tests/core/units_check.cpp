// Names MOESIM_TEST_DATA_DIR in a comment and "MOESIM_SOURCE_DIR" in a string: neither is a use.
#include "core/units.h"
#include "tests/fixtures.h"

const char* kNote = "MOESIM_SOURCE_DIR";
std::string path() { return test_data("models/tiny.json") + kNote; }
int check() { return units(); }
