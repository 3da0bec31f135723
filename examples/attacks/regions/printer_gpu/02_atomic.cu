// printer_gpu (honest; after the reference region, its reduce_sum renamed honest_reduce_sum): its
// first call prints a banner without a newline from the host and a line from the device (printf in
// a kernel, flushed at the next synchronize, into the same stdout as everything else). Its sums
// are the reference's: printing never costs a point.
}  // namespace (closed to include system headers at file scope)
#include <cstdio>
namespace {

__global__ void say_hello() { printf("hello from the device, block %d thread %d", blockIdx.x, threadIdx.x); }

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  static bool first = true;
  if (first) {
    first = false;
    std::printf("lab 02 by printer_gpu, starting ");
    std::fflush(stdout);
    say_hello<<<1, 1, 0, stream>>>();
    REDUCTION_CHECK(cudaGetLastError());
  }
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
}
