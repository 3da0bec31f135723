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
  // The route keeps a student build a student's: it reads references built elsewhere, and never
  // builds solutions/ itself (that would make it the instructor build, with its tests).
  const std::string where =
      "; the student release's student preset takes them from its reference/; in the course repository, "
      "build the solutions preset once (cmake --preset solutions && cmake --build --preset solutions) and the "
      "student preset takes them from build/solutions/solutions; or pass --reference-dir DIR";
  std::string why;
  if (reference_dir.empty()) {
    why = "this build has no reference modules";
  } else if (!std::filesystem::is_directory(reference_dir)) {
    why = "the reference folder " + reference_dir + " is not there";
  } else {
    why = reference_dir + " has no module for " + (lab_numbers.size() == 1 ? "it" : "them");
  }
  return "no reference time for " + lab_list(lab_numbers) + ": " + why + where;
}

}  // namespace reduction::bench
