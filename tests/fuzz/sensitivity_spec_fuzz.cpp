// libFuzzer target: the sensitivity spec reader (JSON text -> checks -> points, systems, factors, fields).
// moesim::Error is expected for bad input; anything else is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "harness/sensitivity_job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  moesim::Json j;
  try {
    j = moesim::parse_json_text(text, "fuzz.json");
  } catch (const moesim::Error&) {
    return 0;
  }
  try {
    const auto spec = moesim::harness::sensitivity_spec_from_json(j, "fuzz.json", ".");
    if (spec.points.empty()) std::abort();
    for (const auto& p : spec.points)
      if (p.systems.size() < 2 || p.trace.empty() || p.budget.empty()) std::abort();
    for (double f : spec.factors)
      if (!(f > 0) || f == 1) std::abort();
  } catch (const moesim::Error&) {
  }
  return 0;
}
