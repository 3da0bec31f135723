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
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 09): write `warp_sum(value)`: five steps of
//   `value += __shfl_down_sync(kFullWarp, value, offset)` for offset = 16, 8, 4, 2, 1 (lane 0
//   ends with the warp's total). Then a kernel `reduce_warp_shuffle(d_in, num_items,
//   d_partials)`: lab 06's load with the first add, warp_sum, lane 0 of each warp stores its
//   total in a `__shared__ T warp_totals[kBlockWarps]`, one __syncthreads(), then warp 0 loads
//   those (lanes past kBlockWarps take 0), runs warp_sum again, and lane 0 writes the block's
//   total to d_partials[blockIdx.x]. The launcher is lab 06's (reduce_in_passes).
//   Constraint: no shared-memory tree and no __syncwarp()-separated steps: shared memory only
//   for the kBlockWarps warp totals, and one __syncthreads() in the whole kernel.
//   About 35 lines: warp_sum (5), the kernel (~20), lab 06's launcher.
//   Tip: call the shuffles with all 32 lanes of the warp present (the mask says they are):
//   compute the value first, then shuffle, with no `if (lane < ...)` around the call.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(9);
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
