// The generic lab test suite: written once, registered for whichever lab module the runner
// loaded (skeleton or solution, any lab), plus that lab's own extra tests.
#pragma once

#include "../checking/lab_runner.hpp"
#include "../checking/test_sizes.hpp"

#include <reduction/input.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// Ends the current test with the skeleton's "not implemented yet" message (a macro: FAIL()
// returns only from the function it is written in).
#define REDUCTION_STOP_IF_NOT_IMPLEMENTED(run) \
  do {                                         \
    if ((run).not_implemented) FAIL() << (run).message; \
  } while (0)

namespace reduction::testing {

// Registers one test. The body runs inside a gtest fixture; GPU tests skip only when no CUDA
// device is present.
void register_test(const std::string& suite, const std::string& name, std::function<void()> body,
                   bool needs_gpu);

// Checks a lab's result against the reference with the tolerance rule and a bug-class hint.
template <typename T>
void expect_correct_sum(const LabModule& lab, const std::vector<T>& input, const LabRun<T>& run,
                        const std::string& case_description, std::optional<T> previous = std::nullopt);

// "lab 02 (global atomic), n = 33, type = int, pattern = mixed_sign, seed = 20261121"
std::string describe_case(const LabModule& lab, std::size_t n, const std::string& type, Pattern pattern,
                          std::uint64_t seed);

// The runner's options for this suite: test_runner_options(), and a call that writes outside its
// scratch fails the test that made it, whatever its result (every runner call, whichever test).
RunnerOptions suite_runner_options(const LabModule& lab);

void register_generic_tests(const LabModule& lab, const LabRunner& runner);
// Lab-specific tests that the generic suite cannot express (lab_specific.cpp).
void register_lab_specific_tests(const LabModule& lab, const LabRunner& runner);

template <typename T>
const char* type_name();

}  // namespace reduction::testing
