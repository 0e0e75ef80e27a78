// libFuzzer target: the route_trace v1 importer (parse from memory, no disk). moesim::Error is the
// expected outcome for bad input; anything else (crash, sanitizer report, other exception) is a bug.
// A trace that imports must also survive .mtr encode -> decode and build a lookup stream.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "traces/lookup_stream.h"
#include "traces/mtr_format.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace moesim::traces;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Trace t;
  try {
    t = import_bigmoe(text, "fuzz.csv");
  } catch (const moesim::Error&) {
    return 0;
  }
  const LookupStream ls = build_lookup_stream(t, 2);
  const Trace back = decode_mtr(encode_mtr(t), "roundtrip.mtr");  // must not throw
  if (back.records() != t.records() || back.info().missing_cells != t.info().missing_cells) std::abort();
  (void)ls;
  return 0;
}
