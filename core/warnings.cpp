#include "core/warnings.h"

#include <cstdio>
#include <mutex>

#include "core/progress.h"

namespace moesim {
namespace {

struct State {
  std::mutex mu;
  std::vector<std::string> items;
  bool printed = true;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void warn(const std::string& message) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.items.push_back(message);
  if (s.printed) {
    progress_clear_line();
    std::fprintf(stderr, "moesim: warning: %s\n", message.c_str());
    std::fflush(stderr);
  }
}

std::vector<std::string> warnings() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.items;
}

Json warnings_json() {
  Json a = Json::array();
  for (const auto& w : warnings()) a.push_back(w);
  return a;
}

void clear_warnings() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.items.clear();
}

void set_warnings_printed(bool printed) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.printed = printed;
}

}  // namespace moesim
