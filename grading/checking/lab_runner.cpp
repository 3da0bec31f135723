// LabRunner: one contract-conforming call of a lab on host data (see lab_runner.hpp).
#include "lab_runner.hpp"

#include "device_input.hpp"
#include "diagnosis.hpp"
#include "../runner/plan.hpp"

#include <reduction/lab.hpp>
#include <reduction/watchdog.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace reduction::testing {
namespace {

constexpr double kDefaultCallSeconds = 60.0;

[[noreturn]] void default_fatal(const std::string& what, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "\nREDUCTION-RUNTIME-ERROR: %s: %s\n", what.c_str(), message.c_str());
  std::fflush(stderr);
  std::_Exit(kRuntimeErrorExitCode);
}

// The handler hears of the first call of `runs` that wrote outside its scratch (the calls of a
// chain share one scratch: their damage is one), on the caller's thread, after the deadline.
template <typename Run>
void report_scratch(const RunnerOptions& options, const std::string& what, const std::vector<Run>& runs) {
  if (!options.on_scratch_overrun) return;
  for (const auto& run : runs) {
    if (run.scratch.intact()) continue;
    options.on_scratch_overrun(what, describe_scratch_damage(run.scratch));
    return;
  }
}

// The device side of one test: buffers sized for the largest input, reused for a second call.
// In: the input's element type; Out: what the entry writes (the same for a sum; lab 12's moments
// write a ReductionMoments).
template <typename In, typename Out = In>
class DeviceCase {
 public:
  // The input is allocated last, so that a read past its end lands outside any allocation,
  // where memcheck sees it (inside a neighbouring buffer it would look legal). The scratch
  // comes poisoned (0xFF: garbage, never zeros), between its guards: a write just past it lands
  // in a guard and fails the call here; one beyond the guard is memcheck's to see.
  DeviceCase(std::size_t n, std::size_t offset)
      : output_(1), temp_(guaranteed_temp_storage_bytes(n)), input_(n + offset), offset_(offset) {
    if (offset) REDUCTION_CHECK(cudaMemset(input_.get(), 0xFF, offset * sizeof(In)));  // the skipped slots
  }

  // `entry(d_in, n, d_out, d_temp, temp_bytes, stream)` calls the lab and returns its LabCallResult.
  template <typename Entry>
  LabRun<Out> call(const Entry& entry, const std::vector<In>& host_input, std::optional<Out> output_before,
                   bool check_input, const std::string& what, const RunnerOptions& options) {
    In* d_in = input_.get() + offset_;
    REDUCTION_CHECK(cudaMemcpy(d_in, host_input.data(), host_input.size() * sizeof(In), cudaMemcpyHostToDevice));
    LabRun<Out> run = execute(entry, host_input.size(), output_before, what, options);
    if (check_input) {
      std::vector<In> after(host_input.size());
      REDUCTION_CHECK(cudaMemcpy(after.data(), d_in, after.size() * sizeof(In), cudaMemcpyDeviceToHost));
      run.input_unchanged = std::memcmp(after.data(), host_input.data(), after.size() * sizeof(In)) == 0;
      run.input_digest = grading::digest_bytes(after.data(), after.size() * sizeof(In));
    }
    return run;
  }

  // The same on n values of `pattern` from `seed` written on the device, and d_in's digest taken
  // there after the call (device_input.hpp): the input never passes through the host.
  template <typename Entry>
  LabRun<Out> call_generated(const Entry& entry, Pattern pattern, std::size_t n, std::uint64_t seed,
                             const std::string& what, const RunnerOptions& options) {
    static_assert(sizeof(In) == 4, "the device digest reads 4-byte elements");
    In* d_in = input_.get() + offset_;
    write_input_on_device(d_in, pattern, n, seed);
    LabRun<Out> run = execute(entry, n, std::nullopt, what, options);
    run.input_digest = digest_on_device(d_in, n * sizeof(In));
    return run;
  }

