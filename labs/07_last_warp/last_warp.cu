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
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 07): start from your lab 06 kernel (first add during load, shared-memory tree, thread 0
//   writes the block's total to d_partials[blockIdx.x]) and call it `reduce_last_warp_unrolled`.
//   Run the tree loop only while more than kWarpThreads threads add (`s > kWarpThreads`); then
//   warp 0 (tid < 32) does the last six steps, offsets 32, 16, 8, 4, 2, 1, written out one after
//   the other, and lane 0 writes the block's total. The launcher is lab 06's (reduce_in_passes).
//   Constraint: correct on Volta and later, where the lanes of a warp may drift apart. In each
//   warp step a lane reads its partner into a register, then __syncwarp(), then stores its own
//   slot, then __syncwarp() again (the last step, offset 1, stores nothing: nobody reads the
//   slots after it, so it needs no barrier). `volatile` alone is the classic version, and it is
//   a race (see the README): compute-sanitizer --tool racecheck must report nothing.
//   About 50 lines: a device function for the warp stage (~25, most of them the six steps), and
//   the lab 06 kernel and launcher with the new loop bound.
//   Tip: keep the warp stage inside `if (tid < kWarpThreads)` and let all 32 lanes run every
//   step (lanes 1-31 compute sums nobody needs): a __syncwarp() that some lanes of the warp never
//   reach is undefined behaviour, and an `if (tid < offset)` buys nothing within one warp.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(7);
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
