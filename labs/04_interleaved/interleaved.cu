// Lab 04 — interleaved addressing: each block copies its elements into shared memory and adds
// them up as a tree (pairs of neighbours, then pairs of pairs, ...); one atomicAdd per block then
// combines the blocks' totals.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;  // threads per block of every launch

// ==== BEGIN STUDENT CODE ====
// TODO(lab 04): compute the sum of d_in[0, num_items) into *d_out with a tree in shared memory
//   per block, then one atomicAdd per block. In a kernel `reduce_interleaved`: each thread stores
//   its element in a __shared__ array of kBlockThreads values (0 past the end); then, for
//   stride = 1, 2, 4, ... while below blockDim.x, each thread whose index is a multiple of
//   2 * stride adds the value `stride` slots to its right into its own slot. The block's total
//   ends in slot 0, and thread 0 adds it to *d_out.
//   Constraint: a __syncthreads() after the store and after every step (each step reads what the
//   previous one wrote); no early return; the input stays read-only.
//   Launcher outline, as in lab 03: reset *d_out; return if num_items == 0;
//   ceil(num_items / kBlockThreads) blocks of kBlockThreads; check the launch.
//   About 25 lines: a kernel of about 12 lines and the launcher.
//   Tip: store 0 past the end rather than skipping those threads: then every slot the tree reads
//   was written (compute-sanitizer --tool initcheck reports reads of slots nobody wrote).
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(4);
}
// ==== END STUDENT CODE ====

// An element passes through the block's tree, log2(kBlockThreads) additions deep, then its
// block's total joins the chain of one atomicAdd per block into *d_out (in no fixed order).
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::log2_floor(kBlockThreads) + reduction::ceil_div(num_items, kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(4, "interleaved", "shared-memory tree, interleaved addressing", reduce_sum,
                     float_error_depth, 0)
