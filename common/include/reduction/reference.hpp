// Host references and the float tolerance rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reduction {

// The exact-enough sum of the inputs, computed in double with compensation (Neumaier), plus
// the sum of magnitudes that scales the float error bound.
struct ReferenceSum {
  double sum = 0.0;
  double sum_abs = 0.0;
};

template <typename T>
ReferenceSum reference_sum(const std::vector<T>& values);

// The exact int32 result: the sum modulo 2^32, as two's-complement hardware computes it in any
// order (integer addition wraps associatively).
std::int32_t exact_int_sum(const std::vector<int>& values);

// Kahan-compensated float sum: what a careful host loop gets in float (lab 01's comparison).
float kahan_sum(const float* values, std::size_t n);
// The plain float loop the host lab teaches, here for the drift lesson and its test.
float naive_float_sum(const float* values, std::size_t n);

// Float tolerance: |got - ref| <= bound.
// h <= kStrictDepthLimit: the worst-case bound gamma_h * sum|x|, gamma_h = h*u/(1 - h*u),
//   u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, eq. 4.4).
// Beyond it the worst case is too wide to catch anything (and says nothing once h*u nears 1,
//   as for atomics over many elements), so a fixed relative check of 2^-10 * sum|x| is used
//   instead: far above the sqrt(h)*u errors these algorithms really show, so it never fails a
//   correct lab, and still catches a lost block or a wrong reduction at sizes where it matters.
//   The exact integer tests carry the burden there.
struct FloatTolerance {
  double bound = 0.0;
  bool strict = true;       // false: the looser fixed check was used
  std::string rule;         // human-readable, for failure messages
};

inline constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // u = 2^-24
inline constexpr std::size_t kStrictDepthLimit = 1u << 14;  // h*u <= 2^-10

FloatTolerance float_tolerance(std::size_t error_depth, double sum_abs);

// The error in units of u * sum|x|: how many roundings' worth the result is off.
double error_in_ulps_of_sum(double got, double expected, double sum_abs);

}  // namespace reduction
