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
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 06): in a kernel `reduce_first_add(d_in, num_items, d_partials)`, block b reduces the
//   chunk of kBlockItems elements that starts at b * kBlockItems. Thread tid loads the chunk's
//   elements tid and tid + blockDim.x, adds them in a register and stores the one sum in a
//   __shared__ array of kBlockThreads values; then the lab 05 tree, and thread 0 writes the
//   block's total to d_partials[blockIdx.x].
//   Constraint: bounds-check the two loads separately (the last chunk may end in its first or
//   its second half; a missing element counts as 0); a __syncthreads() after the store and after
//   every tree step; no atomics.
//   Launcher: as in lab 05, one call to reduction::reduce_in_passes with a lambda that launches
//   reduce_first_add in blocks of kBlockThreads, but with kBlockItems items per block: half as
//   many blocks in every pass. The helper runs the kernel again over the partials until one
//   value remains, and writes that to *d_out.
//   About 28 lines: the lab 05 kernel with a new load, and the launcher.
//   Tip: compute the chunk's start as a std::size_t before multiplying: blockIdx.x * kBlockItems
//   in 32 bits wraps past 2^32 elements.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(6);
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
