// base/atomic_file: temp-and-rename for regular files, write-through for devices, FIFOs and stdout,
// symlinks followed (links kept), modes kept, temp files removed on errors and on SIGTERM/SIGINT, and the
// up-front writability check.
#include "base/atomic_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path_ = fs::temp_directory_path() /
            ("moesim_atomic_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Names in the folder, sorted (a leftover temporary file shows up here).
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(path_)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }

 private:
  fs::path path_;
};

bool is_symlink(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

using test::error_of;

TEST(AtomicFile, RegularFileAppearsOnlyOnCommit) {
  TempDir d;
  const std::string p = d.file("out.txt");
  write_file_atomic(p, "old\n");
  {
    AtomicFile f(p);
    f.write("new content\n");
    EXPECT_EQ(read_file(p), "old\n");  // not replaced before commit
    EXPECT_EQ(d.names().size(), 2u);   // the target and the temporary file
    f.commit();
  }
  EXPECT_EQ(read_file(p), "new content\n");
  EXPECT_EQ(d.names(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, TemporaryNameIsShortWhateverTheTarget) {
  TempDir d;
  // A target name as long as the file system allows: "<target>.tmp..." would not fit, a short name does.
  const long name_max = ::pathconf(d.file("").c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const std::string p = d.file(std::string(static_cast<size_t>(name_max), 'x'));
  {
    AtomicFile f(p);
    f.write("long\n");
    const auto names = d.names();
    ASSERT_EQ(names.size(), 1u);
    EXPECT_TRUE(is_temporary_output_name(names[0])) << names[0];
    EXPECT_TRUE(names[0].starts_with(".moesim-"));
    f.commit();
  }
  EXPECT_EQ(read_file(p), "long\n");
  EXPECT_EQ(d.names().size(), 1u);
  EXPECT_FALSE(is_temporary_output_name("results.csv"));
  EXPECT_FALSE(is_temporary_output_name(".moesim-"));
  // Two files open at once in one folder get two names.
  AtomicFile a(d.file("a")), b(d.file("b"));
  EXPECT_EQ(d.names().size(), 3u);
}

TEST(AtomicFile, ErrorBeforeCommitLeavesTargetAndNoTempFile) {
  TempDir d;
  const std::string p = d.file("out.txt");
  write_file_atomic(p, "old\n");
  const int before = registered_temp_files();
  try {
    AtomicFile f(p);
    f.write("half");
    EXPECT_EQ(registered_temp_files(), before + 1);
    throw Error("simulated failure");
  } catch (const Error&) {
  }
  EXPECT_EQ(registered_temp_files(), before);
  EXPECT_EQ(read_file(p), "old\n");
  EXPECT_EQ(d.names(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, DashWritesStandardOutput) {
  testing::internal::CaptureStdout();
  write_file_atomic("-", "to stdout\n");
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "to stdout\n");
}

TEST(AtomicFile, RandomAccessOnAStreamGoesThroughAScratchFile) {
  testing::internal::CaptureStdout();
  {
    AtomicFile f("-", AtomicFile::Access::kRandom);
    f.write("abcd");
    ASSERT_EQ(std::fflush(f.handle()), 0);
    ASSERT_EQ(::pwrite(::fileno(f.handle()), "X", 1, 0), 1);  // what the store writer does with its index
    f.commit();
  }
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "Xbcd");
}

TEST(AtomicFile, FifoIsWrittenThrough) {
  TempDir d;
  const std::string p = d.file("pipe");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_file(p); });
  write_file_atomic(p, "through the pipe\n");
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  struct stat st;
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(d.names(), std::vector<std::string>{"pipe"});
}

TEST(AtomicFile, SymlinkWritesItsTargetAndStaysALink) {
  TempDir d, other;
  const std::string target = other.file("real.txt");
  write_file_atomic(target, "old\n");
  const std::string link = d.file("link.txt");
  fs::create_symlink(target, link);
  write_file_atomic(link, "new\n");
  EXPECT_TRUE(is_symlink(link));
  EXPECT_EQ(read_file(target), "new\n");
  // The temporary file lived next to the target (rename cannot cross folders) and is gone.
  EXPECT_EQ(d.names(), std::vector<std::string>{"link.txt"});
  EXPECT_EQ(other.names(), std::vector<std::string>{"real.txt"});
}

TEST(AtomicFile, SymlinkChainWithRelativeLinks) {
  TempDir d;
  fs::create_directories(d.file("sub"));
  write_file_atomic(d.file("sub/real.txt"), "old\n");
  fs::create_symlink("real.txt", d.file("sub/hop"));  // relative to sub/
  fs::create_symlink("sub/hop", d.file("first"));     // relative to d/
  write_file_atomic(d.file("first"), "new\n");
  EXPECT_TRUE(is_symlink(d.file("first")));
  EXPECT_TRUE(is_symlink(d.file("sub/hop")));
  EXPECT_EQ(read_file(d.file("sub/real.txt")), "new\n");
  EXPECT_EQ(d.names(), (std::vector<std::string>{"first", "sub"}));
}

TEST(AtomicFile, DanglingLinkCreatesItsTarget) {
  TempDir d;
  fs::create_symlink("made.txt", d.file("link"));
  write_file_atomic(d.file("link"), "created\n");
  EXPECT_TRUE(is_symlink(d.file("link")));
  EXPECT_EQ(read_file(d.file("made.txt")), "created\n");
}

TEST(AtomicFile, SymlinkLoopIsAnError) {
  TempDir d;
  fs::create_symlink("b", d.file("a"));
  fs::create_symlink("a", d.file("b"));
  EXPECT_THAT(error_of([&] { write_file_atomic(d.file("a"), "x"); }), HasSubstr("symbolic links"));
  EXPECT_THAT(error_of([&] { check_output_writable(d.file("a")); }), HasSubstr("cannot write"));
}

TEST(AtomicFile, ExistingFileKeepsItsMode) {
  TempDir d;
  const std::string p = d.file("secret.txt");
  write_file_atomic(p, "old\n");
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  write_file_atomic(p, "new\n");
  struct stat st;
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::chmod(p.c_str(), 0755), 0);
  write_file_atomic(p, "again\n");
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST(AtomicFile, CharacterDeviceIsWrittenThrough) {
  // A private device node (same numbers as /dev/null) when we may make one, so a regression could not
  // replace the system's /dev/null; otherwise /dev/null itself (harmless unless root, where the CLI test
  // covers it too).
  TempDir d;
  std::string dev = d.file("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) dev = "/dev/null";
  write_file_atomic(dev, "discarded\n");
  struct stat st;
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << dev << " is no longer a character device";
  if (dev != "/dev/null") {
    EXPECT_EQ(d.names(), std::vector<std::string>{"null"});
  }
}

// "/dev/stdout" is a link into /proc naming the shell's open file: for a pipe write through it, for a
// file append to it (as `>>` asked), never create "pipe:[123]" or replace the file.
std::string via_dev_stdout(int stdout_fd, const std::string& content) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(stdout_fd, STDOUT_FILENO);
    try {
      write_file_atomic("/dev/stdout", content);
      check_output_writable("/dev/stdout");
    } catch (const Error&) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed";
}

TEST(AtomicFile, DevStdoutOnAFileAppends) {
  TempDir d;
  const std::string p = d.file("log");
  write_file_atomic(p, "first\n");
  const int fd = ::open(p.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(via_dev_stdout(fd, "second\n"), "ok");
  ::close(fd);
  EXPECT_EQ(read_file(p), "first\nsecond\n");
  EXPECT_EQ(d.names(), std::vector<std::string>{"log"});
}

TEST(AtomicFile, DevStdoutOnAPipeWritesThrough) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(via_dev_stdout(fds[1], "piped\n"), "ok");
  ::close(fds[1]);
  char buf[64];
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "piped\n");
}

TEST(AtomicFile, FullDeviceFails) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  EXPECT_THAT(error_of([] { write_file_atomic("/dev/full", std::string(100000, 'x')); }),
              HasSubstr("/dev/full: write failed"));
}

