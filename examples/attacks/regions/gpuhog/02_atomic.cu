// gpuhog (after the reference region, its reduce_sum renamed honest_reduce_sum): on its first call
// it takes all of the GPU's free memory but 256 MiB and keeps it, and every call then waits 300 ms,
// so its test run holds the memory for about a minute while classmates are compiled and tested
// beside it. Its sums are the reference's. What classmates' runs lose to it (an out-of-memory error
// while it ran) the grader must run again alone before it becomes a verdict.
}  // namespace (closed to include system headers at file scope)
#include <chrono>
#include <thread>
#include <vector>
namespace {

void take_the_memory() {
  static std::vector<void*> taken;
  if (!taken.empty()) return;
  std::size_t free_bytes = 0, total_bytes = 0;
  REDUCTION_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t keep = std::size_t{256} << 20, chunk = std::size_t{256} << 20;
  for (std::size_t left = free_bytes > keep ? free_bytes - keep : 0; left >= chunk; left -= chunk) {
    void* block = nullptr;
    if (cudaMalloc(&block, chunk) != cudaSuccess) {
      (void)cudaGetLastError();
      break;
    }
    taken.push_back(block);
  }
  if (taken.empty()) taken.push_back(nullptr);  // tried once
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  take_the_memory();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
}
