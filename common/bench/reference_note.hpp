// What reduction_bench says when labs it times have no reference module: why there is none, and
// where the references come from. A student build of the course repository has none, and the
// benchmark would otherwise print the student's rows alone, with no ratio and no word why.
#pragma once

#include <string>
#include <vector>

namespace reduction::bench {

// One line for the labs in `lab_numbers` (e.g. {1, 12}), which have no module in `reference_dir`:
// why (no reference folder in this build, a folder that is not there, or one without those labs)
// and how to get them. Empty when `lab_numbers` is.
//   missing_references_note({1}, "")
//   // "no reference time for lab 01: this build has no reference modules (...); get them ..."
std::string missing_references_note(const std::vector<int>& lab_numbers, const std::string& reference_dir);

}  // namespace reduction::bench
