// The lab contract: what every lab file implements, and the macro that exports it.
//
// Every GPU lab implements one entry point, for T = int and T = float:
//
//   template <typename T>
//   void reduce_sum(const T* d_in, std::size_t num_items, T* d_out,
//                   void* d_temp_storage, std::size_t temp_storage_bytes, cudaStream_t stream);
//
// Computes the sum of d_in[0, num_items) and writes it to *d_out.
//
// - d_in: device memory holding num_items values, read-only. It must be unchanged afterwards.
// - num_items: any value from 0 to beyond 2^31. An empty input gives the identity, 0.
// - d_out: one device location, supplied by the caller. Its old value is garbage: a lab that
//   accumulates into it (atomics) resets it on the stream *before* the launch, never inside the
//   kernel (a reset inside the kernel races with other blocks).
// - d_temp_storage, temp_storage_bytes: device scratch space allocated by the caller before the
//   timed region, so a lab never allocates. Its content is garbage on entry (the tests poison it).
//   The caller guarantees temp_storage_bytes >= guaranteed_temp_storage_bytes(num_items):
//   1 MiB plus 8 bytes for every 256 inputs (room for one partial per block of 256 threads).
//   Only [d_temp_storage, d_temp_storage + temp_storage_bytes) is the lab's: the tests put guard
//   bytes on both sides of it, and a call that changes them fails ("scratch overrun").
// - stream: every operation goes on this stream; the result is complete when the caller
//   synchronizes it. No device-wide synchronization inside.
// - Errors: throw (REDUCTION_CHECK does); never exit().
// - Determinism: integer sums are exact, whatever the order. Float sums are order-dependent;
//   a lab says how much through float_error_depth (below) and whether it is bitwise
//   reproducible through REDUCTION_LAB_FLOAT_DETERMINISTIC.
//
// Snippet (what the tests do):
//
//   // d_in <-- [8, 6, 7, 5, 3, 0, 9]
//   reduce_sum<int>(d_in, 7, d_out, d_temp, temp_bytes, stream);
//   cudaStreamSynchronize(stream);
//   // *d_out <-- 38
//
// Lab 01 (host sum) implements the host equivalent, on host memory:
//
//   template <typename T> T host_sum(const T* values, std::size_t num_items);
//
// Each lab also declares float_error_depth(num_items): h, the longest chain of float additions
// its algorithm performs (a sequential loop: n - 1; a tree over blocks of B then one atomic per
// block: log2(B) + number of blocks). The tests accept a float result within
// gamma_h * sum(|x_i|), gamma_h = h*u / (1 - h*u), u = 2^-24 (see reference.hpp).
#pragma once

#include <reduction/check.hpp>
#include <reduction/lab_abi.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

