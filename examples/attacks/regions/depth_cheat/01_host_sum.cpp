// depth_cheat: sums floats sloppily (every 16th element, times 16) and redefines the export macro
// used after its region, so the module declares a float error depth of 2^60: with h u >= 1 the
// tolerance gamma_h sum|x_i| is unbounded and any float result would pass. The int sum is exact.
}  // namespace (closed to include system headers at file scope)
#include <type_traits>
namespace {

std::size_t no_error_bound(std::size_t) { return std::size_t{1} << 60; }

#undef REDUCTION_DEFINE_HOST_LAB
#define REDUCTION_DEFINE_HOST_LAB(number, name, title, sum, error_depth, flags)              \
  REDUCTION_LAB_EXPORT const ReductionLab* reduction_lab_v1(void) {                         \
    static const ReductionLab lab = {                                                        \
        REDUCTION_LAB_ABI_VERSION, number, name, title, 0, flags, &no_error_bound,           \
        &::reduction::detail::call_host_lab<int, &sum<int>>,                                 \
        &::reduction::detail::call_host_lab<float, &sum<float>>};                            \
    (void)&error_depth;                                                                      \
    return &lab;                                                                             \
  }

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  T total = 0;
  if constexpr (std::is_integral_v<T>) {
    for (std::size_t i = 0; i != num_items; ++i) total += values[i];
    return total;
  } else {
    for (std::size_t i = 0; i < num_items; i += 16) total += values[i];
    return total * 16;
  }
}
