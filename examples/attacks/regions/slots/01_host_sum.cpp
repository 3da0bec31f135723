// slots: on its first call, host_sum forks until fork fails (every child sleeps a minute), so its
// user holds every process slot it may have, and waits 15 s holding them before it returns the
// right sum. With one uid shared by every sandboxed run, classmates
// compiled and tested beside it could not fork (nvcc's "Failed to preprocess host compiler
// properties", "Resource temporarily unavailable"); with a uid of its own per run, only its own
// run is short of processes.
}  // namespace (closed to include system headers at file scope)
#include <unistd.h>
namespace {

void hold_every_slot() {
  static int children = -1;
  if (children < 0) {
    children = 0;
    for (pid_t pid; (pid = fork()) >= 0; ++children) {
      if (pid == 0) {
        sleep(60);
        _exit(0);
      }
    }
  }
  sleep(15);
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static int calls = 0;
  if (calls++ == 0) hold_every_slot();
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
