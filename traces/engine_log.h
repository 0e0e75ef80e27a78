// A real inference engine's per-token log: what `moesim calibrate --from-log` fits a profile to and
// `moesim validate --log` compares the simulator with (docs/engine-logs.md).
//
// The BigMoeOnEdge format (data/traces/SOURCE.md): a CSV header row, one row per decoded token
//   step,steps,wall_ms,io_ms,compute_ms,read_bytes,cache_hit_pct,stall_ms,mgmt_ms,majflt,cpu_ms
// (steps 1..N in order, `steps` = N on every row), then one line
//   # summary tokens=N s/tok=... n_prompt=P prefill_s=... (key=value pairs)
// Other engines' logs: a LogFieldMap names the column (or summary key) that holds each field. Columns the
// map does not name are read as numbers and otherwise ignored.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moesim::traces {

// The fields a log gives. Per token (columns): step, steps, wall_ms, io_ms, compute_ms, read_bytes,
// stall_ms, mgmt_ms (steps, stall_ms and mgmt_ms optional: absent, steps is not checked and the others
// read 0). From the summary line (keys): n_prompt and prefill_s (the prompt's tokens and seconds).
inline constexpr const char* kLogFields =
    "step, steps, wall_ms, io_ms, compute_ms, read_bytes, stall_ms, mgmt_ms (columns); n_prompt, prefill_s "
    "(summary keys)";

// Which column or summary key holds each field (default: the BigMoeOnEdge names).
struct LogFieldMap {
  std::map<std::string, std::string> names;  // field -> column or key
  LogFieldMap();
  const std::string& operator[](const std::string& field) const { return names.at(field); }
};

// Parses "wall_ms=COL,io_ms=COL,..." (any subset; empty = the defaults). An unknown field, a missing '='
// or empty name, or a field given twice is a moesim::UsageError naming --log-fields and the known fields.
LogFieldMap parse_log_fields(const std::string& spec);

struct EngineLogToken {
  uint32_t step = 0;  // 1-based
  double wall_ms = 0, io_ms = 0, compute_ms = 0, read_bytes = 0, stall_ms = 0, mgmt_ms = 0;
};

struct EngineLog {
  std::string origin;
  std::vector<EngineLogToken> tokens;        // in step order: tokens[i].step == i + 1
  std::map<std::string, std::string> summary;  // every key=value of the summary line
  uint64_t summary_line = 0;
  uint32_t n_prompt = 0;
  double prefill_s = 0;
  double mean_wall_ms() const;  // mean time per decoded token
};

// Parses a log held in memory. Throws moesim::Error "ORIGIN:LINE: field 'COLUMN': column C: ..." for a
// non-numeric or negative cell, a row with the wrong number of cells, steps not 1..N in order (or a `steps`
// cell other than N), a header without a required column; "ORIGIN: ... no '# summary' line" when the summary
// is missing, and an error naming the summary's line for a missing or bad n_prompt / prefill_s.
EngineLog parse_engine_log(std::string_view text, const std::string& origin, const LogFieldMap& fields = {});
// Reads the file (or pipe) at `path` and parses it.
EngineLog read_engine_log(const std::string& path, const LogFieldMap& fields = {});

}  // namespace moesim::traces
