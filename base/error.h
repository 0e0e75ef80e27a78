// Errors. Every failure that a user can cause (bad input, bad flag, bad file) is reported as a
// moesim::Error whose message names the file, the line or byte offset and the field, so that the CLI can
// print it and exit non-zero. Programming errors use assert.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace moesim {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A bad command line (an unknown or out-of-range option value, a missing argument, options that exclude
// each other): the CLI prints "moesim: error: ..." and exits 2, as for CLI11's own parse errors; other
// Errors (bad input files, failed writes) exit 1.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what) {}
};

// Text a user gave, as a message quotes it: control characters and DEL escaped ("\n", "\t", "\x01"), so a
// name cannot move the cursor, clear the terminal or split a message's line.
std::string printable(std::string_view text);

// "FILE:LINE: FIELD: MESSAGE" (line 0 = whole file; empty field omitted).
[[nodiscard]] Error input_error(std::string_view file, uint64_t line, std::string_view field,
                                std::string_view message);
// "FILE: at byte OFFSET: FIELD: MESSAGE" for binary inputs.
[[nodiscard]] Error binary_input_error(std::string_view file, uint64_t offset, std::string_view field,
                                       std::string_view message);

}  // namespace moesim
