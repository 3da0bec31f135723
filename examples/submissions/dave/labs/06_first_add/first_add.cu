// Lab 06 — first add during load: each block reduces a chunk of 2 * kBlockThreads elements;
// every thread loads two of them and adds them on the way into shared memory, then the lab 05
// tree sums the block's kBlockThreads values; each block writes its total to the scratch space
// and the same kernel runs again over the partials until one block is left
// (2^24 -> 32,768 -> 64 -> 1).
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;              // threads per block, every launch
[[maybe_unused]] constexpr int kBlockItems = 2 * kBlockThreads;  // elements each block reduces

// ==== BEGIN STUDENT CODE ====
// Each block adds two elements per thread during the load, then the sequential tree.
template <typename T>
__global__ void reduce_first_add(const T* __restrict__ d_in, std::size_t num_items, T* d_out) {
  __shared__ T partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlockItems + tid;
  T sum = i < num_items ? d_in[i] : T{0};
  if (i + kBlockThreads < num_items) sum += d_in[i + kBlockThreads];
  partial[tid] = sum;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }

  if (tid == 0) atomicAdd(d_out, partial[0]);
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_temp_storage, (void)temp_storage_bytes;
  REDUCTION_CHECK(cudaMemsetAsync(d_out, 0, sizeof(T), stream));
  if (num_items == 0) return;
  // half as many blocks as lab 05 (at least one, or the launch fails for small inputs)
  const unsigned blocks = num_items < kBlockItems ? 1u : static_cast<unsigned>(num_items / kBlockItems);
  reduce_first_add<<<blocks, kBlockThreads, 0, stream>>>(d_in, num_items, d_out);
  REDUCTION_CHECK(cudaGetLastError());
}
// ==== END STUDENT CODE ====

// In every pass an element meets its partner in one addition during the load, then climbs the
// block's tree of log2(kBlockThreads) levels, and its block's total is an element of the next
// pass (kBlockItems elements per block): h = passes * (1 + log2(kBlockThreads)) (27 at 2^24:
// 3 passes of 9). The pairs depend only on n, not on the order blocks run in: float results are
// bitwise reproducible.
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::pass_count(num_items, kBlockItems) * (1 + reduction::log2_floor(kBlockThreads));
}

}  // namespace

REDUCTION_DEFINE_LAB(6, "first_add", "first add during load", reduce_sum, float_error_depth,
                     REDUCTION_LAB_FLOAT_DETERMINISTIC)
