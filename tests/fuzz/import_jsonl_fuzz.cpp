// libFuzzer target: the JSONL importer (parse from memory), with the default options and with the import
// options that filter and reshape the records (--where, --skip-warmup, --drop-duplicates, --token-from
// order, --layer-base). moesim::Error is expected for bad input; anything else is a bug. An imported trace
// must export to JSONL that imports to the same JSONL again.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "base/warnings.h"
#include "traces/lookup_stream.h"
#include "traces/trace_io.h"

namespace {

void check(std::string_view text, const moesim::traces::TextImportOptions& opts) {
  using namespace moesim::traces;
  Trace t;
  try {
    t = import_jsonl(text, "fuzz.jsonl", opts);
  } catch (const moesim::Error&) {
    return;
  }
  (void)build_lookup_stream(t, 1);
  const std::string out = export_jsonl(t);
  if (export_jsonl(import_jsonl(out, "export.jsonl")) != out) std::abort();  // must round-trip
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moesim::set_warnings_printed(false);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  moesim::traces::TextImportOptions opts;
  check(text, opts);
  opts.where = {{"type", "route"}};
  opts.skip_warmup = opts.drop_duplicates = true;
  check(text, opts);
  opts.token_from_order = true;
  opts.layer_base = 1;
  check(text, opts);
  moesim::clear_warnings();  // the list would otherwise grow with every input
  return 0;
}
