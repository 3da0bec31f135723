// reduction_lab_observe: the untrusted test runner. It loads one lab module (a student's), runs
// the cases of a test plan that the trusted side wrote, and prints what it observed, one line a
// case (wire.hpp). It decides nothing: the checker regenerates every input and judges. Runs in
// the grader's sandbox; everything it prints may have been forged by the module it loaded.
#include "plan.hpp"
#include "wire.hpp"

#include "../tests/lab_runner.hpp"

#include <reduction/device_info.hpp>
#include <reduction/lab_module.hpp>
#include <reduction/watchdog.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

namespace reduction::grading {
namespace {

constexpr int kUsageExitCode = REDUCTION_RUNNER_EXIT_USAGE;
constexpr int kRefusedExitCode = REDUCTION_RUNNER_EXIT_REFUSED;
static_assert(testing::kRuntimeErrorExitCode == REDUCTION_RUNNER_EXIT_RUNTIME_ERROR, "grading/contract.json");
static_assert(kTimeoutExitCode == REDUCTION_RUNNER_EXIT_WATCHDOG, "grading/contract.json");

struct Args {
  std::string lab, expect, where, plan;
  double call_timeout_s = 20;
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
    if (auto v = value("--lab")) args.lab = *v;
    else if (auto v = value("--expect")) args.expect = *v;
    else if (auto v = value("--where")) args.where = *v;
    else if (auto v = value("--plan")) args.plan = *v;
    else if (auto v = value("--call-timeout")) args.call_timeout_s = std::strtod(v->c_str(), nullptr);
    else return std::nullopt;
  }
  if (args.lab.empty() || args.expect.empty() || args.plan.empty() || (args.where != "device" && args.where != "host") ||
      !(args.call_timeout_s > 0))
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
void observe_operator(const testing::LabRunner& runner, const TestCase& c) {
  if (!runner.lab().has_operators()) {
    emit("observed", {{"case", c.id}, {"status", "no_operator_entry"},
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
  emit("observed", observation(c.id, status, digest, message, scratch), &values);
}

template <typename T>
void observe(const testing::LabRunner& runner, const TestCase& c) {
  if (c.kind == CaseKind::operator_) return observe_operator<T>(runner, c);
  std::vector<std::string> values;
  std::string status = "ok", message, digest;
  testing::ScratchDamage scratch;  // the first call's that wrote outside its scratch
  const auto note = [&scratch](const auto& run) {
    if (scratch.intact()) scratch = run.scratch;
  };
  const auto input = make_input<T>(c.input.pattern, c.input.n, c.input.seed);
  if (c.kind == CaseKind::sum) {
    for (int call = 0; call < c.calls && status == "ok"; ++call) {
      const auto run = runner.run<T>(input, c.id, /*check_input=*/true, std::nullopt, c.offset);
      if (run.not_implemented) status = "not_implemented", message = run.message;
      values.push_back(bits_of(run.value));
      digest = hex64(run.input_digest);
      note(run);
    }
  } else if (c.kind == CaseKind::twice) {
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
  emit("observed", observation(c.id, status, digest, message, scratch), &values);
}

int run(const Args& args) {
  std::ifstream file(args.plan);
  std::stringstream text;
  text << file.rdbuf();
  const TestPlan plan = read_test_plan(text.str());
  std::optional<LabModule> loaded;
  try {
    loaded.emplace(LabModule::load(args.lab));
  } catch (const LabLoadError& e) {
    emit("load_error", {{"message", e.what()}});
    return kUsageExitCode;
  }
  const LabModule& lab = *loaded;
  if (lab.folder() != args.expect) {
    emit("refused", {{"message", "the module says it is lab " + lab.folder() + ", not " + args.expect}});
    return kRefusedExitCode;
  }
  const bool on_device = args.where == "device";
  if (on_device) emit("device", {{"name", query_device_info().name}});
  testing::RunnerOptions options;
  options.call_seconds = args.call_timeout_s;
  options.on_device = on_device;
  std::string current;
  options.on_fatal = [&current](const std::string&, const std::string& message) {
    emit("observed", {{"case", current}, {"status", "error"}, {"message", message}});
    std::_Exit(testing::kRuntimeErrorExitCode);  // after a CUDA error the context cannot be trusted
  };
  const testing::LabRunner runner(lab, options);
  for (const auto& c : plan.cases) {
    current = c.id;
    emit("start", {{"case", c.id}});
    if (c.input.type == Type::int32) observe<int>(runner, c);
    else observe<float>(runner, c);
  }
  emit("end");
  return 0;
}

}  // namespace
}  // namespace reduction::grading

int main(int argc, char** argv) {
  const auto args = reduction::grading::parse_args(argc, argv);
  if (!args) {
    std::fprintf(stderr, "usage: %s --lab=MODULE --expect=NN_name --where=device|host --plan=FILE "
                         "[--call-timeout=SECONDS]\n", argv[0]);
    return reduction::grading::kUsageExitCode;
  }
  try {
    return reduction::grading::run(*args);
  } catch (const std::exception& e) {
    reduction::grading::emit("error", {{"message", e.what()}});
    return reduction::testing::kRuntimeErrorExitCode;
  }
}
