#include "base/warnings.h"

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "base/progress.h"

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

thread_local std::vector<std::string>* t_scope = nullptr;  // the calling thread's ThreadWarningScope

}  // namespace

void warn(const std::string& message) {
  if (t_scope) {
    t_scope->push_back(message);
    return;
  }
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
  if (t_scope) return *t_scope;
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

ThreadWarningScope::ThreadWarningScope() : outer_(t_scope) { t_scope = &items_; }

ThreadWarningScope::~ThreadWarningScope() { t_scope = outer_; }

}  // namespace moesim
