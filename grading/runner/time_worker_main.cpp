// reduction_time_worker: times the items of a timing plan (lab modules, or the roof and CUB
// baselines) and reports every call's time and result on the report channel (wire.hpp); stdout
// and stderr are the lab's own. It runs under the timekeeper (timekeeper_main.cpp), which started
// it and reads its report: every timed call waits for the timekeeper's go (clock.hpp), which comes
// once the call's input is ready and the L2 flush is running in the timekeeper's own context, so
// the call queues behind the flush and its host-side launch is never timed. A device call reads
// the input the timekeeper wrote for it just before its go (shared_inputs.hpp), from a seed drawn
// then; where memory cannot be shared, and for host items, the worker keeps its own buffers and
// rewrites canary elements chosen by the go's nonce. Either way no answer can be prepared ahead:
// a result cached from an earlier call, or work that finishes outside the timed stream, returns a
// wrong sum or shows on the timekeeper's clock. The grader runs it outside the sandbox for the
// references and baselines, and this same code built without CUB (reduction_student_worker) in
// the sandbox for a student's modules: no student code shares a process with a reference, or with
// a library reduction it could find and call. A call that never returns is the grader's to stop.
#include "clock.hpp"
#include "plan.hpp"
#include "shared_inputs.hpp"
#include "wire.hpp"

#include "../checking/scratch_guard.hpp"

#if REDUCTION_WORKER_CUB
#include "../../common/bench/cub_sum.hpp"
#endif

#include <reduction/cuda_raii.hpp>
#include <reduction/device_info.hpp>
#include <reduction/lab.hpp>
#include <reduction/lab_module.hpp>
#include <reduction/timing.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace reduction::grading {
namespace {

constexpr int kRuntimeErrorExitCode = REDUCTION_RUNNER_EXIT_RUNTIME_ERROR;

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", us);
  return text;
}

