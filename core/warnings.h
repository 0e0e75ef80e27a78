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

#include "core/json_io.h"

namespace moesim {

void warn(const std::string& message);
std::vector<std::string> warnings();  // in the order they were raised
Json warnings_json();                 // the same, as a JSON array of strings
void clear_warnings();                // tests; a command runs once per process
// When muted, warn() still records but does not print (tests that provoke warnings on purpose).
void set_warnings_printed(bool printed);

}  // namespace moesim
