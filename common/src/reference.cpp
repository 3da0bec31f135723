// Host references: compensated double sums, the exact wrapped int32 sum, Kahan and naive float
// loops, and the float tolerance rule.
#include <reduction/reference.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

namespace reduction {
namespace {

// Neumaier's variant of Kahan summation in double: error independent of n to first order.
struct CompensatedSum {
  double sum = 0.0, compensation = 0.0;
  void add(double x) {
    const double t = sum + x;
    compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + compensation; }
};

template <typename Body>
void parallel_chunks(std::size_t n, std::size_t workers, Body body) {
  const std::size_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w)
    threads.emplace_back([=] { body(w, w * chunk, std::min(n, (w + 1) * chunk)); });
  for (auto& t : threads) t.join();
}

std::size_t worker_count(std::size_t n) {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1 << 16) + 1);
}

}  // namespace

template <typename T>
ReferenceSum reference_sum(const std::vector<T>& values) {
  const std::size_t workers = worker_count(values.size());
  std::vector<CompensatedSum> sums(workers), abs_sums(workers);
  parallel_chunks(values.size(), workers, [&](std::size_t w, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      sums[w].add(static_cast<double>(values[i]));
      abs_sums[w].add(std::fabs(static_cast<double>(values[i])));
    }
  });
  CompensatedSum total, total_abs;
  for (std::size_t w = 0; w < workers; ++w) {
    total.add(sums[w].value());
    total_abs.add(abs_sums[w].value());
  }
  return {total.value(), total_abs.value()};
}

template ReferenceSum reference_sum<int>(const std::vector<int>&);
template ReferenceSum reference_sum<float>(const std::vector<float>&);

std::int32_t exact_int_sum(const std::vector<int>& values) {
  std::uint32_t sum = 0;  // unsigned: wraps by definition, like the hardware
  for (int v : values) sum += static_cast<std::uint32_t>(v);
  return static_cast<std::int32_t>(sum);
}

float kahan_sum(const float* values, std::size_t n) {
  float sum = 0.0f, compensation = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float y = values[i] - compensation;
    const float t = sum + y;
    compensation = (t - sum) - y;
    sum = t;
  }
  return sum;
}

float naive_float_sum(const float* values, std::size_t n) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += values[i];
  return sum;
}

FloatTolerance float_tolerance(std::size_t error_depth, double sum_abs) {
  FloatTolerance tolerance;
  std::ostringstream rule;
  if (error_depth <= kStrictDepthLimit) {
    const double hu = static_cast<double>(error_depth) * kUnitRoundoff;
    const double gamma = hu / (1.0 - hu);
    tolerance.bound = gamma * sum_abs;
    rule << "gamma_h * sum|x| with h = " << error_depth << " (gamma_h = " << gamma << ")";
  } else {
    tolerance.strict = false;
    tolerance.bound = 0x1p-10 * sum_abs;
    rule << "h = " << error_depth << " makes the worst-case bound too wide, so the looser check "
         << "2^-10 * sum|x| is used (see reference.hpp)";
  }
  tolerance.rule = rule.str();
  return tolerance;
}

double error_in_ulps_of_sum(double got, double expected, double sum_abs) {
  if (sum_abs == 0.0) return got == expected ? 0.0 : INFINITY;
  return std::fabs(got - expected) / (kUnitRoundoff * sum_abs);
}

}  // namespace reduction
