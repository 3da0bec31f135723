// reduction_lab_observe: the untrusted test runner. It loads one lab module (a student's), runs
// the cases of a test plan that the trusted side wrote, and reports what it observed, one line a
// case, on the report channel the grader hands it (wire.hpp); stdout and stderr are the lab's
// own. It decides nothing: the checker regenerates every input and judges. Runs in the grader's
// sandbox; everything it reports may have been forged by the module it loaded. Under
// compute-sanitizer it first closes its copies of the tool's log (descriptors.hpp). It may run
// several labs' plans one after another (one process for a student's labs: one CUDA context, one
// start of a sanitizer), each lab's lines after a "lab" line that names it.
#include "descriptors.hpp"
#include "plan.hpp"
#include "wire.hpp"

#include "../checking/lab_runner.hpp"

#include <reduction/device_info.hpp>
#include <reduction/lab_module.hpp>
#include <reduction/watchdog.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace reduction::grading {
namespace {

constexpr int kUsageExitCode = REDUCTION_RUNNER_EXIT_USAGE;
constexpr int kRefusedExitCode = REDUCTION_RUNNER_EXIT_REFUSED;
static_assert(testing::kRuntimeErrorExitCode == REDUCTION_RUNNER_EXIT_RUNTIME_ERROR, "grading/contract.json");
static_assert(kTimeoutExitCode == REDUCTION_RUNNER_EXIT_WATCHDOG, "grading/contract.json");

// One lab of the run: its module, the lab it must say it is, its plan.
struct LabRun {
  std::string lab, expect, plan;
};

struct Args {
  std::vector<LabRun> labs;  // one; or several, one after another, each lab's lines after a "lab" line
  std::string where;
  double call_timeout_s = 20;
  double call_floor_s = 0;  // none: every call gets call_timeout_s (RunnerOptions::seconds_for)
  int report_fd = -1;  // none: the report is dropped (a run under compute-sanitizer, or by hand)
  int token_fd = -1;
  std::optional<FileIdentity> sanitizer_log;  // compute-sanitizer's log pipe: closed before the module loads
  bool reuse_buffers = false;  // RunnerOptions::reuse_buffers (a test run's; never under a sanitizer)
  bool bad_log = false;
};

std::optional<Args> parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* key) -> std::optional<std::string> {
      const std::string prefix = std::string(key) + "=";
      if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
      return std::nullopt;
    };
    if (auto v = value("--lab")) args.labs.push_back({*v, "", ""});  // --expect and --plan follow their --lab
    else if (auto v = value("--expect")) {
      if (args.labs.empty()) return std::nullopt;
      args.labs.back().expect = *v;
    } else if (auto v = value("--plan")) {
      if (args.labs.empty()) return std::nullopt;
      args.labs.back().plan = *v;
    } else if (auto v = value("--where")) args.where = *v;
    else if (auto v = value("--call-timeout")) args.call_timeout_s = std::strtod(v->c_str(), nullptr);
    else if (auto v = value(REDUCTION_CALL_FLOOR_FLAG)) args.call_floor_s = std::strtod(v->c_str(), nullptr);
    else if (auto v = value(REDUCTION_REPORT_FD_FLAG)) args.report_fd = parse_fd(*v);
    else if (auto v = value(REDUCTION_TOKEN_FD_FLAG)) args.token_fd = parse_fd(*v);
    else if (arg == REDUCTION_REUSE_BUFFERS_FLAG) args.reuse_buffers = true;
    else if (auto v = value(REDUCTION_CLOSE_SANITIZER_LOG_FLAG)) {
      args.sanitizer_log = parse_file_identity(*v);
      args.bad_log = !args.sanitizer_log;
    } else return std::nullopt;
  }
  for (const auto& lab : args.labs)
    if (lab.lab.empty() || lab.expect.empty() || lab.plan.empty()) return std::nullopt;
  if (args.labs.empty() ||
      (args.where != "device" && args.where != "host") || !(args.call_timeout_s > 0) ||
      !(args.call_floor_s >= 0 && args.call_floor_s <= args.call_timeout_s) || args.report_fd < -1 ||
      args.token_fd < -1 || args.bad_log || (args.reuse_buffers && args.sanitizer_log))
    return std::nullopt;
  return args;
}

template <typename T>
std::string bits_of(T value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits_hex(bits);
}

