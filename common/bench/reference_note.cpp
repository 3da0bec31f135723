// The benchmark's line about missing references (reference_note.hpp).
#include "reference_note.hpp"

#include <filesystem>

namespace reduction::bench {
namespace {

// "lab 01" or "labs 01, 12": the two-digit numbers of the lab folders.
std::string lab_list(const std::vector<int>& numbers) {
  std::string text = numbers.size() == 1 ? "lab " : "labs ";
  for (std::size_t k = 0; k < numbers.size(); ++k) {
    if (k > 0) text += ", ";
    text += (numbers[k] < 10 ? "0" : "") + std::to_string(numbers[k]);
  }
  return text;
}

}  // namespace

std::string missing_references_note(const std::vector<int>& lab_numbers, const std::string& reference_dir) {
  if (lab_numbers.empty()) return "";
  const std::string where =
      "; get them from the solutions preset of the course repository (-DREDUCTION_BUILD_SOLUTIONS=ON) or the "
      "student release's reference/ (its student preset uses it), or pass --reference-dir DIR";
  std::string why;
  if (reference_dir.empty()) {
    why = "this build has no reference modules (a student build of the course repository builds none)";
  } else if (!std::filesystem::is_directory(reference_dir)) {
    why = "the reference folder " + reference_dir + " is not there";
  } else {
    why = reference_dir + " has no module for " + (lab_numbers.size() == 1 ? "it" : "them");
  }
  return "no reference time for " + lab_list(lab_numbers) + ": " + why + where;
}

}  // namespace reduction::bench