template <typename T>
std::uint32_t bits_of(T value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

template <typename T>
T canary_value(const Canary& c) {
  if constexpr (std::is_same_v<T, int>) return static_cast<int>(c.int_value);
  else return c.float_value;
}

template <typename T>
void emit_sample(const Reporter& report, const TimingItem& item, int call, double us, std::optional<T> value) {
  report.emit("sample", {{"item", item.id}, {"call", std::to_string(call)}, {"us", format_us(us)},
                  {"value", value ? bits_hex(bits_of(*value)) : ""}});
}

// The inputs of each (type, n), generated and uploaded once a run. Every item starts from them as
// generated: the canaries an item wrote are put back afterwards (a few elements, not 3 x 64 MiB).
template <typename T>
struct Inputs {
  std::vector<std::vector<T>> host;
  std::vector<DeviceBuffer<T>> device;  // empty for a host item's run
};

class InputCache {
 public:
  explicit InputCache(const TimingPlan& plan) : plan_(plan) {}
  template <typename T>
  Inputs<T>& get(std::size_t n, bool on_device) {
    Inputs<T>& inputs = store<T>()[n];
    if (inputs.host.empty()) {
      const Type type = std::is_same_v<T, int> ? Type::int32 : Type::float32;
      for (int b = 0; b < plan_.buffers; ++b) {
        const InputSpec spec = timing_buffer(plan_, type, n, b);
        inputs.host.push_back(make_input<T>(spec.pattern, n, spec.seed));
      }
    }
    if (on_device && inputs.device.empty()) {
      for (const auto& host : inputs.host) {
        inputs.device.emplace_back(n);
        inputs.device.back().upload(host);
      }
      REDUCTION_CHECK(cudaDeviceSynchronize());  // uploads ran on the legacy stream
    }
    return inputs;
  }

 private:
  template <typename T>
  std::map<std::size_t, Inputs<T>>& store() {
    if constexpr (std::is_same_v<T, int>) return ints_;
    else return floats_;
  }
  const TimingPlan& plan_;
  std::map<std::size_t, Inputs<int>> ints_;
  std::map<std::size_t, Inputs<float>> floats_;
};

// Where a device item's calls read: the timekeeper's shared input, or the worker's own buffers.
struct DeviceInputs {
  const MappedInputs* shared = nullptr;  // the timekeeper rewrites it before every go
  InputCache* own = nullptr;             // else: rotating buffers and canaries from the go's nonce
};

// The worker's own buffers for a device item's calls, or none where they read the timekeeper's
// shared input (which must hold the item's n elements).
template <typename T>
Inputs<T>* own_device_inputs(DeviceInputs inputs, std::size_t n) {
  Inputs<T>* own = inputs.shared ? nullptr : &inputs.own->get<T>(n, true);
  if (inputs.shared && inputs.shared->bytes() < n * sizeof(T))
    throw std::runtime_error("the shared input is smaller than the item's");
  return own;
}

// Writes the canaries of a call's go into the worker's own buffer for that call (through pinned
// staging, on the item's stream) and returns the buffer; each element written goes into `touched`.
template <typename T>
T* write_canaries(const TimingPlan& plan, const TimingItem& item, int call, std::uint64_t nonce, Inputs<T>& own,
                  PinnedBuffer<T>& staging, cudaStream_t stream, std::vector<std::pair<int, std::size_t>>& touched) {
  const Type type = std::is_same_v<T, int> ? Type::int32 : Type::float32;
  const int b = timing_buffer_of_call(plan, call);
  T* d_in = own.device[b].get();
  const auto canaries = timing_canaries_of_nonce(plan, type, item.n, nonce);
  for (std::size_t k = 0; k < canaries.size(); ++k) {
    staging.get()[k] = canary_value<T>(canaries[k]);
    REDUCTION_CHECK(cudaMemcpyAsync(d_in + canaries[k].index, staging.get() + k, sizeof(T), cudaMemcpyHostToDevice,
                                    stream));
    touched.emplace_back(b, canaries[k].index);
  }
  return d_in;
}

// Puts the generated value back in every (buffer, index) a canary was written to.
template <typename T>
void restore_canaries(Inputs<T>* own, const std::vector<std::pair<int, std::size_t>>& touched) {
  for (const auto& [b, index] : touched)
    REDUCTION_CHECK(cudaMemcpy(own->device[b].get() + index, own->host[b].data() + index, sizeof(T),
                               cudaMemcpyHostToDevice));
}

// The item_error of a call that wrote outside its scratch: the damage as numbers, and in words.
void emit_scratch_overrun(const Reporter& report, const TimingItem& item, int call,
                          const testing::ScratchDamage& damage) {
  auto fields = testing::scratch_damage_fields(damage);
  fields.insert({{"item", item.id}, {"kind", "scratch_overrun"}, {"call", std::to_string(call)},
                 {"message", testing::describe_scratch_damage(damage) + " (timed call " + std::to_string(call) + ")"}});
  report.emit("item_error", fields);
}

// A device item: one lab (or baseline) timed call by call, each after the timekeeper's go. A
// lab's scratch lies between guards (scratch_guard.hpp), checked after each call is synchronized,
// outside the timed region: a call that wrote outside it ends the item with an item_error.
template <typename T>
void time_device_item(const Reporter& report, const TimingPlan& plan, const TimingItem& item, const LabModule* lab,
                      cudaStream_t stream, DeviceInputs inputs, ControlReader& control) {
  Inputs<T>* own = own_device_inputs<T>(inputs, item.n);
  DeviceBuffer<T> output(1);
  testing::GuardedScratch temp(guaranteed_temp_storage_bytes(item.n));
  REDUCTION_CHECK(cudaDeviceSynchronize());  // the guards were written on the legacy stream
#if REDUCTION_WORKER_CUB
  std::optional<CubSum<T>> cub;
  if (item.lab == "cub") cub.emplace(item.n);
#else
  if (item.lab == "cub") throw std::invalid_argument("this worker times no CUB baseline");
#endif
  std::optional<ReadRoof> roof;
  if (item.lab == "roof") roof.emplace(item.n * sizeof(T));
  PinnedBuffer<T> staging(static_cast<std::size_t>(plan.canaries) + 1);
  T* result = staging.get() + plan.canaries;
  Event start, stop;
  std::vector<std::pair<int, std::size_t>> touched;  // (buffer, index) of every canary written
  std::optional<std::pair<int, testing::ScratchDamage>> overrun;  // the call that wrote outside its scratch
  for (int call = 0; call < plan.warmup + plan.samples && !overrun; ++call) {
    const std::optional<Go> go = control.wait(item.id, call);
    if (!go) break;  // the timekeeper ended the item: its budget is spent
    T* d_in = inputs.shared ? static_cast<T*>(inputs.shared->data()) : nullptr;
    if (own) d_in = write_canaries<T>(plan, item, call, go->nonce, *own, staging, stream, touched);
    REDUCTION_CHECK(cudaMemsetAsync(output.get(), 0x5A ^ (call & 0xFF), sizeof(T), stream));  // a fresh stale value
    start.record(stream);
    if (lab) {
      const auto status = lab->sum<T>(d_in, item.n, output.get(), temp.get(), temp.bytes(), stream);
      if (!status.ok()) throw std::runtime_error(status.message);
#if REDUCTION_WORKER_CUB
    } else if (cub) {
      cub->launch(d_in, item.n, output.get(), stream);
#endif
    } else {
      roof->launch(item.n * sizeof(T), stream);
    }
    stop.record(stream);
    REDUCTION_CHECK(cudaMemcpyAsync(result, output.get(), sizeof(T), cudaMemcpyDeviceToHost, stream));
    REDUCTION_CHECK(cudaStreamSynchronize(stream));
    REDUCTION_CHECK(cudaDeviceSynchronize());  // nothing of this call may run on into the next
    emit_sample<T>(report, item, call, 1000.0 * stop.elapsed_ms_since(start),
                   roof ? std::nullopt : std::optional<T>(*result));
    if (lab) {
      const testing::ScratchDamage damage = temp.inspect();
      if (!damage.intact()) overrun.emplace(call, damage);
    }
  }
  restore_canaries(own, touched);  // back to the inputs as generated, for the next item
  if (overrun) emit_scratch_overrun(report, item, overrun->first, overrun->second);
}

// A host item's input in huge pages (2 MiB, transparent), aligned to them, wherever the kernel has
// them: both sides of a paired run then read memory laid out alike. In pages of 4 KiB, how one
// process's pages fell against the other's showed as a bias of the memory-bound int sum: on this
// project's 2-core development VM (2026-11-26, `aa_timing.py --labs 01 --rounds 8 --samples 100`)
// the int ratios of a set averaged 0.972 to 0.989 (4 sets) in 4 KiB pages, 0.991 to 1.006 (6 sets)
// in huge pages; one H100 host gave +0.7 % in 4 KiB pages, another none either way. Where
// transparent huge pages are always on, asking for them also spares a process the luck of getting
// them or not (on such a host lab 01's int medians fell into two groups, 5.9 and 7.5 ms, from one
// process to the next). Where the kernel has none: 4 KiB pages, as before.
template <typename T>
class HugePages {
 public:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  explicit HugePages(const std::vector<T>& from)
      : bytes_(std::max<std::size_t>(from.size() * sizeof(T), 1)), mapped_(bytes_ + kHuge) {
    void* memory = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    mapping_ = static_cast<char*>(memory);
    const auto first = (reinterpret_cast<std::uintptr_t>(mapping_) + kHuge - 1) & ~(kHuge - 1);
    data_ = reinterpret_cast<T*>(first);
    ::madvise(data_, bytes_, MADV_HUGEPAGE);  // before the first touch; where it fails, 4 KiB pages
    std::copy(from.begin(), from.end(), data_);
  }
  ~HugePages() { ::munmap(mapping_, mapped_); }
  HugePages(const HugePages&) = delete;
  HugePages& operator=(const HugePages&) = delete;
  T* data() const { return data_; }

 private:
  std::size_t bytes_, mapped_;
  char* mapping_ = nullptr;
  T* data_ = nullptr;
};

// A host item (lab 01): rotating buffers on host memory with the go's canaries, a steady clock.
template <typename T>
void time_host_item(const Reporter& report, const TimingPlan& plan, const TimingItem& item, const LabModule& lab,
                    InputCache& cache, ControlReader& control) {
  const Type type = std::is_same_v<T, int> ? Type::int32 : Type::float32;
  std::vector<std::unique_ptr<HugePages<T>>> buffers;  // copies: canaries go into them
  for (const std::vector<T>& generated : cache.get<T>(item.n, false).host)
    buffers.push_back(std::make_unique<HugePages<T>>(generated));
  for (int call = 0; call < plan.warmup + plan.samples; ++call) {
    const std::optional<Go> go = control.wait(item.id, call);
    if (!go) break;  // the timekeeper ended the item: its budget is spent
    T* in = buffers[static_cast<std::size_t>(timing_buffer_of_call(plan, call))]->data();
    for (const Canary& c : timing_canaries_of_nonce(plan, type, item.n, go->nonce)) in[c.index] = canary_value<T>(c);
    T out{};
    const auto begin = std::chrono::steady_clock::now();
    const auto status = lab.sum<T>(in, item.n, &out, nullptr, 0, nullptr);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count();
    if (!status.ok()) throw std::runtime_error(status.message);
    emit_sample<T>(report, item, call, us, out);
  }
}

// Times the plan and ends the process (Reporter::finish): nothing of a lab's runs after "end".
[[noreturn]] void run(const std::string& plan_path, const Reporter& report, ControlReader& control,
                      std::optional<SharedInputsArg> shared_arg) {
  std::ifstream file(plan_path);
  std::stringstream text;
  text << file.rdbuf();
  const TimingPlan plan = read_timing_plan(text.str());
  std::map<std::string, std::unique_ptr<LabModule>> modules;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<MappedInputs> shared;
  InputCache inputs(plan);
  for (const TimingItem& item : plan.items) {
    const LabModule* lab = nullptr;
    if (!item.module.empty()) {
      auto& module = modules[item.module];
      if (!module) module = std::make_unique<LabModule>(LabModule::load(item.module));
      if (module->folder() != item.lab) {
        report.emit("item_error", {{"item", item.id}, {"message", "the module says it is lab " + module->folder()}});
        continue;
      }
      lab = module.get();
    }
    try {
      if (!item.on_device) {
        if (!lab) throw std::invalid_argument("a host item needs a module");
        item.type == Type::int32 ? time_host_item<int>(report, plan, item, *lab, inputs, control)
                                 : time_host_item<float>(report, plan, item, *lab, inputs, control);
        continue;
      }
      if (!stream) {
        stream = std::make_unique<Stream>();
        report.emit("device", {{"name", query_device_info().name}});
        if (shared_arg) {  // before any call: a worker that cannot map the timekeeper's input times nothing
          const SharedInputsArg arg = *shared_arg;
          shared_arg.reset();
          shared = std::make_unique<MappedInputs>(arg.fd, arg.bytes);
        }
      }
      const DeviceInputs where{shared.get(), shared ? nullptr : &inputs};
      item.type == Type::int32 ? time_device_item<int>(report, plan, item, lab, stream->get(), where, control)
                               : time_device_item<float>(report, plan, item, lab, stream->get(), where, control);
    } catch (const CudaError& e) {
      report.emit("item_error", {{"item", item.id}, {"message", e.what()}});
      report.finish(kRuntimeErrorExitCode);  // the context cannot be trusted after a CUDA error
    } catch (const ClockGone& e) {
      report.emit("item_error", {{"item", item.id}, {"message", e.what()}});
      report.finish(kRuntimeErrorExitCode);  // nothing can be timed without the timekeeper
    } catch (const std::exception& e) {
      report.emit("item_error", {{"item", item.id}, {"message", e.what()}});
    }
  }
  report.finish(0);
}

}  // namespace
}  // namespace reduction::grading