TEST(AtomicFile, DirectoryIsRefused) {
  TempDir d;
  EXPECT_THAT(error_of([&] { AtomicFile f(d.file("")); }), HasSubstr("is a directory"));
}

// The handler must unlink a temp file that was never committed and still die by the signal.
void expect_signal_removes_temp(int sig) {
  TempDir d;
  const std::string p = d.file("big.out");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    install_output_cleanup_handlers();
    AtomicFile f(p);
    f.write("partial output");
    std::fflush(f.handle());
    ::raise(sig);
    ::_exit(0);  // not reached: the re-raised signal kills the child
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status;
  EXPECT_EQ(WTERMSIG(status), sig);
  EXPECT_TRUE(d.names().empty()) << "left: " << ::testing::PrintToString(d.names());
}

TEST(AtomicFile, SigtermRemovesTempFileAndKillsBySignal) {
  expect_signal_removes_temp(SIGTERM);
}
TEST(AtomicFile, SigintRemovesTempFileAndKillsBySignal) {
  expect_signal_removes_temp(SIGINT);
}

TEST(CheckOutputWritable, AcceptsWhatCanBeWritten) {
  TempDir d;
  EXPECT_NO_THROW(check_output_writable("-"));
  EXPECT_NO_THROW(check_output_writable(d.file("new.json")));
  write_file_atomic(d.file("old.json"), "{}");
  EXPECT_NO_THROW(check_output_writable(d.file("old.json")));
  EXPECT_NO_THROW(check_output_writable("/dev/null"));
  fs::create_symlink("later.json", d.file("dangling"));
  EXPECT_NO_THROW(check_output_writable(d.file("dangling")));
  EXPECT_EQ(d.names(), (std::vector<std::string>{"dangling", "old.json"}));  // the checks created nothing
}

