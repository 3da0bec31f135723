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

}  // namespace

// The device buffers of a case and its stream. Allocated in this order, the input last: a read
// past the input's end then lands outside any allocation, where memcheck sees it (inside a
// neighbouring buffer it would look legal). The scratch comes poisoned, between its guards.
struct CaseMemory {
  CaseMemory(std::size_t output_bytes, std::size_t temp_bytes, std::size_t input_bytes)
      : output(output_bytes), temp(temp_bytes), input(input_bytes) {}
  bool holds(std::size_t output_bytes, std::size_t temp_bytes, std::size_t input_bytes) const {
    return output.bytes() >= output_bytes && temp.capacity() >= temp_bytes && input.bytes() >= input_bytes;
  }
  DeviceBuffer<unsigned char> output;
  GuardedScratch temp;
  DeviceBuffer<unsigned char> input;
  DeviceBuffer<unsigned long long> digest_sum{1};  // enqueue_digest's word
  Stream stream;
};

namespace {

// Pinned host memory for what a call writes before and reads after it: the copies are then enqueued
// together and waited for once, before the call and once after (each wait of a run that shares the
// GPU can be a turn of other processes' work). One a process, used by one call at a time.
struct Staging {
  unsigned char output_before[64];
  unsigned char output[64];
  unsigned char guard_before[kScratchGuardBytes];
  unsigned char guard_after[kScratchGuardBytes];
  unsigned long long digest_sum;
};

Staging& staging() {
  static Staging* kept = [] {  // never freed: a static's destructor would run after CUDA's teardown
    void* p = nullptr;
    REDUCTION_CHECK(cudaMallocHost(&p, sizeof(Staging)));
    return static_cast<Staging*>(p);
  }();
  return *kept;
}

// A case's memory (RunnerOptions::reuse_buffers): its own at exact sizes, or the runner's kept
// memory with the scratch resized, poisoned and guarded anew; made again, larger, when the case
// needs more than it holds (the old freed first: both need not fit at once).
std::shared_ptr<CaseMemory> memory_for(std::size_t output_bytes, std::size_t temp_bytes, std::size_t input_bytes,
                                       bool reuse, std::shared_ptr<CaseMemory>& kept) {
  if (!reuse) return std::make_shared<CaseMemory>(output_bytes, temp_bytes, input_bytes);
  if (kept && kept->holds(output_bytes, temp_bytes, input_bytes)) {
    kept->temp.resize(temp_bytes);
    return kept;
  }
  if (kept) {
    output_bytes = std::max(output_bytes, kept->output.bytes());
    input_bytes = std::max(input_bytes, kept->input.bytes());
    const std::size_t needed = temp_bytes;
    temp_bytes = std::max(temp_bytes, kept->temp.capacity());
    kept.reset();
    kept = std::make_shared<CaseMemory>(output_bytes, temp_bytes, input_bytes);
    kept->temp.resize(needed);
    return kept;
  }
  kept = std::make_shared<CaseMemory>(output_bytes, temp_bytes, input_bytes);
  return kept;
}

// The device side of one test on n elements `offset` past an aligned start, reused for a second
// call. In: the input's element type; Out: what the entry writes (the same for a sum; lab 12's
// moments write a ReductionMoments). The slots before d_in hold 0xFF; a write just past the
// scratch lands in a guard and fails the call here; one beyond the guard is memcheck's to see.
template <typename In, typename Out = In>
class DeviceCase {
 public:
  DeviceCase(std::size_t n, std::size_t offset, bool reuse, std::shared_ptr<CaseMemory>& kept)
      : memory_(memory_for(sizeof(Out), guaranteed_temp_storage_bytes(n), std::max<std::size_t>(n + offset, 1) * sizeof(In),
                           reuse, kept)),
        offset_(offset) {
    if (offset)  // the skipped slots, waited for with execute's other writes
      REDUCTION_CHECK(cudaMemsetAsync(memory_->input.get(), 0xFF, offset * sizeof(In), cudaStreamLegacy));
  }

  template <typename Entry>
  LabRun<Out> call(const Entry& entry, const std::vector<In>& host_input, std::optional<Out> output_before,
                   bool check_input, const std::string& what, const RunnerOptions& options) {
    In* d_in = input() + offset_;
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
    In* d_in = input() + offset_;
    enqueue_input_on_device(d_in, pattern, n, seed);  // waited for with execute's other writes
    return execute(entry, n, sentinel<Out>(), what, options, /*digest=*/true);
  }

