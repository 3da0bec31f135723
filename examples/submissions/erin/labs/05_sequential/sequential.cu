// Lab 05 — sequential addressing: the same shared-memory tree per block as lab 04, but at each
// step the first half of the active threads adds the second half's values into their own, so the
// busy threads are always the lowest-numbered ones; as in lab 04, each block writes its total to
// the scratch space and the same kernel runs again over the partials until one block is left
// (2^24 -> 65,536 -> 256 -> 1).
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;  // threads per block of every launch

// ==== BEGIN STUDENT CODE ====
// Fixes: lab 04's modulo and scattered active threads: `tid < s` is one compare, and the active
// threads are contiguous, so whole warps drop out (only the last 5 steps run a partial warp):
// 12 warp-steps per tree instead of 47. A warp reads 32 consecutive words: no bank conflicts.
// Still slow: half of the threads only load one element and then idle through the whole tree,
// and from s = 32 down only warp 0 works, yet every step still ends in a block-wide barrier.
template <typename T>
__global__ void reduce_sequential(const T* __restrict__ d_in, std::size_t num_items,
                                  T* d_partials) {
  __shared__ T partial[kBlockThreads];  // launched with blockDim.x == kBlockThreads
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  partial[tid] = i < num_items ? d_in[i] : T{0};  // past the end: the identity, so the tree is full
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();  // this step's sums are written before the next step reads them
  }

  if (tid == 0) d_partials[blockIdx.x] = partial[0];  // the block's total: next pass's input
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  // As in lab 04: one partial per block into the scratch space, then the same kernel over the
  // partials until a single block is left, which writes *d_out; n = 0 writes 0.
  reduction::reduce_in_passes(
      d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, kBlockThreads, stream,
      [](const T* in, std::size_t count, T* out, unsigned blocks, cudaStream_t s) {
        reduce_sequential<<<blocks, kBlockThreads, 0, s>>>(in, count, out);
      });
}
// ==== END STUDENT CODE ====

// The same shape as lab 04, only the pairing differs: log2(kBlockThreads) tree levels per block
// in every pass, and a block's total is an element of the next pass, so h = passes *
// log2(kBlockThreads) (24 at 2^24). The pairs depend only on n, not on the order blocks run in:
// float results are bitwise reproducible.
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::pass_count(num_items, kBlockThreads) * reduction::log2_floor(kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(5, "sequential", "shared-memory tree, sequential addressing", reduce_sum,
                     float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
