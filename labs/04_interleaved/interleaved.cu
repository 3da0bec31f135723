// Lab 04 — interleaved addressing: each block copies its elements into shared memory and adds
// them up as a tree (pairs of neighbours, then pairs of pairs, ...) and writes its total to the
// scratch space; the same kernel, launched again over those partials, combines them until one
// block is left, whose total is the sum (2^24 -> 65,536 -> 256 -> 1).
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;  // threads per block of every launch

// ==== BEGIN STUDENT CODE ====
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 04): compute the sum of d_in[0, num_items) into *d_out with a tree in shared memory
//   per block. In a kernel `reduce_interleaved(d_in, num_items, d_partials)`: each thread stores
//   its element in a __shared__ array of kBlockThreads values (0 past the end); then, for
//   stride = 1, 2, 4, ... while below blockDim.x, each thread whose index is a multiple of
//   2 * stride adds the value `stride` slots to its right into its own slot. The block's total
//   ends in slot 0, and thread 0 writes it to d_partials[blockIdx.x].
//   Constraint: a __syncthreads() after the store and after every step (each step reads what the
//   previous one wrote); no early return; no atomics; the input stays read-only.
//   Launcher: one call to reduction::reduce_in_passes (common/include/reduction/lab.hpp), with
//   kBlockThreads items per block and, as its last argument, a lambda
//   [](const T* in, std::size_t count, T* out, unsigned blocks, cudaStream_t s) that launches
//   your kernel over in[0, count) into out, `blocks` blocks of kBlockThreads on stream s. The
//   helper runs the kernel over d_in, then again over the blocks' partials (in the scratch space)
//   until one value remains, which goes straight to *d_out; it also checks each launch and
//   writes 0 for num_items == 0.
//   About 25 lines: a kernel of about 12 lines and the launcher (mostly the lambda).
//   Tip: store 0 past the end rather than skipping those threads: then every slot the tree reads
//   was written (compute-sanitizer --tool initcheck reports reads of slots nobody wrote). The
//   later passes, over the partials, have short last blocks too.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(4);
}
// ==== END STUDENT CODE ====

// Each pass is the same tree: an element climbs log2(kBlockThreads) levels in its block, and its
// block's total is an element of the next pass, so h = passes * log2(kBlockThreads) (24 at 2^24:
// 3 passes of 8). Which values meet at every level depends only on n, never on the order blocks
// run in: float results are bitwise reproducible.
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::pass_count(num_items, kBlockThreads) * reduction::log2_floor(kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(4, "interleaved", "shared-memory tree, interleaved addressing", reduce_sum,
                     float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
