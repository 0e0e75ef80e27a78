#include "base/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/interrupt.h"
#include "base/units.h"

namespace moesim {
namespace {

std::atomic<bool> g_enabled{true};
std::mutex g_line_mu;                  // guards the terminal line
std::atomic<bool> g_line_busy{false};  // a bar owns the line
bool g_line_drawn = false;             // something is drawn on it now (under g_line_mu)
thread_local ProgressObserverScope* t_observer_scope = nullptr;

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  const auto t = static_cast<long long>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", t / 3600, (t / 60) % 60);
  else if (t >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", t);
  return buf;
}

std::string format_count_rate(double r) {
  char buf[32];
  // Three significant digits, but never an exponent: "0.25", "12.5", "1630".
  std::snprintf(buf, sizeof buf, r >= 1000 ? "%.0f" : "%.3g", r);
  return buf;
}

}  // namespace

void set_progress_enabled(bool enabled) {
  g_enabled = enabled;
}

bool progress_active() {
  if (!g_enabled) return false;
  const char* force = std::getenv("MOESIM_PROGRESS");
  if (force && std::strcmp(force, "1") == 0) return true;
  return ::isatty(STDERR_FILENO) != 0;
}

void progress_clear_line() {
  std::lock_guard<std::mutex> lock(g_line_mu);
  if (g_line_drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    g_line_drawn = false;
  }
}

ProgressObserverScope::ProgressObserverScope(ProgressObserver* observer)
    : observer_(observer), outer_(t_observer_scope) {
  t_observer_scope = this;
}

ProgressObserverScope::~ProgressObserverScope() {
  t_observer_scope = outer_;
}

Progress::Progress(std::string label, uint64_t total, std::string unit)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      bytes_(unit_ == kBytes) {
  bool expected = false;
  owner_ = progress_active() && g_line_busy.compare_exchange_strong(expected, true);
  if (t_observer_scope && t_observer_scope->observer_ && !t_observer_scope->claimed_) {
    scope_ = t_observer_scope;
    scope_->claimed_ = true;
  }
}

Progress::~Progress() {
  finish();
}

void Progress::add(uint64_t n) {
  interrupt_point();
  done_.fetch_add(n, std::memory_order_relaxed);
  maybe_draw();
  maybe_report();
}

void Progress::set(uint64_t done) {
  interrupt_point();
  uint64_t cur = done_.load(std::memory_order_relaxed);
  while (cur < done && !done_.compare_exchange_weak(cur, done, std::memory_order_relaxed)) {
  }
  maybe_draw();
  maybe_report();
}

void Progress::set_total(uint64_t total) {
  total_.store(total, std::memory_order_relaxed);
}

std::string Progress::render(double elapsed_s) const {
  const uint64_t done = done_.load(std::memory_order_relaxed);
  const uint64_t total = total_.load(std::memory_order_relaxed);
  char buf[512];
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  auto count = [&](uint64_t n) {
    return bytes_ ? format_bytes(n) : std::to_string(static_cast<unsigned long long>(n));
  };
  // Bytes carry their unit in the number ("1.50 GiB"); other counts are followed by theirs.
  const std::string unit = bytes_ ? "" : " " + unit_;
  const std::string per_s =
      (bytes_ ? format_bytes(static_cast<uint64_t>(rate)) : format_count_rate(rate)) + unit + "/s";
  if (total == 0) {
    std::snprintf(buf, sizeof buf, "%s %s%s done, %s, %s elapsed", label_.c_str(), count(done).c_str(),
                  unit.c_str(), per_s.c_str(), format_duration(elapsed_s).c_str());
    return buf;
  }
  const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  constexpr int kWidth = 24;
  const int fill = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<size_t>(fill), '#');
  bar.append(static_cast<size_t>(kWidth - fill), ' ');
  const double eta = done > 0 ? elapsed_s * (1 - frac) / frac : NAN;
  std::snprintf(buf, sizeof buf, "%s [%s] %3.0f%% %s/%s%s, %s, ETA %s", label_.c_str(), bar.c_str(),
                100 * frac, count(done).c_str(), count(total).c_str(), unit.c_str(), per_s.c_str(),
                format_duration(eta).c_str());
  return buf;
}

void Progress::maybe_draw() {
  if (!owner_) return;
  const auto now = std::chrono::steady_clock::now();
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count();
  if (ns < 500'000'000) return;  // quick work draws nothing
  int64_t last = last_draw_ns_.load(std::memory_order_relaxed);
  if (ns - last < 100'000'000) return;
  if (!last_draw_ns_.compare_exchange_strong(last, ns)) return;  // another thread draws this frame
  std::lock_guard<std::mutex> lock(draw_mu_);
  if (finished_) return;
  const std::string line = render(static_cast<double>(ns) * 1e-9);
  std::lock_guard<std::mutex> line_lock(g_line_mu);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  g_line_drawn = true;
}

void Progress::maybe_report() {
  if (!scope_) return;
  std::lock_guard<std::mutex> lock(report_mu_);
  const uint64_t done = done_.load(std::memory_order_relaxed);
  const uint64_t total = total_.load(std::memory_order_relaxed);
  if (done <= reported_) return;
  // Every 1% of a known total: a callback per simulated step would cost more than the step.
  if (total > 0 && done < total && done - reported_ < (total + 99) / 100) return;
  reported_ = done;
  scope_->observer_->report(done, total, unit_);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(draw_mu_);
  if (finished_) return;
  finished_ = true;
  if (scope_) scope_->claimed_ = false;
  if (!owner_) return;
  progress_clear_line();
  g_line_busy = false;
}

}  // namespace moesim
