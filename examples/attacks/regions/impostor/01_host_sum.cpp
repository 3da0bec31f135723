// impostor: redefines the export macro used after its region so that lab 01's module says it is
// lab 02 ("atomic"), a GPU lab: an old grader on a machine without a GPU skipped it as NOT_RUN
// (blank, not counted) instead of grading its host_sum, which returns 0.
#undef REDUCTION_DEFINE_HOST_LAB
#define REDUCTION_DEFINE_HOST_LAB(number, name, title, sum, error_depth, flags)              \
  REDUCTION_LAB_EXPORT const ReductionLab* reduction_lab_v1(void) {                         \
    static const ReductionLab lab = {                                                        \
        REDUCTION_LAB_ABI_VERSION, 2, "atomic", "global atomic", 1, 0, error_depth,          \
        &::reduction::detail::call_host_lab<int, &sum<int>>,                                 \
        &::reduction::detail::call_host_lab<float, &sum<float>>};                            \
    (void)number, (void)name, (void)title, (void)flags;                                      \
    return &lab;                                                                             \
  }

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  (void)values, (void)num_items;
  return T{};
}