 private:
  // The call on d_in (already written), the output holding `output_before` (the sentinel when none).
  template <typename Entry>
  LabRun<Out> execute(const Entry& entry, std::size_t n, std::optional<Out> output_before, const std::string& what,
                      const RunnerOptions& options) {
    In* d_in = input_.get() + offset_;
    if (output_before) REDUCTION_CHECK(cudaMemcpy(output_.get(), &*output_before, sizeof(Out), cudaMemcpyHostToDevice));
    temp_.arm(/*poison=*/false);  // fresh guards; a second call keeps the first one's scratch
    // The copies, the guards and the scratch poisoning ran on the legacy default stream, which
    // does not order itself with the lab's non-blocking stream (and a pageable cudaMemcpy may
    // return before its DMA lands): wait for all of it before the lab runs.
    REDUCTION_CHECK(cudaDeviceSynchronize());
    LabRun<Out> run;
    run_with_deadline(
        [&] {
          const LabCallResult result = entry(d_in, n, output_.get(), temp_.get(), temp_.bytes(), stream_.get());
          run.not_implemented = result.status == REDUCTION_LAB_NOT_IMPLEMENTED;
          run.message = result.message;
          if (result.status == REDUCTION_LAB_ERROR) options.on_fatal(what, result.message);
          stream_.synchronize();
        },
        options.call_seconds, what);
    REDUCTION_CHECK(cudaMemcpy(&run.value, output_.get(), sizeof(Out), cudaMemcpyDeviceToHost));
    run.scratch = temp_.inspect();  // synchronized above, outside the deadline's work
    return run;
  }

  DeviceBuffer<Out> output_;
  GuardedScratch temp_;
  DeviceBuffer<In> input_;
  std::size_t offset_;
  Stream stream_;
};

// The sum entry of `lab`, as DeviceCase::call wants it.
template <typename T>
auto sum_entry(const LabModule& lab) {
  return [&lab](const T* in, std::size_t n, T* out, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
    return lab.sum<T>(in, n, out, temp, temp_bytes, stream);
  };
}

template <typename T>
LabRun<T> host_call(const LabModule& lab, const std::vector<T>& input, std::optional<T> output_before,
                    bool check_input, const std::string& what, const RunnerOptions& options) {
  std::vector<T> copy = input;  // the lab gets its own copy, so a write to it can be seen
  LabRun<T> run;
  run.value = output_before.value_or(sentinel<T>());
  run_with_deadline(
      [&] {
        const LabCallResult result = lab.sum<T>(copy.data(), copy.size(), &run.value, nullptr, 0, nullptr);
        run.not_implemented = result.status == REDUCTION_LAB_NOT_IMPLEMENTED;
        run.message = result.message;
        if (result.status == REDUCTION_LAB_ERROR) options.on_fatal(what, result.message);
      },
      options.call_seconds, what);
  if (check_input) {
    run.input_unchanged = std::memcmp(copy.data(), input.data(), input.size() * sizeof(T)) == 0;
    run.input_digest = grading::digest_bytes(copy.data(), copy.size() * sizeof(T));
  }
  return run;
}