 private:
  In* input() const { return reinterpret_cast<In*>(memory_->input.get()); }
  Out* output() const { return reinterpret_cast<Out*>(memory_->output.get()); }

  // The call on d_in (written, or being written on the legacy stream), the output holding
  // `output_before` (run_twice's second call: none, so that it keeps the first one's result); with
  // `digest`, d_in's digest taken on the device after the call.
  template <typename Entry>
  LabRun<Out> execute(const Entry& entry, std::size_t n, std::optional<Out> output_before, const std::string& what,
                      const RunnerOptions& options, bool digest = false) {
    static_assert(sizeof(Out) <= sizeof(Staging::output), "Staging holds the output");
    In* d_in = input() + offset_;
    GuardedScratch& temp = memory_->temp;
    Staging& staged = staging();
    if (output_before) {
      std::memcpy(staged.output_before, &*output_before, sizeof(Out));
      REDUCTION_CHECK(cudaMemcpyAsync(output(), staged.output_before, sizeof(Out), cudaMemcpyHostToDevice,
                                      cudaStreamLegacy));
    }
    temp.arm(/*poison=*/false);  // fresh guards; a second call keeps the first one's scratch
    // The input, the output, the guards and the scratch poisoning were enqueued on the legacy
    // default stream, which does not order itself with the lab's non-blocking stream: wait for
    // all of it before the lab runs.
    REDUCTION_CHECK(cudaDeviceSynchronize());
    LabRun<Out> run;
    const Stream& stream = memory_->stream;
    run_with_deadline(
        [&] {
          const LabCallResult result = entry(d_in, n, output(), temp.get(), temp.bytes(), stream.get());
          run.not_implemented = result.status == REDUCTION_LAB_NOT_IMPLEMENTED;
          run.message = result.message;
          if (result.status == REDUCTION_LAB_ERROR) options.on_fatal(what, result.message);
          stream.synchronize();
        },
        options.seconds_for(n), what);
    // The lab's stream is synchronized (outside the deadline's work from here): every read enqueued
    // on the legacy stream, then one wait.
    REDUCTION_CHECK(cudaMemcpyAsync(staged.output, output(), sizeof(Out), cudaMemcpyDeviceToHost, cudaStreamLegacy));
    temp.enqueue_read(staged.guard_before, staged.guard_after);
    if (digest) {
      enqueue_digest(d_in, n * sizeof(In), memory_->digest_sum.get());
      REDUCTION_CHECK(cudaMemcpyAsync(&staged.digest_sum, memory_->digest_sum.get(), sizeof(staged.digest_sum),
                                      cudaMemcpyDeviceToHost, cudaStreamLegacy));
    }
    REDUCTION_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    std::memcpy(&run.value, staged.output, sizeof(Out));
    run.scratch = temp.damage(staged.guard_before, staged.guard_after);
    if (digest) run.input_digest = digest_of_sum(n * sizeof(In), staged.digest_sum);
    return run;
  }

  std::shared_ptr<CaseMemory> memory_;
  std::size_t offset_;
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
      options.seconds_for(input.size()), what);
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
  std::size_t largest = 0, total = 0;   // one deadline for the chain: its calls' elements together
  for (const auto& input : inputs) largest = std::max(largest, input.size()), total += input.size();
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
      options.seconds_for(total), what);
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
      options.seconds_for(first.size()) * 3, what);
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

double RunnerOptions::seconds_for(std::size_t n) const {
  if (full_call_elements == 0 || !(call_floor_seconds < call_seconds)) return call_seconds;
  const double share = std::min(1.0, static_cast<double>(n) / static_cast<double>(full_call_elements));
  return call_floor_seconds + (call_seconds - call_floor_seconds) * share;
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
    DeviceCase<T> device(input.size(), offset, options_.reuse_buffers, kept_);
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
    DeviceCase<T> device(n, offset, options_.reuse_buffers, kept_);
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
    DeviceCase<T> device(std::max(first.size(), second.size()), 0, options_.reuse_buffers, kept_);
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
    DeviceCase<T> device(input.size(), offset, options_.reuse_buffers, kept_);
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
    DeviceCase<float, ReductionMoments> device(input.size(), offset, options_.reuse_buffers, kept_);
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
