// Output files that never exist half-written, and that never destroy what the user pointed -o at.
//
// AtomicFile picks how to write from what the path names:
//   * a regular file, or nothing yet: write a temporary file ".moesim-HOST-PID-XXXXXX"
//   (is_temporary_output_name) in
//     the target's folder; commit() fsyncs and renames it over the target (an existing target keeps its
//     permission bits). The temporary name is short whatever the target's, so a target name of NAME_MAX
//     bytes works. If commit() is never called (an error was thrown) the destructor removes the temporary
//     file, so a failed command leaves no partial output;
//   * a symbolic link (or a chain of them): the same, for the file the last link points to; the links stay
//     links. A dangling link creates its target;
//   * a character or block device or a FIFO: opened and written through (no temporary file, no rename:
//     `-o /dev/null` as root must leave /dev/null a device). A UNIX socket cannot be opened as a file: it
//     is refused with that reason (and never replaced);
//   * a link through /proc ("/dev/stdout", "/dev/fd/1"): the kernel's view of an open file, written
//     through; a regular file there is appended to (it is the shell's `>` or `>>` target);
//   * "-": standard output, written directly; every write and the final flush are checked.
//
// Temporary files are also removed when the process is killed by SIGINT, SIGTERM or SIGHUP once main() has
// called install_output_cleanup_handlers(): they are listed in a fixed-size, allocation-free registry that
// the signal handler walks (async-signal-safe), after which the signal is re-raised with its default action
// so the exit status still says "killed by signal". SIGKILL leaves them behind: the first AtomicFile a
// process makes in a folder removes the temporaries there whose writer is gone (remove_orphaned_temporaries).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace moesim {

class AtomicFile {
 public:
  // kSequential: bytes go out in order (the default). kRandom: the caller also rewrites earlier bytes
  // through handle()/fileno (pwrite); for a stream output ("-", a device, a FIFO) the file is then built
  // in an anonymous scratch file and copied out on commit().
  enum class Access { kSequential, kRandom };

  // Throws moesim::Error when the output cannot be opened (a FIFO blocks here until a reader opens it).
  explicit AtomicFile(std::string path, Access access = Access::kSequential);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);  // throws on a short write (disk full, closed pipe)
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Pads with zero bytes up to a multiple of `alignment`; returns the new offset.
  uint64_t pad_to(uint64_t alignment);
  uint64_t offset() const { return offset_; }
  std::FILE* handle() { return f_; }
  const std::string& path() const { return path_; }
  void commit();  // flush (and for files fsync and rename); the output is complete on return

 private:
  std::string display_name() const;
  int create_temp(const std::string& dir);

  std::string path_;             // as given (error messages name it)
  std::string target_;           // the file finally written (symlinks resolved); empty for "-"
  std::string tmp_;              // the temporary file; empty when writing through
  std::FILE* f_ = nullptr;       // where write() goes
  std::FILE* stream_ = nullptr;  // Access::kRandom on a stream: the real output, f_ being the scratch file
  uint64_t offset_ = 0;
  int slot_ = -1;  // cleanup-registry slot of tmp_, -1 when not registered
  bool committed_ = false;
};

// Temporary files are named kTempPrefix, the host's tag (6 letters and digits from a hash of the host name),
// "-", the writer's pid, "-" and kTempSuffixChars letters and digits: ".moesim-k3x9q1-41234-a1b2c3".
inline constexpr std::string_view kTempPrefix = ".moesim-";
inline constexpr size_t kTempSuffixChars = 6;
// That name for process `pid` on this host with `suffix` (tests make a dead writer's leftovers with it).
std::string temporary_output_name(long pid, std::string_view suffix);
// Whether a file name (no folder) has the form of AtomicFile's temporary files (today's, or the pid-less
// ".moesim-XXXXXX" of earlier versions): one left behind by a killed process can be recognised and removed.
bool is_temporary_output_name(std::string_view name);
// The pid of the process on this host that made temporary file `name`; 0 when it is not one, was made on
// another host, or carries no pid.
long temporary_output_owner(std::string_view name);
// Removes the temporary files in `dir` whose writer is gone: made on this host by a process that no longer
// exists (kill(pid, 0) says ESRCH). A live process's temporaries, other hosts', pid-less ones and every other
// file stay. Returns how many were removed. AtomicFile calls it once per folder and process.
size_t remove_orphaned_temporaries(const std::string& dir);

// Writes `content` to `path` as AtomicFile does. "-" writes to standard output.
void write_file_atomic(const std::string& path, std::string_view content);

// Throws moesim::Error "PATH: cannot write: REASON" when an output could not be written: its folder is
// missing or not writable (temp-and-rename needs it), the path is a directory or a socket, or an existing
// file or device is not writable. Commands call it for every output path before they start their work, so a
// long run never fails at its very end. "-" is always accepted. Never opens the path (a FIFO would block).
void check_output_writable(const std::string& path);

// Installs the SIGINT/SIGTERM/SIGHUP handlers that remove registered temporary files (main() calls it once).
void install_output_cleanup_handlers();
// Number of temporary files registered for removal on a signal right now (tests).
int registered_temp_files();

// Reads a whole file; throws moesim::Error naming the file on failure ("PATH: is a directory, not a file").
std::string read_file(const std::string& path);

}  // namespace moesim
