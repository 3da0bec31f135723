// The operators of lab 12 as small functors, host and device callable, and the macro that exports
// a lab's operator entry (operator_abi.h). One definition for everyone: the lab's kernel, the host
// references of the tests and the CPU tests of the combine itself all use these.
//
// An operator Op is a monoid over Op::Value with a way in from one input element:
//   Op::identity()       the value of an empty input: combine(identity(), v) == v == combine(v, identity())
//   Op::lift(x)          the value of the single element x (Op::Input)
//   Op::combine(a, b)    the value of the concatenation of a's elements and b's, in that order
// combine is associative and commutative (exactly for int, min and max; up to rounding for float
// sum, product and moments), so a reduction may group and order the elements any way it likes: a
// tree needs the first, a grid-stride loop (lab 10), which hands a thread elements t, t + T, ...,
// needs the second too.
//
//   // d_in <-- [8, 6, 7, 5, 3, 0, 9] (float)
//   reduce<reduction::ops::Max<float>>(d_in, 7, d_out, ...);          // *d_out <-- 9
//   reduce<reduction::ops::MeanStddev>(d_in, 7, d_moments, ...);      // *d_moments <-- {7, 5.428571, 57.71429}
#pragma once

#include <reduction/lab.hpp>
#include <reduction/operator_abi.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#ifdef __CUDACC__
#define REDUCTION_HOST_DEVICE __host__ __device__
#else
#define REDUCTION_HOST_DEVICE
#endif

namespace reduction::ops {

using Moments = ReductionMoments;

template <typename T>
struct Sum {
  using Input = T;
  using Value = T;
  static REDUCTION_HOST_DEVICE Value identity() { return T{0}; }
  static REDUCTION_HOST_DEVICE Value lift(T x) { return x; }
  static REDUCTION_HOST_DEVICE Value combine(T a, T b) {
    if constexpr (std::is_integral_v<T>)  // wraps modulo 2^32: unsigned, where signed overflow is undefined
      return static_cast<T>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
    else
      return a + b;
  }
};

template <typename T>
struct Product {
  using Input = T;
  using Value = T;
  static REDUCTION_HOST_DEVICE Value identity() { return T{1}; }
  static REDUCTION_HOST_DEVICE Value lift(T x) { return x; }
  static REDUCTION_HOST_DEVICE Value combine(T a, T b) {
    if constexpr (std::is_integral_v<T>)  // the low 32 bits of the product: order-independent, like the sum
      return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
    else
      return a * b;
  }
};

// Float min and max propagate NaN (a NaN anywhere gives NaN): a reduction that silently skipped
// NaNs, as fminf alone does, would hide bad data. The NaN returned is always the same one, so the
// result's bits do not depend on which NaN the tree met first.
template <typename T>
struct Min {
  using Input = T;
  using Value = T;
  static REDUCTION_HOST_DEVICE Value identity() {
    if constexpr (std::is_integral_v<T>) return INT_MAX;
    else return INFINITY;
  }
  static REDUCTION_HOST_DEVICE Value lift(T x) { return x; }
  static REDUCTION_HOST_DEVICE Value combine(T a, T b) {
    if constexpr (std::is_integral_v<T>) return b < a ? b : a;
    else return (a != a || b != b) ? NAN : fminf(a, b);
  }
};

template <typename T>
struct Max {
  using Input = T;
  using Value = T;
  static REDUCTION_HOST_DEVICE Value identity() {
    if constexpr (std::is_integral_v<T>) return INT_MIN;
    else return -INFINITY;
  }
  static REDUCTION_HOST_DEVICE Value lift(T x) { return x; }
  static REDUCTION_HOST_DEVICE Value combine(T a, T b) {
    if constexpr (std::is_integral_v<T>) return b > a ? b : a;
    else return (a != a || b != b) ? NAN : fmaxf(a, b);
  }
};

// Mean and M2 (the sum of squared deviations) in one pass, in float, with Chan, Golub and
// LeVeque's parallel formula ("Updating formulae and a pairwise algorithm for computing sample
// variances", 1979): for two groups a and b, with n = n_a + n_b and delta = mean_b - mean_a,
//   mean = mean_a + delta * n_b / n
//   M2   = M2_a + M2_b + delta^2 * n_a * n_b / n
// Every term is a difference of means or a sum of non-negative terms, never the difference of two
// huge sums (sum of squares minus n * mean^2) that loses every digit when the mean is large
// against the spread (labs/12_any_operator/README.md shows it). M2 can never come out negative.
// The count is exact (64-bit); n == 0 (two identities) gives the identity, not 0 / 0.
//
// On the GPU the weight n_b / n is __fdividef (a reciprocal and a multiply: within 2 ulp), not
// the IEEE division: that one has a slow path for extreme operands, a branch in every combine,
// and the shuffles of a reduction tree that follow it must first wait for the warp to converge.
// Measured on an H100 (2026-11-27), that made lab 12's moments 1.15 x lab 10's sum at 2^24 and
// 1.6 x at 2^16; with __fdividef, 1.05 x and 1.12 x. n == 0 divides 0 by 1: no branch either.
// The host keeps the IEEE division; the tests' bounds (10 h u max|x|) cover both.
struct MeanStddev {
  using Input = float;
  using Value = Moments;
  static REDUCTION_HOST_DEVICE Value identity() { return {0ull, 0.0f, 0.0f}; }
  static REDUCTION_HOST_DEVICE Value lift(float x) { return {1ull, x, 0.0f}; }
  static REDUCTION_HOST_DEVICE Value combine(const Value& a, const Value& b) {
    const unsigned long long n = a.count + b.count;
#ifdef __CUDA_ARCH__
    const float w = __fdividef(static_cast<float>(b.count), fmaxf(static_cast<float>(n), 1.0f));  // n_b / n
#else
    const float w = n == 0 ? 0.0f : static_cast<float>(b.count) / static_cast<float>(n);  // n_b / n
#endif
    const float delta = b.mean - a.mean;
    const float delta_w = delta * w;  // delta * n_b / n
    return {n, a.mean + delta_w, (a.m2 + b.m2) + delta_w * (delta * static_cast<float>(a.count))};
  }
};

// The mean and the population standard deviation sqrt(M2 / n) of a MOMENTS result; NaN for an
// empty input (no mean, no spread: not 0, which would be a claim about data that is not there).
inline double mean_of(const Moments& m) { return m.count == 0 ? NAN : static_cast<double>(m.mean); }
inline double stddev_of(const Moments& m) {
  return m.count == 0 ? NAN : std::sqrt(static_cast<double>(m.m2) / static_cast<double>(m.count));
}

// The operators by name, in ReductionOperator order (the benchmark's and the tests' spelling).
inline constexpr const char* kOperatorNames[REDUCTION_OPERATOR_COUNT] = {"sum", "product", "min", "max", "moments"};

inline const char* operator_name(ReductionOperator op) {
  if (op < 0 || op >= REDUCTION_OPERATOR_COUNT) throw std::invalid_argument("no such operator");
  return kOperatorNames[op];
}
// "sum", "product", "min", "max" or "moments"; throws std::invalid_argument for anything else.
inline ReductionOperator parse_operator(const std::string& text) {
  for (int op = 0; op < REDUCTION_OPERATOR_COUNT; ++op)
    if (text == kOperatorNames[op]) return static_cast<ReductionOperator>(op);
  throw std::invalid_argument("unknown operator '" + text + "' (sum, product, min, max or moments)");
}

}  // namespace reduction::ops

