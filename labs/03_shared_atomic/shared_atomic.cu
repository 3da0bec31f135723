// Lab 03 — shared atomic: each block first sums its elements into one __shared__ accumulator
// with block-scope atomics, then adds that one value to the global accumulator: one global
// atomic per block instead of one per element.
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
// TODO(lab 03): compute the sum of d_in[0, num_items) into *d_out in two levels. In a kernel
//   `reduce_shared_atomic`, one thread per element: the threads of a block add their elements
//   into one __shared__ accumulator with atomicAdd_block; then one thread of the block adds the
//   block's total to *d_out with atomicAdd (one global atomic per block, not per element).
//   Constraint: shared memory starts as garbage: one thread zeroes the accumulator, and a
//   __syncthreads() separates the zeroing from the adds and the adds from the read of the total.
//   Launcher outline, as in lab 02: reset *d_out with cudaMemsetAsync on the stream; return if
//   num_items == 0; launch ceil(num_items / kBlockThreads) blocks of kBlockThreads; check the
//   launch with REDUCTION_CHECK(cudaGetLastError()).
//   About 20 lines: a kernel of about 10 lines and the launcher.
//   Tip: every thread of the block must reach every __syncthreads(), also the threads past the
//   end: guard their add with an if, never return early.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(3);
}
// ==== END STUDENT CODE ====

// Two chains, one after the other: inside a block the kBlockThreads elements go one by one into
// the shared accumulator (in no fixed order), then the blocks' totals go one by one into *d_out.
// An element that goes in first is rounded at every later step of both chains.
std::size_t float_error_depth(std::size_t num_items) {
  return kBlockThreads + reduction::ceil_div(num_items, kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(3, "shared_atomic", "shared-memory atomic per block", reduce_sum,
                     float_error_depth, 0)
