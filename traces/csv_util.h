// Shared text-parsing helpers of the trace importers: line iteration, strict number parsing, CSV field
// splitting, list cells, phase names, the --fields mapping of JSONL/CSV record fields to the user's key
// names, the JSONL/CSV import options, and RecordCollector, which applies those options (--token-from,
// --layer-base, --skip-warmup, --drop-duplicates) the same way for every text importer.
// Parsers are strict on purpose: "12x", " 12", "" and "1e3" are not integers; a number that does not fit
// its field's type is an error, never a silent wrap.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "traces/trace.h"

namespace moesim::traces {

// The text after a UTF-8 byte order mark, if `text` starts with one.
std::string_view skip_bom(std::string_view text);

// Iterates over the lines of a text buffer ("\n" or "\r\n"); line numbers start at 1.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line);
  uint64_t line_number() const { return line_; }  // of the line last returned
  // True when the line last returned is the last one and no newline ends it: the file may have been cut
  // while being written. Importers accept such a line only when it parses completely, and then warn.
  bool last_line_unterminated() const {
    return pos_ > text_.size() && !text_.empty() && text_.back() != '\n';
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
};

// When the line last returned is an unterminated last line: warn() "ORIGIN:LINE: ... may have been cut".
// Importers call it once that line has parsed completely.
void warn_if_cut(const LineReader& lines, const std::string& origin);
// `e`, with a note that the file may be cut when the line last returned is an unterminated last line.
Error note_if_cut(const LineReader& lines, const Error& e);

std::optional<uint64_t> parse_uint(std::string_view s);  // decimal digits only
std::optional<float> parse_float(std::string_view s);    // from_chars general format; NaN/inf pass through
// Phase from "prefill"/"decode" or "0"/"1" (case-sensitive); nullopt otherwise.
std::optional<Phase> parse_phase_name(std::string_view s);

// Length of the well-formed UTF-8 sequence starting at s[i] (1-4), or 0 when the bytes there are not one
// (a stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF, a cut sequence).
size_t utf8_sequence_length(std::string_view s, size_t i);

// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by '?', so that text taken
// from an input (a model path in a preamble, a file name) can always go into JSON headers and outputs.
std::string sanitize_utf8(std::string_view s);

// Splits one CSV line on `sep`. Fields may be double-quoted ("a,b" and "" for a quote inside); an
// unterminated quote or text after a closing quote returns false with `error` set.
bool split_csv(std::string_view line, char sep, std::vector<std::string>& out, std::string& error);

// Splits a list cell into its items. Accepted forms: "1;5;9", "1,5,9", "1 5 9", "[1, 5, 9]" (brackets
// optional, items separated by one ';' or ',' with optional blanks around it, or by blanks alone). An empty
// or blank cell (or "[]") is an empty list. An empty item ("1;;2", "1,"), a '[' without its ']' or text
// after the ']' returns false with `error` set.
bool split_list(std::string_view cell, std::vector<std::string_view>& items, std::string& error);

// Expert ids: a trace holds them in 16 bits, so an id is below kExpertIdLimit, and below the expert count
// when the model or the file declares one (`experts`, 0 = none).
inline constexpr uint64_t kExpertIdLimit = 65536;
// The expert id written as `text` (a list item): digits only. A whole number at or above the limit, however
// many digits it has, is "expert id N outside [0, LIMIT): out of range (...)"; anything else "expert id
// 'TEXT' is not a non-negative integer". Errors name origin, line and `field`.
uint32_t parse_expert_id(std::string_view text, uint32_t experts, const std::string& origin, uint64_t line,
                         const char* field = "experts");
// The "out of range" error of parse_expert_id for an id shown as `shown` (JSONL: a number too large for an
// integer type arrives as a float).
Error expert_id_out_of_range(std::string_view shown, uint32_t experts, const std::string& origin, uint64_t line,
                             const char* field = "experts");

// A required record field the input lacks: its name (FieldMap's) and the key or column it was looked up by.
struct MissingField {
  std::string field, name;
};
// All missing fields in one error, with what the input has instead, so that one --fields fixes them all:
//   "ORIGIN:LINE: field 'token': missing (no column named 'pos' in the header row, which has: a, b);
//    map it with --fields token=NAME<hint>"
// ("fields 'token', 'layer': ... named 'token', 'layer' ... map them with --fields token=NAME,layer=NAME").
// `kind` is "column" or "key", `where` "the header row" or "the record". Without `mappable` (fixed formats)
// the --fields advice is left out. `hint` is appended as is.
Error missing_fields_error(const std::string& origin, uint64_t line, const std::vector<MissingField>& missing,
                           std::string_view kind, std::string_view where, const std::vector<std::string>& present,
                           bool mappable, std::string_view hint = {});

// Shape a text importer enforces while reading, so that errors name the line: 0 = infer from the data
// (largest id + 1) or, for route_trace, from its preamble (which must then agree with a non-zero value).
struct ImportShape {
  uint32_t layers = 0;
  uint32_t experts = 0;
};

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

// What the JSONL and CSV importers do beyond reading the fields (docs/trace-format.md, "Import options").
// Converts from a FieldMap so that import_csv(text, origin, fields) keeps working.
struct TextImportOptions {
  TextImportOptions(FieldMap f = {}) : fields(std::move(f)) {}  // NOLINT: implicit on purpose