namespace reduction::detail {

// The signature of a lab's generic reduction, for one operator.
template <typename Op>
using OperatorFn = void (*)(const typename Op::Input*, std::size_t, typename Op::Value*, void*, std::size_t,
                            cudaStream_t);

template <typename T, OperatorFn<ops::Sum<T>> SumFn, OperatorFn<ops::Product<T>> ProductFn,
          OperatorFn<ops::Min<T>> MinFn, OperatorFn<ops::Max<T>> MaxFn>
ReductionLabStatus call_operator_lab(int op, const T* in, size_t num_items, T* out, void* temp_storage,
                                     size_t temp_storage_bytes, cudaStream_t stream, char* message,
                                     size_t message_size) noexcept {
  return guarded(
      [&] {
        OperatorFn<ops::Sum<T>> fn = nullptr;
        switch (op) {
          case REDUCTION_OPERATOR_SUM: fn = SumFn; break;
          case REDUCTION_OPERATOR_PRODUCT: fn = ProductFn; break;
          case REDUCTION_OPERATOR_MIN: fn = MinFn; break;
          case REDUCTION_OPERATOR_MAX: fn = MaxFn; break;
          default:
            throw std::invalid_argument("operator " + std::to_string(op) +
                                        " is not one this entry reduces (sum, product, min, max)");
        }
        fn(in, num_items, out, temp_storage, temp_storage_bytes, stream);
      },
      message, message_size);
}

template <OperatorFn<ops::MeanStddev> MomentsFn>
ReductionLabStatus call_moments_lab(const float* in, size_t num_items, ReductionMoments* out, void* temp_storage,
                                    size_t temp_storage_bytes, cudaStream_t stream, char* message,
                                    size_t message_size) noexcept {
  return guarded([&] { MomentsFn(in, num_items, out, temp_storage, temp_storage_bytes, stream); }, message,
                 message_size);
}

}  // namespace reduction::detail

// Exports the operator entry of a lab whose generic reduction is
//   template <typename Op> void reduce(const typename Op::Input* d_in, std::size_t num_items,
//       typename Op::Value* d_out, void* d_temp_storage, std::size_t temp_storage_bytes, cudaStream_t stream);
// instantiated here for every operator: REDUCTION_DEFINE_OPERATOR_LAB(reduce). The lab still
// needs its REDUCTION_DEFINE_LAB line for the sum entry.
#define REDUCTION_DEFINE_OPERATOR_LAB(reduce)                                                        \
  REDUCTION_LAB_EXPORT const ReductionOperatorLab* reduction_operator_lab_v1(void) {                 \
    using namespace ::reduction::ops;                                                                \
    static const ReductionOperatorLab lab = {                                                        \
        REDUCTION_OPERATOR_ABI_VERSION,                                                              \
        &::reduction::detail::call_operator_lab<int, &reduce<Sum<int>>, &reduce<Product<int>>,       \
                                                &reduce<Min<int>>, &reduce<Max<int>>>,               \
        &::reduction::detail::call_operator_lab<float, &reduce<Sum<float>>, &reduce<Product<float>>, \
                                                &reduce<Min<float>>, &reduce<Max<float>>>,           \
        &::reduction::detail::call_moments_lab<&reduce<MeanStddev>>};                                \
    return &lab;                                                                                     \
  }
