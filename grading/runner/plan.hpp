// The grading plans, shared by the trusted checker (which writes and judges them) and the
// untrusted programs that load a student module (which only follow them):
//  - a test plan: the cases one lab is tested on, each an input described by (pattern, n, seed),
//    so the checker can regenerate every input and never needs the runner's word for it;
//  - a timing plan: what one timing run measures, and the input buffers and canaries of every
//    timed call, so the checker can recompute the sum each timed call had to return.
// Both are plain text, one record a line, written by the trusted side with a seed drawn for the
// run. See docs/grading-security.md for why the split exists.
#pragma once

#include <reduction/input.hpp>
#include <reduction/operator_reference.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reduction::grading {

enum class Type { int32, float32 };
std::string to_string(Type type);
Type parse_type(const std::string& text);

// One input: n values of `pattern` from `seed`.
struct InputSpec {
  Type type = Type::int32;
  std::size_t n = 0;
  Pattern pattern = Pattern::mixed_sign;
  std::uint64_t seed = 0;
};

// One test case.
//  sum:   `calls` calls on the same input (each with the sentinel in the output first); d_in is
//         `offset` elements past a 16-byte aligned allocation.
//  twice: a call on `input`, then a call on `second` with the same output and scratch, the output
//         still holding the first result (a stale accumulator shows).
//  chain: `calls` calls back to back on one stream with no host synchronization between them,
//         alternating `input` and `second`, each into its own output (lab 11: state a kernel keeps
//         for the next call must be ready when the kernel ends, not when the host looks).
//  operator: one call of the operator entry (lab 12; operator_abi.h) with `op` on `data` (the
//         input's type, n and seed; its pattern is not used), d_in `offset` elements past an
//         aligned allocation, and, for float min and max, `special` written at element
//         `special_at` first. Moments (float only) are observed as the struct's three fields.
enum class CaseKind { sum, twice, chain, operator_ };
std::string to_string(CaseKind kind);
CaseKind parse_case_kind(const std::string& text);  // throws std::invalid_argument
// A special value written into an operator case's input: NaN, +inf or -inf.
enum class Special { none, nan, plus_inf, minus_inf };
std::string to_string(Special special);
struct TestCase {
  std::string id;  // "c017"
  CaseKind kind = CaseKind::sum;
  InputSpec input;
  std::optional<InputSpec> second;
  int calls = 1;
  std::size_t offset = 0;
  bool naive_loop = false;  // lab 01: the float result must be the plain float loop's, bit for bit
  // operator cases only:
  ReductionOperator op = REDUCTION_OPERATOR_SUM;
  OperatorData data = OperatorData::mixed_sign;
  Special special = Special::none;
  std::size_t special_at = 0;
};

// The elements a case's call limit counts (RunnerOptions::seconds_for): a chain's calls run back to
// back under one limit, so all of its inputs; any other case, one call's input.
std::size_t call_limit_elements(const TestCase& c);

// The input of an operator case, the same on both sides: data, then the special value.
template <typename T>
std::vector<T> operator_case_input(const TestCase& c);

struct TestPlan {
  std::string lab;        // "05_sequential"
  bool on_device = true;  // from the manifest, never from the module
  std::uint64_t seed = 0;
  std::vector<TestCase> cases;
};

// The cases for a lab: every size x pattern x type, the contract cases, and the lab's own
// (repeat calls for a lab whose reference is float-deterministic, unaligned d_in for labs 10 and
// 11, calls back to back for lab 11, the float loop for lab 01, every operator for lab 12 on the
// device: n = 0, one block, many blocks, unaligned, NaN and infinities for float min and max).
// `large` adds the n > 2^31 cases.
TestPlan make_test_plan(const std::string& lab, bool on_device, std::uint64_t seed, bool large,
                        bool float_deterministic);
// A plan of the given cases only ("int mixed_sign 2049" each), for sanitizer runs.
TestPlan make_small_plan(const std::string& lab, bool on_device, std::uint64_t seed,
                         const std::vector<std::string>& cases);

std::string write_test_plan(const TestPlan& plan);
TestPlan read_test_plan(const std::string& text);  // throws std::invalid_argument

// Timing. One item is one implementation at one (type, n): a lab module, or a baseline.
struct TimingItem {
  std::string id;          // "t03"
  std::string lab;         // "05_sequential", or "roof" / "cub" for a baseline
  std::string module;      // path of the lab module; empty for a baseline
  bool on_device = true;
  Type type = Type::float32;
  std::size_t n = 0;
};

struct TimingPlan {
  std::uint64_t seed = 0;
  int buffers = 3;   // inputs rotated through, each with another sum
  int canaries = 4;  // elements rewritten before every call, at random places
  int warmup = 3;    // calls before the samples (verified too, not timed)
  int samples = 25;   // timed calls at most
  // The item's time budget: once `min_samples` calls are timed and the timed calls together took
  // `budget_ms` on the timekeeper's clock (a paired run: both sides' calls), the timekeeper ends the
  // item (timing_item_over). 0: no budget, every item gets `samples`. A slow item (lab 02's float
  // atomics: 30 ms a call at 2^24 on an H100) then costs min_samples calls, not samples.
  int min_samples = 0;   // 0: samples
  double budget_ms = 0;
  double call_timeout_s = 20;
  std::vector<TimingItem> items;
};

// The fewest timed calls of an item (min_samples, at most samples).
int timing_min_samples(const TimingPlan& plan);
// Whether the item ends after call `call` (warm-up calls first), its timed calls having taken
// `timed_us` on the timekeeper's clock so far: every call made, or the budget spent.
bool timing_item_over(const TimingPlan& plan, int call, double timed_us);

std::string write_timing_plan(const TimingPlan& plan);
TimingPlan read_timing_plan(const std::string& text);

// The input buffer b of an item: the same data for every implementation timed at (type, n).
InputSpec timing_buffer(const TimingPlan& plan, Type type, std::size_t n, int buffer);
// Call k of an item (warm-up calls first) uses this buffer, where the worker keeps its own inputs
// (a host item; a device item where memory cannot be shared with the timekeeper)...
int timing_buffer_of_call(const TimingPlan& plan, int call);
// ...after these elements were rewritten (in this order): index and value, from the nonce of the
// call's go (clock.hpp), which the timekeeper draws when the call may start.
struct Canary {
  std::size_t index;
  std::int64_t int_value;  // for int
  float float_value;       // for float
};
std::vector<Canary> timing_canaries_of_nonce(const TimingPlan& plan, Type type, std::size_t n, std::uint64_t nonce);

// The digest the runner reports for the input after a case (digest.hpp).
std::uint64_t digest_bytes(const void* data, std::size_t bytes);

}  // namespace reduction::grading
