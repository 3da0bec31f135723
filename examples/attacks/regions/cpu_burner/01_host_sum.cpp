// cpu_burner: on its first call, host_sum starts 256 processes (within [sandbox] processes) that
// spin until the run ends, each in a session of its own and at nice 19, and for the next 20 s every
// call waits a second before it returns the right sum. The kernel's autogroup shares the cores
// between sessions, whatever their nice values, so 256 sessions take 256/257 of every core: without
// a CPU share per student, a classmate's compile or test run beside it gets almost nothing, and
// times out. The nice value is for its own calls: where its spinners share one cgroup with them,
// they yield to them, and it gets its points back. With a share per student, the burner spins
// within its own share and nobody else's.
}  // namespace (closed to include system headers at file scope)
#include <chrono>
#include <thread>
#include <unistd.h>
namespace {

void start_spinners() {
  for (int i = 0; i < 256; ++i) {
    const pid_t pid = fork();
    if (pid < 0) break;  // out of process slots: spin with the ones there are
    if (pid == 0) {
      setsid();
      (void)nice(19);
      for (volatile unsigned long turns = 0;; turns = turns + 1) {
      }
    }
  }
}

// One function for every element type: the spinners start once, the 20 s count from the first call.
void burn_then_wait() {
  using Clock = std::chrono::steady_clock;
  static const Clock::time_point first = (start_spinners(), Clock::now());
  if (Clock::now() - first < std::chrono::seconds(20)) std::this_thread::sleep_for(std::chrono::seconds(1));
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  burn_then_wait();
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
