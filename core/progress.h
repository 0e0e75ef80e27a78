// Progress of long work (ARCHITECTURE.md §7): a one-line bar with a count, a percentage, the rate and an
// ETA, redrawn in place on stderr. It is drawn only when stderr is a terminal and progress is enabled
// (the CLI's --quiet disables it), and only once the work has run for half a second, so quick commands
// and scripted runs (pipes, files, CI) print nothing. Output files and stdout are never touched.
//
//   Progress bar("replay", configs.size());   // label, total units (0 = unknown: count and rate only)
//   parallel loop: bar.add(1);                // thread-safe; redraws at most 10 times a second
//   bar.finish();                             // or the destructor: clears the line
//
// Thread-safe. At most one bar is visible at a time (a second one, nested, stays silent).
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

class Progress {
 public:
  Progress(std::string label, uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void add(uint64_t n = 1);
  // Never moves the count backwards: worker threads that report running totals may arrive out of order.
  void set(uint64_t done);
  void set_total(uint64_t total);
  // Counts are bytes: drawn as "1.50 GiB/3.00 GiB" and "MiB/s" instead of plain numbers.
  void show_bytes(bool on = true) { bytes_ = on; }
  void finish();

  // The line that would be drawn after `elapsed_s` seconds (for tests): "label [####    ] 40% 4/10 ...".
  std::string render(double elapsed_s) const;

 private:
  void maybe_draw();

  std::string label_;
  std::atomic<uint64_t> total_;
  std::atomic<uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> last_draw_ns_{0};
  std::mutex draw_mu_;
  bool owner_ = false;  // this bar holds the terminal line
  bool bytes_ = false;
  bool finished_ = false;
};

}  // namespace moesim
