// Host references, inputs and error bounds for lab 12's operators (operators.hpp), and the float
// ways of computing a standard deviation that its README compares.
#pragma once

#include <reduction/operators.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reduction {

// Inputs the patterns of input.hpp do not cover, element i a pure function of (seed, i):
//  odd_integers:  odd ints in [-99, 99]: their product modulo 2^32 is odd, never 0, however long.
//  near_one:      floats in [1 - 2^-10, 1 + 2^-10): a product of 2^24 of them stays far from
//                 overflow and underflow (its log is a random walk of about +-2.3).
//  shifted_normal: float(mean + stddev * z), z standard normal (Box-Muller): a large mean
//                 against a small spread, where the textbook variance formula fails.
std::vector<int> odd_integers_input(std::size_t n, std::uint64_t seed);
std::vector<float> near_one_input(std::size_t n, std::uint64_t seed);
std::vector<float> shifted_normal_input(std::size_t n, std::uint64_t seed, double mean, double stddev);

// The inputs lab 12's operators are tested on, by the CTest suite and the grader alike: three
// patterns of input.hpp and the three above (large_mean: shifted_normal_input, mean 100, stddev 1).
// For int, near_one and large_mean mean odd_integers (they are float data).
enum class OperatorData { uniform_positive, mixed_sign, small_integers, odd_integers, near_one, large_mean };
const char* to_string(OperatorData data);
std::optional<OperatorData> parse_operator_data(const std::string& text);
template <typename T>
std::vector<T> make_operator_input(OperatorData data, std::size_t n, std::uint64_t seed);

// The exact int32 product: the low 32 bits, as the hardware's wrapping multiply gives in any order.
std::int32_t exact_int_product(const std::vector<int>& values);
// The product of floats in long double (64-bit significand): exact enough for near_one inputs.
double reference_product(const std::vector<float>& values);

// Mean, population standard deviation and largest magnitude of float data, two-pass in long
// double: the reference for MeanStddev. NaN mean and stddev for an empty input.
struct MomentsReference {
  std::size_t count = 0;
  double mean = 0, stddev = 0, max_abs = 0;
};
MomentsReference reference_moments(const std::vector<float>& values);

// Declared bounds (first-order rounding-error analysis, u = 2^-24; h = the lab's
// float_error_depth, the longest chain of combines):
//  product: relative error <= gamma_{n-1} (n - 1 roundings, each relative) while
//    n - 1 <= kStrictDepthLimit; beyond, where gamma says little, Higham and Mary's probabilistic
//    bound exp(lambda * sqrt(n - 1) * u + (n - 1) * u^2 / (1 - u)) - 1 with lambda = 10 ("A new
//    approach to probabilistic rounding error analysis", SIAM J. Sci. Comput., 2019), which
//    fails with probability below 2 exp(-50) = 4e-22 under their model (independent rounding
//    errors of mean zero);
//  mean:   |error| <= 10 * h * u * max|x|: each combine level adds at most u * |mean| and
//    4u * |mean_b - mean_a| <= 8u * max|x|;
//  stddev: |error| <= 15 * h * u * max|x| * sqrt(max(1, log2 n)) + (h + 5) * u * stddev: the
//    errors of the means enter M2 through delta^2 * n_a * n_b / n, summed over the tree
//    (Cauchy-Schwarz, and sum of n_a * n_b / n <= n log2(n) / 2 over any binary tree).
// The max|x| terms say the same as the README's measurement: float triples resolve a spread
// only down to about u * |mean|, not to u * stddev.
struct OperatorTolerance {
  double bound = 0;
  std::string rule;  // human-readable, for failure messages
};
OperatorTolerance product_tolerance(std::size_t n, double product);
OperatorTolerance mean_tolerance(std::size_t error_depth, double max_abs);
OperatorTolerance stddev_tolerance(std::size_t error_depth, std::size_t n, double max_abs, double stddev);

// The verdict on one result of the operator entry, against the references and bounds above: the
// one judgment of lab 12's results, used by its CTest suite and by the grader's checker.
//  int sum, product, min, max: exact (sum and product modulo 2^32);
//  float sum: float_tolerance (reference.hpp) of the lab's depth, as every lab's sum;
//  float product: product_tolerance; float min and max: exact, NaN if a NaN is anywhere (any NaN
//    then), infinities ordinary values; n = 0: the identity (exact, for every operator);
//  moments: the count exact, the mean and stddev within mean_tolerance and stddev_tolerance
//    (n = 0: the identity triple (0, 0, 0)).
// `expected` and `got` are printable; `hint` says what kind of bug such a result usually is.
struct OperatorVerdict {
  bool right = false;
  std::string expected, got, hint;
};
template <typename T>
OperatorVerdict judge_operator(ReductionOperator op, const std::vector<T>& input, T got, std::size_t error_depth);
OperatorVerdict judge_moments(const std::vector<float>& input, const ReductionMoments& got, std::size_t error_depth);

// The float methods the README compares, all on host, one pass each:
//  naive:      sum and sum of squares in float, variance = sumsq / n - mean^2 (may come out
//              negative: then the returned stddev is NaN, as sqrt of it is);
//  sequential: ops::MeanStddev::combine element by element (Welford's updates);
//  pairwise:   ops::MeanStddev::combine over a balanced tree (Chan's pairwise algorithm).
struct FloatMoments {
  float mean = 0, variance = 0, stddev = 0;
};
FloatMoments naive_float_moments(const float* values, std::size_t n);
ReductionMoments sequential_float_moments(const float* values, std::size_t n);
ReductionMoments pairwise_float_moments(const float* values, std::size_t n);

}  // namespace reduction
