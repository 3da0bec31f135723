// Lab 11 — a single pass: lab 10's two kernels in one launch. Every block walks its share of the
// input exactly as lab 10's first kernel does (grid-stride, 16-byte loads, several accumulators,
// a block tree); then the blocks' totals meet without a second launch and without float atomics:
//   - int: one 64-bit atomicAdd per block carries the block's total and a count of the blocks
//     added, so the block that sees every other block counted holds the whole sum (integer
//     addition gives the same bits in any order);
//   - float: every block stores (this call's tag, its total) as one 64-bit word in its own slot,
//     then counts itself with one atomic; the block that completes the count reads the slots,
//     waiting for any that does not hold this call's tag yet, and adds the totals in slot order:
//     the same n on the same GPU adds the same numbers in the same order, so float results are
//     bitwise reproducible;
//   - n up to 2^16, on a GPU with thread-block clusters (sm_90 and later): one cluster of 8 blocks
//     whose totals meet in one block's shared memory: no global atomics at all.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include <cooperative_groups.h>
#include <cuda/atomic>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;  // threads per block
[[maybe_unused]] constexpr int kWarpThreads = 32;
[[maybe_unused]] constexpr int kBlockWarps = kBlockThreads / kWarpThreads;
[[maybe_unused]] constexpr unsigned kFullWarp = 0xffffffffu;
[[maybe_unused]] constexpr int kVectorItems = 4;  // elements per 16-byte load (int4, float4)
// 16-byte loads each thread issues back to back per round of its grid-stride loop (lab 10's U).
[[maybe_unused]] constexpr int kVectorsPerThread = 4;
// From 2^24 elements on, 8 loads per round: more bytes in flight per SM while each thread still
// fits the 64 registers that 4 blocks per SM allow. Below, 4 keep more blocks busy at small n.
[[maybe_unused]] constexpr int kLargeVectorsPerThread = 8;
[[maybe_unused]] constexpr std::size_t kLargeItems = std::size_t{1} << 24;
// Blocks per SM: one wave, as in lab 10 (from 2^24 on, a power of two of blocks near it: plan_for).
// The single pass does not need all blocks resident at once for its count, but one wave keeps the
// totals few.
[[maybe_unused]] constexpr int kBlocksPerSm = 4;
// The most blocks one launch may have: the float path keeps one slot per block in module memory.
[[maybe_unused]] constexpr unsigned kMaxBlocks = 1024;
// Up to this many elements (and more than one block's round), a GPU with thread-block clusters
// runs one cluster of kClusterBlocks blocks, 8 being the size every such GPU supports.
[[maybe_unused]] constexpr std::size_t kClusterItems = std::size_t{1} << 16;
[[maybe_unused]] constexpr int kClusterBlocks = 8;
// One round of the cluster's loads covers kClusterItems: every load is in flight at once.
[[maybe_unused]] constexpr int kClusterVectorsPerThread = 8;
static_assert(std::size_t{kClusterBlocks} * kBlockThreads * kClusterVectorsPerThread * kVectorItems == kClusterItems);
static_assert(kBlockThreads % kWarpThreads == 0 && kBlockWarps <= kWarpThreads);
static_assert(kVectorsPerThread >= 1 && (kVectorsPerThread & (kVectorsPerThread - 1)) == 0,
              "the accumulators are combined pairwise: a power of two");
static_assert(kMaxBlocks % kBlockThreads == 0 && kClusterBlocks <= kWarpThreads);

// The number of SMs of the current device (one attribute read, cheap enough for every call).
int device_sm_count() {
  int device = 0;
  int sm_count = 0;
  REDUCTION_CHECK(cudaGetDevice(&device));
  REDUCTION_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return sm_count;
}

// kClusterBlocks where the current device runs thread-block clusters (compute capability 9.0
// and later), else 0.
[[maybe_unused]] int device_cluster_blocks() {
  int device = 0;
  int major = 0;
  REDUCTION_CHECK(cudaGetDevice(&device));
  REDUCTION_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9 ? kClusterBlocks : 0;
}

// How one call splits n elements: `blocks` blocks, each thread issuing `vectors_per_thread`
// 16-byte loads per round; `cluster`: the blocks are one thread-block cluster. A function of n and
// the device only, so every call splits the input the same way (the float result with it).
struct Plan {
  unsigned blocks = 1;
  int vectors_per_thread = kVectorsPerThread;
  bool cluster = false;
};

// cluster_blocks: device_cluster_blocks() (kClusterBlocks or 0), or 0 for the plan without one.
Plan plan_for(std::size_t num_items, int sm_count, int cluster_blocks) {
  const int vectors = num_items >= kLargeItems ? kLargeVectorsPerThread : kVectorsPerThread;
  const std::size_t block_round = std::size_t{kBlockThreads} * static_cast<std::size_t>(vectors) * kVectorItems;
  const std::size_t wanted = reduction::ceil_div(num_items, block_round);
  if (cluster_blocks > 0 && wanted > 1 && num_items <= kClusterItems)
    return {static_cast<unsigned>(cluster_blocks), kClusterVectorsPerThread, true};
  const std::size_t full_wave = static_cast<std::size_t>(std::max(sm_count, 1)) * kBlocksPerSm;
  std::size_t most = std::min<std::size_t>(full_wave, kMaxBlocks);
  // From 2^24 on, a power-of-two grid where it keeps 3/4 of the wave (512 of 528 on 132 SMs): a
  // power-of-two n then splits into whole rounds, so no thread ends with a short round of loads
  // issued only after its last full round has come back: one trip to DRAM fewer at the end.
  const std::size_t power_of_two = std::size_t{1} << reduction::log2_floor(most);
  if (vectors == kLargeVectorsPerThread && 4 * power_of_two >= 3 * most) most = power_of_two;
  return {static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, most)), vectors, false};
}

