// The generic suite: correctness over sizes x types x patterns, and the contract checks.
#include "lab_suite.hpp"

#include "../checking/diagnosis.hpp"

#include <reduction/device_info.hpp>
#include <reduction/reference.hpp>

#include <cmath>
#include <cstring>
#include <sstream>

namespace reduction::testing {
namespace {

class LabTest : public ::testing::Test {
 public:
  LabTest(std::function<void()> body, bool needs_gpu) : body_(std::move(body)), needs_gpu_(needs_gpu) {}
  void TestBody() override {
    if (needs_gpu_ && !cuda_device_available())
      GTEST_SKIP() << "no CUDA device present: GPU test skipped (it runs on a machine with a GPU)";
    body_();
  }

 private:
  std::function<void()> body_;
  bool needs_gpu_;
};



template <typename T>
void add_correctness_case(const LabModule& lab, const LabRunner& runner, std::size_t n, Pattern pattern) {
  const std::uint64_t seed = default_seed();
  const std::string suite = n <= kSmallLimit ? "Small" : "Medium";
  const std::string name = std::string(type_name<T>()) + "_" + to_string(pattern) + "_n" + std::to_string(n);
  register_test(suite, name, [&lab, &runner, n, pattern, seed] {
    const auto input = make_input<T>(pattern, n, seed);
    const std::string what = describe_case(lab, n, type_name<T>(), pattern, seed);
    const auto run = runner.run(input, what);
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(run);
    expect_correct_sum(lab, input, run, what);
  }, lab.runs_on_device());
}

template <typename T>
void add_contract_cases(const LabModule& lab, const LabRunner& runner) {
  const bool gpu = lab.runs_on_device();
  const std::string type = type_name<T>();
  const std::uint64_t seed = default_seed();

  register_test("Contract", "EmptyInputGivesZero_" + type, [&lab, &runner, type, seed] {
    const std::vector<T> empty;
    const auto run = runner.run(empty, describe_case(lab, 0, type, Pattern::all_ones, seed));
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(run);
    EXPECT_EQ(run.value, T{0}) << "an empty input must give the identity, 0 (and the output must "
                                  "still be written: it held a sentinel before the call)";
  }, gpu);

  register_test("Contract", "LeavesTheInputUnchanged_" + type, [&lab, &runner, type, seed] {
    const std::size_t n = 1000003;
    const auto input = make_input<T>(Pattern::mixed_sign, n, seed);
    const std::string what = describe_case(lab, n, type, Pattern::mixed_sign, seed);
    const auto run = runner.run(input, what, /*check_input=*/true);
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(run);
    EXPECT_TRUE(run.input_unchanged) << what << ": d_in was modified. The input is read-only: "
                                        "reduce in shared memory or in the scratch space instead.";
  }, gpu);

  register_test("Contract", "SecondBufferRightAfterGetsItsOwnSum_" + type, [&lab, &runner, type, seed] {
    const std::size_t n = 1000003, m = 65537;
    const auto first = make_input<T>(Pattern::uniform_positive, n, seed);
    const auto second = make_input<T>(Pattern::small_integers, m, seed + 1);
    const auto [a, b] = runner.run_twice(first, second, describe_case(lab, n, type, Pattern::uniform_positive, seed) +
                                                            ", then n = 65537 small_integers");
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(a);
    expect_correct_sum(lab, first, a, describe_case(lab, n, type, Pattern::uniform_positive, seed));
    expect_correct_sum(lab, second, b, describe_case(lab, m, type, Pattern::small_integers, seed + 1) +
                                          " (called right after a call on a larger buffer)", std::optional<T>(a.value));
  }, gpu);
}

void add_calling_twice_case(const LabModule& lab, const LabRunner& runner) {
  register_test("Contract", "CallingTwiceGivesTheSameIntResult", [&lab, &runner] {
    const std::size_t n = 1000003;
    const std::uint64_t seed = default_seed();
    const auto input = make_input<int>(Pattern::uniform_positive, n, seed);
    const auto [a, b] = runner.run_twice(input, input, describe_case(lab, n, "int", Pattern::uniform_positive, seed));
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(a);
    const std::int32_t expected = exact_int_sum(input);
    EXPECT_EQ(a.value, expected) << "first call: " << diagnose_int_sum(input, a.value, expected);
    EXPECT_EQ(b.value, a.value) << "the second call on the same input gave another result: "
                                << diagnose_int_sum(input, b.value, expected, a.value);
  }, lab.runs_on_device());
}

template <typename T>
void add_large_case(const LabModule& lab, const LabRunner& runner, Pattern pattern) {
  const std::string type = type_name<T>();
  register_test("Large", "Uses64BitIndexing_" + type, [&lab, &runner, type, pattern] {
    const std::uint64_t seed = default_seed();
    const auto input = make_input<T>(pattern, kLargeSize, seed);
    const std::string what = describe_case(lab, kLargeSize, type, pattern, seed);
    const auto run = runner.run(input, what, /*check_input=*/true);
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(run);
    expect_correct_sum(lab, input, run, what + " (past 2^31: indices must be 64-bit)");
    EXPECT_TRUE(run.input_unchanged) << what << ": d_in was modified";
  }, lab.runs_on_device());
}

}  // namespace

template <> const char* type_name<int>() { return "int"; }
template <> const char* type_name<float>() { return "float"; }

void register_test(const std::string& suite, const std::string& name, std::function<void()> body, bool needs_gpu) {
  ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [body = std::move(body), needs_gpu]() -> ::testing::Test* {
                            return new LabTest(body, needs_gpu);
                          });
}