std::string hex64(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// The fields of one observation. A call that wrote outside its scratch makes the case
// "scratch_overrun", whatever it returned, with the damage in numbers (wire.hpp).
std::map<std::string, std::string> observation(const std::string& id, std::string status, const std::string& digest,
                                               std::string message, const testing::ScratchDamage& scratch) {
  std::map<std::string, std::string> fields;
  if (status == "ok" && !scratch.intact()) {
    status = "scratch_overrun", message = testing::describe_scratch_damage(scratch);
    fields = testing::scratch_damage_fields(scratch);
  }
  fields.insert({{"case", id}, {"status", status}, {"digest", digest}, {"message", message}});
  return fields;
}

// An operator case (lab 12): one call of the operator entry; a module without one is reported,
// not run (LabModule::reduce would throw).
template <typename T>
void observe_operator(const Reporter& report, const testing::LabRunner& runner, const TestCase& c) {
  if (!runner.lab().has_operators()) {
    report.emit("observed", {{"case", c.id}, {"status", "no_operator_entry"},
                      {"message", "the module exports no " REDUCTION_OPERATOR_ENTRY_SYMBOL}});
    return;
  }
  std::vector<std::string> values;
  std::string status = "ok", message, digest;
  testing::ScratchDamage scratch;
  const auto input = operator_case_input<T>(c);
  const auto record = [&](const auto& run) {
    if (run.not_implemented) status = "not_implemented", message = run.message;
    digest = hex64(run.input_digest);
    scratch = run.scratch;
  };
  if constexpr (std::is_same_v<T, float>) {
    if (c.op == REDUCTION_OPERATOR_MOMENTS) {
      const auto run = runner.run_moments(input, c.id, c.offset);
      record(run);
      values = {bits_hex64(run.value.count), bits_of(run.value.mean), bits_of(run.value.m2)};
    }
  }
  if (c.op != REDUCTION_OPERATOR_MOMENTS) {
    const auto run = runner.run_operator<T>(c.op, input, c.id, c.offset);
    record(run);
    values = {bits_of(run.value)};
  }
  report.emit("observed", observation(c.id, status, digest, message, scratch), &values);
}

template <typename T>
void observe(const Reporter& report, const testing::LabRunner& runner, const TestCase& c) {
  if (c.kind == CaseKind::operator_) return observe_operator<T>(report, runner, c);
  std::vector<std::string> values;
  std::string status = "ok", message, digest;
  testing::ScratchDamage scratch;  // the first call's that wrote outside its scratch
  const auto note = [&scratch](const auto& run) {
    if (scratch.intact()) scratch = run.scratch;
  };
  if (c.kind == CaseKind::sum) {  // on the device, the input is written there (no host copy: device_input.hpp)
    const bool on_device = runner.on_device();
    const auto input = on_device ? std::vector<T>() : make_input<T>(c.input.pattern, c.input.n, c.input.seed);
    for (int call = 0; call < c.calls && status == "ok"; ++call) {
      const auto run = on_device ? runner.run_generated<T>(c.input.pattern, c.input.n, c.input.seed, c.id, c.offset)
                                 : runner.run<T>(input, c.id, /*check_input=*/true, std::nullopt, c.offset);
      if (run.not_implemented) status = "not_implemented", message = run.message;
      values.push_back(bits_of(run.value));
      digest = hex64(run.input_digest);
      note(run);
    }
    return report.emit("observed", observation(c.id, status, digest, message, scratch), &values);
  }
  const auto input = make_input<T>(c.input.pattern, c.input.n, c.input.seed);
  if (c.kind == CaseKind::twice) {
    const auto second = make_input<T>(c.second->pattern, c.second->n, c.second->seed);
    const auto [a, b] = runner.run_twice<T>(input, second, c.id);
    if (a.not_implemented || b.not_implemented) status = "not_implemented", message = a.message;
    values = {bits_of(a.value), bits_of(b.value)};
    note(a);
    note(b);
  } else {  // chain: input, second, input, ... back to back
    const auto second = make_input<T>(c.second->pattern, c.second->n, c.second->seed);
    std::vector<std::vector<T>> inputs;
    for (int call = 0; call < c.calls; ++call) inputs.push_back(call % 2 == 0 ? input : second);
    for (const auto& run : runner.run_chain<T>(inputs, c.id)) {
      if (run.not_implemented) status = "not_implemented", message = run.message;
      values.push_back(bits_of(run.value));
      note(run);
    }
  }
  report.emit("observed", observation(c.id, status, digest, message, scratch), &values);
}

// Runs the plans, one lab after another, and ends the process (Reporter::finish): nothing of the
// labs' runs after "end". A lab that cannot load, or is another lab, ends the run there.
[[noreturn]] void run(const Args& args, const Reporter& report) {
  const bool on_device = args.where == "device";
  // Waits for the GPU sleep instead of spinning on a core: several students' runs share one GPU,
  // taking turns, and a run that spins while it waits for its turn takes a core from the others
  // (a case's few microseconds of latency more). Before any module loads: before any context exists.
  if (on_device) cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  bool device_said = false;
  std::list<LabModule> loaded;  // never unloaded: no destructor of a lab's runs after its cases
  for (const auto& one : args.labs) {
    std::ifstream file(one.plan);
    std::stringstream text;
    text << file.rdbuf();
    const TestPlan plan = read_test_plan(text.str());
    try {
      loaded.push_back(LabModule::load(one.lab));
    } catch (const LabLoadError& e) {
      report.emit("load_error", {{"message", e.what()}});
      report.finish(kUsageExitCode);
    }
    const LabModule& lab = loaded.back();
    if (lab.folder() != one.expect) {
      report.emit("refused", {{"message", "the module says it is lab " + lab.folder() + ", not " + one.expect}});
      report.finish(kRefusedExitCode);
    }
    if (on_device && !device_said) report.emit("device", {{"name", query_device_info().name}});
    device_said = true;
    if (args.labs.size() > 1) report.emit("lab", {{"lab", one.expect}});  // the checker's section (channel.hpp)
    testing::RunnerOptions options;
    options.call_seconds = args.call_timeout_s;
    if (args.call_floor_s > 0) {
      options.call_floor_seconds = args.call_floor_s;
      options.full_call_elements = REDUCTION_FULL_CALL_ELEMENTS;
    }
    options.on_device = on_device;
    options.reuse_buffers = args.reuse_buffers;
    std::string current;
    options.on_fatal = [&current, &report](const std::string&, const std::string& message) {
      report.emit("observed", {{"case", current}, {"status", "error"}, {"message", message}});
      report.finish(testing::kRuntimeErrorExitCode);  // after a CUDA error the context cannot be trusted
    };
    const testing::LabRunner runner(lab, options);
    for (const auto& c : plan.cases) {
      current = c.id;
      report.emit("start", {{"case", c.id}});
      if (c.input.type == Type::int32) observe<int>(report, runner, c);
      else observe<float>(report, runner, c);
    }
  }
  report.finish(0);
}

}  // namespace
}  // namespace reduction::grading

