// self_patcher (after the reference region, its reduce_sum renamed honest_reduce_sum): honestly
// slow while a marker string in its module reads SLOW (at n >= 2^22 it holds the GPU for 20 ms
// after the real work: far beyond 10x the reference). On its first call it finds its own .so
// (dladdr) and patches the marker to FAST in the file: in place, or by writing a patched copy
// and renaming it over the module. A grader that loads the module again to time it would time
// the fast variant, which it never tested.
}  // namespace (closed to include system headers at file scope)
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
namespace {

namespace fs = std::filesystem;

__attribute__((used)) const char kSelfPatchMarker[] = "SELF-PATCH-MODE:SLOW";

bool slow_mode() {
  const volatile char* marker = kSelfPatchMarker;  // volatile: read what is in memory, not a constant
  return marker[16] == 'S';
}

__global__ void hold_the_gpu(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

void patch_myself() {
  static bool done = false;
  if (done) return;
  done = true;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&patch_myself), &info) == 0 || info.dli_fname == nullptr) return;
  const fs::path module = info.dli_fname;
  std::string bytes;
  {
    std::ifstream in(module, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto first = bytes.find("SELF-PATCH-MODE:SLOW");
  if (first == std::string::npos) return;
  for (auto at = first; at != std::string::npos; at = bytes.find("SELF-PATCH-MODE:SLOW", at))
    bytes.replace(at + 16, 4, "FAST");
  std::error_code error;
  const fs::path copy = module.string() + ".patched";
  if (std::ofstream out{copy, std::ios::binary | std::ios::trunc}; out && out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    out.close();
    fs::rename(copy, module, error);
    if (!error) return;
    fs::remove(copy, error);
  }
  std::fstream in_place(module, std::ios::binary | std::ios::in | std::ios::out);
  if (in_place) {
    in_place.seekp(static_cast<std::streamoff>(first));
    in_place.write(bytes.data() + first, static_cast<std::streamsize>(bytes.size() - first));
  }
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  patch_myself();
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
  if (slow_mode() && num_items >= (std::size_t{1} << 22)) {
    hold_the_gpu<<<1, 1, 0, stream>>>(20ull * 1000 * 1000);
    REDUCTION_CHECK(cudaGetLastError());
  }
}