// Calls back to back on one stream (see LabRunner::run_chain): the host waits only after the last.
template <typename T>
std::vector<LabRun<T>> device_chain(const LabModule& lab, const std::vector<std::vector<T>>& inputs,
                                    const std::string& what, const RunnerOptions& options) {
  std::size_t largest = 0;
  for (const auto& input : inputs) largest = std::max(largest, input.size());
  DeviceBuffer<T> outputs(inputs.size());
  GuardedScratch temp(guaranteed_temp_storage_bytes(largest));  // poisoned, between its guards
  std::vector<DeviceBuffer<T>> device_inputs;  // allocated last, as in DeviceCase
  for (const auto& input : inputs) {
    device_inputs.emplace_back(input.size());
    device_inputs.back().upload(input);
  }
  outputs.upload(std::vector<T>(inputs.size(), sentinel<T>()));
  REDUCTION_CHECK(cudaDeviceSynchronize());  // the copies ran on the legacy stream: see DeviceCase
  Stream stream;
  std::vector<LabRun<T>> runs(inputs.size());
  run_with_deadline(
      [&] {
        for (std::size_t k = 0; k < inputs.size(); ++k) {
          const LabCallResult result = lab.sum<T>(device_inputs[k].get(), inputs[k].size(), outputs.get() + k,
                                                  temp.get(), temp.bytes(), stream.get());
          runs[k].not_implemented = result.status == REDUCTION_LAB_NOT_IMPLEMENTED;
          runs[k].message = result.message;
          if (result.status == REDUCTION_LAB_ERROR) options.on_fatal(what, result.message);
        }
        stream.synchronize();
      },
      options.call_seconds, what);
  const std::vector<T> values = outputs.download();
  for (std::size_t k = 0; k < runs.size(); ++k) runs[k].value = values[k];
  // One scratch for the whole chain, checked after its one synchronize: any call may have done it.
  const ScratchDamage damage = temp.inspect();
  for (auto& run : runs) run.scratch = damage;
  return runs;
}

struct GraphDestroy {
  void operator()(cudaGraph_t graph) const noexcept { cudaGraphDestroy(graph); }
};
struct GraphExecDestroy {
  void operator()(cudaGraphExec_t exec) const noexcept { cudaGraphExecDestroy(exec); }
};

// One call captured into a graph, launched three times (see LabRunner::run_in_graph).
template <typename T>
std::vector<LabRun<T>> device_graph(const LabModule& lab, const std::vector<T>& first, const std::vector<T>& second,
                                    const std::string& what, const RunnerOptions& options) {
  if (first.size() != second.size()) throw std::invalid_argument("run_in_graph: the two inputs differ in size");
  DeviceBuffer<T> output(1);
  GuardedScratch temp(guaranteed_temp_storage_bytes(first.size()));  // poisoned, between its guards
  DeviceBuffer<T> input(first.size());
  input.upload(first);
  REDUCTION_CHECK(cudaDeviceSynchronize());
  Stream stream;
  std::vector<LabRun<T>> runs(3);
  run_with_deadline(
      [&] {
        REDUCTION_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
        const LabCallResult result = lab.sum<T>(input.get(), first.size(), output.get(), temp.get(), temp.bytes(),
                                                stream.get());
        cudaGraph_t raw = nullptr;
        const cudaError_t captured = cudaStreamEndCapture(stream.get(), &raw);  // always end the capture
        std::unique_ptr<CUgraph_st, GraphDestroy> graph(raw);
        for (auto& run : runs) {
          run.not_implemented = result.status == REDUCTION_LAB_NOT_IMPLEMENTED;
          run.message = result.message;
        }
        if (result.status == REDUCTION_LAB_ERROR) options.on_fatal(what, result.message);
        if (runs[0].not_implemented) return;
        if (captured != cudaSuccess)
          options.on_fatal(what, std::string("the call could not be captured into a CUDA graph (a synchronization or "
                                             "a legacy-stream operation inside it?): ") + cudaGetErrorString(captured));
        cudaGraphExec_t raw_exec = nullptr;
        REDUCTION_CHECK(cudaGraphInstantiate(&raw_exec, graph.get(), 0));
        std::unique_ptr<CUgraphExec_st, GraphExecDestroy> exec(raw_exec);
        for (std::size_t launch = 0; launch < runs.size(); ++launch) {
          if (launch == 1) input.upload(second);
          output.upload({sentinel<T>()});
          if (launch > 0) temp.arm(/*poison=*/false);  // fresh guards for each launch
          REDUCTION_CHECK(cudaDeviceSynchronize());
          REDUCTION_CHECK(cudaGraphLaunch(exec.get(), stream.get()));
          stream.synchronize();
          runs[launch].value = output.download()[0];
          runs[launch].scratch = temp.inspect();
        }
      },
      options.call_seconds * 3, what);
  return runs;
}

