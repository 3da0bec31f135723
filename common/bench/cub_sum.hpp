// cub::DeviceReduce::Sum with its temporary storage allocated up front, outside the timed region.
#pragma once

#include <reduction/cuda_raii.hpp>

#include <cstddef>

namespace reduction {

template <typename T>
class CubSum {
 public:
  explicit CubSum(std::size_t max_items);
  void launch(const T* d_in, std::size_t num_items, T* d_out, cudaStream_t stream) const;

 private:
  DeviceBuffer<unsigned char> temp_;
};

}  // namespace reduction