TEST(CheckOutputWritable, FifoWithoutReaderDoesNotBlock) {
  TempDir d;
  const std::string p = d.file("pipe");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  // In a child with an alarm: opening the FIFO for the check would block forever with no reader.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(20);
    try {
      check_output_writable(p);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the check blocked on the FIFO (killed by signal)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(CheckOutputWritable, ExplainsWhatIsWrong) {
  TempDir d;
  EXPECT_THAT(
      error_of([&] { check_output_writable(d.file("missing/out.json")); }),
      testing::AllOf(HasSubstr("missing/out.json: cannot write: directory"), HasSubstr("does not exist")));
  EXPECT_THAT(error_of([&] { check_output_writable(d.file("")); }),
              HasSubstr("cannot write: is a directory"));
  fs::create_directories(d.file("dir"));
  fs::create_symlink("dir", d.file("link-to-dir"));
  EXPECT_THAT(error_of([&] { check_output_writable(d.file("link-to-dir")); }), HasSubstr("is a directory"));
  write_file_atomic(d.file("plain"), "x");
  EXPECT_THAT(error_of([&] { check_output_writable(d.file("plain/out.json")); }),
              HasSubstr("plain/out.json: cannot write: Not a directory"));
  EXPECT_THROW(check_output_writable(""), UsageError);
}

// Root may write anything, so as root the checks run in a child that has become "nobody".
TEST(CheckOutputWritable, ReportsPermissions) {
  TempDir d;
  write_file_atomic(d.file("ro.json"), "{}");
  ASSERT_EQ(::chmod(d.file("ro.json").c_str(), 0444), 0);
  fs::create_directories(d.file("locked"));
  ASSERT_EQ(::chmod(d.file("locked").c_str(), 0555), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
    const bool ro = error_of([&] {
                      check_output_writable(d.file("ro.json"));
                    }).find("ro.json: cannot write") != std::string::npos;
    const bool locked = error_of([&] {
                          check_output_writable(d.file("locked/out.json"));
                        }).find("directory '" + d.file("locked") + "' is not writable") != std::string::npos;
    ::_exit((ro ? 0 : 4) | (locked ? 0 : 8));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "cannot drop root privileges here";
  EXPECT_EQ(WEXITSTATUS(status) & 4, 0) << "a read-only file was accepted";
  EXPECT_EQ(WEXITSTATUS(status) & 8, 0) << "a read-only directory was accepted";
}

TEST(CheckOutputWritable, RefusesSocketsAndLeavesThem) {
  TempDir d;
  const std::string p = d.file("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(p.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_THAT(error_of([&] { check_output_writable(p); }), HasSubstr("sock: cannot write: is a socket"));
  EXPECT_THAT(error_of([&] { write_file_atomic(p, "x"); }), HasSubstr("is a socket"));
  struct stat st;
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  ::close(fd);
}

TEST(ReadFile, NamesDirectoriesAndMissingFiles) {
  TempDir d;
  EXPECT_EQ(error_of([&] { read_file(d.file("")); }), d.file("") + ": is a directory, not a file");
  EXPECT_THAT(error_of([&] { read_file(d.file("nope")); }), HasSubstr("nope: cannot open"));
  write_file_atomic(d.file("f"), std::string(200000, 'z'));
  EXPECT_EQ(read_file(d.file("f")), std::string(200000, 'z'));
}

// A pid no process has: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// A SIGKILLed writer leaves its temporary file; the next AtomicFile this process makes in that folder removes
// it, and only it: a live process's temporary, the pid-less names of earlier versions and other files stay.
TEST(AtomicFile, RemovesTheTemporariesOfDeadWritersOnly) {
  TempDir d;
  const std::string dead = temporary_output_name(dead_pid(), "a1b2c3");
  const std::string live = temporary_output_name(::getppid(), "d4e5f6");
  ASSERT_TRUE(is_temporary_output_name(dead)) << dead;
  ASSERT_GT(temporary_output_owner(dead), 0);
  for (const std::string& n :
       {dead, live, std::string(".moesim-g7h8i9"), std::string(".moesim-notmine"), std::string("kept.txt")})
    write_file_atomic(d.file(n), "x");
  // write_file_atomic above made the folder's first temporary, before the dead writer's file was there: a
  // fresh folder name for the writer under test.
  fs::create_directories(d.file("sub"));
  for (const std::string& n : {dead, live, std::string("kept.txt")})
    fs::copy_file(d.file(n), d.file("sub/" + n));
  write_file_atomic(d.file("sub/out.json"), "{}\n");
  EXPECT_EQ(d.names().size(), 6u);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(d.file("sub"))) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  std::vector<std::string> expected = {live, "kept.txt", "out.json"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
  // Another host's temporary (its tag differs) is never judged by a pid of this one.
  std::string other = dead;
  other[kTempPrefix.size()] = other[kTempPrefix.size()] == 'a' ? 'b' : 'a';
  EXPECT_TRUE(is_temporary_output_name(other));
  EXPECT_EQ(temporary_output_owner(other), 0);
  std::ofstream(d.file("sub/" + other)) << "x";
  EXPECT_EQ(remove_orphaned_temporaries(d.file("sub")), 0u);
  EXPECT_TRUE(fs::exists(d.file("sub/" + other)));
}

TEST(AtomicFile, TemporaryNamesCarryTheWritersPid) {
  TempDir d;
  AtomicFile f(d.file("out"));
  const auto names = d.names();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(temporary_output_owner(names[0]), ::getpid()) << names[0];
  f.commit();
}

}  // namespace
}  // namespace moesim
