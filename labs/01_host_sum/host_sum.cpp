// Lab 01 — host sum: the sequential loop every parallel version is measured against.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/lab.hpp>

#include <cstddef>

namespace {

// ==== BEGIN STUDENT CODE ====
// This region sits inside the file's anonymous `namespace {`. To add an #include, close it
// first: `}  // namespace`, your #include lines, then `namespace {` again.
// TODO(lab 01): return the sum of values[0, num_items) computed on the CPU.
//   Constraint: one pass, in index order, accumulating in T (the type the lab is called with):
//   the point of this lab is to see what a float accumulator does to a large sum.
//   About 4 lines. Tip: the index must be a std::size_t, because num_items can exceed 2^31.
template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  (void)values;
  (void)num_items;
  reduction::not_implemented(1);
}
// ==== END STUDENT CODE ====

// One float addition per element, one after the other: the error chain is n - 1 long.
std::size_t float_error_depth(std::size_t num_items) { return num_items == 0 ? 0 : num_items - 1; }

}  // namespace

REDUCTION_DEFINE_HOST_LAB(1, "host_sum", "host sum", host_sum, float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