int main(int argc, char** argv) {
  using namespace reduction::grading;
  std::string plan;
  int report_fd = -1, token_fd = -1, control_fd = -1;
  std::optional<SharedInputsArg> shared;
  const std::string report_flag = REDUCTION_REPORT_FD_FLAG "=", token_flag = REDUCTION_TOKEN_FD_FLAG "=",
                    control_flag = REDUCTION_CLOCK_CONTROL_FD_FLAG "=",
                    shared_flag = REDUCTION_CLOCK_SHARED_INPUTS_FLAG "=";
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--plan=", 0) == 0) plan = arg.substr(7);
    else if (arg.rfind(report_flag, 0) == 0) report_fd = parse_fd(arg.substr(report_flag.size()));
    else if (arg.rfind(token_flag, 0) == 0) token_fd = parse_fd(arg.substr(token_flag.size()));
    else if (arg.rfind(control_flag, 0) == 0) control_fd = parse_fd(arg.substr(control_flag.size()));
    else if (arg.rfind(shared_flag, 0) == 0 && (shared = parse_shared_inputs_arg(arg.substr(shared_flag.size())))) {
    } else usage = true;
  }
  if (usage || plan.empty() || report_fd < -1 || token_fd < -1 || control_fd < 0) {
    std::fprintf(stderr, "usage: %s --plan=TIMING_PLAN " REDUCTION_CLOCK_CONTROL_FD_FLAG "=FD [" REDUCTION_REPORT_FD_FLAG
                         "=FD] [" REDUCTION_TOKEN_FD_FLAG "=FD] [" REDUCTION_CLOCK_SHARED_INPUTS_FLAG
                         "=FD:BYTES]\n(it runs under reduction_timekeeper, which passes these)\n", argv[0]);
    return 2;
  }
  std::string token;
  try {
    token = read_token(token_fd);  // before any student code is loaded
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  const Reporter report(report_fd, token);
  ControlReader control(control_fd);
  try {
    run(plan, report, control, shared);
  } catch (const std::exception& e) {
    report.emit("error", {{"message", e.what()}});
    report.finish(kRuntimeErrorExitCode);
  }
}
