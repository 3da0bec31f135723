// reduction_bench --operators: the operators of a lab that exports the operator entry (lab 12),
// each ready to be timed next to lab 10's reference sum and checked once before it is.
#pragma once

#include <reduction/lab_module.hpp>
#include <reduction/timing.hpp>

#include <functional>
#include <string>
#include <vector>

namespace reduction::bench {

// "sum,product,min,max,moments" (any of them, any order) or "all".
std::vector<ReductionOperator> parse_operators(const std::string& text);

// One operator of one module: `launch` enqueues a call on the stream it is given (what the timer
// times); `check` makes one call on its own, waits for it and returns what is wrong with the
// result ("" when it is right: exact for int, within operator_reference.hpp's bounds for float).
struct OperatorLaunch {
  ReductionOperator op = REDUCTION_OPERATOR_SUM;
  Launch launch;
  std::function<std::string()> check;
};

// The launches of `ops` for `module` on the device input d_in (a copy of `host`); each writes
// its own 16-byte slot of d_outs (one per operator, in the order of `ops`). MOMENTS is left out
// for int (it is a float operator).
template <typename T>
std::vector<OperatorLaunch> operator_launches(const LabModule& module, const std::vector<ReductionOperator>& ops,
                                              const T* d_in, const std::vector<T>& host, ReductionMoments* d_outs,
                                              void* d_temp, std::size_t temp_bytes);

}  // namespace reduction::bench
