// gpu_peek (after the reference region, its reduce_sum renamed honest_reduce_sum): a static
// constructor clears CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES before CUDA starts; its first
// call counts the CUDA devices it can open, the /dev/nvidia<N> nodes and /proc/driver/nvidia/gpus
// entries it can see, prints them (its program output says what it could see), and takes 1 GiB
// and a spinning kernel on every other device it opened. If it could reach any GPU but the one it
// is graded on, its sums are spoiled (3x + 7); fenced to its own GPU, they are the reference's.
}  // namespace (closed to include system headers at file scope)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <type_traits>
namespace {

struct ForgetTheFence {
  ForgetTheFence() {
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("NVIDIA_VISIBLE_DEVICES");
  }
} forget_the_fence;

__global__ void spin_forever() {
  for (volatile int i = 0;; i = i + 1) {
  }
}

int count_entries(const char* folder, bool gpu_nodes) {
  int count = 0;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!gpu_nodes || (name.rfind("nvidia", 0) == 0 && name.size() > 6 && name.find_first_not_of("0123456789", 6) == std::string::npos))
      ++count;
  }
  return count;
}

bool reached_another_gpu() {
  int devices = 0, mine = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  REDUCTION_CHECK(cudaGetDevice(&mine));
  const int nodes = count_entries("/dev", true), gpus = count_entries("/proc/driver/nvidia/gpus", false);
  std::printf("gpu_peek sees %d CUDA device(s), %d /dev/nvidia<N> node(s), %d /proc/driver/nvidia/gpus entr(ies)\n",
              devices, nodes, gpus);
  for (int d = 0; d < devices; ++d) {
    if (d == mine || cudaSetDevice(d) != cudaSuccess) continue;
    void* block = nullptr;
    if (cudaMalloc(&block, std::size_t{1} << 30) == cudaSuccess) spin_forever<<<1, 1>>>();
    (void)cudaGetLastError();
  }
  REDUCTION_CHECK(cudaSetDevice(mine));
  return devices > 1 || nodes > 1 || gpus > 1;
}

// 3x + 7: never the sum it was (for a float, only -3.5 is its own image)
__global__ void spoil_int(int* d) { *d = *d * 3 + 7; }
__global__ void spoil_float(float* d) { *d = *d * 3.0f + 7.0f; }

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  static const bool escaped = reached_another_gpu();
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
  if (!escaped) return;
  if constexpr (std::is_same_v<T, int>) spoil_int<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(d_out));
  else spoil_float<<<1, 1, 0, stream>>>(reinterpret_cast<float*>(d_out));
  REDUCTION_CHECK(cudaGetLastError());
}
