// thief: #includes the reference solution (or a classmate's file) and calls its host_sum. It
// tries, in order: the repository's usual absolute path; the include path (-I common/include,
// so <../../solutions/...> is the repository's solutions/); paths relative to its own spliced
// file in the old grader's OUT/work/<student>/src/<lab>/ (a classmate's spliced file, the class
// folder in the build tree); the build tree at its usual places. The stolen file is wrapped in
// a namespace with its export macro switched off, so it compiles beside the skeleton. When
// nothing is visible it returns 0: a wrong answer.
#if __has_include("/work/main/solutions/01_host_sum/host_sum.cpp")
#define THIEF_LOOT "/work/main/solutions/01_host_sum/host_sum.cpp"
#elif __has_include(<../../solutions/01_host_sum/host_sum.cpp>)
#define THIEF_LOOT <../../solutions/01_host_sum/host_sum.cpp>
#elif __has_include("../../../aaron/src/01_host_sum/host_sum.cpp")
#define THIEF_LOOT "../../../aaron/src/01_host_sum/host_sum.cpp"
#elif __has_include("../../../zoe/src/01_host_sum/host_sum.cpp")
#define THIEF_LOOT "../../../zoe/src/01_host_sum/host_sum.cpp"
#elif __has_include("../../../../classes/attacks/aaron/labs/01_host_sum/host_sum.cpp")
#define THIEF_LOOT "../../../../classes/attacks/aaron/labs/01_host_sum/host_sum.cpp"
#elif __has_include("/work/main/build/solutions/classes/attacks/aaron/labs/01_host_sum/host_sum.cpp")
#define THIEF_LOOT "/work/main/build/solutions/classes/attacks/aaron/labs/01_host_sum/host_sum.cpp"
#elif __has_include("/work/main/build/ci/classes/attacks/aaron/labs/01_host_sum/host_sum.cpp")
#define THIEF_LOOT "/work/main/build/ci/classes/attacks/aaron/labs/01_host_sum/host_sum.cpp"
#endif

#ifdef THIEF_LOOT
#pragma push_macro("REDUCTION_DEFINE_HOST_LAB")
#undef REDUCTION_DEFINE_HOST_LAB
#define REDUCTION_DEFINE_HOST_LAB(...)
namespace stolen {
#include THIEF_LOOT
}  // namespace stolen
#pragma pop_macro("REDUCTION_DEFINE_HOST_LAB")
#endif

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
#ifdef THIEF_LOOT
  return stolen::host_sum(values, num_items);
#else
  (void)values, (void)num_items;
  return T{};
#endif
}
