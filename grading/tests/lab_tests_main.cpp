// The lab test runner: loads one lab module (--lab=PATH), registers the generic suite and the
// lab's own tests, and runs them. --expect-not-implemented turns it into the skeleton check:
// it passes only if the lab's tests fail, all with "not implemented yet".
#include "lab_suite.hpp"
#include "not_implemented_printer.hpp"

#include <reduction/device_info.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

constexpr int kSkippedExitCode = REDUCTION_SKIP_CODE;  // CTest's SKIP_RETURN_CODE (grading/contract.json): no GPU for a GPU lab

// Student code might call exit() in the middle of a test; that must not pass for success.
bool& tests_finished() {
  static bool finished = false;
  return finished;
}
void report_unexpected_exit() {
  if (tests_finished()) return;
  std::fflush(stdout);
  std::fprintf(stderr, "\nREDUCTION-RUNTIME-ERROR: the program exited while a test was running "
                       "(exit() called from lab code?)\n");
  std::fflush(stderr);
  std::_Exit(reduction::testing::kRuntimeErrorExitCode);
}

// Collects failure messages for the skeleton check.
class FailureCollector : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    ++failures_;
    if (std::strstr(result.message(), "not implemented yet") == nullptr) {
      ++other_failures_;
      if (first_other_.empty()) first_other_ = result.message();
    }
  }
  int failures() const { return failures_; }
  int other_failures() const { return other_failures_; }
  const std::string& first_other() const { return first_other_; }

 private:
  int failures_ = 0, other_failures_ = 0;
  std::string first_other_;
};

int check_skeleton(const FailureCollector& collector, const ::testing::UnitTest& unit) {
  const int failed_tests = unit.failed_test_count();
  const int run_tests = unit.test_to_run_count() - unit.skipped_test_count();
  if (run_tests > 0 && failed_tests == run_tests && collector.other_failures() == 0) {
    std::printf("skeleton check: all %d tests failed with 'not implemented yet', as a fresh skeleton must\n",
                failed_tests);
    return 0;
  }
  std::printf("skeleton check FAILED: %d of %d tests failed, %d failures without 'not implemented yet'%s%s\n",
              failed_tests, run_tests, collector.other_failures(),
              collector.first_other().empty() ? "" : "; first: ", collector.first_other().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string lab_path;
  bool expect_not_implemented = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--lab=", 0) == 0) lab_path = arg.substr(6);
    else if (arg == "--expect-not-implemented") expect_not_implemented = true;
    else {
      std::fprintf(stderr, "usage: %s --lab=PATH/labNN_name.so [--expect-not-implemented] [gtest flags]\n"
                           "unknown argument: %s\n", argv[0], arg.c_str());
      return 2;
    }
  }
  if (lab_path.empty()) {
    std::fprintf(stderr, "usage: %s --lab=PATH/labNN_name.so [--expect-not-implemented] [gtest flags]\n", argv[0]);
    return 2;
  }

  try {
    static const reduction::LabModule lab = reduction::LabModule::load(lab_path);
    static const reduction::testing::LabRunner runner(lab, reduction::testing::suite_runner_options(lab));
    reduction::testing::register_generic_tests(lab, runner);
    reduction::testing::register_lab_specific_tests(lab, runner);

    const bool gpu = reduction::cuda_device_available();
    std::printf("lab %s (%s) from %s; %s\n", lab.folder().c_str(), lab.title().c_str(), lab_path.c_str(),
                gpu ? reduction::query_device_info().summary().c_str() : "no CUDA device present");

    auto* collector = new FailureCollector;  // owned by gtest's listener list
    ::testing::UnitTest::GetInstance()->listeners().Append(collector);
    const auto* printer = reduction::testing::NotImplementedPrinter::install("lab " + lab.folder().substr(0, 2));
    std::atexit(report_unexpected_exit);
    const int status = RUN_ALL_TESTS();
    tests_finished() = true;
    std::printf("REDUCTION-TESTS-COMPLETE\n");

    const auto& unit = *::testing::UnitTest::GetInstance();
    if (printer != nullptr && !printer->summary(unit).empty()) std::printf("%s\n", printer->summary(unit).c_str());
    if (lab.runs_on_device() && !gpu) return kSkippedExitCode;
    if (expect_not_implemented) return check_skeleton(*collector, unit);
    return status;
  } catch (const reduction::LabLoadError& e) {
    std::fprintf(stderr, "REDUCTION-LOAD-ERROR: %s\n", e.what());
    return 2;
  }
}
