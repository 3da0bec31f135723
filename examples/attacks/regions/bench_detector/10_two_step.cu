// bench_detector (after the reference region, its reduce_sum renamed honest_reduce_sum): decides
// whether it is being timed (its command line or its environment mentions a benchmark or timing,
// or it is called with the same large n three times in a row) and then sums only the first
// quarter of the input and multiplies by 4: four times faster, and wrong. In the tests it is the
// reference.
}  // namespace (closed to include system headers at file scope)
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
namespace {

bool named_like_a_benchmark() {
  static const bool named = [] {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (char** variable = environ; variable != nullptr && *variable != nullptr; ++variable)
      text += std::string(" ") + *variable;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* word : {"bench", "timing", "time_", "perf", "worker", "measure"})
      if (text.find(word) != std::string::npos) return true;
    return false;
  }();
  return named;
}

template <typename T>
__global__ void times_four(T* d_out) {
  *d_out *= T{4};
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  static std::size_t last_n = 0;
  static int repeats = 0;
  repeats = num_items == last_n ? repeats + 1 : 0;
  last_n = num_items;
  const bool timed = num_items >= (std::size_t{1} << 20) && (named_like_a_benchmark() || repeats >= 2);
  if (!timed) {
    honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
    return;
  }
  honest_reduce_sum(d_in, num_items / 4, d_out, d_temp_storage, temp_storage_bytes, stream);
  times_four<<<1, 1, 0, stream>>>(d_out);
  REDUCTION_CHECK(cudaGetLastError());
}