  FieldMap fields;
  // --token-from order: the records carry no token; within a (sequence, phase, layer) the n-th record (in
  // file order, counting from 0, after --where and --skip-warmup) is token n. A record with a token key
  // or a token column is then an error.
  bool token_from_order = false;
  // --layer-base B: layer ids in the file start at B; B is subtracted (an id below B is an error).
  uint32_t layer_base = 0;
  // --where KEY=VALUE filters: a record is kept only when every KEY holds VALUE (JSONL: a top-level key,
  // compared as the string itself or, for other JSON values, as their compact JSON text; CSV: the column's
  // text after unquoting). A record without the key does not match; a CSV header without the column is an
  // error. Skipped records are counted (provenance.where_skipped) and reported with warn().
  std::vector<std::pair<std::string, std::string>> where;
  // --skip-warmup: drop the warm-up preamble (see RecordCollector::finish).
  bool skip_warmup = false;
  // --drop-duplicates: keep the first record of a cell and drop (and count) later ones instead of failing.
  bool drop_duplicates = false;
  // CSV separator; 0 = auto: a tab when the header row has tabs and no commas, else ','.
  char delimiter = 0;
};

// Parses "KEY=VALUE" (--where); a missing '=' or an empty key is a UsageError.
std::pair<std::string, std::string> parse_where(const std::string& spec);
// Parses --delimiter: one character, or "tab" / "\t"; "" = auto (0). Anything else is a UsageError.
char parse_delimiter(const std::string& spec);

// Collects the records of one JSONL/CSV file in file order and turns them into a Trace, applying
// TextImportOptions on the way (layer base at add(), everything else at finish()). Errors name `origin`
// and the record's line.
class RecordCollector {
 public:
  RecordCollector(std::string origin, std::string format, const TextImportOptions& opts,
                  const ImportShape& shape);

  // `token` is ignored with token_from_order. Checks the layer against the base and the model's shape.
  void add(uint32_t seq, Phase phase, uint32_t token, uint32_t layer, std::span<const uint32_t> experts,
           std::span<const float> weights, std::span<const float> logits, uint64_t line);
  // A record --where did not keep.
  void skip_filtered() { ++filtered_; }
  size_t records() const { return seq_.size(); }

  // Drops the warm-up preamble (with skip_warmup), numbers tokens (with token_from_order), warns about a
  // likely 1-based file, and builds the trace (TraceBuilder: canonical order, duplicates, shape).
  //
  // Warm-up preamble: let P be the longest leading run of records (file order, after --where) in which all
  // records of the same layer carry the same set of experts. Records of P whose (seq, phase, token) also
  // occurs after P are taken back out of it (the run ends on a token boundary). What is left is dropped
  // when it holds at least two records of every layer it contains (identical dummy tokens, as vLLM's
  // profiling run writes before real traffic); otherwise nothing is dropped. Either way warn() says how
  // many records were dropped (provenance.warmup_dropped).
  Trace finish(bool with_weights, bool with_logits, uint64_t header_line) &&;

 private:
  std::string origin_, format_;
  TextImportOptions opts_;
  ImportShape shape_;
  uint64_t filtered_ = 0;
  std::vector<uint32_t> seq_, token_, layer_;
  std::vector<uint8_t> phase_;
  std::vector<uint64_t> line_;
  std::vector<uint32_t> experts_;
  std::vector<float> weights_, logits_;
  std::vector<size_t> eoff_{0}, woff_{0}, loff_{0};  // record r's values are [off[r], off[r + 1])
};

}  // namespace moesim::traces
