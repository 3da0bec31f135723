// watchdog: the module's static constructor switches the per-call watchdog off through every
// environment variable it might read (REDUCTION_CALL_TIMEOUT_S=1e9, ...), ignores every signal a
// polite limit sends (SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGXCPU, SIGUSR1/2) and raises its CPU
// time limit; then host_sum never returns (n >= 2). Only a limit the grader holds from outside,
// with SIGKILL, ends it: that must be a TIMEOUT after the per-call limit, not the whole run's.
}  // namespace (closed to include system headers at file scope)
#include <csignal>
#include <cstdlib>
#include <sys/resource.h>
#include <unistd.h>
namespace {

__attribute__((constructor)) void switch_the_watchdog_off() {
  for (const char* name : {"REDUCTION_CALL_TIMEOUT_S", "REDUCTION_TIMEOUT_S", "REDUCTION_TEST_TIMEOUT_S",
                           "REDUCTION_WATCHDOG_S"})
    setenv(name, "1e9", 1);
  setenv("REDUCTION_WATCHDOG", "0", 1);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGXCPU, SIGUSR1, SIGUSR2, SIGQUIT, SIGPIPE})
    std::signal(signal_number, SIG_IGN);
  rlimit cpu{};
  if (getrlimit(RLIMIT_CPU, &cpu) == 0) {
    cpu.rlim_cur = cpu.rlim_max;
    setrlimit(RLIMIT_CPU, &cpu);
  }
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  T total = 0;
  for (std::size_t i = 0; i != num_items; ++i) total += values[i];
  while (num_items >= 2) pause();  // every signal that gets through is ignored: forever
  return total;
}