// Any CUDA failure around a lab call is the lab's doing (the harness calls are plain copies).
template <typename Body>
auto guard_cuda(const std::string& what, const RunnerOptions& options, Body&& body) {
  try {
    return body();
  } catch (const CudaError& e) {
    options.on_fatal(what, e.what());
    std::_Exit(kRuntimeErrorExitCode);  // a handler must not return
  }
}

RunnerOptions with_defaults(RunnerOptions options) {
  if (!options.on_fatal) options.on_fatal = default_fatal;
  return options;
}

}  // namespace

template <>
int sentinel<int>() { return kIntSentinel; }
template <>
float sentinel<float>() {
  float value;
  std::memcpy(&value, &kFloatSentinelBits, sizeof value);
  return value;
}
template <>
ReductionMoments sentinel<ReductionMoments>() {  // a count no test reaches, NaN-patterned mean and M2
  return {0x5EADBEEF5EADBEEFull, sentinel<float>(), sentinel<float>()};
}

LabRunner::LabRunner(const LabModule& lab, RunnerOptions options) : lab_(lab), options_(with_defaults(std::move(options))) {}

RunnerOptions test_runner_options(const LabModule& lab) {
  RunnerOptions options;
  options.call_seconds = call_timeout_seconds(kDefaultCallSeconds);
  options.on_device = lab.runs_on_device();
  return options;
}

template <typename T>
LabRun<T> LabRunner::run(const std::vector<T>& input, const std::string& what, bool check_input,
                         std::optional<T> output_before, std::size_t offset) const {
  const T before = output_before.value_or(sentinel<T>());
  if (!options_.on_device) return host_call<T>(lab_, input, before, check_input, what, options_);
  auto run = guard_cuda(what, options_, [&] {
    DeviceCase<T> device(input.size(), offset);
    return device.call(sum_entry<T>(lab_), input, before, check_input, what, options_);
  });
  report_scratch(options_, what, std::vector<LabRun<T>>{run});
  return run;
}

template <typename T>
LabRun<T> LabRunner::run_generated(Pattern pattern, std::size_t n, std::uint64_t seed, const std::string& what,
                                   std::size_t offset) const {
  if (!options_.on_device) throw std::logic_error("run_generated: the input is written on the device");
  auto run = guard_cuda(what, options_, [&] {
    DeviceCase<T> device(n, offset);
    return device.call_generated(sum_entry<T>(lab_), pattern, n, seed, what, options_);
  });
  report_scratch(options_, what, std::vector<LabRun<T>>{run});
  return run;
}

template <typename T>
std::pair<LabRun<T>, LabRun<T>> LabRunner::run_twice(const std::vector<T>& first, const std::vector<T>& second,
                                                     const std::string& what) const {
  if (!options_.on_device) {
    auto a = host_call<T>(lab_, first, sentinel<T>(), false, what, options_);
    auto b = host_call<T>(lab_, second, a.value, false, what, options_);
    return {a, b};
  }
  auto runs = guard_cuda(what, options_, [&] {
    DeviceCase<T> device(std::max(first.size(), second.size()), 0);
    auto a = device.call(sum_entry<T>(lab_), first, sentinel<T>(), false, what, options_);
    auto b = device.call(sum_entry<T>(lab_), second, std::nullopt, false, what, options_);  // output keeps a's result
    return std::make_pair(a, b);
  });
  report_scratch(options_, what, std::vector<LabRun<T>>{runs.first, runs.second});
  return runs;
}

template <typename T>
std::vector<LabRun<T>> LabRunner::run_chain(const std::vector<std::vector<T>>& inputs, const std::string& what) const {
  if (!options_.on_device) {
    std::vector<LabRun<T>> runs;
    for (const auto& input : inputs) runs.push_back(host_call<T>(lab_, input, sentinel<T>(), false, what, options_));
    return runs;
  }
  auto runs = guard_cuda(what, options_, [&] { return device_chain<T>(lab_, inputs, what, options_); });
  report_scratch(options_, what, runs);
  return runs;
}

