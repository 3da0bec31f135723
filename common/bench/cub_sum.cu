// The baseline a user would pick instead: CUB's device-wide sum.
#include "cub_sum.hpp"

#include <cub/device/device_reduce.cuh>

namespace reduction {

template <typename T>
CubSum<T>::CubSum(std::size_t max_items) {
  std::size_t bytes = 0;
  REDUCTION_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
                                         max_items));
  temp_ = DeviceBuffer<unsigned char>(bytes);
}

template <typename T>
void CubSum<T>::launch(const T* d_in, std::size_t num_items, T* d_out, cudaStream_t stream) const {
  std::size_t bytes = temp_.bytes();
  REDUCTION_CHECK(cub::DeviceReduce::Sum(temp_.get(), bytes, d_in, d_out, num_items, stream));
}

template class CubSum<int>;
template class CubSum<float>;

}  // namespace reduction
