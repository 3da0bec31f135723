// thief10: lab 10 (a GPU lab) stolen the way thief steals lab 01: the reference solution or a
// classmate's file, #included by absolute path, through the include path, or relative to its own
// spliced file, wrapped in a namespace with the export macro switched off. When nothing is
// visible it leaves the placeholder: "not implemented yet".
#if __has_include("/work/main/solutions/10_two_step/two_step.cu")
#define THIEF_LOOT "/work/main/solutions/10_two_step/two_step.cu"
#elif __has_include(<../../solutions/10_two_step/two_step.cu>)
#define THIEF_LOOT <../../solutions/10_two_step/two_step.cu>
#elif __has_include("../../../aaron/src/10_two_step/two_step.cu")
#define THIEF_LOOT "../../../aaron/src/10_two_step/two_step.cu"
#elif __has_include("../../../zoe/src/10_two_step/two_step.cu")
#define THIEF_LOOT "../../../zoe/src/10_two_step/two_step.cu"
#elif __has_include("../../../../classes/attacks/aaron/labs/10_two_step/two_step.cu")
#define THIEF_LOOT "../../../../classes/attacks/aaron/labs/10_two_step/two_step.cu"
#endif

#ifdef THIEF_LOOT
#pragma push_macro("REDUCTION_DEFINE_LAB")
#undef REDUCTION_DEFINE_LAB
#define REDUCTION_DEFINE_LAB(...)
namespace stolen {
#include THIEF_LOOT
}  // namespace stolen
#pragma pop_macro("REDUCTION_DEFINE_LAB")
#endif

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
#ifdef THIEF_LOOT
  stolen::reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
#else
  (void)d_in, (void)num_items, (void)d_out, (void)d_temp_storage, (void)temp_storage_bytes, (void)stream;
  reduction::not_implemented(10);
#endif
}
