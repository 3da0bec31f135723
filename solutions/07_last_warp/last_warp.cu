// Lab 07 — unrolled last warp: lab 06 (first add during load, shared-memory tree, one partial
// per block, passes over the partials until one block is left), but once 32 or fewer threads
// remain the last six steps are written out for the one warp that does them, with __syncwarp()
// instead of the block-wide barrier.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;              // threads per block, every launch
[[maybe_unused]] constexpr int kBlockItems = 2 * kBlockThreads;  // elements each block reduces
[[maybe_unused]] constexpr int kWarpThreads = 32;
static_assert(kBlockThreads >= 2 * kWarpThreads && (kBlockThreads & (kBlockThreads - 1)) == 0,
              "the warp stage starts from 64 values: a power-of-two block of at least 64 threads");

// ==== BEGIN STUDENT CODE ====
// The last six steps, done by warp 0 alone: lane tid adds the value `offset` places to its right.
// Each step reads its partner into a register, waits for the whole warp (__syncwarp) before it
// overwrites its own slot, and waits again before the next step reads that slot: on Volta and
// later the lanes of a warp are not guaranteed to run in lockstep, so without these two
// barriers a lane could read a slot its neighbour has already overwritten (or not yet written).
// Returns the block's total in lane 0.
template <typename T>
__device__ T sum_last_warp(volatile T* partial, unsigned tid) {
  T sum = partial[tid];
  sum += partial[tid + 32];
  __syncwarp();
  partial[tid] = sum;
  __syncwarp();
  sum += partial[tid + 16];
  __syncwarp();
  partial[tid] = sum;
  __syncwarp();
  sum += partial[tid + 8];
  __syncwarp();
  partial[tid] = sum;
  __syncwarp();
  sum += partial[tid + 4];
  __syncwarp();
  partial[tid] = sum;
  __syncwarp();
  sum += partial[tid + 2];
  __syncwarp();
  partial[tid] = sum;
  __syncwarp();
  sum += partial[tid + 1];  // lane 0 now holds all 64 values; nobody reads the slots again
  return sum;
}

// Fixes: lab 06's last steps, where a whole block waited at __syncthreads() for the work of one
// warp (and, for the last five, of fewer than 32 threads): those six steps now take warp-level
// barriers only, with no loop counter or `if (tid < s)` test, and the other seven warps are done.
// Still slow: the warp stage still goes through shared memory (a store, a load and two warp
// barriers per step), the tree keeps two block-wide barriers, each thread adds only two
// elements, and the partials need more passes (2^24 -> 32,768 -> 64 -> 1).
template <typename T>
__global__ void reduce_last_warp_unrolled(const T* __restrict__ d_in, std::size_t num_items,
                                          T* d_partials) {
  __shared__ T partial[kBlockThreads];  // launched with blockDim.x == kBlockThreads
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
  const std::size_t j = i + blockDim.x;  // the partner in the chunk's second half
  T sum = i < num_items ? d_in[i] : T{0};
  if (j < num_items) sum += d_in[j];
  partial[tid] = sum;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > kWarpThreads; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();  // this step's sums are written before the next step reads them
  }

  if (tid < kWarpThreads) {  // warp 0, all 32 lanes: the __syncwarp() calls need every lane
    const T block_sum = sum_last_warp<T>(partial, tid);
    if (tid == 0) d_partials[blockIdx.x] = block_sum;  // the block's total: next pass's input
  }
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  // As in lab 06: one partial per block of kBlockItems, then the same kernel over the partials
  // until a single block is left, which writes *d_out; n = 0 writes 0.
  reduction::reduce_in_passes(
      d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, kBlockItems, stream,
      [](const T* in, std::size_t count, T* out, unsigned blocks, cudaStream_t s) {
        reduce_last_warp_unrolled<<<blocks, kBlockThreads, 0, s>>>(in, count, out);
      });
}
// ==== END STUDENT CODE ====

// The same additions as lab 06, in the same tree shape and the same passes, only synchronized
// differently: per pass, one addition during the load and log2(kBlockThreads) levels of tree
// (the shared-memory levels and the six warp steps together): h = passes * (1 + 8), 27 at 2^24.
// The pairs depend only on n: float results are bitwise reproducible, and equal to lab 06's.
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::pass_count(num_items, kBlockItems) * (1 + reduction::log2_floor(kBlockThreads));
}

}  // namespace

REDUCTION_DEFINE_LAB(7, "last_warp", "unrolled last warp", reduce_sum, float_error_depth,
                     REDUCTION_LAB_FLOAT_DETERMINISTIC)
