// Lab 11 — a single pass: lab 10's two kernels in one launch. Every block walks its share of the
// input exactly as lab 10's first kernel does (grid-stride, 16-byte loads, several accumulators,
// shuffles) and writes one partial to the scratch space; then the block makes its partial visible
// to the whole GPU (__threadfence) and takes a ticket from a counter in device memory (an atomic).
// The block that draws the last ticket knows every other partial is written: it adds them in a
// fixed order and writes *d_out. One launch whatever n, no float atomics: the same n on the same
// GPU adds the same numbers in the same order, so float results are bitwise reproducible.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;  // threads per block
[[maybe_unused]] constexpr int kWarpThreads = 32;
[[maybe_unused]] constexpr int kBlockWarps = kBlockThreads / kWarpThreads;
[[maybe_unused]] constexpr unsigned kFullWarp = 0xffffffffu;
[[maybe_unused]] constexpr int kVectorItems = 4;  // elements per 16-byte load (int4, float4)
// 16-byte loads each thread issues back to back per round of its grid-stride loop (lab 10's U).
[[maybe_unused]] constexpr int kVectorsPerThread = 4;
// Blocks per SM: one wave, as in lab 10. The single pass does not need all blocks resident at
// once (no block ever waits for another), but one wave keeps the partials few.
[[maybe_unused]] constexpr int kBlocksPerSm = 4;
static_assert(kBlockThreads % kWarpThreads == 0 && kBlockWarps <= kWarpThreads);
static_assert(kVectorsPerThread >= 1 && (kVectorsPerThread & (kVectorsPerThread - 1)) == 0,
              "the accumulators are combined pairwise: a power of two");

// The number of SMs of the current device (one attribute read, cheap enough for every call).
int device_sm_count() {
  int device = 0;
  int sm_count = 0;
  REDUCTION_CHECK(cudaGetDevice(&device));
  REDUCTION_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return sm_count;
}

// Blocks for n elements on a GPU of sm_count SMs: lab 10's first-kernel grid. A function of n and
// the device only, so every call splits the input the same way (the float result with it).
unsigned partial_blocks_for(std::size_t num_items, int sm_count) {
  const std::size_t block_round = std::size_t{kBlockThreads} * kVectorsPerThread * kVectorItems;
  const std::size_t wanted = reduction::ceil_div(num_items, block_round);
  const std::size_t full_wave = static_cast<std::size_t>(std::max(sm_count, 1)) * kBlocksPerSm;
  return static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, full_wave));
}

// ==== BEGIN STUDENT CODE ====
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 11): one kernel launch per call, no float atomics. Lab 10's kernel is the start
//   (labs/10_two_step/two_step.cu, your region there: its helpers and its first kernel's loop).
//   1. A kernel `template <int VectorsPerThread, typename T> __global__ void
//      reduce_single_pass(const T* d_in, std::size_t num_items, T* d_partials, T* d_out)`: each
//      block reduces its share exactly as lab 10's first kernel (grid-stride loop over 16-byte
//      vectors, scalar head and tail, VectorsPerThread accumulators, a shuffle block reduction);
//      with one block, thread 0 writes the total to *d_out and that is all;
//   2. otherwise thread 0 writes the block's partial to d_partials[blockIdx.x], calls
//      __threadfence(), and takes a ticket with atomicInc on an unsigned counter that is zero
//      when the call starts; the block that draws the last ticket (gridDim.x - 1) adds all the
//      partials in index order (thread t takes t, t + kBlockThreads, ...) and writes *d_out.
//   3. reduce_sum below: partial_blocks_for(num_items, device_sm_count()) blocks of
//      kBlockThreads, one launch of reduce_single_pass<kVectorsPerThread> on `stream`, with
//      d_partials = static_cast<T*>(d_temp_storage).
//   Constraint: d_temp_storage is garbage on entry and nothing may run on the stream but your one
//   kernel, so the counter cannot be cleared before the launch: keep it in device memory of its
//   own (a `__device__ unsigned` per element type, zero at module load) and leave it at zero for
//   the next call. As in lab 10: d_in may be unaligned (a scalar head up to the first 16-byte
//   boundary); no vector load may reach past the input's end (only whole vectors inside
//   [d_in, d_in + num_items) are loaded, the last elements go to the scalar tail); the split
//   depends only on n and the device (float results bitwise identical run to run). n = 0 still
//   writes 0. int: the sum modulo 2^32, the value 32-bit two's-complement addition gives in any
//   order (never saturated, never widened into *d_out).
//   About 110 lines: lab 10's helpers and loop (~75), the counter (1), the ticket and the last
//   block (~15), the launcher (~8).
//   Tip: atomicInc(&counter, gridDim.x - 1) returns the old value and stores 0 when the old value
//   was gridDim.x - 1: the last ticket resets the counter in the same atomic.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(11);
}
// ==== END STUDENT CODE ====

// The longest chain is lab 10's, with B = kBlockThreads, U = kVectorsPerThread and
// G = partial_blocks_for(n): a thread's accumulator takes ceil(m / U) vector sums (2 levels each),
// m = ceil((n / 4) / (G * B)), plus at most 2 head and tail elements; log2(U) levels combine the
// accumulators, log2(B) the block; the last block's threads add ceil(G / B) partials each, then
// log2(B) levels. Which block comes last changes nothing: it reads the partials by index.
std::size_t float_error_depth(std::size_t num_items) {
  if (num_items == 0) return 0;
  int sm_count = 1;  // no device to ask: assume the smallest grid, which gives the longest chains
  try {
    sm_count = device_sm_count();
  } catch (const reduction::CudaError&) {
    (void)cudaGetLastError();  // clear it: this query's failure is not the lab's
  }
  const std::size_t blocks = partial_blocks_for(num_items, sm_count);
  const std::size_t vectors_per_thread =
      reduction::ceil_div(num_items / kVectorItems, blocks * kBlockThreads);
  const std::size_t per_accumulator = reduction::ceil_div(vectors_per_thread, kVectorsPerThread);
  return 2 + per_accumulator + 2 + reduction::log2_floor(kVectorsPerThread) +
         reduction::log2_floor(kBlockThreads) + reduction::ceil_div(blocks, kBlockThreads) +
         reduction::log2_floor(kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(11, "single_pass", "one pass: the last block adds the partials",
                     reduce_sum, float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
