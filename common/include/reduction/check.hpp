// The one CUDA error check of the project: REDUCTION_CHECK(expr) throws reduction::CudaError
// carrying file, line, the expression and the CUDA error's name. Never exits.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace reduction {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* expression,
                                          const char* file, int line) {
  throw CudaError(code, std::string(file) + ":" + std::to_string(line) + ": " + expression +
                            " failed: " + cudaGetErrorName(code) + " (" +
                            cudaGetErrorString(code) + ")");
}

}  // namespace reduction

#define REDUCTION_CHECK(expr)                                                        \
  do {                                                                               \
    const cudaError_t reduction_check_status_ = (expr);                              \
    if (reduction_check_status_ != cudaSuccess)                                      \
      ::reduction::throw_cuda_error(reduction_check_status_, #expr, __FILE__, __LINE__); \
  } while (0)