std::string describe_case(const LabModule& lab, std::size_t n, const std::string& type, Pattern pattern,
                          std::uint64_t seed) {
  std::ostringstream out;
  out << "lab " << lab.folder() << " (" << lab.title() << "), n = " << n << ", type = " << type
      << ", pattern = " << to_string(pattern) << ", seed = " << seed;
  return out.str();
}

template <>
void expect_correct_sum<int>(const LabModule&, const std::vector<int>& input, const LabRun<int>& run,
                             const std::string& what, std::optional<int> previous) {
  const std::int32_t expected = exact_int_sum(input);
  if (run.value == expected) return;
  ADD_FAILURE() << what << "\n  expected " << expected << ", got " << run.value << " (difference "
                << static_cast<long long>(run.value) - expected << ")\n  hint: "
                << diagnose_int_sum(input, run.value, expected, previous)
                << "\n  replay: REDUCTION_SEED=" << default_seed() << " with this test's --gtest_filter";
}

template <>
void expect_correct_sum<float>(const LabModule& lab, const std::vector<float>& input, const LabRun<float>& run,
                               const std::string& what, std::optional<float> previous) {
  const ReferenceSum reference = reference_sum(input);
  const FloatTolerance tolerance = float_tolerance(lab.float_error_depth(input.size()), reference.sum_abs);
  const double error = std::fabs(static_cast<double>(run.value) - reference.sum);
  if (error <= tolerance.bound) return;  // false for NaN too
  const std::string hint = diagnose_float_sum(run.value, reference.sum, tolerance.bound, previous);
  ADD_FAILURE() << what << "\n  expected " << reference.sum << " (double reference), got " << run.value
                << "\n  error " << error << " = " << error_in_ulps_of_sum(run.value, reference.sum, reference.sum_abs)
                << " u*sum|x|, allowed " << tolerance.bound << ": " << tolerance.rule << "\n  hint: " << hint
                << "\n  replay: REDUCTION_SEED=" << default_seed() << " with this test's --gtest_filter";
}

RunnerOptions suite_runner_options(const LabModule& lab) {
  RunnerOptions options = test_runner_options(lab);
  options.on_scratch_overrun = [](const std::string& what, const std::string& damage) {
    ADD_FAILURE() << what << "\n  scratch overrun: " << damage << "\n  hint: " << kScratchOverrunHint;
  };
  return options;
}

void register_generic_tests(const LabModule& lab, const LabRunner& runner) {
  for (std::size_t n : kSizes) {
    if (n == 0) continue;  // Contract.EmptyInputGivesZero covers it
    for (Pattern pattern : kAllPatterns) {
      add_correctness_case<int>(lab, runner, n, pattern);
      add_correctness_case<float>(lab, runner, n, pattern);
    }
  }
  add_contract_cases<int>(lab, runner);
  add_contract_cases<float>(lab, runner);
  add_calling_twice_case(lab, runner);
  add_large_case<int>(lab, runner, Pattern::small_integers);
  add_large_case<float>(lab, runner, Pattern::mixed_sign);
}

}  // namespace reduction::testing
