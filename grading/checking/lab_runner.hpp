// Runs a loaded lab on host data the way the contract says: input copied to the device (GPU
// labs), output pre-filled with a sentinel, scratch poisoned and between guard bytes that are
// checked after every call (scratch_guard.hpp), a wall-clock deadline on the call and its
// completion. CUDA errors and lab exceptions end the process with a clear verdict line,
// because after one the GPU context cannot be trusted for the following tests.
#pragma once

#include "scratch_guard.hpp"

#include <reduction/cuda_raii.hpp>
#include <reduction/input.hpp>
#include <reduction/lab_module.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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
  std::uint64_t input_digest = 0; // digest_bytes of d_in after the call, when checked
  ScratchDamage scratch;          // the guards around the scratch after the call: intact() unless
                                  // the lab wrote outside [d_temp_storage, + temp_storage_bytes)
};

// What happens when a lab raises a CUDA error or an exception: by default the process reports
// it (REDUCTION-RUNTIME-ERROR) and exits with kRuntimeErrorExitCode. Must not return.
using FatalHandler = std::function<void(const std::string& what, const std::string& message)>;
// Told of every call that wrote outside its scratch, with describe_scratch_damage()'s words (the
// test suite fails the test with them). It returns: the call's result stands beside it.
using ScratchHandler = std::function<void(const std::string& what, const std::string& damage)>;

struct RunnerOptions {
  double call_seconds = 60.0;   // the deadline of one call (on a full-sized input, with the two below)
  // A call's deadline grown with its input (the grader's test runs): a call on n elements gets
  // call_floor_seconds + (call_seconds - call_floor_seconds) * min(1, n / full_call_elements), so
  // a never-ending call on a small input ends in about the floor, while every size keeps the same
  // slowest rate an honest lab may have. full_call_elements 0: every call gets call_seconds.
  double call_floor_seconds = 0.0;
  std::size_t full_call_elements = 0;
  double seconds_for(std::size_t n) const;
  bool on_device = true;        // where the lab runs (the grader says so; the tests ask the module)
  FatalHandler on_fatal;        // empty: the default above
  ScratchHandler on_scratch_overrun;  // empty: only LabRun::scratch says so
  // One set of device buffers and one stream for the runner's single-call cases, kept from case to
  // case and grown when one needs more (the grader's test runs: no allocation, free or stream per
  // call). Off: each case allocates its own at exact sizes, the input last, so that a read past
  // the input's end lands outside any allocation, where compute-sanitizer memcheck sees it.
  bool reuse_buffers = false;
};

struct CaseMemory;  // a case's device buffers (lab_runner.cpp)

// The tests' options: the module says where it runs; REDUCTION_CALL_TIMEOUT_S, else 60 s, a call.
RunnerOptions test_runner_options(const LabModule& lab);

class LabRunner {
 public:
  LabRunner(const LabModule& lab, RunnerOptions options);

  // One call on `input`. `what` names the case for timeout and error messages.
  // `output_before`: the value the output holds before the call (default: the sentinel).
  // `offset`: d_in is this many elements past a 16-byte aligned allocation (garbage before it).
  template <typename T>
  LabRun<T> run(const std::vector<T>& input, const std::string& what, bool check_input = false,
                std::optional<T> output_before = std::nullopt, std::size_t offset = 0) const;

  // One call on n values of `pattern` from `seed` (make_input's), written on the device, d_in
  // `offset` elements past an aligned allocation; input_digest is always taken (on the device),
  // input_unchanged is not. Device labs only: the grader's runner, where no host copy is needed.
  template <typename T>
  LabRun<T> run_generated(Pattern pattern, std::size_t n, std::uint64_t seed, const std::string& what,
                          std::size_t offset = 0) const;

  // Two calls back to back on the same output and scratch: `first` then `second`.
  template <typename T>
  std::pair<LabRun<T>, LabRun<T>> run_twice(const std::vector<T>& first, const std::vector<T>& second,
                                            const std::string& what) const;

  // Calls back to back on one stream, with NO host synchronization between them: each on its own
  // input and into its own output (sentinel first), all sharing one scratch space; one
  // synchronize after the last. What a lab that keeps state between calls must survive.
  template <typename T>
  std::vector<LabRun<T>> run_chain(const std::vector<std::vector<T>>& inputs, const std::string& what) const;

  // One call captured into a CUDA graph, the graph launched three times (synchronized after
  // each): on `first`, then on `second` copied over it (same size), then on `second` again.
  template <typename T>
  std::vector<LabRun<T>> run_in_graph(const std::vector<T>& first, const std::vector<T>& second,
                                      const std::string& what) const;

  // One call of the operator entry (lab 12) on the same terms as run(): the sentinel in the
  // output, the scratch poisoned, the deadline, the input checked afterwards. Device labs only.
  template <typename T>
  LabRun<T> run_operator(ReductionOperator op, const std::vector<T>& input, const std::string& what,
                         std::size_t offset = 0) const;
  LabRun<ReductionMoments> run_moments(const std::vector<float>& input, const std::string& what,
                                       std::size_t offset = 0) const;

  const LabModule& lab() const { return lab_; }
  bool on_device() const { return options_.on_device; }

 private:
  const LabModule& lab_;
  RunnerOptions options_;
  mutable std::shared_ptr<CaseMemory> kept_;  // with reuse_buffers: the buffers lent to each case
};

template <typename T>
T sentinel();

}  // namespace reduction::testing