namespace reduction {

// Thrown by a skeleton's placeholder; the tests report it as "not implemented yet".
class NotImplemented : public std::logic_error {
 public:
  explicit NotImplemented(int lab)
      : std::logic_error("lab " + std::string(lab < 10 ? "0" : "") + std::to_string(lab) +
                         ": not implemented yet (write your code between the STUDENT CODE markers)") {}
};

[[noreturn]] inline void not_implemented(int lab) { throw NotImplemented(lab); }

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

constexpr std::size_t guaranteed_temp_storage_bytes(std::size_t num_items) {
  return (std::size_t{1} << 20) + 8 * ceil_div(num_items, 256);
}

// floor(log2(x)) for x > 0, at compile time too: handy for error depths of trees.
constexpr std::size_t log2_floor(std::size_t x) {
  std::size_t result = 0;
  while (x > 1) {
    x >>= 1;
    ++result;
  }
  return result;
}

// How many passes reduce_in_passes makes over num_items values, items_per_block per block.
constexpr std::size_t pass_count(std::size_t num_items, std::size_t items_per_block) {
  std::size_t passes = 1;
  for (std::size_t count = ceil_div(num_items, items_per_block); count > 1; count = ceil_div(count, items_per_block))
    ++passes;
  return passes;
}

// The multi-pass driver of labs 04-09: one partial per block, combined across blocks by running
// the same kernel again over the partials until one block is left, as Harris's reductions do.
// `pass(in, count, out, blocks, stream)` must launch `blocks` blocks that each reduce
// items_per_block of in[0, count) and write their result to out[blockIdx.x]. The partials live
// in the scratch space (two ping-pong arrays); the last pass writes straight to d_out. No
// atomics: the result does not depend on the order blocks run in, and the last-pass launch
// costs a few microseconds instead of one serialized atomic per block.
template <typename T, typename Pass>
void reduce_in_passes(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                      std::size_t temp_storage_bytes, std::size_t items_per_block, cudaStream_t stream,
                      Pass&& pass) {
  if (num_items == 0) {
    REDUCTION_CHECK(cudaMemsetAsync(d_out, 0, sizeof(T), stream));  // the identity
    return;
  }
  const std::size_t first = ceil_div(num_items, items_per_block);
  if ((first + ceil_div(first, items_per_block)) * sizeof(T) > temp_storage_bytes)
    throw std::length_error("reduce_in_passes: the scratch space is too small for the partials");
  T* partials[2] = {static_cast<T*>(d_temp_storage), static_cast<T*>(d_temp_storage) + first};
  const T* in = d_in;
  for (std::size_t count = num_items, next = 0;; next ^= 1) {
    const std::size_t blocks = ceil_div(count, items_per_block);
    T* out = blocks == 1 ? d_out : partials[next];
    pass(in, count, out, static_cast<unsigned>(blocks), stream);
    REDUCTION_CHECK(cudaGetLastError());
    if (blocks == 1) return;
    in = out;
    count = blocks;
  }
}

namespace detail {

inline void copy_message(const char* text, char* message, std::size_t message_size) {
  if (message == nullptr || message_size == 0) return;
  std::strncpy(message, text, message_size - 1);
  message[message_size - 1] = '\0';
}

// Runs a lab's entry point and turns exceptions into a status: nothing may unwind through the
// C interface of a module.
template <typename Body>
ReductionLabStatus guarded(Body&& body, char* message, std::size_t message_size) noexcept {
  try {
    body();
    return REDUCTION_LAB_OK;
  } catch (const NotImplemented& e) {
    copy_message(e.what(), message, message_size);
    return REDUCTION_LAB_NOT_IMPLEMENTED;
  } catch (const std::exception& e) {
    copy_message(e.what(), message, message_size);
    return REDUCTION_LAB_ERROR;
  } catch (...) {
    copy_message("the lab threw something that is not a std::exception", message, message_size);
    return REDUCTION_LAB_ERROR;
  }
}

template <typename T>
using DeviceSumFn = void (*)(const T*, std::size_t, T*, void*, std::size_t, cudaStream_t);
template <typename T>
using HostSumFn = T (*)(const T*, std::size_t);

template <typename T, DeviceSumFn<T> Sum>
ReductionLabStatus call_device_lab(const T* in, size_t num_items, T* out, void* temp_storage,
                                   size_t temp_storage_bytes, cudaStream_t stream, char* message,
                                   size_t message_size) noexcept {
  return guarded([&] { Sum(in, num_items, out, temp_storage, temp_storage_bytes, stream); },
                 message, message_size);
}

template <typename T, HostSumFn<T> Sum>
ReductionLabStatus call_host_lab(const T* in, size_t num_items, T* out, void*, size_t,
                                 cudaStream_t, char* message, size_t message_size) noexcept {
  return guarded([&] { *out = Sum(in, num_items); }, message, message_size);
}

}  // namespace detail
}  // namespace reduction

#define REDUCTION_LAB_EXPORT extern "C" __attribute__((visibility("default")))

// Exports a GPU lab: REDUCTION_DEFINE_LAB(2, "atomic", "global atomic", reduce_sum,
//                                         float_error_depth, 0)
#define REDUCTION_DEFINE_LAB(number, name, title, sum, error_depth, flags)                    \
  REDUCTION_LAB_EXPORT const ReductionLab* reduction_lab_v1(void) {                          \
    static const ReductionLab lab = {                                                         \
        REDUCTION_LAB_ABI_VERSION, number, name, title, 1, flags, error_depth,                \
        &::reduction::detail::call_device_lab<int, &sum<int>>,                                \
        &::reduction::detail::call_device_lab<float, &sum<float>>};                           \
    return &lab;                                                                              \
  }

// Exports a host lab (lab 01): pointers are host memory.
#define REDUCTION_DEFINE_HOST_LAB(number, name, title, sum, error_depth, flags)               \
  REDUCTION_LAB_EXPORT const ReductionLab* reduction_lab_v1(void) {                          \
    static const ReductionLab lab = {                                                         \
        REDUCTION_LAB_ABI_VERSION, number, name, title, 0, flags, error_depth,                \
        &::reduction::detail::call_host_lab<int, &sum<int>>,                                  \
        &::reduction::detail::call_host_lab<float, &sum<float>>};                             \
    return &lab;                                                                              \
  }
