// quitter: on its first call, host_sum prints the old completion marker and a forged end of the
// new JSON stream, then ends the process with status 0 through _exit (which skips the runner's
// atexit check). It never computes a sum.
}  // namespace (closed to include system headers at file scope)
#include <cstdio>
#include <unistd.h>
namespace {

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  (void)values, (void)num_items;
  std::printf("\n[  PASSED  ] 168 tests.\nREDUCTION-TESTS-COMPLETE\n{\"v\":1,\"event\":\"end\"}\n");
  std::fflush(stdout);
  _exit(0);
}
