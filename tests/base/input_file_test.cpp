// core/input_file: one open per input -- a prefix peeked for format detection and the whole read from the
// same descriptor, so a pipe loses nothing; the kind of a non-regular input, and the refusal of readers
// that need a regular file.
#include "base/input_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "base/error.h"
#include "tests/error_of.h"

namespace moesim {
namespace {

using ::testing::HasSubstr;
using test::error_of;
namespace fs = std::filesystem;

TEST(InputFile, PeekThenReadAllFromAPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + "\n";  // well beyond one pipe buffer
  std::thread writer([&] {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t k = ::write(fds[1], text.data() + done, text.size() - done);
      if (k <= 0) break;
      done += static_cast<size_t>(k);
    }
    ::close(fds[1]);
  });
  InputFile in("/dev/fd/" + std::to_string(fds[0]));
  EXPECT_FALSE(in.regular());
  EXPECT_STREQ(in.kind(), "a pipe");
  EXPECT_EQ(in.peek(10), text.substr(0, 10));
  EXPECT_EQ(in.peek(4097), text.substr(0, 4097));  // a longer peek keeps what the first one read
  EXPECT_EQ(in.read_all(), text);
  writer.join();
  ::close(fds[0]);
  EXPECT_THAT(error_of([&] { in.require_regular("the reader maps the file"); }),
              HasSubstr(": is not a regular file (a pipe); the reader maps the file: save it to a file first"));
}

TEST(InputFile, RegularFileShortPeekAndErrors) {
  const std::string p = (fs::temp_directory_path() / ("moesim_input_" + std::to_string(::getpid()))).string();
  std::ofstream(p) << "abc";
  {
    InputFile in(p);
    EXPECT_TRUE(in.regular());
    EXPECT_EQ(in.peek(100), "abc");  // fewer bytes than asked for: the whole file
    EXPECT_EQ(in.read_all(), "abc");
    EXPECT_NO_THROW(in.require_regular("x"));
  }
  fs::remove(p);
  EXPECT_THAT(error_of([&] { InputFile in(p); }), HasSubstr(p + ": cannot open: No such file or directory"));
  EXPECT_EQ(error_of([&] { InputFile in(fs::temp_directory_path().string()); }),
            fs::temp_directory_path().string() + ": is a directory, not a file");
  InputFile dev("/dev/null");
  EXPECT_STREQ(dev.kind(), "a character device");
  EXPECT_EQ(dev.read_all(), "");
}

}  // namespace
}  // namespace moesim
