// Progress of long work (docs/architecture.md): a one-line bar with a count and its unit, a percentage, the
// rate in that unit per second and an ETA, redrawn in place on stderr. It is drawn only when stderr is a
// terminal and progress is enabled (the CLI's --quiet disables it), and only once the work has run for half
// a second, so quick commands and scripted runs (pipes, files, CI) print nothing. Output files and stdout are
// never touched.
//
//   Progress bar("sweep", todo.size(), "points");  // label, total (0 = unknown: count and rate only), unit
//   Progress bar("pack", 0, Progress::kBytes);     // counts are bytes: "1.50 GiB/3.00 GiB, 210 MiB/s"
//   parallel loop: bar.add(1);                // thread-safe; redraws at most 10 times a second
//   bar.finish();                             // or the destructor: clears the line
//
// Thread-safe. At most one bar is visible at a time (a second one, nested, stays silent).
//
// A caller that is not a terminal (the Python module's progress= callback) installs a ProgressObserver on its
// thread: the outermost bar then started on that thread reports (done, total, unit) to it as well, from
// whichever thread adds to the bar; drawing on stderr is unchanged.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace moesim {

void set_progress_enabled(bool enabled);
// Enabled, and stderr is a terminal (MOESIM_PROGRESS=1 forces it on for tests of the drawing itself).
bool progress_active();
// Erases a visible bar's line (warn() calls it before printing); a no-op when none is drawn.
void progress_clear_line();

// Receives a bar's count, serialized (one call at a time) and with `done` increasing from call to call: at
// most about a hundred calls per bar with a known total (every 1%, and the last count), every change
// otherwise. report() may throw: the exception leaves the add() or set() that called it, which stops the work
// (parallel_for stops at it, and a command's job lets it through).
class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  virtual void report(uint64_t done, uint64_t total, const std::string& unit) = 0;
};

// Installs an observer for the bars this thread starts while the scope lives (nested scopes: the inner one).
class ProgressObserverScope {
 public:
  explicit ProgressObserverScope(ProgressObserver* observer);
  ~ProgressObserverScope();
  ProgressObserverScope(const ProgressObserverScope&) = delete;
  ProgressObserverScope& operator=(const ProgressObserverScope&) = delete;

 private:
  friend class Progress;
  ProgressObserver* observer_;
  bool claimed_ = false;  // a bar reports to it now (a nested bar does not)
  ProgressObserverScope* outer_;
};

class Progress {
 public:
  // The unit names what is counted (plural: "points", "steps", "layers"); the bar shows it after the count
  // and in the rate ("12.5 points/s"), so a reader knows what the numbers are without reading the code.
  static constexpr const char* kBytes = "bytes";  // drawn with binary prefixes, not as a plain count
  Progress(std::string label, uint64_t total, std::string unit);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void add(uint64_t n = 1);
  // Never moves the count backwards: worker threads that report running totals may arrive out of order.
  void set(uint64_t done);
  void set_total(uint64_t total);
  void finish();

  // The line that would be drawn after `elapsed_s` seconds (for tests):
  // "label [####    ]  40% 4/10 points, 2.00 points/s, ETA 3s".
  std::string render(double elapsed_s) const;

 private:
  void maybe_draw();
  void maybe_report();

  std::string label_, unit_;
  std::atomic<uint64_t> total_;
  std::atomic<uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> last_draw_ns_{0};
  std::mutex draw_mu_;
  bool owner_ = false;  // this bar holds the terminal line
  bool bytes_;
  bool finished_ = false;
  ProgressObserverScope* scope_ = nullptr;  // the observer's scope, when this bar reports to one
  std::mutex report_mu_;
  uint64_t reported_ = 0;  // the last count reported (under report_mu_)
};

}  // namespace moesim
