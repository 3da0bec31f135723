// Lab 09 — warp shuffle: lab 06's first add during load, then every warp sums its 32 values in
// registers with __shfl_down_sync; one shared-memory step hands the warps' totals to warp 0,
// which sums them the same way; one partial per block, passes over the partials as in lab 06.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;              // threads per block, every launch
[[maybe_unused]] constexpr int kBlockItems = 2 * kBlockThreads;  // elements each block reduces
[[maybe_unused]] constexpr int kWarpThreads = 32;
[[maybe_unused]] constexpr int kBlockWarps = kBlockThreads / kWarpThreads;  // 8 warp totals
[[maybe_unused]] constexpr unsigned kFullWarp = 0xffffffffu;  // shuffle mask: all 32 lanes
static_assert(kBlockThreads % kWarpThreads == 0 && kBlockWarps <= kWarpThreads,
              "one warp must be able to sum the warps' totals");

// ==== BEGIN STUDENT CODE ====
// The sum of `value` over the 32 lanes of the calling warp, in lane 0 (the other lanes get
// partial sums). Five steps: lane l adds the value of lane l + offset, read straight from that
// lane's register; lanes whose partner is past lane 31 get their own value back, which only
// lanes that nobody reads from use.
template <typename T>
__device__ T warp_sum(T value) {
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2)
    value += __shfl_down_sync(kFullWarp, value, offset);
  return value;
}

// Fixes: the shared-memory warp stage of labs 07-08 and most of the tree. A shuffle step is one
// register-to-register exchange and one add, with no shared-memory store or load and no
// barrier; shared memory is used once, for the 8 warp totals, behind the block's only
// __syncthreads().
// Still slow: each thread still adds only two elements, so the per-block work around them
// (scheduling the block, index math, two warp reductions, the barrier, a partial to write) is
// paid for every 512 elements; loads are 4 bytes wide; the partials still take several passes.
template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    reduce_warp_shuffle(const T* __restrict__ d_in, std::size_t num_items, T* d_partials) {
  __shared__ T warp_totals[kBlockWarps];  // launched with blockDim.x == kBlockThreads
  const unsigned tid = threadIdx.x;
  const unsigned lane = tid % kWarpThreads;
  const unsigned warp = tid / kWarpThreads;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlockItems + tid;
  const std::size_t j = i + kBlockThreads;  // the partner in the chunk's second half
  T sum = i < num_items ? d_in[i] : T{0};
  if (j < num_items) sum += d_in[j];

  sum = warp_sum(sum);
  if (lane == 0) warp_totals[warp] = sum;
  __syncthreads();

  if (warp == 0) {  // all 32 lanes: the shuffles need every lane the mask names
    sum = lane < kBlockWarps ? warp_totals[lane] : T{0};
    sum = warp_sum(sum);
    if (lane == 0) d_partials[blockIdx.x] = sum;  // the block's total: next pass's input
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
        reduce_warp_shuffle<<<blocks, kBlockThreads, 0, s>>>(in, count, out);
      });
}
// ==== END STUDENT CODE ====

// Per pass: one addition during the load, five shuffle steps within each warp, then
// log2(kBlockWarps) steps across the warps' totals (warp 0's other two steps add exact zeros
// from lanes past kBlockWarps): 1 + log2(kBlockThreads) levels, as in labs 06-08, so
// h = passes * 9, 27 at 2^24. The pairs depend only on n: float results are bitwise
// reproducible (but differ from lab 07's: the pairs within a block are others).
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::pass_count(num_items, kBlockItems) * (1 + reduction::log2_floor(kBlockThreads));
}

}  // namespace

REDUCTION_DEFINE_LAB(9, "shuffle", "warp shuffle", reduce_sum, float_error_depth,
                     REDUCTION_LAB_FLOAT_DETERMINISTIC)
