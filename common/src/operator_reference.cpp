// Host references, inputs and bounds for lab 12's operators (operator_reference.hpp).
#include <reduction/input.hpp>
#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

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

template <typename T>
std::string text_of(T value) {
  std::ostringstream text;
  text.precision(std::is_same_v<T, float> ? 9 : 17);
  text << value;
  return text.str();
}

// What a wrong result of a min, max, sum or product usually means.
template <typename T>
std::string operator_hint(const std::vector<T>& input, T got, T identity) {
  if (std::memcmp(&got, &identity, sizeof got) == 0 && !input.empty())
    return "the result is the identity: the elements never reached the accumulators (Op::lift, Op::combine)";
  if (std::find(input.begin(), input.end(), got) != input.end())
    return "a value of the input, but not the right one: elements were skipped (the head, the tail, the "
           "last partial round, a block's partial)";
  return "elements were skipped or combined twice, or a partial was read before it was written";
}

}  // namespace

const char* to_string(OperatorData data) {
  static const char* const names[] = {"uniform_positive", "mixed_sign", "small_integers",
                                      "odd_integers",     "near_one",   "large_mean"};
  return names[static_cast<int>(data)];
}

std::optional<OperatorData> parse_operator_data(const std::string& text) {
  for (int d = 0; d <= static_cast<int>(OperatorData::large_mean); ++d)
    if (text == to_string(static_cast<OperatorData>(d))) return static_cast<OperatorData>(d);
  return std::nullopt;
}

template <typename T>
std::vector<T> make_operator_input(OperatorData data, std::size_t n, std::uint64_t seed) {
  switch (data) {
    case OperatorData::uniform_positive: return make_input<T>(Pattern::uniform_positive, n, seed);
    case OperatorData::mixed_sign: return make_input<T>(Pattern::mixed_sign, n, seed);
    case OperatorData::small_integers: return make_input<T>(Pattern::small_integers, n, seed);
    default: break;
  }
  if constexpr (std::is_same_v<T, int>) return odd_integers_input(n, seed);
  else if (data == OperatorData::near_one) return near_one_input(n, seed);
  else return shifted_normal_input(n, seed, 100.0, 1.0);
}
template std::vector<int> make_operator_input<int>(OperatorData, std::size_t, std::uint64_t);
template std::vector<float> make_operator_input<float>(OperatorData, std::size_t, std::uint64_t);

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

ProductTolerance product_tolerance(std::size_t n) {
  // operator_reference.hpp derives it: n - 1 roundings of at most ln(1 + u) each in the log of
  // the ratio, in any order. The reference's own: n - 1 roundings in long double (64-bit
  // significand, 2^-64 each) and one to double (2^-53); the check's log in double: 2^-50.
  const double roundings = n > 1 ? static_cast<double>(n - 1) : 0.0;
  ProductTolerance t;
  t.log_bound = roundings * (std::log1p(kUnitRoundoff) + 0x1p-64) + 0x1p-53 + 0x1p-50;
  std::ostringstream rule;
  rule << "|ln(got / product)| <= (n - 1) * ln(1 + u) = " << t.log_bound << ": got within a factor "
       << std::exp(t.log_bound) << " of the product, the worst case of n - 1 roundings in any order";
  t.rule = rule.str();
  return t;
}

