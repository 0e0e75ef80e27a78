// CPU-time clocks of exec's threads: OpTiming::cpu and ExecCounters::thread_cpu (exec_platform.cpp) and the
// read benchmark's per-request CPU time (microbench.cpp). Seconds; < 0 where the clock is missing.
#pragma once

#include <time.h>

namespace moesim::exec {

// A CPU-time clock's reading (CLOCK_THREAD_CPUTIME_ID, or a thread's pthread_getcpuclockid).
inline double cpu_clock_seconds(clockid_t id) {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return -1;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The calling thread's CPU time.
inline double thread_cpu_seconds() { return cpu_clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace moesim::exec
