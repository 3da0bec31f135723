// Dispatches to the tests a single lab adds to the generic suite (lab_specific/labNN.cpp).
#include "lab_specific/lab_specific.hpp"

#include <map>

namespace reduction::testing {

void register_lab_specific_tests(const LabModule& lab, const LabRunner& runner) {
  using Registrar = void (*)(const LabModule&, const LabRunner&);
  static const std::map<int, Registrar> registrars = {
      {1, &register_lab01_tests},
      {10, &register_lab10_tests},
      {12, &register_lab12_tests},
  };
  if (const auto it = registrars.find(lab.number()); it != registrars.end()) it->second(lab, runner);
}

}  // namespace reduction::testing
