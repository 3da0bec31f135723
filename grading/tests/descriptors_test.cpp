// CPU tests of descriptors.hpp: the runner under compute-sanitizer closes every copy of the tool's
// log pipe it holds (whatever their numbers), and nothing else.
#include "../runner/descriptors.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace reduction::grading {
namespace {

FileIdentity identity_of(int fd) {
  struct stat info {};
  EXPECT_EQ(::fstat(fd, &info), 0);
  return {static_cast<unsigned long long>(info.st_dev), static_cast<unsigned long long>(info.st_ino)};
}

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(Descriptors, AnIdentityIsTwoDecimalNumbers) {
  const auto file = parse_file_identity("12:345");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->device, 12u);
  EXPECT_EQ(file->inode, 345u);
  for (const char* bad : {"", "12", "12:", ":345", "12:34x", "-1:2", "1:2:3", "0x1:2", "99999999999999999999999:1"})
    EXPECT_FALSE(parse_file_identity(bad)) << bad;
}

TEST(Descriptors, EveryCopyOfThePipeIsClosedAndNothingElse) {
  int log[2], other[2];
  ASSERT_EQ(::pipe(log), 0);
  ASSERT_EQ(::pipe(other), 0);
  const int copy = ::dup(log[1]);             // the tool's own copy, inherited under another number
  const int high = ::fcntl(log[1], F_DUPFD, 200);
  const std::string path = "/proc/self/fd/" + std::to_string(log[1]);
  const int reopened = ::open(path.c_str(), O_WRONLY);  // opened by path: a new open file, the same pipe
  ASSERT_GE(reopened, 0);
  ASSERT_GE(high, 200);
  EXPECT_EQ(close_copies_of(identity_of(log[0])), 5);  // both ends are the same pipe
  for (const int fd : {log[0], log[1], copy, high, reopened}) EXPECT_FALSE(is_open(fd)) << fd;
  EXPECT_TRUE(is_open(other[0]));
  EXPECT_TRUE(is_open(other[1]));
  EXPECT_TRUE(is_open(1));
  EXPECT_EQ(close_copies_of(identity_of(other[0])), 2);
}

}  // namespace
}  // namespace reduction::grading
