#include "cli/summary_json.h"

#include <iostream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "core/run_info.h"

namespace moesim::cli {

void add_summary_json_flag(CLI::App& app, bool& json) {
  app.add_flag("--json", json, "summarise what was written as JSON on standard output (not with -o -)");
}

void check_summary_json(bool json, const std::string& out) {
  if (json && out == "-")
    throw UsageError("--json prints a summary on standard output, where -o - writes the data: pass -o FILE");
}

void print_summary_json(const std::string& command, const Json& summary) {
  Json j;
  j["header"] = run_header(command, Json::object());
  j["wrote"] = summary;
  write_json_file("-", j);
}

void print_wrote(const std::string& command, const harness::Wrote& w, bool json, const std::string& out,
                 bool to_stderr) {
  if (json) return print_summary_json(command, w.summary);
  std::fputs(w.text.c_str(), to_stderr || out == "-" ? stderr : stdout);
}

}  // namespace moesim::cli
