// libFuzzer target: the per-token engine log reader (traces/engine_log.h), with the default columns and with a
// mapping. moesim::Error is expected for bad input; anything else is a bug. A log that parses has its steps
// 1..N in order and a finite non-negative mean.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "traces/engine_log.h"

namespace {

void check(std::string_view text, const moesim::traces::LogFieldMap& fields) {
  moesim::traces::EngineLog log;
  try {
    log = moesim::traces::parse_engine_log(text, "fuzz.metrics", fields);
  } catch (const moesim::Error&) {
    return;
  }
  for (size_t i = 0; i < log.tokens.size(); ++i)
    if (log.tokens[i].step != i + 1) std::abort();
  const double m = log.mean_wall_ms();
  if (log.tokens.empty() || !std::isfinite(m) || m < 0 || log.summary_line == 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text, {});
  check(text, moesim::traces::parse_log_fields("step=idx,wall_ms=latency,io_ms=disk,compute_ms=mm,read_bytes=bytes"));
  return 0;
}