bool ProductTolerance::accepts(double got, double reference) const {
  if (reference == 0) return got == 0;  // the reference underflowed: only 0 is right
  if (!std::isfinite(got) || !(got / reference > 0)) return false;  // NaN, infinity, 0, or the wrong sign
  return std::fabs(std::log(got / reference)) <= log_bound;
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

template <typename T>
OperatorVerdict judge_operator(ReductionOperator op, const std::vector<T>& input, T got, std::size_t error_depth) {
  OperatorVerdict v;
  v.got = text_of(got);
  T identity{};
  std::optional<T> exact;  // the result, where it is exact
  switch (op) {
    case REDUCTION_OPERATOR_SUM:
      identity = ops::Sum<T>::identity();
      if constexpr (std::is_same_v<T, int>) exact = exact_int_sum(input);
      break;
    case REDUCTION_OPERATOR_PRODUCT:
      identity = ops::Product<T>::identity();
      if constexpr (std::is_same_v<T, int>) exact = exact_int_product(input);
      break;
    case REDUCTION_OPERATOR_MIN:
    case REDUCTION_OPERATOR_MAX: {
      const bool min = op == REDUCTION_OPERATOR_MIN;
      identity = min ? ops::Min<T>::identity() : ops::Max<T>::identity();
      if constexpr (std::is_same_v<T, float>) {
        if (std::any_of(input.begin(), input.end(), [](float x) { return std::isnan(x); })) {
          v.right = std::isnan(got);
          v.expected = "NaN (a NaN anywhere gives NaN; which NaN does not matter)";
          v.hint = "min and max propagate NaN: fminf / fmaxf alone skip it (operators.hpp)";
          return v;
        }
      }
      exact = input.empty() ? identity : min ? *std::min_element(input.begin(), input.end())
                                             : *std::max_element(input.begin(), input.end());
      break;
    }
    default:
      v.expected = "a result of sum, product, min or max (moments go through judge_moments)";
      return v;
  }
  if (input.empty()) exact = identity;
  if (exact) {
    v.right = got == *exact;
    v.expected = text_of(*exact) + (input.empty() ? " (the identity of an empty input)" : "");
  } else if (op == REDUCTION_OPERATOR_SUM) {  // float: as every lab's sum
    const ReferenceSum reference = reference_sum(input);
    const FloatTolerance tolerance = float_tolerance(error_depth, reference.sum_abs);
    v.right = std::fabs(static_cast<double>(got) - reference.sum) <= tolerance.bound;
    v.expected = text_of(reference.sum) + " within " + text_of(tolerance.bound) + " (" + tolerance.rule + ")";
  } else {  // float product
    const double reference = reference_product(std::vector<float>(input.begin(), input.end()));
    const ProductTolerance tolerance = product_tolerance(input.size());
    v.right = tolerance.accepts(got, reference);
    v.expected = text_of(reference) + " (long double reference), " + tolerance.rule;
  }
  if (!v.right) v.hint = operator_hint(input, got, identity);
  return v;
}
template OperatorVerdict judge_operator<int>(ReductionOperator, const std::vector<int>&, int, std::size_t);
template OperatorVerdict judge_operator<float>(ReductionOperator, const std::vector<float>&, float, std::size_t);

OperatorVerdict judge_moments(const std::vector<float>& input, const ReductionMoments& got, std::size_t error_depth) {
  OperatorVerdict v;
  v.got = "count " + std::to_string(got.count) + ", mean " + text_of(got.mean) + ", M2 " + text_of(got.m2) +
          " (stddev " + text_of(ops::stddev_of(got)) + ")";
  if (input.empty()) {
    v.right = got.count == 0 && got.mean == 0.0f && got.m2 == 0.0f;
    v.expected = "count 0, mean 0, M2 0 (the identity triple of an empty input)";
    v.hint = "an empty input must still write the identity (the output held a sentinel)";
    return v;
  }
  const MomentsReference reference = reference_moments(input);
  const OperatorTolerance mean = mean_tolerance(error_depth, reference.max_abs);
  const OperatorTolerance stddev = stddev_tolerance(error_depth, input.size(), reference.max_abs, reference.stddev);
  v.expected = "count " + std::to_string(reference.count) + ", mean " + text_of(reference.mean) + " within " +
               text_of(mean.bound) + " (" + mean.rule + "), stddev " + text_of(reference.stddev) + " within " +
               text_of(stddev.bound) + " (" + stddev.rule + ")";
  if (got.count != reference.count) {
    v.hint = "the count is exact: elements were skipped or counted twice (or the output, holding a sentinel, was "
             "never written)";
  } else if (!(std::fabs(ops::mean_of(got) - reference.mean) <= mean.bound)) {
    v.hint = "the mean is off: the weight of b in Chan's mean is n_b / n";
  } else if (!(std::fabs(ops::stddev_of(got) - reference.stddev) <= stddev.bound)) {
    v.hint = "the stddev is off: M2 = M2_a + M2_b + delta^2 * n_a * n_b / n; a lost partial changes the count too";
  } else {
    v.right = true;
  }
  return v;
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
