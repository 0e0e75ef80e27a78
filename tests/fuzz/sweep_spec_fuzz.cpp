// libFuzzer target: the sweep spec reader (JSON text -> checks -> points, command lines, ids). moesim::Error
// is expected for bad input; anything else is a bug. Grids whose product exceeds 10,000 points are skipped:
// expanding them is the point of a big grid, not a parser fault, and would only exhaust the fuzzer's memory.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "harness/sweep_spec.h"
#include "base/error.h"
#include "base/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  moesim::Json j;
  try {
    j = moesim::parse_json_text(text, "fuzz.json");
  } catch (const moesim::Error&) {
    return 0;
  }
  if (j.is_object() && j.contains("grid") && j["grid"].is_object()) {
    double product = 1;
    for (const auto& [k, v] : j["grid"].items()) product *= v.is_array() ? static_cast<double>(v.size()) : 1.0;
    if (product > 10000) return 0;
  }
  try {
    const auto spec = moesim::harness::sweep::spec_from_json(j, "fuzz.json", ".");
    if (spec.points.empty() || spec.hash.size() != 16) std::abort();
    for (const auto& p : spec.points)
      if (moesim::harness::sweep::point_id(spec, p).size() != 16) std::abort();
  } catch (const moesim::Error&) {
  }
  return 0;
}
