// NotImplementedPrinter: see not_implemented_printer.hpp.
#include "not_implemented_printer.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace reduction::testing {
namespace {

bool says_not_implemented(const ::testing::TestPartResult& result) {
  return result.failed() && std::strstr(result.message(), "not implemented yet") != nullptr;
}

}  // namespace

NotImplementedPrinter::NotImplementedPrinter(::testing::TestEventListener* inner, std::string lab)
    : inner_(inner), lab_(std::move(lab)) {}

NotImplementedPrinter* NotImplementedPrinter::install(const std::string& lab) {
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  ::testing::TestEventListener* inner = listeners.Release(listeners.default_result_printer());
  if (inner == nullptr) return nullptr;  // output already replaced (e.g. by a gtest flag)
  auto* printer = new NotImplementedPrinter(inner, lab);
  listeners.Append(printer);
  return printer;
}

std::string NotImplementedPrinter::summary(const ::testing::UnitTest& unit) const {
  if (not_implemented_tests_ == 0) return "";
  return lab_ + ": not implemented yet (" + std::to_string(not_implemented_tests_) + " of " +
         std::to_string(unit.test_to_run_count()) + " tests)";
}

void NotImplementedPrinter::show_start() {
  if (!suite_started_ && suite_ != nullptr) {
    forward_suite_start(*suite_);
    suite_started_ = true;
  }
  if (started_ || current_ == nullptr) return;
  inner_->OnTestStart(*current_);
  started_ = true;
}

void NotImplementedPrinter::forward_suite_start(const ::testing::TestSuite& suite) {
  inner_->OnTestSuiteStart(suite);
#ifndef GTEST_REMOVE_LEGACY_TEST_CASEAPI_
  inner_->OnTestCaseStart(suite);
#endif
}

void NotImplementedPrinter::OnTestSuiteStart(const ::testing::TestSuite& suite) {
  suite_ = &suite;
  suite_started_ = false;
}

void NotImplementedPrinter::OnTestSuiteEnd(const ::testing::TestSuite& suite) {
  if (suite_started_) {
    inner_->OnTestSuiteEnd(suite);
#ifndef GTEST_REMOVE_LEGACY_TEST_CASEAPI_
    inner_->OnTestCaseEnd(suite);
#endif
  }
  suite_ = nullptr;
}

void NotImplementedPrinter::OnTestStart(const ::testing::TestInfo& info) {
  // The RUN line waits until the test shows something: a test that fails only with "not
  // implemented yet" (after the first) prints nothing at all.
  current_ = &info;
  started_ = current_not_implemented_ = current_other_ = false;
}

void NotImplementedPrinter::OnTestPartResult(const ::testing::TestPartResult& result) {
  if (says_not_implemented(result)) {
    current_not_implemented_ = true;
    if (shown_one_ && !started_) return;
    shown_one_ = true;
  } else if (result.failed()) {
    current_other_ = true;
  }
  show_start();
  inner_->OnTestPartResult(result);
}

void NotImplementedPrinter::OnTestEnd(const ::testing::TestInfo& info) {
  const bool failed = info.result() != nullptr && info.result()->Failed();
  if (failed && current_not_implemented_ && !current_other_) ++not_implemented_tests_;
  else if (failed) other_failed_.push_back(std::string(info.test_suite_name()) + "." + info.name());
  if (!started_ && current_not_implemented_ && !current_other_) {
    current_ = nullptr;
    return;  // folded into the count
  }
  show_start();
  inner_->OnTestEnd(info);
  current_ = nullptr;
}

void NotImplementedPrinter::OnTestIterationEnd(const ::testing::UnitTest& unit, int iteration) {
  if (not_implemented_tests_ == 0) {
    inner_->OnTestIterationEnd(unit, iteration);
    return;
  }
  // gtest's summary would list every failed test; list only those that failed otherwise.
  std::printf("[==========] %d tests ran.\n", unit.test_to_run_count());
  if (unit.successful_test_count() > 0) std::printf("[  PASSED  ] %d tests.\n", unit.successful_test_count());
  if (unit.skipped_test_count() > 0) std::printf("[  SKIPPED ] %d tests.\n", unit.skipped_test_count());
  for (const auto& name : other_failed_) std::printf("[  FAILED  ] %s\n", name.c_str());
  std::printf("\n%2d FAILED TESTS\n", unit.failed_test_count());  // gtest's count line, read by the grader
  std::fflush(stdout);
}

}  // namespace reduction::testing
