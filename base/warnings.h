// Warnings: implausible configurations and suspicious input that do not stop a command (a trace with most
// cells missing, a budget larger than the whole model, a last line without its newline...). A user must
// never get a silently doubtful number, so every warning is
//   * printed to stderr at once as "moesim: warning: MESSAGE" (after clearing a progress bar), and
//   * kept in a process-wide list that every command's JSON output carries as "warnings" (an array of
//     strings, empty when there were none), so scripted runs see them too.
// Library code calls warn() wherever it notices something; it never prints warnings itself otherwise.
// Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/json_io.h"

namespace moesim {

void warn(const std::string& message);
std::vector<std::string> warnings();  // in the order they were raised
Json warnings_json();                 // the same, as a JSON array of strings
void clear_warnings();                // tests; a command runs once per process
// When muted, warn() still records but does not print (tests that provoke warnings on purpose).
void set_warnings_printed(bool printed);

// While one lives on a thread, the warnings raised on that thread go to it instead of the process-wide list
// and are not printed, and warnings()/warnings_json() on that thread return its list: `moesim sweep` runs
// many points on a few threads in one process, and each point's JSON carries its own warnings, whichever
// thread ran it and whatever ran before. Warnings raised on other threads (a point's own helper threads)
// are not captured. Scopes nest: the innermost captures (a sweep's point run on the thread of a Python call
// that captures the sweep's own warnings), and the outer one gets its list back when it ends.
class ThreadWarningScope {
 public:
  ThreadWarningScope();
  ~ThreadWarningScope();
  ThreadWarningScope(const ThreadWarningScope&) = delete;
  ThreadWarningScope& operator=(const ThreadWarningScope&) = delete;
  const std::vector<std::string>& items() const { return items_; }

 private:
  std::vector<std::string> items_;
  std::vector<std::string>* outer_;
};

}  // namespace moesim
