// The checks every option of every command gets, so that a bad value is reported by the option's name, the
// value given and what was expected (exit 2), never by CLI11's raw texts ("Could not convert", a range with
// DBL_MAX spelt out in 300 digits, "At Most 1 required but received 2"), and so that an unsigned option never
// wraps a negative value (CLI11 reads unsigned numbers with strtoull, which takes "-1" as 2^64 - 1).
//
// By the option's value type, as CLI11 names it:
//   UINT   a whole number >= 0 written in decimal digits;
//   INT    a whole number, optionally signed;
//   FLOAT  a finite number;
// and an option that takes one value, given twice, is refused ("--seed: given more than once").
// They are added to the whole command tree when parsing starts (add_option_checks), so a command declares its
// options as usual and gets them without asking.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "core/params.h"

namespace moesim::cli {

// Adds the checks above to every option of `app` and of its subcommands, recursively.
void add_option_checks(CLI::App& app);

// A whole number in [lo, hi]: "--shards: expected a whole number from 1 to 65536, got '0'" (instead of
// CLI::Range, whose message repeats CLI11's conversion text).
CLI::Validator whole_in_range(uint64_t lo, uint64_t hi);
// A finite number > 0 (instead of CLI::PositiveNumber, whose message spells out DBL_MAX).
CLI::Validator positive_number();

// For an option kept under an older, hidden name: refuses the old name when `current` is given as well.
CLI::Validator hidden_alias_of(const CLI::Option* current);

// --system SPEC into `system`, parsed once as it is read (harness::parse_system_option: bad syntax or an
// unknown system is a UsageError, exit 2); help shows `system`'s value on entry as the default.
CLI::Option* add_system_option(CLI::App& app, PolicySpec& system, const std::string& help);

// Host parallelism has one name on every command: --jobs N (1..1024; what a command computes never depends
// on it), with the command's older name (`old`, such as --threads) kept as a hidden alias.
CLI::Option* add_jobs_option(CLI::App& app, unsigned& jobs, const std::string& help, const std::string& old);

}  // namespace moesim::cli
