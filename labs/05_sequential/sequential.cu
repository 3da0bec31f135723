// Lab 05 — sequential addressing: the same shared-memory tree per block as lab 04, but at each
// step the first half of the active threads adds the second half's values into their own, so the
// busy threads are always the lowest-numbered ones; as in lab 04, each block writes its total to
// the scratch space and the same kernel runs again over the partials until one block is left
// (2^24 -> 65,536 -> 256 -> 1).
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
// TODO(lab 05): the lab 04 tree with the pairing turned around, in a kernel
//   `reduce_sequential(d_in, num_items, d_partials)`. Load as in lab 04: one element per thread
//   into a __shared__ array of kBlockThreads values, 0 past the end. Then for s = blockDim.x / 2,
//   blockDim.x / 4, ..., 1: the threads with index below s add slot tid + s into slot tid.
//   Thread 0 writes slot 0 (the block's total) to d_partials[blockIdx.x].
//   Constraint: no `%`: the comparison with s alone picks the active threads, so they are always
//   threads 0 .. s-1; a __syncthreads() after the store and after every step; no atomics.
//   Launcher: the same as lab 04, one call to reduction::reduce_in_passes with kBlockThreads
//   items per block and a lambda that launches reduce_sequential (blocks of kBlockThreads, on the
//   stream it is given); the helper runs the kernel again over the partials until one value
//   remains, and writes that to *d_out.
//   About 25 lines: start from your lab 04 and change the loop.
//   Tip: halve with `s >>= 1`; `s >> 1` alone computes a value, throws it away, and the loop
//   never ends (a hang, which the tests' watchdog reports as a timeout).
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(5);
}
// ==== END STUDENT CODE ====

// The same shape as lab 04, only the pairing differs: log2(kBlockThreads) tree levels per block
// in every pass, and a block's total is an element of the next pass, so h = passes *
// log2(kBlockThreads) (24 at 2^24). The pairs depend only on n, not on the order blocks run in:
// float results are bitwise reproducible.
std::size_t float_error_depth(std::size_t num_items) {
  return reduction::pass_count(num_items, kBlockThreads) * reduction::log2_floor(kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(5, "sequential", "shared-memory tree, sequential addressing", reduce_sum,
                     float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
