#include "cli/option_checks.h"

#include <charconv>
#include <cmath>
#include <string>

#include "base/error.h"
#include "cli/command.h"
#include "harness/arguments.h"

namespace moesim::cli {
namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// A whole number >= 0 in decimal digits; "" when it is one and fits 64 bits, else what is wrong.
std::string check_uint(const std::string& v) {
  if (!all_digits(v)) {
    if (!v.empty() && v[0] == '-') return "expected a whole number >= 0, got '" + v + "' (negative)";
    return "expected a whole number >= 0, got '" + v + "'";
  }
  uint64_t x = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size()) return "'" + v + "' is too large";
  return {};
}

std::string check_int(const std::string& v) {
  const std::string digits = !v.empty() && (v[0] == '-' || v[0] == '+') ? v.substr(1) : v;
  if (!all_digits(digits)) return "expected a whole number, got '" + v + "'";
  int64_t x = 0;
  const std::string parsed = !v.empty() && v[0] == '+' ? digits : v;
  const auto [p, ec] = std::from_chars(parsed.data(), parsed.data() + parsed.size(), x);
  if (ec != std::errc() || p != parsed.data() + parsed.size()) return "'" + v + "' is out of range";
  return {};
}

// "" when `v` is a finite number (what CLI11's own conversion then reads), else what is wrong.
std::string check_float(const std::string& v, double* out = nullptr) {
  const std::string s = !v.empty() && v[0] == '+' ? v.substr(1) : v;
  double x = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(x))
    return "expected a finite number, got '" + v + "'";
  if (out) *out = x;
  return {};
}

bool type_is(const CLI::Option& opt, const std::string& type) {
  const std::string t = opt.get_type_name();
  return t.compare(0, type.size(), type) == 0 && (t.size() == type.size() || t[type.size()] == ':');
}

// "--seed", or a positional's name. CLI11 names a hidden option (an older spelling) "" in its own messages,
// so the checks throw UsageError with this name instead of returning their text to CLI11.
std::string option_label(const CLI::Option& opt) {
  if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
  if (!opt.get_snames().empty()) return "-" + opt.get_snames().front();
  return opt.get_name(true);
}

CLI::Validator named_check(const std::string& name, std::string (*check)(const std::string&)) {
  return CLI::Validator(
      [name, check](std::string& v) -> std::string {
        const std::string why = check(v);
        if (!why.empty()) throw UsageError(name + ": " + why);
        return {};
      },
      "");
}

std::string check_finite(const std::string& v) {
  return check_float(v);
}

void check_option(CLI::Option& opt) {
  if (opt.get_items_expected_max() == 0) return;  // a flag
  const std::string name = option_label(opt);
  if (type_is(opt, "UINT"))
    opt.check(named_check(name, check_uint));
  else if (type_is(opt, "INT"))
    opt.check(named_check(name, check_int));
  else if (type_is(opt, "FLOAT"))
    opt.check(named_check(name, check_finite));
  // The second value of a single-valued option, which CLI11 would reject as "At Most 1 required but received
  // 2" after the checks above.
  if (opt.get_multi_option_policy() == CLI::MultiOptionPolicy::Throw && opt.get_items_expected_max() == 1) {
    CLI::Validator twice(
        [name](std::string& v) -> std::string {
          throw UsageError(name + ": given more than once (again as '" + v + "'): pass it once");
        },
        "");
    opt.check(twice.application_index(1));
  }
}

}  // namespace

void add_option_checks(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) check_option(*opt);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add_option_checks(*sub);
}

CLI::Validator whole_in_range(uint64_t lo, uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& v) -> std::string {
        const std::string range =
            "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
        if (!all_digits(v)) return range + ", got '" + v + "'";
        uint64_t x = 0;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi) return range + ", got " + v;
        return {};
      },
      std::to_string(lo) + ".." + std::to_string(hi));
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        double x = 0;
        std::string why = check_float(v, &x);
        if (why.empty() && !(x > 0)) why = "expected a number > 0, got " + v;
        return why;
      },
      "> 0");
}

CLI::Validator hidden_alias_of(const CLI::Option* current) {
  // Not CLI11's excludes(), which would list the hidden name in the current option's --help.
  return CLI::Validator(
      [current](std::string&) -> std::string {
        if (current->count() == 0) return {};
        throw UsageError(current->get_name() + " is given twice, once under its older name: pass " +
                         current->get_name() + " once");
      },
      "");
}

CLI::Option* add_system_option(CLI::App& app, PolicySpec& system, const std::string& help) {
  return app
      .add_option_function<std::string>(
          "--system", [&system](const std::string& text) { system = harness::parse_system_option(text); },
          help)
      ->default_str(system.text());
}

CLI::Option* add_jobs_option(CLI::App& app, unsigned& jobs, const std::string& help, const std::string& old) {
  CLI::Option* opt =
      app.add_option("--jobs", jobs, help)->capture_default_str()->check(whole_in_range(1, 1024));
  CLI::Validator range = whole_in_range(1, 1024);
  app.add_option(old, jobs)
      ->group("")
      ->check(CLI::Validator(
          [old, range](std::string& v) -> std::string {
            const std::string why = range(v);
            if (!why.empty()) throw UsageError(old + ": " + why);
            return {};
          },
          ""))
      ->check(hidden_alias_of(opt));
  return opt;
}

}  // namespace moesim::cli