template <typename T>
std::vector<LabRun<T>> LabRunner::run_in_graph(const std::vector<T>& first, const std::vector<T>& second,
                                               const std::string& what) const {
  if (!options_.on_device) throw std::logic_error("run_in_graph: a host lab has no stream to capture");
  auto runs = guard_cuda(what, options_, [&] { return device_graph<T>(lab_, first, second, what, options_); });
  report_scratch(options_, what, runs);
  return runs;
}

template <typename T>
LabRun<T> LabRunner::run_operator(ReductionOperator op, const std::vector<T>& input, const std::string& what,
                                  std::size_t offset) const {
  if (!options_.on_device) throw std::logic_error("the operator entry is for device labs only");
  auto run = guard_cuda(what, options_, [&] {
    DeviceCase<T> device(input.size(), offset);
    const auto entry = [&](const T* in, std::size_t n, T* out, void* temp, std::size_t temp_bytes, cudaStream_t s) {
      return lab_.reduce<T>(op, in, n, out, temp, temp_bytes, s);
    };
    return device.call(entry, input, sentinel<T>(), /*check_input=*/true, what, options_);
  });
  report_scratch(options_, what, std::vector<LabRun<T>>{run});
  return run;
}

LabRun<ReductionMoments> LabRunner::run_moments(const std::vector<float>& input, const std::string& what,
                                                std::size_t offset) const {
  if (!options_.on_device) throw std::logic_error("the operator entry is for device labs only");
  auto run = guard_cuda(what, options_, [&] {
    DeviceCase<float, ReductionMoments> device(input.size(), offset);
    const auto entry = [&](const float* in, std::size_t n, ReductionMoments* out, void* temp, std::size_t temp_bytes,
                           cudaStream_t s) { return lab_.moments(in, n, out, temp, temp_bytes, s); };
    return device.call(entry, input, sentinel<ReductionMoments>(), /*check_input=*/true, what, options_);
  });
  report_scratch(options_, what, std::vector<LabRun<ReductionMoments>>{run});
  return run;
}

template LabRun<int> LabRunner::run<int>(const std::vector<int>&, const std::string&, bool, std::optional<int>, std::size_t) const;
template LabRun<float> LabRunner::run<float>(const std::vector<float>&, const std::string&, bool, std::optional<float>, std::size_t) const;
template LabRun<int> LabRunner::run_generated<int>(Pattern, std::size_t, std::uint64_t, const std::string&, std::size_t) const;
template LabRun<float> LabRunner::run_generated<float>(Pattern, std::size_t, std::uint64_t, const std::string&, std::size_t) const;
template std::pair<LabRun<int>, LabRun<int>> LabRunner::run_twice<int>(const std::vector<int>&, const std::vector<int>&, const std::string&) const;
template std::pair<LabRun<float>, LabRun<float>> LabRunner::run_twice<float>(const std::vector<float>&, const std::vector<float>&, const std::string&) const;
template std::vector<LabRun<int>> LabRunner::run_chain<int>(const std::vector<std::vector<int>>&, const std::string&) const;
template std::vector<LabRun<float>> LabRunner::run_chain<float>(const std::vector<std::vector<float>>&, const std::string&) const;
template std::vector<LabRun<int>> LabRunner::run_in_graph<int>(const std::vector<int>&, const std::vector<int>&, const std::string&) const;
template std::vector<LabRun<float>> LabRunner::run_in_graph<float>(const std::vector<float>&, const std::vector<float>&, const std::string&) const;
template LabRun<int> LabRunner::run_operator<int>(ReductionOperator, const std::vector<int>&, const std::string&, std::size_t) const;
template LabRun<float> LabRunner::run_operator<float>(ReductionOperator, const std::vector<float>&, const std::string&, std::size_t) const;

}  // namespace reduction::testing
