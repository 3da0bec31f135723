// CPU tests of lab 12's operators (operators.hpp: identities, wrapping, NaN and infinity, Chan's
// combine), their host references and bounds, and the loading of the optional operator entry.
// They need no GPU and always run: the functors are host callable, the same code the kernel runs.
#include <reduction/input.hpp>
#include <reduction/lab_module.hpp>
#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace reduction {
namespace {

using ops::MeanStddev;
using ops::Moments;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

const std::vector<int> kInts = {0, 1, -1, 42, -77777, INT_MAX, INT_MIN};
const std::vector<float> kFloats = {0.0f, -2.5f, 3.25f, 1e30f, -1e-30f, kInf, -kInf};

template <typename Op>
typename Op::Value fold(const std::vector<typename Op::Input>& values) {
  typename Op::Value value = Op::identity();
  for (auto x : values) value = Op::combine(value, Op::lift(x));
  return value;
}

bool same_bits(const Moments& a, const Moments& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <typename Op, typename T>
void expect_identity_is_neutral(const std::vector<T>& values, const char* name) {
  for (T x : values) {
    EXPECT_EQ(Op::combine(Op::identity(), x), x) << name << ": combine(identity, " << x << ")";
    EXPECT_EQ(Op::combine(x, Op::identity()), x) << name << ": combine(" << x << ", identity)";
  }
}

TEST(OperatorFunctors, CombiningWithTheIdentityChangesNothing) {
  expect_identity_is_neutral<ops::Sum<int>>(kInts, "Sum<int>");
  expect_identity_is_neutral<ops::Product<int>>(kInts, "Product<int>");
  expect_identity_is_neutral<ops::Min<int>>(kInts, "Min<int>");
  expect_identity_is_neutral<ops::Max<int>>(kInts, "Max<int>");
  expect_identity_is_neutral<ops::Sum<float>>(kFloats, "Sum<float>");
  expect_identity_is_neutral<ops::Product<float>>(kFloats, "Product<float>");
  expect_identity_is_neutral<ops::Min<float>>(kFloats, "Min<float>");
  expect_identity_is_neutral<ops::Max<float>>(kFloats, "Max<float>");
  EXPECT_EQ(ops::Min<int>::identity(), INT_MAX);
  EXPECT_EQ(ops::Max<int>::identity(), INT_MIN);
  EXPECT_EQ(ops::Min<float>::identity(), kInf);
  EXPECT_EQ(ops::Max<float>::identity(), -kInf);
  EXPECT_EQ(ops::Product<float>::identity(), 1.0f);
}

TEST(OperatorFunctors, IntSumAndProductWrapModulo2To32) {
  EXPECT_EQ(ops::Sum<int>::combine(INT_MAX, 1), INT_MIN);
  EXPECT_EQ(ops::Product<int>::combine(65536, 65536), 0);
  EXPECT_EQ(ops::Product<int>::combine(46341, 46341), static_cast<int>(46341u * 46341u));
  EXPECT_EQ(ops::Product<int>::combine(-1, INT_MIN), INT_MIN);
  const auto odd = odd_integers_input(100000, 3);
  EXPECT_EQ(fold<ops::Product<int>>(odd), exact_int_product(odd));
  EXPECT_NE(exact_int_product(odd) % 2, 0) << "a product of odd numbers is odd modulo 2^32";
}

TEST(OperatorFunctors, FloatMinAndMaxPropagateNanFromEitherSide) {
  for (float x : kFloats) {
    EXPECT_TRUE(std::isnan(ops::Min<float>::combine(kNan, x))) << x;
    EXPECT_TRUE(std::isnan(ops::Min<float>::combine(x, kNan))) << x;
    EXPECT_TRUE(std::isnan(ops::Max<float>::combine(kNan, x))) << x;
    EXPECT_TRUE(std::isnan(ops::Max<float>::combine(x, kNan))) << x;
  }
  std::vector<float> values = make_input<float>(Pattern::mixed_sign, 1000, 5);
  values[617] = kNan;
  EXPECT_TRUE(std::isnan(fold<ops::Min<float>>(values)));
  EXPECT_TRUE(std::isnan(fold<ops::Max<float>>(values)));
}

TEST(OperatorFunctors, InfinitiesAreOrdinaryValuesForMinAndMax) {
  EXPECT_EQ(ops::Min<float>::combine(-kInf, 3.0f), -kInf);
  EXPECT_EQ(ops::Min<float>::combine(kInf, 3.0f), 3.0f);
  EXPECT_EQ(ops::Max<float>::combine(3.0f, kInf), kInf);
  EXPECT_EQ(ops::Max<float>::combine(3.0f, -kInf), 3.0f);
  EXPECT_EQ(fold<ops::Min<float>>({kInf, kInf}), kInf) << "all +inf: the min is +inf, like the identity";
}

TEST(OperatorFunctors, NamesRoundTrip) {
  for (int op = 0; op < REDUCTION_OPERATOR_COUNT; ++op)
    EXPECT_EQ(ops::parse_operator(ops::operator_name(static_cast<ReductionOperator>(op))), op);
  EXPECT_THROW(ops::parse_operator("mean"), std::invalid_argument);
}

// The snippet in operators.hpp's header comment.
TEST(ChanCombine, TheDocumentedExample) {
  const std::vector<float> x = {8, 6, 7, 5, 3, 0, 9};
  for (const Moments& m : {pairwise_float_moments(x.data(), x.size()), sequential_float_moments(x.data(), x.size())}) {
    EXPECT_EQ(m.count, 7u);
    EXPECT_NEAR(m.mean, 38.0 / 7, 1e-6);
    EXPECT_NEAR(m.m2, 264.0 - 38.0 * 38.0 / 7, 1e-5);
    EXPECT_NEAR(ops::stddev_of(m), std::sqrt((264.0 - 38.0 * 38.0 / 7) / 7), 1e-6);
  }
}

TEST(ChanCombine, EmptyInputIsTheIdentityAndHasNoMeanOrStddev) {
  const Moments empty = MeanStddev::combine(MeanStddev::identity(), MeanStddev::identity());
  EXPECT_TRUE(same_bits(empty, MeanStddev::identity())) << "0 / 0 must not leak a NaN into the identity";
  EXPECT_TRUE(std::isnan(ops::mean_of(empty)));
  EXPECT_TRUE(std::isnan(ops::stddev_of(empty)));
  EXPECT_EQ(ops::stddev_of(MeanStddev::lift(4.0f)), 0.0) << "one value has no spread";
}

TEST(ChanCombine, CombiningWithTheIdentityIsExactOnBothSides) {
  const auto x = shifted_normal_input(1000, 9, 1e4, 3.0);
  for (std::size_t i = 1; i < x.size(); i += 97) {
    const Moments t = pairwise_float_moments(x.data(), i);
    EXPECT_TRUE(same_bits(MeanStddev::combine(MeanStddev::identity(), t), t)) << "n = " << i;
    EXPECT_TRUE(same_bits(MeanStddev::combine(t, MeanStddev::identity()), t)) << "n = " << i;
  }
}

TEST(ChanCombine, PairwiseIsWithinTheDeclaredBoundOfTheReference) {
  for (Pattern pattern : kAllPatterns) {
    for (std::size_t n : {1ul, 2ul, 33ul, 1000003ul}) {
      const auto x = make_input<float>(pattern, n, 11);
      const MomentsReference ref = reference_moments(x);
      const Moments m = pairwise_float_moments(x.data(), n);
      const std::size_t depth = static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(n)))) + 1;
      const auto mean_bound = mean_tolerance(depth, ref.max_abs);
      const auto stddev_bound = stddev_tolerance(depth, n, ref.max_abs, ref.stddev);
      EXPECT_EQ(m.count, n);
      EXPECT_LE(std::fabs(ops::mean_of(m) - ref.mean), mean_bound.bound) << to_string(pattern) << " n = " << n;
      EXPECT_LE(std::fabs(ops::stddev_of(m) - ref.stddev), stddev_bound.bound) << to_string(pattern) << " n = " << n;
    }
  }
}

