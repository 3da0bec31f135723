// The timekeeper's inputs and their sums (input_writer.hpp), with CUB: trusted code, no lab's.
#include "input_writer.hpp"

#include <reduction/check.hpp>

#include <cub/device/device_reduce.cuh>

#include <algorithm>

namespace reduction::grading {
namespace {

// splitmix64's finalizer (reduction::mix64, which is host-only).
__device__ std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Element i of an input from `seed`: floats in [-1, 1) on a 2^-23 grid, ints in [-100, 100]
// (the mixed_sign pattern's ranges: a sum that cancels, as the references are timed on).
__global__ void write_input(float* floats, int* ints, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t bits = mix(seed ^ (i * 0x9E3779B97F4A7C15ull));
    if (floats) floats[i] = static_cast<float>(static_cast<double>(bits >> 40) * 0x1p-23 - 1.0);
    else ints[i] = static_cast<int>((bits >> 33) % 201) - 100;
  }
}

struct SumAndMagnitude {
  __host__ __device__ double2 operator()(float x) const { return make_double2(x, x < 0 ? -x : x); }
};
struct AddPairs {
  __host__ __device__ double2 operator()(double2 a, double2 b) const { return make_double2(a.x + b.x, a.y + b.y); }
};

std::size_t temp_bytes(std::size_t max_items) {
  std::size_t floats = 0, ints = 0;
  REDUCTION_CHECK(cub::DeviceReduce::TransformReduce(nullptr, floats, static_cast<const float*>(nullptr),
                                                     static_cast<double2*>(nullptr), max_items, AddPairs{},
                                                     SumAndMagnitude{}, make_double2(0, 0)));
  REDUCTION_CHECK(cub::DeviceReduce::Sum(nullptr, ints, static_cast<const unsigned*>(nullptr),
                                         static_cast<unsigned*>(nullptr), max_items));
  return std::max(floats, ints);
}

}  // namespace

InputWriter::InputWriter(std::size_t max_items)
    : temp_(temp_bytes(std::max<std::size_t>(max_items, 1))), sums_(2), int_sum_(1), host_sums_(2), host_int_sum_(1) {}

ExpectedSum InputWriter::write(void* d_buffer, Type type, std::size_t n, std::uint64_t seed) {
  const cudaStream_t stream = timer_.stream();
  const bool floats = type == Type::float32;
  if (n > 0) {
    const int blocks = static_cast<int>(std::min<std::size_t>((n + 255) / 256, 4096));
    write_input<<<blocks, 256, 0, stream>>>(floats ? static_cast<float*>(d_buffer) : nullptr,
                                            floats ? nullptr : static_cast<int*>(d_buffer), n, seed);
    REDUCTION_CHECK(cudaGetLastError());
  }
  std::size_t bytes = temp_.bytes();
  if (floats) {
    REDUCTION_CHECK(cub::DeviceReduce::TransformReduce(temp_.get(), bytes, static_cast<const float*>(d_buffer),
                                                       reinterpret_cast<double2*>(sums_.get()), n, AddPairs{},
                                                       SumAndMagnitude{}, make_double2(0, 0), stream));
    REDUCTION_CHECK(cudaMemcpyAsync(host_sums_.get(), sums_.get(), 2 * sizeof(double), cudaMemcpyDeviceToHost, stream));
  } else {
    REDUCTION_CHECK(cub::DeviceReduce::Sum(temp_.get(), bytes, static_cast<const unsigned*>(d_buffer), int_sum_.get(),
                                           n, stream));
    REDUCTION_CHECK(cudaMemcpyAsync(host_int_sum_.get(), int_sum_.get(), sizeof(unsigned), cudaMemcpyDeviceToHost,
                                    stream));
  }
  REDUCTION_CHECK(cudaStreamSynchronize(stream));
  ExpectedSum expected;
  if (floats) {
    expected.sum = host_sums_.get()[0];
    expected.sum_abs = host_sums_.get()[1];
  } else {
    expected.int_sum = host_int_sum_.get()[0];
  }
  return expected;
}

void InputWriter::wait() const { REDUCTION_CHECK(cudaStreamSynchronize(timer_.stream())); }

}  // namespace reduction::grading
