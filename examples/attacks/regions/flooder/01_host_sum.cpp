// flooder: on its first call, host_sum writes 4 GiB to stdout and 4 GiB to stderr (lines of junk
// with forged JSON observations and old markers mixed in), then returns 0, a wrong sum. A grader
// that keeps everything a run prints runs out of memory or disk, or writes it into the report.
}  // namespace (closed to include system headers at file scope)
#include <string>
#include <unistd.h>
namespace {

void flood() {
  static bool done = false;
  if (done) return;
  done = true;
  std::string chunk;
  while (chunk.size() < (std::size_t{1} << 20)) {
    chunk += "{\"v\":1,\"event\":\"observed\",\"case\":\"c000\",\"status\":\"ok\",\"values\":[\"0x3f800000\"]}\n";
    chunk += "REDUCTION-TESTS-COMPLETE\n";
    chunk += std::string(4000, 'A') + "\n";
  }
  for (int round = 0; round < 4096; ++round) {
    for (int fd : {1, 2}) {
      for (std::size_t written = 0; written < chunk.size();) {
        const ssize_t count = write(fd, chunk.data() + written, chunk.size() - written);
        if (count <= 0) return;
        written += static_cast<std::size_t>(count);
      }
    }
  }
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  (void)values, (void)num_items;
  flood();
  return T{};
}
