// Judging a test run: the runner's observations against sums the checker computes itself.
#pragma once

#include "channel.hpp"
#include "plan.hpp"
#include "wire.hpp"

#include <reduction/lab_module.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace reduction::grading {

// What the checker needs to know of one input, computed once a run: inputs repeat across labs
// and students (a plan's case seeds depend only on the run's seed and the case's place).
struct Expectation {
  std::int32_t int_sum = 0;     // exact, for int inputs
  double sum = 0, sum_abs = 0;  // double reference, for float inputs
  std::uint64_t digest = 0;     // digest_bytes of the input
  std::uint32_t naive_bits = 0; // the plain float loop's result (lab 01)
};
using Expectations = std::map<std::string, Expectation>;  // by input_key()

std::string input_key(const InputSpec& input);
// The expectation of one input, computed from scratch (generates the input).
Expectation expect_input(const InputSpec& input);
// Adds the plan's inputs that `known` lacks; the text form is one line an input.
void add_expectations(const TestPlan& plan, Expectations& known);
std::string write_expectations(const Expectations& known);
Expectations read_expectations(const std::string& text);

// The report (one JSON object, format "reduction-check-tests"): counts of cases observed, correct,
// wrong and not implemented; the first failure with its case, expected, got and hint; the last
// case started; any error, refusal or load failure the runner reported. `reference` supplies the
// float error depth (the student's module never does). `observed` is the run's report channel as
// the grader read it; only lines with the run's `token`, up to the first "end", count: the others
// are counted (forged, after_end) and ignored.
// `section`: the report is of a run of several labs, and this lab's part of it is judged (section_of).
std::string check_tests(const TestPlan& plan, const LabModule& reference, const Expectations& expected,
                        const std::string& observed, const std::string& token, const std::string& section = "");

// The lines of a report channel that count: well-formed, with the run's token, before "end".

// "lab 05_sequential, n = 33, type = int, pattern = mixed_sign, seed = 123"
std::string describe(const std::string& lab, const InputSpec& input);
// The same for a case; an operator case names its operator, data, special value and offset.
std::string describe(const std::string& lab, const TestCase& c);

}  // namespace reduction::grading
