// Test inputs written on the GPU and digested there (device_input.hpp).
#include "device_input.hpp"

#include "../runner/digest.hpp"

#include <reduction/check.hpp>
#include <reduction/cuda_raii.hpp>

#include <algorithm>
#include <type_traits>

namespace reduction::testing {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;

int blocks_for(std::size_t items) {
  return static_cast<int>(std::clamp<std::size_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <typename T>
__global__ void write_pattern(T* d, Pattern pattern, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t b = input_bits(seed, i);
    if constexpr (std::is_same_v<T, float>) d[i] = float_input(pattern, b);
    else d[i] = int_input(pattern, b);
  }
}

// The digest's terms over 8-byte words built from 4-byte halves (d_in may sit 4 bytes past an
// 8-byte boundary), the last word zero-padded; each warp adds its part once.
__global__ void digest_words(const std::uint32_t* halves, std::size_t count, unsigned long long* sum) {
  const std::size_t words = (count + 1) / 2;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::uint64_t part = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
    const std::uint64_t low = halves[2 * i];
    const std::uint64_t high = 2 * i + 1 < count ? halves[2 * i + 1] : 0;
    part += grading::digest_term(low | high << 32, i);
  }
  for (int offset = 16; offset > 0; offset /= 2) part += __shfl_down_sync(0xFFFFFFFFu, part, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, static_cast<unsigned long long>(part));
}

}  // namespace

template <typename T>
void enqueue_input_on_device(T* d, Pattern pattern, std::size_t n, std::uint64_t seed) {
  static_assert(std::is_same_v<T, int> || std::is_same_v<T, float>);
  if (n == 0) return;
  write_pattern<T><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(d, pattern, n, seed);
  REDUCTION_CHECK(cudaGetLastError());
}

template <typename T>
void write_input_on_device(T* d, Pattern pattern, std::size_t n, std::uint64_t seed) {
  enqueue_input_on_device(d, pattern, n, seed);
  REDUCTION_CHECK(cudaDeviceSynchronize());
}

void enqueue_digest(const void* d, std::size_t bytes, unsigned long long* sum) {
  REDUCTION_CHECK(cudaMemsetAsync(sum, 0, sizeof(unsigned long long), cudaStreamLegacy));
  if (bytes == 0) return;
  const std::size_t count = bytes / 4;
  digest_words<<<blocks_for((count + 1) / 2), kThreads, 0, cudaStreamLegacy>>>(static_cast<const std::uint32_t*>(d),
                                                                             count, sum);
  REDUCTION_CHECK(cudaGetLastError());
}

std::uint64_t digest_of_sum(std::size_t bytes, unsigned long long sum) { return grading::digest_start(bytes) + sum; }

std::uint64_t digest_on_device(const void* d, std::size_t bytes) {
  DeviceBuffer<unsigned long long> sum(1);
  enqueue_digest(d, bytes, sum.get());
  return digest_of_sum(bytes, sum.download()[0]);  // a blocking copy on the legacy stream: after the kernel
}

template void write_input_on_device<int>(int*, Pattern, std::size_t, std::uint64_t);
template void write_input_on_device<float>(float*, Pattern, std::size_t, std::uint64_t);
template void enqueue_input_on_device<int>(int*, Pattern, std::size_t, std::uint64_t);
template void enqueue_input_on_device<float>(float*, Pattern, std::size_t, std::uint64_t);

}  // namespace reduction::testing
