// Runs a loaded lab on host data the way the contract says: input copied to the device (GPU
// labs), output pre-filled with a sentinel, scratch poisoned, a wall-clock deadline on the call
// and its completion. CUDA errors and lab exceptions end the process with a clear verdict line,
// because after one the GPU context cannot be trusted for the following tests.
#pragma once

#include <reduction/cuda_raii.hpp>
#include <reduction/lab_module.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace reduction::testing {

// Exit code when a lab raised a CUDA error or exception, or called exit(): RUNTIME_ERROR.
inline constexpr int kRuntimeErrorExitCode = 3;

template <typename T>
struct LabRun {
  T value{};                      // what the lab wrote to the output
  bool not_implemented = false;   // the skeleton's placeholder ran
  std::string message;            // its message
  bool input_unchanged = true;    // only checked when asked
};

class LabRunner {
 public:
  explicit LabRunner(const LabModule& lab) : lab_(lab) {}

  // One call on `input`. `what` names the case for timeout and error messages.
  // `output_before`: the value the output holds before the call (default: the sentinel).
  template <typename T>
  LabRun<T> run(const std::vector<T>& input, const std::string& what, bool check_input = false,
                std::optional<T> output_before = std::nullopt) const;

  // Two calls back to back on the same output and scratch: `first` then `second`.
  template <typename T>
  std::pair<LabRun<T>, LabRun<T>> run_twice(const std::vector<T>& first, const std::vector<T>& second,
                                            const std::string& what) const;

  const LabModule& lab() const { return lab_; }

 private:
  const LabModule& lab_;
};

template <typename T>
T sentinel();

}  // namespace reduction::testing
