// libFuzzer target: the CSV importer (parse from memory). moesim::Error is expected for bad input;
// anything else is a bug. An imported trace must round-trip through JSONL export/import.
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
    t = import_csv(text, "fuzz.csv");
  } catch (const moesim::Error&) {
    return 0;
  }
  (void)build_lookup_stream(t, 3);
  const std::string out = export_jsonl(t);
  if (export_jsonl(import_jsonl(out, "export.jsonl")) != out) std::abort();
  return 0;
}
