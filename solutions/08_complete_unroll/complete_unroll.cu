// Lab 08 — complete unroll: lab 07 with the block size as a template parameter, so the whole
// tree is unrolled at compile time; the launcher picks a block size at run time and dispatches
// to the kernel compiled for it.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace {

// Block sizes with a compiled kernel: powers of two from 64 (the warp stage starts from 64
// values) to 1024 (the hardware limit).
[[maybe_unused]] constexpr unsigned kMinBlockThreads = 64;
[[maybe_unused]] constexpr unsigned kMaxBlockThreads = 1024;
[[maybe_unused]] constexpr unsigned kBlockThreads = 256;  // the usual choice, once n is not small
[[maybe_unused]] constexpr unsigned kWarpThreads = 32;
// A grid of fewer blocks than this leaves SMs idle (about two blocks for each of an H100's 132
// SMs), so below it the launcher halves the block size, which doubles the number of blocks.
[[maybe_unused]] constexpr std::size_t kFewestBlocks = 256;

// The block size for n elements: kBlockThreads, halved (down to kMinBlockThreads) while the
// grid would have fewer than kFewestBlocks blocks of 2 * block size elements. Every thread still
// adds two elements, so a smaller block does not add threads: it spreads the same threads over
// more SMs and gives each block a shorter tree. It picks 64 up to n = 65280, 128 up to 130560,
// 256 beyond.
constexpr unsigned block_threads_for(std::size_t num_items) {
  unsigned threads = kBlockThreads;
  while (threads > kMinBlockThreads && reduction::ceil_div(num_items, 2 * threads) < kFewestBlocks)
    threads /= 2;
  return threads;
}
static_assert(block_threads_for(1) == 64 && block_threads_for(65535) == 128 &&
              block_threads_for(std::size_t{1} << 24) == 256);

// ==== BEGIN STUDENT CODE ====
// Fixes: the loop over the tree levels and its run-time tests (`s > 32`, `s >>= 1`, the branch
// back): with the block size known at compile time each level is one guarded statement and
// the levels this block size does not have are not compiled at all (`if constexpr`). Each thread
// also keeps its own running sum in a register, so a level costs one shared load, not two.
// Still slow: the warp stage still goes through shared memory with two warp barriers per step,
// the tree keeps a block-wide barrier per level above 32, each thread adds only two elements,
// and the blocks meet in a chain of atomicAdds on one address.
template <unsigned BlockThreads, typename T>
__global__ void __launch_bounds__(BlockThreads)
    reduce_complete_unroll(const T* __restrict__ d_in, std::size_t num_items, T* d_out) {
  static_assert(BlockThreads >= kMinBlockThreads && BlockThreads <= kMaxBlockThreads &&
                    (BlockThreads & (BlockThreads - 1)) == 0,
                "BlockThreads must be a power of two from 64 to 1024");
  __shared__ T partial[BlockThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * BlockThreads) + tid;
  const std::size_t j = i + BlockThreads;  // the partner in the chunk's second half
  T sum = i < num_items ? d_in[i] : T{0};
  if (j < num_items) sum += d_in[j];
  partial[tid] = sum;
  __syncthreads();

  // The barriers stay outside the `if (tid < ...)`: every thread of the block must reach them.
  if constexpr (BlockThreads >= 1024) {
    if (tid < 512) partial[tid] = sum = sum + partial[tid + 512];
    __syncthreads();
  }
  if constexpr (BlockThreads >= 512) {
    if (tid < 256) partial[tid] = sum = sum + partial[tid + 256];
    __syncthreads();
  }
  if constexpr (BlockThreads >= 256) {
    if (tid < 128) partial[tid] = sum = sum + partial[tid + 128];
    __syncthreads();
  }
  if constexpr (BlockThreads >= 128) {
    if (tid < 64) partial[tid] = sum = sum + partial[tid + 64];
    __syncthreads();
  }

  if (tid < kWarpThreads) {  // warp 0 alone: the lab 07 warp stage, its trip count a constant
    volatile T* slots = partial;
#pragma unroll
    for (unsigned offset = kWarpThreads; offset > 1; offset /= 2) {
      sum += slots[tid + offset];
      __syncwarp();  // every lane has read its partner before any lane overwrites its slot
      slots[tid] = sum;
      __syncwarp();  // every slot is written before the next step reads it
    }
    sum += slots[tid + 1];
    if (tid == 0) atomicAdd(d_out, sum);
  }
}

template <unsigned BlockThreads, typename T>
void launch_complete_unroll(const T* d_in, std::size_t num_items, T* d_out, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(reduction::ceil_div(num_items, 2 * BlockThreads));
  reduce_complete_unroll<BlockThreads, T><<<blocks, BlockThreads, 0, stream>>>(d_in, num_items, d_out);
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* /*d_temp_storage*/,
                std::size_t /*temp_storage_bytes*/, cudaStream_t stream) {
  REDUCTION_CHECK(cudaMemsetAsync(d_out, 0, sizeof(T), stream));  // reset before, never inside
  if (num_items == 0) return;
  // A template argument must be a compile-time constant: one case per compiled block size.
  const unsigned block_threads = block_threads_for(num_items);
  switch (block_threads) {
    case 64: launch_complete_unroll<64>(d_in, num_items, d_out, stream); break;
    case 128: launch_complete_unroll<128>(d_in, num_items, d_out, stream); break;
    case 256: launch_complete_unroll<256>(d_in, num_items, d_out, stream); break;
    case 512: launch_complete_unroll<512>(d_in, num_items, d_out, stream); break;
    case 1024: launch_complete_unroll<1024>(d_in, num_items, d_out, stream); break;
    default: throw std::logic_error("no kernel compiled for " + std::to_string(block_threads) + " threads");
  }
  REDUCTION_CHECK(cudaGetLastError());
}
// ==== END STUDENT CODE ====

// As lab 07 with B = block_threads_for(n): one addition during the load, log2(B) levels of tree,
// then the chain of one atomicAdd per block of 2B elements into *d_out.
std::size_t float_error_depth(std::size_t num_items) {
  const unsigned block_threads = block_threads_for(num_items);
  return 1 + reduction::log2_floor(block_threads) +
         reduction::ceil_div(num_items, std::size_t{2} * block_threads);
}

}  // namespace

REDUCTION_DEFINE_LAB(8, "complete_unroll", "complete unroll, templated block size", reduce_sum,
                     float_error_depth, 0)
