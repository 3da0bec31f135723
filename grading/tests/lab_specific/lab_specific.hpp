// Tests a single lab adds to the generic suite, one function per lab that has any.
#pragma once

#include "../lab_suite.hpp"

namespace reduction::testing {

void register_lab01_tests(const LabModule& lab, const LabRunner& runner);
void register_lab10_tests(const LabModule& lab, const LabRunner& runner);
void register_lab12_tests(const LabModule& lab, const LabRunner& runner);

}  // namespace reduction::testing
