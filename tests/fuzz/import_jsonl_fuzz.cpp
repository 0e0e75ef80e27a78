// libFuzzer target: the JSONL importer (parse from memory). moesim::Error is expected for bad input;
// anything else is a bug. An imported trace must export to JSONL that imports to the same JSONL again.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace moesim::traces;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Trace t;
  try {
    t = import_jsonl(text, "fuzz.jsonl");
  } catch (const moesim::Error&) {
    return 0;
  }
  (void)build_lookup_stream(t, 1);
  const std::string out = export_jsonl(t);
  if (export_jsonl(import_jsonl(out, "export.jsonl")) != out) std::abort();  // must round-trip
  return 0;
}
