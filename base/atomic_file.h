// Output files that never exist half-written, and that never destroy what the user pointed -o at.
//
// AtomicFile picks how to write from what the path names:
//   * a regular file, or nothing yet: write a temporary file ".moesim-XXXXXX" (is_temporary_output_name) in
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
// so the exit status still says "killed by signal".
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

// Temporary files are named kTempPrefix followed by kTempSuffixChars letters and digits.
inline constexpr std::string_view kTempPrefix = ".moesim-";
inline constexpr size_t kTempSuffixChars = 6;
// Whether a file name (no folder) has the form of AtomicFile's temporary files: one left behind by a killed
// process (SIGKILL leaves no chance to remove it) can be recognised and removed.
bool is_temporary_output_name(std::string_view name);

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
