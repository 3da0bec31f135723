// Deadline for one piece of work; see watchdog.hpp for why a miss ends the process.
#include <reduction/watchdog.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <thread>

namespace reduction {

double call_timeout_seconds(double default_seconds) {
  if (const char* text = std::getenv("REDUCTION_CALL_TIMEOUT_S")) {
    const double seconds = std::strtod(text, nullptr);
    if (seconds > 0) return seconds;
  }
  return default_seconds;
}

void run_with_deadline(const std::function<void()>& work, double seconds, const std::string& what) {
  std::packaged_task<void()> task(work);
  std::future<void> done = task.get_future();
  std::thread worker(std::move(task));
  if (done.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    std::fprintf(stderr,
                 "\nREDUCTION-TIMEOUT: %s did not finish within %.0f s. The kernel (or host loop) "
                 "probably never terminates: look for a loop whose condition never changes, e.g. "
                 "`s >> 1` where `s >>= 1` was meant, or a __syncthreads() some threads never reach.\n",
                 what.c_str(), seconds);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(kTimeoutExitCode);
  }
  worker.join();
  done.get();  // rethrows the work's exception, if any
}

}  // namespace reduction
