#include "base/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "base/error.h"
#include "base/hash64.h"
#include "base/input_file.h"

namespace moesim {
namespace {

std::atomic<unsigned> g_counter{0};
constexpr char kBase36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
std::string errno_text(int e = errno) {
  return std::strerror(e);
}

// ---- the temporary-file registry the signal handler walks ----------------------------------------------
// Fixed-size and allocation-free: the handler may run at any instruction, so it only reads atomics and
// plain char arrays and calls unlink(), which is async-signal-safe. A slot is 0 = free, 1 = being filled,
// 2 = holds a path. More simultaneous temporary files than slots are simply not removed on a signal.
constexpr int kSlots = 64;
constexpr size_t kSlotPath = 4096;
struct Slot {
  std::atomic<int> state;
  char path[kSlotPath];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");
Slot g_slots[kSlots];

int register_temp(const std::string& path) {
  if (path.size() >= kSlotPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0, std::memory_order_release);
}

extern "C" void cleanup_and_reraise(int sig) {
  for (auto& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  // SA_RESETHAND restored the default action; the signal stays blocked until this handler returns, then
  // kills the process, so the parent sees "killed by SIG" rather than a normal exit.
  ::raise(sig);
}

std::string parent_dir(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

// How an output path is written.
enum class Kind {
  kReplace,  // temp file next to `file`, renamed over it (a regular file, or nothing yet)
  kStream,   // opened and written through (a device, FIFO or socket)
  kAppend,   // a regular file reached through /proc (/dev/stdout, /dev/fd/N): the shell's open file; appended
             // to, as truncating or replacing it would undo a `>>` or a `>` the shell already did
};

struct Resolved {
  Kind kind = Kind::kReplace;
  std::string file;  // kReplace: the final link target; otherwise the path as given (the kernel follows it)
  bool exists = false;
  struct stat st {};
};

// Follows a chain of symbolic links by hand (realpath() fails on a dangling link, whose target we must
// create). Links through /proc ("/dev/stdout" -> "/proc/self/fd/1" -> "pipe:[123]") name no real file: the
// kernel resolves those itself. Returns false with errno set (ELOOP on a loop, or from stat()).
bool resolve_output(const std::string& path, Resolved& r) {
  std::string p = path;
  for (int depth = 0; depth < 40; ++depth) {
    if (p.rfind("/proc/", 0) == 0) {
      r.file = path;
      if (::stat(path.c_str(), &r.st) != 0) return false;
      r.exists = true;
      r.kind = S_ISREG(r.st.st_mode) || S_ISDIR(r.st.st_mode) ? Kind::kAppend : Kind::kStream;
      return true;
    }
    struct stat lst;
    if (::lstat(p.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
    std::vector<char> buf(static_cast<size_t>(lst.st_size > 0 ? lst.st_size : 255) + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0) break;
    std::string link(buf.data(), static_cast<size_t>(n));
    p = (!link.empty() && link[0] == '/') ? link : parent_dir(p) + "/" + link;
    if (depth == 39) {
      errno = ELOOP;
      return false;
    }
  }
  r.file = p;
  r.exists = ::stat(p.c_str(), &r.st) == 0;
  if (!r.exists && errno != ENOENT) return false;
  r.kind = r.exists && !S_ISREG(r.st.st_mode) && !S_ISDIR(r.st.st_mode) ? Kind::kStream : Kind::kReplace;
  return true;
}

// This host's tag in temporary names: 6 base-36 digits of a hash of its name. A folder shared over the
// network may hold another machine's temporaries, whose pids mean nothing here: only this host's are judged.
const std::string& host_tag() {
  static const std::string tag = [] {
    char host[256] = {};
    (void)::gethostname(host, sizeof host - 1);
    uint64_t h = hash64(host, std::strlen(host), 0x7e3b);
    std::string t;
    for (size_t i = 0; i < 6; ++i, h /= 36) t += kBase36[h % 36];
    return t;
  }();
  return tag;
}

// A short name, so that a target whose name is as long as the file system allows still has a temporary
// file next to it: "<dir>/.moesim-HOST-PID-XXXXXX" (temporary_output_name). The suffix mixes the pid and a
// counter (O_EXCL settles the rare collision: the next counter value is tried).
std::string temp_name(const std::string& dir) {
  uint64_t x = (uint64_t(::getpid()) << 32) ^ g_counter++;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;  // splitmix64's finaliser: neighbouring counters differ widely
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  std::string suffix;
  for (size_t i = 0; i < kTempSuffixChars; ++i, x /= 36) suffix += kBase36[x % 36];
  return dir + "/" + temporary_output_name(::getpid(), suffix);
}

// Removes, once per folder and process, the temporaries in `dir` that a writer on this host left when it was
// killed (SIGKILL gives it no chance to remove them): its pid is in the name and no process has it any more.
// A live process's temporary (another moesim writing there now), another host's and any other name stay.
void clean_folder_once(const std::string& dir) {
  static std::mutex m;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(m);
    if (!done.insert(dir).second) return;
  }
  (void)remove_orphaned_temporaries(dir);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw Error(path + ": cannot write: " + why);
}

}  // namespace

// ---- AtomicFile -------------------------------------------------------------------------------------------

// Creates tmp_ in `dir` (registered for removal on a signal before it exists); -1 with errno on failure.
int AtomicFile::create_temp(const std::string& dir) {
  clean_folder_once(dir);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_ = temp_name(dir);
    slot_ = register_temp(tmp_);  // before creating it: a signal in between must still find it
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    const int e = errno;
    unregister_temp(slot_);
    slot_ = -1;
    tmp_.clear();
    errno = e;
    if (e != EEXIST) return -1;
  }
  return -1;
}

AtomicFile::AtomicFile(std::string path, Access access) : path_(std::move(path)) {
  if (path_.empty()) throw UsageError("output path is empty");
  if (path_ == "-") {
    f_ = stdout;
  } else {
    Resolved r;
    if (!resolve_output(path_, r)) throw Error(path_ + ": cannot open output: " + errno_text());
    const bool exists = r.exists;
    const struct stat& st = r.st;
    target_ = r.file;
    if (exists && S_ISDIR(st.st_mode)) cannot_write(path_, "is a directory");
    if (exists && S_ISSOCK(st.st_mode)) cannot_write(path_, "is a socket, which cannot be opened as a file");
    if (r.kind != Kind::kReplace) {
      // Renaming over a device, FIFO or socket would replace the node itself: write through.
      const int flags = O_WRONLY | O_CLOEXEC | (r.kind == Kind::kAppend ? O_APPEND : O_TRUNC);
      const int fd = ::open(target_.c_str(), flags);
      f_ = fd < 0 ? nullptr : ::fdopen(fd, "wb");
      if (!f_) {
        const int e = errno;
        if (fd >= 0) ::close(fd);
        throw Error(path_ + ": cannot open output: " + errno_text(e));
      }
    } else {
      const int fd = create_temp(parent_dir(target_));
      if (fd < 0) {
        const int e = errno;
        throw Error(path_ + ": cannot create output file: " + errno_text(e));
      }
      if (exists) {
        // Keep the replaced file's permissions (and, for root, its owner) rather than the umask's default.
        (void)::fchmod(fd, st.st_mode & 07777);
        if (::geteuid() == 0 && ::fchown(fd, st.st_uid, st.st_gid) != 0) {
          // Not fatal: the content is what was asked for; the owner is a courtesy.
        }
      }
      f_ = ::fdopen(fd, "wb");
      if (!f_) {
        const int e = errno;
        ::close(fd);
        ::unlink(tmp_.c_str());
        unregister_temp(slot_);
        slot_ = -1;
        tmp_.clear();
        throw Error(path_ + ": cannot create output file: " + errno_text(e));
      }
    }
  }
  if (access == Access::kRandom && tmp_.empty()) {
    // Random access into a stream: build the file in an anonymous scratch file (already unlinked, so
    // nothing is left behind on any exit) and copy it out on commit().
    stream_ = f_;
    f_ = std::tmpfile();
    if (!f_) {
      if (stream_ != stdout) std::fclose(stream_);
      stream_ = nullptr;
      throw Error(path_ + ": cannot create a scratch file for a non-seekable output: " + errno_text());
    }
  }
}

AtomicFile::~AtomicFile() {
  if (f_ && f_ != stdout) std::fclose(f_);
  if (stream_ && stream_ != stdout) std::fclose(stream_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  unregister_temp(slot_);
}

std::string AtomicFile::display_name() const {
  return path_ == "-" ? "standard output" : path_;
}

void AtomicFile::write(const void* data, size_t size) {
  if (size == 0) return;
  if (std::fwrite(data, 1, size, f_) != size) throw Error(display_name() + ": write failed: " + errno_text());
  offset_ += size;
}

uint64_t AtomicFile::pad_to(uint64_t alignment) {
  uint64_t rem = offset_ % alignment;
  if (rem) {
    std::vector<char> zeros(alignment - rem, 0);
    write(zeros.data(), zeros.size());
  }
  return offset_;
}

void AtomicFile::commit() {
  if (committed_) return;
  const std::string name = display_name();
  if (std::fflush(f_) != 0) throw Error(name + ": write failed: " + errno_text());
  if (stream_) {
    // Copy the scratch file out to the stream it stands for.
    if (std::fseek(f_, 0, SEEK_SET) != 0) throw Error(name + ": scratch file: " + errno_text());
    std::vector<char> buf(1 << 20);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f_)) > 0)
      if (std::fwrite(buf.data(), 1, n, stream_) != n) throw Error(name + ": write failed: " + errno_text());
    if (std::ferror(f_)) throw Error(name + ": scratch file: read failed");
    std::fclose(f_);
    f_ = stream_;
    stream_ = nullptr;
    if (std::fflush(f_) != 0) throw Error(name + ": write failed: " + errno_text());
  }
  if (f_ == stdout) {
    committed_ = true;
    return;
  }
  if (!tmp_.empty() && ::fsync(::fileno(f_)) != 0 && errno != EINVAL)
    throw Error(name + ": fsync failed: " + errno_text());
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) throw Error(name + ": write failed: " + errno_text());
  if (!tmp_.empty() && std::rename(tmp_.c_str(), target_.c_str()) != 0)
    throw Error(name + ": cannot rename temporary file into place: " + errno_text());
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

// ---- checks and handlers ----------------------------------------------------------------------------------

void check_output_writable(const std::string& path) {
  if (path.empty()) throw UsageError("output path is empty");
  if (path == "-") return;
  Resolved r;
  if (!resolve_output(path, r)) cannot_write(path, errno_text());
  const std::string& target = r.file;
  const std::string dir = parent_dir(target);
  if (r.exists) {
    if (S_ISDIR(r.st.st_mode)) cannot_write(path, "is a directory");
    // open() on a UNIX socket always fails (ENXIO); say why up front instead of "No such device".
    if (S_ISSOCK(r.st.st_mode)) cannot_write(path, "is a socket, which cannot be opened as a file");
    if (::access(target.c_str(), W_OK) != 0) cannot_write(path, errno_text());
    if (r.kind == Kind::kReplace && ::access(dir.c_str(), W_OK | X_OK) != 0)
      cannot_write(path, "directory '" + dir +
                             "' is not writable (the output is written to a temporary file " +
                             "there, then renamed): " + errno_text());
    return;
  }
  struct stat dst;
  if (::stat(dir.c_str(), &dst) != 0) {
    if (errno == ENOENT) cannot_write(path, "directory '" + dir + "' does not exist");
    cannot_write(path, "directory '" + dir + "': " + errno_text());
  }
  if (!S_ISDIR(dst.st_mode)) cannot_write(path, "'" + dir + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    cannot_write(path, "directory '" + dir + "' is not writable: " + errno_text());
}

void install_output_cleanup_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup & co. stay
    struct sigaction sa {};
    sa.sa_handler = cleanup_and_reraise;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

int registered_temp_files() {
  int n = 0;
  for (const auto& s : g_slots) n += s.state.load(std::memory_order_acquire) == 2;
  return n;
}

std::string read_file(const std::string& path) {
  return InputFile(path).read_all();
}

std::string temporary_output_name(long pid, std::string_view suffix) {
  return std::string(kTempPrefix) + host_tag() + "-" + std::to_string(pid) + "-" + std::string(suffix);
}

bool is_temporary_output_name(std::string_view name) {
  if (!name.starts_with(kTempPrefix)) return false;
  const std::string_view rest = name.substr(kTempPrefix.size());
  if (rest.size() == kTempSuffixChars) return true;  // the names of earlier versions, with no pid
  // HOST-PID-SUFFIX
  const size_t a = rest.find('-'), b = rest.rfind('-');
  if (a != 6 || b == a || rest.size() - b - 1 != kTempSuffixChars || b - a - 1 < 1 || b - a - 1 > 10)
    return false;
  return std::all_of(rest.begin() + static_cast<long>(a) + 1, rest.begin() + static_cast<long>(b),
                     [](char c) { return c >= '0' && c <= '9'; });
}

long temporary_output_owner(std::string_view name) {
  if (!is_temporary_output_name(name)) return 0;
  const std::string_view rest = name.substr(kTempPrefix.size());
  if (rest.size() == kTempSuffixChars || rest.substr(0, 6) != host_tag()) return 0;
  const size_t a = rest.find('-'), b = rest.rfind('-');
  return std::stol(std::string(rest.substr(a + 1, b - a - 1)));
}

size_t remove_orphaned_temporaries(const std::string& dir) {
  size_t removed = 0;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  while (const dirent* e = ::readdir(d)) {
    const long pid = temporary_output_owner(e->d_name);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to ask)
    const std::string path = dir + "/" + e->d_name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace moesim
