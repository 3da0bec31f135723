// Loads a lab module (lab<NN>_<name>.so) by path and calls its entry points. Student and
// reference builds of the same lab export the same names, so each is loaded privately.
#pragma once

#include <reduction/lab_abi.h>

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

 private:
  LabModule(std::string path, const ReductionLab* lab) : path_(std::move(path)), lab_(lab) {}
  std::string path_;
  const ReductionLab* lab_;
};

// The module file name of a lab folder: "02_atomic" -> "lab02_atomic.so".
std::string module_file_name(const std::string& folder);

}  // namespace reduction
