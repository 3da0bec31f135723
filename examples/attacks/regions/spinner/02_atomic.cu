// spinner: the module's static constructor switches the per-call watchdog off through the
// environment (REDUCTION_CALL_TIMEOUT_S=1e9, ...) and ignores SIGTERM, SIGINT, SIGHUP and
// SIGALRM; reduce_sum launches a kernel that never ends. It must be a TIMEOUT after the per-call
// limit, not after the whole run's.
}  // namespace (closed to include system headers at file scope)
#include <csignal>
#include <cstdlib>
namespace {

__attribute__((constructor)) void switch_the_watchdog_off() {
  for (const char* name : {"REDUCTION_CALL_TIMEOUT_S", "REDUCTION_TIMEOUT_S", "REDUCTION_TEST_TIMEOUT_S"})
    setenv(name, "1e9", 1);
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGALRM})
    std::signal(signal_number, SIG_IGN);
}

template <typename T>
__global__ void spin_forever(const volatile int* never_set, T* d_out) {
  while (*never_set == 0) {
  }
  *d_out = T{0};
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items;
  if (temp_storage_bytes < sizeof(int)) throw std::length_error("spinner: no scratch");
  int* flag = static_cast<int*>(d_temp_storage);
  REDUCTION_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), stream));
  spin_forever<<<1, 1, 0, stream>>>(flag, d_out);
  REDUCTION_CHECK(cudaGetLastError());
}
