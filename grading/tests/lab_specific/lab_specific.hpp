// Tests a single lab adds to the generic suite, one function per lab that has any, and the
// cases more than one lab shares (defined in lab_specific.cpp).
#pragma once

#include "../lab_suite.hpp"

#include <cstring>
#include <string>

namespace reduction::testing {

void register_lab01_tests(const LabModule& lab, const LabRunner& runner);
void register_lab10_tests(const LabModule& lab, const LabRunner& runner);
void register_lab11_tests(const LabModule& lab, const LabRunner& runner);

// Float results bitwise identical over kDeterminismCalls calls, at kDeterminismSizes: what
// REDUCTION_LAB_FLOAT_DETERMINISTIC promises; registered for every GPU lab that declares it.
// `suite` is the lab's ("Lab10").
void register_float_determinism_tests(const LabModule& lab, const LabRunner& runner, const std::string& suite);
// Right sums when d_in is 1-3 elements past a 16-byte boundary (labs with 16-byte loads).
void register_unaligned_input_tests(const LabModule& lab, const LabRunner& runner, const std::string& suite);

// "1.5 (0x3fc00000)": a float with its bits, for messages about bitwise identity.
std::string bits_of(float value);
inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
void register_lab12_tests(const LabModule& lab, const LabRunner& runner);

}  // namespace reduction::testing
