// The operator launches of reduction_bench --operators (bench_operators.hpp).
#include "bench_operators.hpp"
#include "bench_report.hpp"

#include <reduction/check.hpp>
#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace reduction::bench {
namespace {

template <typename Op>
typename Op::Value host_fold(const std::vector<typename Op::Input>& values) {
  typename Op::Value value = Op::identity();
  for (auto x : values) value = Op::combine(value, Op::lift(x));
  return value;
}

template <typename T>
std::string wrong(ReductionOperator op, T got, double expected, double allowed = 0) {
  std::ostringstream text;
  text << "wrong " << ops::operator_name(op) << ": got " << got << ", expected " << expected;
  if (allowed > 0) text << " +- " << allowed;
  text << " " << run_tests_hint("12");
  return text.str();
}

// What is wrong with `got`, the result of `op` over `host`; "" when it is right.
template <typename T>
std::string judge(const LabModule& module, ReductionOperator op, const std::vector<T>& host, T got) {
  if constexpr (std::is_same_v<T, float>) {
    if (op == REDUCTION_OPERATOR_SUM) {
      const ReferenceSum ref = reference_sum(host);
      const double bound = float_tolerance(module.float_error_depth(host.size()), ref.sum_abs).bound;
      return std::fabs(got - ref.sum) <= bound ? "" : wrong(op, got, ref.sum, bound);
    }
    if (op == REDUCTION_OPERATOR_PRODUCT) {
      const double ref = reference_product(host);
      const ProductTolerance tolerance = product_tolerance(host.size());
      return tolerance.accepts(got, ref) ? "" : wrong(op, got, ref) + " (" + tolerance.rule + ")";
    }
  }
  T expected{};
  switch (op) {
    case REDUCTION_OPERATOR_SUM: expected = host_fold<ops::Sum<T>>(host); break;
    case REDUCTION_OPERATOR_PRODUCT: expected = host_fold<ops::Product<T>>(host); break;
    case REDUCTION_OPERATOR_MIN: expected = host_fold<ops::Min<T>>(host); break;
    case REDUCTION_OPERATOR_MAX: expected = host_fold<ops::Max<T>>(host); break;
    default: throw std::invalid_argument("not an operator of the int and float entries");
  }
  return std::memcmp(&got, &expected, sizeof got) == 0 ? "" : wrong(op, got, expected);
}

std::string judge_moments(const LabModule& module, const std::vector<float>& host, const ReductionMoments& got) {
  const MomentsReference ref = reference_moments(host);
  const std::size_t depth = module.float_error_depth(host.size());
  const double mean_bound = mean_tolerance(depth, ref.max_abs).bound;
  const double stddev_bound = stddev_tolerance(depth, host.size(), ref.max_abs, ref.stddev).bound;
  if (got.count != host.size()) return wrong(REDUCTION_OPERATOR_MOMENTS, got.count, static_cast<double>(host.size()));
  if (!(std::fabs(ops::mean_of(got) - ref.mean) <= mean_bound))
    return wrong(REDUCTION_OPERATOR_MOMENTS, got.mean, ref.mean, mean_bound);
  if (!(std::fabs(ops::stddev_of(got) - ref.stddev) <= stddev_bound))
    return wrong(REDUCTION_OPERATOR_MOMENTS, ops::stddev_of(got), ref.stddev, stddev_bound);
  return "";
}

// One call on its own stream, to completion, and the value it wrote.
template <typename Out, typename Call>
std::pair<LabCallResult, Out> call_once(const Call& call, Out* d_out) {
  Stream stream;
  const LabCallResult result = call(stream.get());
  stream.synchronize();
  Out got{};
  REDUCTION_CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  return {result, got};
}

}  // namespace

std::vector<ReductionOperator> parse_operators(const std::string& text) {
  std::vector<ReductionOperator> result;
  std::stringstream in(text == "all" ? "sum,product,min,max,moments" : text);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) result.push_back(ops::parse_operator(name));
  if (result.empty()) throw std::invalid_argument("no operators in '" + text + "'");
  return result;
}

template <typename T>
std::vector<OperatorLaunch> operator_launches(const LabModule& module, const std::vector<ReductionOperator>& operators,
                                              const T* d_in, const std::vector<T>& host, ReductionMoments* d_outs,
                                              void* d_temp, std::size_t temp_bytes) {
  std::vector<OperatorLaunch> launches;
  const std::size_t n = host.size();
  for (std::size_t k = 0; k < operators.size(); ++k) {
    const ReductionOperator op = operators[k];
    ReductionMoments* slot = d_outs + k;
    if (op == REDUCTION_OPERATOR_MOMENTS) {
      if constexpr (std::is_same_v<T, float>) {
        const auto call = [&module, d_in, n, slot, d_temp, temp_bytes](cudaStream_t s) {
          return module.moments(d_in, n, slot, d_temp, temp_bytes, s);
        };
        launches.push_back({op, [call](cudaStream_t s) {
                              if (const auto r = call(s); !r.ok()) throw std::runtime_error(r.message);
                            },
                            [call, slot, &module, &host] {
                              const auto [result, got] = call_once(call, slot);
                              return result.ok() ? judge_moments(module, host, got) : result.message;
                            }});
      }
      continue;
    }
    T* out = reinterpret_cast<T*>(slot);
    const auto call = [&module, op, d_in, n, out, d_temp, temp_bytes](cudaStream_t s) {
      return module.reduce<T>(op, d_in, n, out, d_temp, temp_bytes, s);
    };
    launches.push_back({op, [call](cudaStream_t s) {
                          if (const auto r = call(s); !r.ok()) throw std::runtime_error(r.message);
                        },
                        [call, out, op, &module, &host] {
                          const auto [result, got] = call_once(call, out);
                          return result.ok() ? judge(module, op, host, got) : result.message;
                        }});
  }
  return launches;
}

template std::vector<OperatorLaunch> operator_launches<int>(const LabModule&, const std::vector<ReductionOperator>&,
                                                            const int*, const std::vector<int>&, ReductionMoments*,
                                                            void*, std::size_t);
template std::vector<OperatorLaunch> operator_launches<float>(const LabModule&, const std::vector<ReductionOperator>&,
                                                              const float*, const std::vector<float>&,
                                                              ReductionMoments*, void*, std::size_t);

}  // namespace reduction::bench
