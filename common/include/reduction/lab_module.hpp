// Loads a lab module (lab<NN>_<name>.so) by path and calls its entry points: the sum entry every
// lab exports (lab_abi.h), and the operator entry of the labs that have one (operator_abi.h).
// Student and reference builds of the same lab export the same names, so each is loaded privately.
#pragma once

#include <reduction/lab_abi.h>
#include <reduction/operator_abi.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace reduction {

class LabLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The outcome of one call of a lab's entry point.
struct LabCallResult {
  ReductionLabStatus status = REDUCTION_LAB_OK;
  std::string message;  // empty when status is OK
  bool ok() const { return status == REDUCTION_LAB_OK; }
};

class LabModule {
 public:
  // Throws LabLoadError naming the path and the loader's reason.
  static LabModule load(const std::string& path);

  int number() const { return lab_->number; }
  std::string name() const { return lab_->name; }
  std::string title() const { return lab_->title; }
  std::string folder() const;  // "02_atomic"
  bool runs_on_device() const { return lab_->runs_on_device != 0; }
  bool float_deterministic() const { return (lab_->flags & REDUCTION_LAB_FLOAT_DETERMINISTIC) != 0; }
  std::size_t float_error_depth(std::size_t num_items) const {
    return lab_->float_error_depth(num_items);
  }
  const std::string& path() const { return path_; }

  // Calls the entry point; for a device lab, pointers are device memory and the work is only
  // enqueued on `stream`.
  template <typename T>
  LabCallResult sum(const T* in, std::size_t num_items, T* out, void* temp_storage,
                    std::size_t temp_storage_bytes, cudaStream_t stream) const;

  // The operator entry: present only in labs that export one (lab 12). The calls below throw
  // std::logic_error on a module without it; `op` is any operator but MOMENTS.
  bool has_operators() const { return operators_ != nullptr; }
  template <typename T>
  LabCallResult reduce(ReductionOperator op, const T* in, std::size_t num_items, T* out, void* temp_storage,
                       std::size_t temp_storage_bytes, cudaStream_t stream) const;
  LabCallResult moments(const float* in, std::size_t num_items, ReductionMoments* out, void* temp_storage,
                        std::size_t temp_storage_bytes, cudaStream_t stream) const;

 private:
  LabModule(std::string path, const ReductionLab* lab, const ReductionOperatorLab* operators)
      : path_(std::move(path)), lab_(lab), operators_(operators) {}
  const ReductionOperatorLab& operators() const;
  std::string path_;
  const ReductionLab* lab_;
  const ReductionOperatorLab* operators_;  // null: the module has no operator entry
};

// The module file name of a lab folder: "02_atomic" -> "lab02_atomic.so".
std::string module_file_name(const std::string& folder);

}  // namespace reduction