TEST(ChanCombine, M2NeverComesOutNegative) {
  const auto x = shifted_normal_input(1 << 16, 4, 1e6, 1e-3);  // no spread left in float: all deltas tiny
  for (std::size_t n = 2; n < x.size(); n = n * 3 + 1) {
    EXPECT_GE(pairwise_float_moments(x.data(), n).m2, 0.0f) << n;
    EXPECT_GE(sequential_float_moments(x.data(), n).m2, 0.0f) << n;
  }
}

// What the README's table shows (reduction_variance_demo), at a smaller n.
TEST(ChanCombine, NaiveFormulaLosesEveryDigitWhereChanKeepsThem) {
  const std::size_t n = 1 << 20;
  const auto x = shifted_normal_input(n, default_seed(), 1e3, 1e-3);
  const MomentsReference ref = reference_moments(x);
  const double naive = naive_float_moments(x.data(), n).stddev;
  const double chan = ops::stddev_of(pairwise_float_moments(x.data(), n));
  const double naive_error = std::isnan(naive) ? INFINITY : std::fabs(naive - ref.stddev) / ref.stddev;
  const double chan_error = std::fabs(chan - ref.stddev) / ref.stddev;
  EXPECT_GE(naive_error, 0.5) << "naive " << naive << ", reference " << ref.stddev;
  EXPECT_LE(chan_error * 100, naive_error) << "Chan " << chan << ", reference " << ref.stddev;
}

