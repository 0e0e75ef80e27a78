// Interrupting long work from outside it: the Python module's Ctrl-C (docs/python.md). A caller that notices
// the user wants to stop (the module's watch over Python's signal handlers) calls request_interrupt(); the
// long loops (the simulator's event loop, the replay loop, every progress tick) pass interrupt_point() now
// and then, which throws moesim::Interrupted once an interrupt is requested, and the exception unwinds the
// work as any error does (parallel_for stops its other items at their next interrupt point).
//
// Interrupted is deliberately neither a moesim::Error nor a std::exception: the handlers that turn a failure
// into a message, a failed cell or a failed sweep point catch those, and an interruption must reach the
// caller that asked for it. The request is process-wide (every call then running stops) and stays until that
// caller clears it (clear_interrupt()), once the work has unwound.
//
// The CLI never requests one: it keeps its own SIGINT handling, and interrupt_point() then costs one relaxed
// atomic load. Call sites in hot loops pass it every few thousand iterations (a counter they already keep),
// so that results and speed do not change; a pass every ~10 ms of work keeps Ctrl-C well within a second.
#pragma once

#include <atomic>

namespace moesim {

struct Interrupted {
  const char* what() const noexcept { return "interrupted"; }
};

namespace detail {
inline std::atomic<bool> g_interrupt_requested{false};
}

// Every interrupt_point() reached from now on, on any thread, throws Interrupted.
inline void request_interrupt() {
  detail::g_interrupt_requested.store(true, std::memory_order_relaxed);
}
inline void clear_interrupt() {
  detail::g_interrupt_requested.store(false, std::memory_order_relaxed);
}
inline bool interrupt_requested() {
  return detail::g_interrupt_requested.load(std::memory_order_relaxed);
}

// Throws Interrupted when an interrupt is requested; otherwise nothing.
inline void interrupt_point() {
  if (interrupt_requested()) [[unlikely]]
    throw Interrupted{};
}

}  // namespace moesim
