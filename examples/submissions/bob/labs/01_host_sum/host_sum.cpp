// Lab 01 — host sum: the sequential loop every parallel version is measured against.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

// ==== BEGIN STUDENT CODE ====
// The textbook loop: n - 1 dependent additions, so it runs at the latency of one add per element
// (no SIMD: the compiler may not reorder float additions), and in float the accumulator drifts
// once it grows large next to the values it adds.
template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
// ==== END STUDENT CODE ====

// One float addition per element, one after the other: the error chain is n - 1 long.
std::size_t float_error_depth(std::size_t num_items) { return num_items == 0 ? 0 : num_items - 1; }

}  // namespace

REDUCTION_DEFINE_HOST_LAB(1, "host_sum", "host sum", host_sum, float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
