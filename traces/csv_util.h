// Shared text-parsing helpers of the trace importers: line iteration, strict number parsing, CSV field
// splitting, phase names, and the --fields mapping of JSONL/CSV record fields to the user's key names.
// Parsers are strict on purpose: "12x", " 12", "" and "1e3" are not integers; a number that does not fit
// its field's type is an error, never a silent wrap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/trace.h"

namespace moesim::traces {

// Iterates over the lines of a text buffer ("\n" or "\r\n"); line numbers start at 1.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line);
  uint64_t line_number() const { return line_; }  // of the line last returned

 private:
  std::string_view text_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
};

std::optional<uint64_t> parse_uint(std::string_view s);  // decimal digits only
std::optional<int64_t> parse_int(std::string_view s);    // optional leading '-'
std::optional<float> parse_float(std::string_view s);    // from_chars general format; NaN/inf pass through
// Phase from "prefill"/"decode" or "0"/"1" (case-sensitive); nullopt otherwise.
std::optional<Phase> parse_phase_name(std::string_view s);

// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by '?', so that text taken
// from an input (a model path in a preamble, a file name) can always go into JSON headers and outputs.
std::string sanitize_utf8(std::string_view s);

// Splits one CSV line on `sep`. Fields may be double-quoted ("a,b" and "" for a quote inside); an
// unterminated quote or text after a closing quote returns false with `error` set.
bool split_csv(std::string_view line, char sep, std::vector<std::string>& out, std::string& error);

// Which key (JSONL) or column (CSV) holds each record field.
struct FieldMap {
  std::string seq = "seq";
  std::string token = "token";
  std::string layer = "layer";
  std::string experts = "experts";
  std::string weights = "weights";
  std::string phase = "phase";
  std::string logits = "logits";
};
inline constexpr const char* kKnownFields = "seq, token, layer, experts, weights, phase, logits";

// Parses "seq=KEY,token=KEY,..." (any subset, empty = defaults). Unknown field names, a missing '=' or
// empty key, a field given twice, or two fields mapped to the same key are errors (moesim::Error naming
// --fields and listing the known fields).
FieldMap parse_field_map(const std::string& spec);

}  // namespace moesim::traces
