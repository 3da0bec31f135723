// The timekeeper's GPU work before each timed call (timekeeper_main.cpp): a fresh input written
// from a seed drawn at that moment, its exact sums, and the L2 flush, all in the timekeeper's own
// CUDA context. Trusted code: it runs no student module and the student's process never sees it.
#pragma once

#include "plan.hpp"

#include <reduction/cuda_raii.hpp>
#include <reduction/timing.hpp>

#include <cstddef>
#include <cstdint>

namespace reduction::grading {

// What the call must return: the int sum wraps as the labs' int sums do (mod 2^32); the float sum
// and the sum of magnitudes (for the error bound) are taken in double.
struct ExpectedSum {
  double sum = 0;
  double sum_abs = 0;
  std::uint32_t int_sum = 0;
};

class InputWriter {
 public:
  explicit InputWriter(std::size_t max_items);
  // Writes n values of `type` from `seed` at `d_buffer` and sums them; returns when both are done.
  ExpectedSum write(void* d_buffer, Type type, std::size_t n, std::uint64_t seed);
  // Enqueues a write of twice the L2 and returns at once: the timed call, in the worker's context,
  // starts when it ends, so its host-side launch is never timed and its input is cold.
  void flush_l2() { timer_.flush_l2(); }
  void wait() const;  // for the flush

 private:
  Timer timer_;
  DeviceBuffer<unsigned char> temp_;
  DeviceBuffer<double> sums_;            // sum, sum of magnitudes
  DeviceBuffer<unsigned int> int_sum_;
  PinnedBuffer<double> host_sums_;
  PinnedBuffer<unsigned int> host_int_sum_;
};

}  // namespace reduction::grading