// ==== BEGIN STUDENT CODE ====
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 11): one kernel launch per call, no float atomics. Lab 10's kernel is the start
//   (labs/10_two_step/two_step.cu, your region there: its helpers and its first kernel's loop).
//   1. A kernel `template <int VectorsPerThread, typename T> __global__ void
//      reduce_single_pass(const T* d_in, std::size_t num_items, T* d_out)`: each block reduces
//      its share exactly as lab 10's first kernel (grid-stride loop over 16-byte vectors, scalar
//      head and tail, VectorsPerThread accumulators, a shuffle block reduction); with one block,
//      thread 0 writes the total to *d_out and that is all. Otherwise the blocks' totals meet:
//   2. int: thread 0 of each block does ONE 64-bit atomicAdd of ((1ull << 48) | (unsigned)total)
//      on a `__device__ unsigned long long` that is 0 at module load. The value it returns is the
//      word before the addition: the block that finds gridDim.x - 1 blocks counted in its top 16
//      bits adds its own share, writes the low 32 bits to *d_out and stores 0 back.
//   3. float: fixed-order adds, so no float atomics. A `__device__ unsigned long long` count
//      word, (epoch << 32) | blocks counted, and one 64-bit slot per block (kMaxBlocks of them).
//      Thread 0 reads the count word (a plain load) when its block STARTS; this call's tag is
//      epoch + 1. After the block's sum, thread 0 stores (tag << 32) | __float_as_uint(total)
//      in slot blockIdx.x as one 64-bit store, then adds 1 to the count word (one atomic). The
//      block that finds gridDim.x - 1 blocks counted stores (tag << 32) back (the next call's
//      epoch, count 0), waits until every slot 0 .. gridDim.x - 1 holds this call's tag, adds
//      the totals in slot order and writes *d_out. When the tag reaches 0xffffffff, store 0 as
//      the next epoch and clear the slots.
//   4. n <= kClusterItems and device_cluster_blocks() > 0 (sm_90 and later): one thread-block
//      cluster of kClusterBlocks blocks, kClusterVectorsPerThread loads per thread, launched with
//      cudaLaunchKernelEx and the cudaLaunchAttributeClusterDimension attribute. Each block's
//      total goes into rank 0's shared memory (cooperative_groups: this_cluster(),
//      map_shared_rank, sync()); rank 0 adds them in rank order. No global memory but d_in, d_out.
//   5. reduce_sum below: plan_for(num_items, device_sm_count(), device_cluster_blocks()) says the
//      blocks, the loads per round and whether it is one cluster; one launch on `stream`.
//   Constraint: nothing may run on the stream but your one kernel, so no word can be cleared
//   before the launch: each call leaves the module's words ready for the next. d_temp_storage is
//   not needed. As in lab 10: d_in may be unaligned (a scalar head up to the first 16-byte
//   boundary); no vector load may reach past the input's end; the split depends only on n and
//   the device (float results bitwise identical run to run). n = 0 still writes 0. int: the sum
//   modulo 2^32, the value 32-bit two's-complement addition gives in any order.
//   About 200 lines: lab 10's helpers and loop (~75), the int finish (~10), the float count and
//   slots (~45), the cluster kernel and its launch (~45), the launcher (~15).
//   Tip: cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> (<cuda/atomic>, already
//   included) gives relaxed 64-bit loads, stores and fetch_add on a __device__ word. A waiting
//   block re-reads the slots that are still behind, all at once, not one after another.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(11);
}
// ==== END STUDENT CODE ====

// The longest chain is lab 10's, over the plan: B = kBlockThreads, U = the plan's loads per round,
// G = its blocks. A thread's accumulator takes ceil(m / U) vector sums (2 levels each),
// m = ceil((n / 4) / (G * B)), plus at most 2 head and tail elements; log2(U) levels combine the
// accumulators, log2(B) the block; the collecting threads add ceil(G / B) totals each, then
// log2(B) levels (a cluster's rank 0 adds at most 8 totals in 5 levels: fewer). Which block
// collects changes nothing: it reads the slots by index. Whether the device runs clusters is not
// asked here: the depth is the larger of the plan with a cluster and the plan without.
std::size_t depth_for(std::size_t num_items, const Plan& plan) {
  const std::size_t blocks = plan.blocks;
  const std::size_t vectors = static_cast<std::size_t>(plan.vectors_per_thread);
  const std::size_t vectors_per_thread = reduction::ceil_div(num_items / kVectorItems, blocks * kBlockThreads);
  const std::size_t per_accumulator = reduction::ceil_div(vectors_per_thread, vectors);
  return 2 + per_accumulator + 2 + reduction::log2_floor(vectors) + reduction::log2_floor(kBlockThreads) +
         reduction::ceil_div(blocks, kBlockThreads) + reduction::log2_floor(kBlockThreads);
}

std::size_t float_error_depth(std::size_t num_items) {
  if (num_items == 0) return 0;
  int sm_count = 1;  // no device to ask: assume the smallest grid, which gives the longest chains
  try {
    sm_count = device_sm_count();
  } catch (const reduction::CudaError&) {
    (void)cudaGetLastError();  // clear it: this query's failure is not the lab's
  }
  return std::max(depth_for(num_items, plan_for(num_items, sm_count, 0)),
                  depth_for(num_items, plan_for(num_items, sm_count, kClusterBlocks)));
}

}  // namespace

REDUCTION_DEFINE_LAB(11, "single_pass", "one pass: the blocks' totals meet in the same launch",
                     reduce_sum, float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
