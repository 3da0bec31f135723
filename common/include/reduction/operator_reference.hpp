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

// Declared bounds (u = 2^-24; h = the lab's float_error_depth, the longest chain of combines):
//  product: |ln(got / product)| <= (n - 1) * ln(1 + u) (ProductTolerance), for any order of the
//    multiplications. Derivation: a product of n elements is n - 1 multiplications, whatever the
//    tree, and each rounds once, fl(a * b) = a * b * (1 + d) with |d| <= u / (1 + u) (round to
//    nearest, no underflow or overflow), so got / product is the product of the n - 1 factors
//    (1 + d), each in [1 / (1 + u), 1 + u / (1 + u)]: |ln(1 + d)| <= ln(1 + u) < u. The
//    reference adds its own error (below). This is the worst case, not a typical error: it is
//    wide at large n (e^-1 to e at 2^24), and it is still the right bound there, because the
//    tighter probabilistic one does not hold for the tests' data. Higham and Mary's bound
//    (exp(lambda * sqrt(n - 1) * u + ...) - 1, "A new approach to probabilistic rounding error
//    analysis", SIAM J. Sci. Comput., 2019) assumes independent rounding errors of mean zero.
//    Factors near 1 break the mean zero: when a factor above 1 meets one below 1 and their
//    product lands in [1, 2), where the float grid is twice as coarse as below 1, the exact
//    product sits just below a midpoint of that grid (the factors' deviations from 1 have
//    opposite signs, so their product, the part below the grid, is negative) and rounds down by
//    almost u; nothing rounds up by as much. Lab 12's tree keeps its partial products near 1 for
//    several levels: replayed on the CPU (the instructors' CTest harness.lab12_replay) at
//    n = 2^24 + 7 on 132 SMs, its multiplications err by -0.0048 u on average, and the product
//    by 4.8e-3, twice the probabilistic bound with lambda = 10 (2.4e-3), which the H100 and the
//    H200 also measured. The same data multiplied in index order errs by 8e-5.
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
// The float product's bound, as a ratio: right when got and the reference have the same sign and
// |ln(got / reference)| <= log_bound, or both are 0 (the reference underflowed too). A ratio, not
// |got - reference| <= bound: at n = 2^24 the worst case allows got up to e times the product,
// and a symmetric bound that wide would accept 0, a wrong identity's result.
struct ProductTolerance {
  double log_bound = 0;  // (n - 1) * ln(1 + u), plus the reference's and the check's own rounding
  std::string rule;      // human-readable, for failure messages
  bool accepts(double got, double reference) const;
};
ProductTolerance product_tolerance(std::size_t n);
OperatorTolerance mean_tolerance(std::size_t error_depth, double max_abs);
OperatorTolerance stddev_tolerance(std::size_t error_depth, std::size_t n, double max_abs, double stddev);

// The verdict on one result of the operator entry, against the references and bounds above: the
// one judgment of lab 12's results, used by its CTest suite and by the grader's checker.
//  int sum, product, min, max: exact (sum and product modulo 2^32);
//  float sum: float_tolerance (reference.hpp) of the lab's depth, as every lab's sum;
//  float product: product_tolerance (a ratio); float min and max: exact, NaN if a NaN is
//    anywhere (any NaN then), infinities ordinary values; n = 0: the identity (exact, for every
//    operator);
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