int main(int argc, char** argv) {
  const auto args = reduction::grading::parse_args(argc, argv);
  if (!args) {
    std::fprintf(stderr, "usage: %s --lab=MODULE --expect=NN_name --plan=FILE [--lab=... --expect=... --plan=... "
                         "(several: one after another)] --where=device|host "
                         "[--call-timeout=SECONDS [" REDUCTION_CALL_FLOOR_FLAG "=SECONDS]] [" REDUCTION_REPORT_FD_FLAG "=FD] [" REDUCTION_TOKEN_FD_FLAG "=FD] "
                         "[" REDUCTION_CLOSE_SANITIZER_LOG_FLAG "=DEV:INO | " REDUCTION_REUSE_BUFFERS_FLAG "]\n",
                 argv[0]);
    return reduction::grading::kUsageExitCode;
  }
  // Before anything of the student's is loaded: no descriptor of compute-sanitizer's log may stay.
  if (args->sanitizer_log && reduction::grading::close_copies_of(*args->sanitizer_log) < 0) {
    std::fprintf(stderr, "%s: could not close the sanitizer's log\n", argv[0]);
    return reduction::grading::kUsageExitCode;
  }
  std::string token;
  try {
    token = reduction::grading::read_token(args->token_fd);  // before any student code is loaded
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return reduction::grading::kUsageExitCode;
  }
  const reduction::grading::Reporter report(args->report_fd, token);
  try {
    reduction::grading::run(*args, report);
  } catch (const std::exception& e) {
    report.emit("error", {{"message", e.what()}});
    report.finish(reduction::testing::kRuntimeErrorExitCode);
  }
}