TEST(ChanCombine, SequentialUpdatesDriftWithNAndThePairwiseTreeDoesNot) {
  const std::size_t n = 1 << 20;
  const auto x = shifted_normal_input(n, default_seed(), 0.0, 1.0);
  const MomentsReference ref = reference_moments(x);
  const double welford = std::fabs(ops::stddev_of(sequential_float_moments(x.data(), n)) - ref.stddev);
  const double chan = std::fabs(ops::stddev_of(pairwise_float_moments(x.data(), n)) - ref.stddev);
  EXPECT_GT(welford, 10 * chan) << "Welford's error " << welford << ", Chan's pairwise " << chan;
}

TEST(OperatorInputs, StayInTheirDocumentedRanges) {
  for (int v : odd_integers_input(10000, 2)) ASSERT_TRUE(v % 2 != 0 && v >= -99 && v <= 99) << v;
  for (float v : near_one_input(10000, 2)) ASSERT_TRUE(v >= 1.0f - 0x1p-10f && v < 1.0f + 0x1p-10f) << v;
  const auto x = shifted_normal_input(100000, 2, 50.0, 2.0);
  const MomentsReference ref = reference_moments(x);
  EXPECT_NEAR(ref.mean, 50.0, 5 * 2.0 / std::sqrt(100000.0));
  EXPECT_NEAR(ref.stddev, 2.0, 0.05);
  EXPECT_EQ(shifted_normal_input(100, 2, 50.0, 2.0), std::vector<float>(x.begin(), x.begin() + 100));
}

TEST(OperatorTolerances, ProductBoundIsTheWorstCaseRatioOfNMinusOneRoundings) {
  const double u = kUnitRoundoff;
  EXPECT_NEAR(product_tolerance(9).log_bound, 8 * std::log1p(u), 1e-15);
  EXPECT_LT(product_tolerance(1).log_bound, 1e-14);  // one element: no multiplication at all
  const ProductTolerance big = product_tolerance((std::size_t{1} << 24) + 7);
  EXPECT_NEAR(big.log_bound, 1.0, 1e-6);  // (2^24 + 6) u: the product within a factor e
  const double product = 1.08e-5;
  EXPECT_TRUE(big.accepts(product * 2.7, product));
  EXPECT_TRUE(big.accepts(product / 2.7, product));
  EXPECT_FALSE(big.accepts(product * 2.72, product));
  EXPECT_FALSE(big.accepts(0.0, product)) << "a wrong identity (0) gives 0: never within a ratio";
  EXPECT_FALSE(big.accepts(-product, product));
  EXPECT_FALSE(big.accepts(NAN, product));
  EXPECT_FALSE(big.accepts(INFINITY, product));
  EXPECT_TRUE(big.accepts(0.0, 0.0)) << "a reference that underflowed to 0 takes only 0";
  EXPECT_FALSE(big.accepts(1e-30, 0.0));
  const ProductTolerance small = product_tolerance(3);  // two roundings: 1 ulp each way at most
  EXPECT_TRUE(small.accepts(1.0 + 2 * u, 1.0));
  EXPECT_FALSE(small.accepts(1.0 + 3 * u, 1.0));
  EXPECT_NE(big.rule.find("ln(got / product)"), std::string::npos) << big.rule;
}

TEST(OperatorTolerances, MomentBoundsGrowWithDepthAndMagnitude) {
  EXPECT_LT(mean_tolerance(10, 1.0).bound, mean_tolerance(20, 1.0).bound);
  EXPECT_LT(mean_tolerance(10, 1.0).bound, mean_tolerance(10, 2.0).bound);
  EXPECT_LT(stddev_tolerance(10, 1024, 1.0, 0.3).bound, stddev_tolerance(10, 1024, 100.0, 0.3).bound);
  EXPECT_DOUBLE_EQ(stddev_tolerance(4, 1 << 16, 1.0, 0.0).bound, 15 * 4 * kUnitRoundoff * 4.0);
}

TEST(LabModules, OnlyALabThatExportsTheOperatorEntryHasOne) {
  const LabModule host_lab = LabModule::load(REDUCTION_LAB01_MODULE);
  EXPECT_FALSE(host_lab.has_operators());
  int out = 0;
  EXPECT_THROW(host_lab.reduce<int>(REDUCTION_OPERATOR_MAX, nullptr, 0, &out, nullptr, 0, nullptr), std::logic_error);
  const LabModule lab12 = LabModule::load(REDUCTION_LAB12_MODULE);
  EXPECT_TRUE(lab12.has_operators()) << REDUCTION_LAB12_MODULE;
  EXPECT_EQ(lab12.folder(), "12_any_operator");
}

}  // namespace
}  // namespace reduction
