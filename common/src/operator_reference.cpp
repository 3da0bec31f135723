// Host references, inputs and bounds for lab 12's operators (operator_reference.hpp).
#include <reduction/input.hpp>
#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace reduction {
namespace {

std::uint64_t bits(std::uint64_t seed, std::size_t index) { return mix64(seed * 0x9E6C63D0676A9A99ull + index); }

// Uniform in (0, 1] from 53 random bits: never 0, so its log is finite.
double open_unit(std::uint64_t b) { return (static_cast<double>(b >> 11) + 1.0) * 0x1p-53; }

// A tree over [begin, end): leaves `leaf(i)`, inner nodes `combine(left, right)`, halves split in
// the middle (Chan's pairwise algorithm when combine is MeanStddev's).
template <typename Value, typename Leaf, typename Combine>
Value over_tree(std::size_t begin, std::size_t end, const Leaf& leaf, const Combine& combine) {
  if (end - begin == 1) return leaf(begin);
  const std::size_t middle = begin + (end - begin) / 2;
  return combine(over_tree<Value>(begin, middle, leaf, combine), over_tree<Value>(middle, end, leaf, combine));
}

std::string describe(const char* what, double bound) {
  std::ostringstream text;
  text << what << " = " << bound;
  return text.str();
}

}  // namespace

std::vector<int> odd_integers_input(std::size_t n, std::uint64_t seed) {
  std::vector<int> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = 2 * static_cast<int>(bits(seed, i) % 100) - 99;
  return values;
}

std::vector<float> near_one_input(std::size_t n, std::uint64_t seed) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i)  // 1 + k * 2^-20, k in [-1024, 1024): exact in float
    values[i] = static_cast<float>(1.0 + (static_cast<double>(bits(seed, i) % 2048) - 1024.0) * 0x1p-20);
  return values;
}

std::vector<float> shifted_normal_input(std::size_t n, std::uint64_t seed, double mean, double stddev) {
  constexpr double kTwoPi = 6.283185307179586;
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double radius = std::sqrt(-2.0 * std::log(open_unit(bits(seed, 2 * i))));
    const double z = radius * std::cos(kTwoPi * open_unit(bits(seed, 2 * i + 1)));
    values[i] = static_cast<float>(mean + stddev * z);
  }
  return values;
}

std::int32_t exact_int_product(const std::vector<int>& values) {
  std::uint32_t product = 1;  // unsigned: wraps by definition, like the hardware
  for (int v : values) product *= static_cast<std::uint32_t>(v);
  return static_cast<std::int32_t>(product);
}

double reference_product(const std::vector<float>& values) {
  long double product = 1;
  for (float v : values) product *= v;
  return static_cast<double>(product);
}

MomentsReference reference_moments(const std::vector<float>& values) {
  MomentsReference r;
  r.count = values.size();
  if (values.empty()) {
    r.mean = r.stddev = NAN;
    return r;
  }
  long double sum = 0;
  for (float v : values) {
    sum += v;
    r.max_abs = std::max(r.max_abs, static_cast<double>(std::fabs(v)));
  }
  const long double mean = sum / values.size();
  long double m2 = 0;
  for (float v : values) m2 += (v - mean) * (v - mean);
  r.mean = static_cast<double>(mean);
  r.stddev = static_cast<double>(std::sqrt(m2 / values.size()));
  return r;
}

OperatorTolerance product_tolerance(std::size_t n, double product) {
  const double roundings = n > 1 ? static_cast<double>(n - 1) : 0.0;
  const double u = kUnitRoundoff;
  OperatorTolerance t;
  if (roundings <= kStrictDepthLimit) {
    const double gamma = roundings * u / (1 - roundings * u);
    t.bound = gamma * std::fabs(product);
    t.rule = describe("gamma_{n-1} * |product|, gamma", gamma);
  } else {
    const double relative = std::expm1(10.0 * std::sqrt(roundings) * u + roundings * u * u / (1 - u));
    t.bound = relative * std::fabs(product);
    t.rule = describe("Higham-Mary probabilistic bound (lambda = 10) * |product|, relative", relative);
  }
  return t;
}

OperatorTolerance mean_tolerance(std::size_t error_depth, double max_abs) {
  const double bound = 10.0 * static_cast<double>(error_depth) * kUnitRoundoff * max_abs;
  return {bound, describe("10 * h * u * max|x|", bound)};
}

OperatorTolerance stddev_tolerance(std::size_t error_depth, std::size_t n, double max_abs, double stddev) {
  const double h = static_cast<double>(error_depth), u = kUnitRoundoff;
  const double levels = std::max(1.0, std::log2(static_cast<double>(std::max<std::size_t>(n, 1))));
  const double bound = 15.0 * h * u * max_abs * std::sqrt(levels) + (h + 5.0) * u * stddev;
  return {bound, describe("15 h u max|x| sqrt(log2 n) + (h + 5) u stddev", bound)};
}

FloatMoments naive_float_moments(const float* values, std::size_t n) {
  FloatMoments m;
  if (n == 0) return {NAN, NAN, NAN};
  // Sums over the same balanced tree as pairwise_float_moments: only the formula differs.
  const auto add = [](float a, float b) { return a + b; };
  const float sum = over_tree<float>(0, n, [&](std::size_t i) { return values[i]; }, add);
  const float sum_squares = over_tree<float>(0, n, [&](std::size_t i) { return values[i] * values[i]; }, add);
  m.mean = sum / static_cast<float>(n);
  m.variance = sum_squares / static_cast<float>(n) - m.mean * m.mean;
  m.stddev = std::sqrt(m.variance);  // NaN when the variance came out negative
  return m;
}

ReductionMoments sequential_float_moments(const float* values, std::size_t n) {
  ReductionMoments m = ops::MeanStddev::identity();
  for (std::size_t i = 0; i < n; ++i) m = ops::MeanStddev::combine(m, ops::MeanStddev::lift(values[i]));
  return m;
}

ReductionMoments pairwise_float_moments(const float* values, std::size_t n) {
  if (n == 0) return ops::MeanStddev::identity();
  return over_tree<ReductionMoments>(
      0, n, [&](std::size_t i) { return ops::MeanStddev::lift(values[i]); },
      [](const ReductionMoments& a, const ReductionMoments& b) { return ops::MeanStddev::combine(a, b); });
}

}  // namespace reduction
