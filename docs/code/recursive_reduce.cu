// The recursive reduction of Professional CUDA C (section 3.13), written for CUDA 12 and later
// (docs/dynamic-parallelism.md). The book's kernel launched a child grid from the GPU and waited
// for it with a device-side cudaDeviceSynchronize(); that call no longer exists for compute_90
// and later. Here each level of the recursion is one grid: every block adds 2 x 256 inputs into
// one partial, and one thread *tail-launches* the next level over those partials. A tail launch
// starts only when the whole launching grid has finished, so the next level reads partials that
// are all written, with no synchronization on the device at all.
//
// Built as a lab module that calls itself lab 10 (lab10_recursive_tail_launch.so, in its own
// folder), so the project's tools treat it like a lab: the generic test suite checks it, and
// `reduction_bench --student-dir <its folder> --labs 10` times it beside lab 10's reference.
// Needs relocatable device code and the device runtime (docs/code/CMakeLists.txt).
#include <reduction/lab.hpp>

#include <cstddef>
#include <stdexcept>

namespace {

constexpr unsigned kLevelThreads = 256;
constexpr unsigned kLevelItems = 2 * kLevelThreads;  // inputs per block and level

// Fixes: the book's recursion needed the parent to wait for its child on the device (removed in
// CUDA 12 for compute_90+); a tail launch expresses "after this whole grid" instead.
// Still slow: one grid per level (log_512 n launches, each paid on the GPU), and each block does
// lab 06's work (two elements per thread, a shared-memory tree): lab 10's speed is out of reach.
template <typename T>
__global__ void __launch_bounds__(kLevelThreads)
    reduce_recursive_level(const T* level_in, std::size_t count, T* level_out, T* spare, T* d_out) {
  __shared__ T tree[kLevelThreads];
  const std::size_t mine = static_cast<std::size_t>(blockIdx.x) * kLevelItems + threadIdx.x;
  T value = mine < count ? level_in[mine] : T{0};
  if (mine + kLevelThreads < count) value += level_in[mine + kLevelThreads];
  tree[threadIdx.x] = value;
  __syncthreads();
  for (unsigned width = kLevelThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) tree[threadIdx.x] = tree[threadIdx.x] + tree[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1) {  // the last level: its one partial is the sum
    *d_out = tree[0];
    return;
  }
  level_out[blockIdx.x] = tree[0];
  if (blockIdx.x == 0) {
    // The next level runs after this grid, all its blocks included, has finished: it reads
    // level_out and writes the spare array (this level's input is no longer needed there).
    const unsigned next_blocks = (gridDim.x + kLevelItems - 1) / kLevelItems;
    reduce_recursive_level<<<next_blocks, kLevelThreads, 0, cudaStreamTailLaunch>>>(level_out, gridDim.x, spare,
                                                                                      level_out, d_out);
  }
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  if (num_items == 0) {
    REDUCTION_CHECK(cudaMemsetAsync(d_out, 0, sizeof(T), stream));
    return;
  }
  const std::size_t first = reduction::ceil_div(num_items, kLevelItems);
  const std::size_t second = reduction::ceil_div(first, kLevelItems);
  if (first > 1 && (first + second) * sizeof(T) > temp_storage_bytes)
    throw std::length_error("recursive_reduce: the scratch space is too small for two levels of partials");
  T* partials = static_cast<T*>(d_temp_storage);
  reduce_recursive_level<<<static_cast<unsigned>(first), kLevelThreads, 0, stream>>>(d_in, num_items, partials,
                                                                                     partials + first, d_out);
  REDUCTION_CHECK(cudaGetLastError());
}

// Each level adds two elements per thread, then log2(256) tree levels: 9 additions per level.
std::size_t float_error_depth(std::size_t num_items) {
  if (num_items == 0) return 0;
  return (1 + reduction::log2_floor(kLevelThreads)) * reduction::pass_count(num_items, kLevelItems);
}

}  // namespace

REDUCTION_DEFINE_LAB(10, "recursive_tail_launch", "recursive reduction with tail launches (docs, not a lab)",
                     reduce_sum, float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
