// Command-line options of reduction_bench.
#pragma once

#include <reduction/operator_abi.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reduction::bench {

struct Options {
  std::vector<int> labs;                 // empty: every lab found in the student folder
  std::string student_dir = REDUCTION_DEFAULT_STUDENT_DIR;
  std::string reference_dir = REDUCTION_DEFAULT_REFERENCE_DIR;
  std::string student_name = "student";
  std::vector<std::size_t> sizes;        // empty: the default sweep
  std::vector<std::string> types = {"float", "int"};
  std::string csv_path, json_path;
  double budget_seconds = 0.5;
  bool aa_check = false;                 // time the reference against itself
  bool references_only = false;          // no student build: references, CUB and roof only
  bool with_cub = true;
  bool run_once = false;                 // one call per module, no timing: for the profiler
  bool dry_run = false;                  // parse, list the modules, exit: no module loaded, no GPU
  std::vector<ReductionOperator> operators;  // lab 12's operators to time too (--operators)
  // --variant NAME:DIR: builds of one lab timed side by side in place of yours (a study's knob)
  std::vector<std::pair<std::string, std::string>> variants;
};

// The default sweep: 2^10, 2^12, ..., 2^28.
std::vector<std::size_t> default_sizes();

// Parses "2^24", "16777216", "1e6"; a list "2^10,2^20" or a range "2^10..2^28" (every power
// of two in between). Throws std::invalid_argument with the offending text.
std::vector<std::size_t> parse_sizes(const std::string& text);

// Parses argv; on --help prints usage and returns nullopt; on bad input throws std::invalid_argument.
std::optional<Options> parse_options(int argc, char** argv);

}  // namespace reduction::bench
