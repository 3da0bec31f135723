// The trusted verdict on one lab's test run (see check_tests.hpp).
#include "check_tests.hpp"

#include "wire.hpp"

#include "../checking/diagnosis.hpp"
#include "../checking/lab_runner.hpp"
#include "../checking/scratch_guard.hpp"

#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace reduction::grading {
namespace {

constexpr std::size_t kMessageChars = 300;

struct Failure {
  std::string case_id, what, expected, got, hint;
};

std::string clip(const std::string& text) {
  return text.size() <= kMessageChars ? text : text.substr(0, kMessageChars) + "...";
}

std::string hex64(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

template <typename T>
T from_bits(std::uint32_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

bool right_value(Type type, const Expectation& e, std::uint32_t bits, const LabModule& reference, std::size_t n,
                 bool naive_loop) {
  if (type == Type::int32) return static_cast<std::int32_t>(bits) == e.int_sum;
  if (naive_loop) return bits == e.naive_bits;
  const double got = from_bits<float>(bits);
  return std::fabs(got - e.sum) <= float_tolerance(reference.float_error_depth(n), e.sum_abs).bound;
}

// The failure of a wrong value, with a hint (the only place a checker regenerates an input).
Failure explain(const std::string& lab, const InputSpec& spec, const Expectation& e, std::uint32_t bits,
                const LabModule& reference, std::optional<std::uint32_t> previous, bool naive_loop, bool detailed) {
  Failure f{"", describe(lab, spec), "", "", ""};
  if (!detailed) return f;  // only the first failure is shown: no need to regenerate the input
  std::ostringstream expected, got;
  expected.precision(10);
  got.precision(10);
  if (spec.type == Type::int32) {
    const auto input = make_input<int>(spec.pattern, spec.n, spec.seed);
    expected << e.int_sum;
    got << static_cast<std::int32_t>(bits);
    f.hint = testing::diagnose_int_sum(input, static_cast<std::int32_t>(bits), e.int_sum,
                                       previous ? std::optional<std::int32_t>(static_cast<std::int32_t>(*previous))
                                                : std::nullopt);
  } else if (naive_loop) {
    expected << from_bits<float>(e.naive_bits) << " (the plain float loop, bit for bit)";
    got << from_bits<float>(bits);
    f.hint = "host_sum<float> must be the plain loop accumulating in float, in index order "
             "(a double accumulator, or another order?)";
  } else {
    const FloatTolerance tolerance = float_tolerance(reference.float_error_depth(spec.n), e.sum_abs);
    expected << e.sum << " within " << tolerance.bound << " (" << tolerance.rule << ")";
    got << from_bits<float>(bits);
    f.hint = testing::diagnose_float_sum(from_bits<float>(bits), e.sum, tolerance.bound,
                                         previous ? std::optional<float>(from_bits<float>(*previous)) : std::nullopt);
  }
  f.expected = expected.str();
  f.got = got.str();
  return f;
}

// An operator case (lab 12): the input regenerated, the value judged by operator_reference.hpp's
// judge_operator / judge_moments, the one judgment the CTest suite (lab12.cpp) uses too, with the
// depth of the trusted reference module.
template <typename T>
std::optional<Failure> judge_operator_case(const TestPlan& plan, const TestCase& c, const LabModule& reference,
                                           const WireLine& line) {
  const std::string what = describe(plan.lab, c);
  if (line.get("status") == "no_operator_entry")
    return Failure{c.id, what, "a result of the operator entry (" REDUCTION_OPERATOR_ENTRY_SYMBOL ")",
                   "no operator entry in the module",
                   "lab 12 must export its operator entry: keep the REDUCTION_DEFINE_OPERATOR_LAB(reduce) line"};
  const bool moments = c.op == REDUCTION_OPERATOR_MOMENTS;
  const std::size_t want = moments ? 3 : 1;  // moments: count, mean, M2
  if (line.values.size() != want)
    return Failure{c.id, what, std::to_string(want) + " values", std::to_string(line.values.size()),
                   "the runner reported another number of values"};
  std::uint32_t bits[3] = {0, 0, 0};
  std::uint64_t count = 0;
  for (std::size_t k = 0; k < want; ++k) {
    const bool ok = moments && k == 0 ? parse_bits_hex64(line.values[k], count) : parse_bits_hex(line.values[k], bits[k]);
    if (!ok) return Failure{c.id, what, "", "", "malformed value"};
  }
  const auto input = operator_case_input<T>(c);
  const std::size_t depth = std::is_same_v<T, float> ? reference.float_error_depth(c.input.n) : 0;
  OperatorVerdict verdict;
  if constexpr (std::is_same_v<T, float>) {
    if (moments) verdict = judge_moments(input, {count, from_bits<float>(bits[1]), from_bits<float>(bits[2])}, depth);
  }
  if (!moments) {
    const T got = from_bits<T>(bits[0]);
    verdict = judge_operator<T>(c.op, input, got, depth);
    const T before = testing::sentinel<T>();
    if (!verdict.right && std::memcmp(&got, &before, sizeof got) == 0)
      verdict.hint = "the output still holds the sentinel written before the call: *d_out was never written";
  }
  if (!verdict.right) return Failure{c.id, what, verdict.expected, verdict.got, verdict.hint};
  if (line.get("digest") != hex64(digest_bytes(input.data(), input.size() * sizeof(T))))
    return Failure{c.id, what, "d_in unchanged", "d_in modified",
                   "the input is read-only: reduce in shared memory or in the scratch space instead"};
  return std::nullopt;
}

// A case whose call wrote outside its scratch (the runner's guards, scratch_guard.hpp) is wrong
// whatever it returned. Its report is believed only as numbers, and worded here.
Failure scratch_overrun(const TestPlan& plan, const TestCase& c, const WireLine& line) {
  const auto damage = testing::parse_scratch_damage(line.fields);
  return Failure{c.id, describe(plan.lab, c), "no write outside [d_temp_storage, d_temp_storage + temp_storage_bytes)",
                 damage ? testing::describe_scratch_damage(*damage)
                        : "a write outside its scratch (the runner's account of it did not parse)",
                 testing::kScratchOverrunHint};
}

// A twice case's two values: the first call on its input, the second on its second input.
std::optional<Failure> judge_twice(const TestPlan& plan, const TestCase& c, const Expectation& e,
                                   const LabModule& reference, const Expectations& known,
                                   const std::vector<std::uint32_t>& bits, bool detailed) {
  const Type type = c.input.type;
  if (!right_value(type, e, bits[0], reference, c.input.n, false))
    return explain(plan.lab, c.input, e, bits[0], reference, std::nullopt, false, detailed);
  const Expectation& e2 = known.at(input_key(*c.second));
  if (right_value(type, e2, bits[1], reference, c.second->n, false)) return std::nullopt;
  Failure f = explain(plan.lab, *c.second, e2, bits[1], reference, bits[0], false, detailed);
  f.what += c.second->n == c.input.n && c.second->seed == c.input.seed
                ? " (the second call on the same input)"
                : " (called right after a call on n = " + std::to_string(c.input.n) + ")";
  return f;
}

// A chain case's values: calls alternating between its two inputs, back to back on one stream.
std::optional<Failure> judge_chain(const TestPlan& plan, const TestCase& c, const LabModule& reference,
                                   const Expectations& known, const std::vector<std::uint32_t>& bits, bool detailed) {
  for (std::size_t k = 0; k < bits.size(); ++k) {
    const InputSpec& spec = k % 2 == 0 ? c.input : *c.second;
    const Expectation& ek = known.at(input_key(spec));
    if (right_value(c.input.type, ek, bits[k], reference, spec.n, false)) continue;
    Failure f = explain(plan.lab, spec, ek, bits[k], reference,
                        k ? std::optional<std::uint32_t>(bits[k - 1]) : std::nullopt, false, detailed);
    f.what += ", call " + std::to_string(k + 1) + " of " + std::to_string(bits.size()) +
              " back to back on one stream, no host synchronization between them";
    if (k > 0)
      f.hint = "the first call was right and a later one was not: state the kernel keeps for the next call "
               "(a ticket counter) is not ready when the kernel ends (reset from the host, or not reset). " +
               f.hint;
    return f;
  }
  return std::nullopt;
}

std::optional<Failure> judge_case(const TestPlan& plan, const TestCase& c, const LabModule& reference,
                                  const Expectations& known, const WireLine& line, bool detailed) {
  if (line.get("status") == "scratch_overrun") return scratch_overrun(plan, c, line);
  if (c.kind == CaseKind::operator_)
    return c.input.type == Type::int32 ? judge_operator_case<int>(plan, c, reference, line)
                                       : judge_operator_case<float>(plan, c, reference, line);
  const Expectation& e = known.at(input_key(c.input));
  std::vector<std::uint32_t> bits;
  for (const auto& text : line.values) {
    std::uint32_t b;
    if (!parse_bits_hex(text, b)) return Failure{c.id, describe(plan.lab, c.input), "", "", "malformed value"};
    bits.push_back(b);
  }
  const std::size_t want = c.kind == CaseKind::twice ? 2 : static_cast<std::size_t>(c.calls);  // sum, chain: calls
  if (bits.size() != want)
    return Failure{c.id, describe(plan.lab, c.input), std::to_string(want) + " values", std::to_string(bits.size()),
                   "the runner reported another number of calls"};
  const Type type = c.input.type;
  if (c.kind == CaseKind::twice) return judge_twice(plan, c, e, reference, known, bits, detailed);
  if (c.kind == CaseKind::chain) return judge_chain(plan, c, reference, known, bits, detailed);
  for (std::size_t k = 0; k < bits.size(); ++k) {
    if (!right_value(type, e, bits[k], reference, c.input.n, c.naive_loop)) {
      Failure f = explain(plan.lab, c.input, e, bits[k], reference, std::nullopt, c.naive_loop, detailed);
      if (c.offset) f.what += ", d_in = a 16-byte aligned buffer + " + std::to_string(c.offset) + " element(s)";
      if (bits.size() > 1) f.what += ", call " + std::to_string(k + 1);
      return f;
    }
    if (bits[k] != bits[0])
      return Failure{c.id, describe(plan.lab, c.input) + ", call " + std::to_string(k + 1), bits_hex(bits[0]) + " (call 1)",
                     bits_hex(bits[k]),
                     "the same n on the same GPU must add the same numbers in the same order: an atomic, a grid "
                     "that depends on anything but n and the device, or a partial read before it was written"};
  }
  if (line.get("digest") != hex64(e.digest))
    return Failure{c.id, describe(plan.lab, c.input), "d_in unchanged", "d_in modified",
                   "the input is read-only: reduce in shared memory or in the scratch space instead"};
  return std::nullopt;
}

// What a run's lines say: the cases' counts, the first failure, and the first of each message.
struct Tally {
  std::map<std::string, int> seen;  // "observed" lines by case
  int correct = 0, wrong = 0, not_implemented = 0, malformed = 0;
  std::string last_started, refused, load_error, error_case, error_message, not_implemented_message;
  std::optional<Failure> first;
};

// A case's first "observed" line: the run's error, not implemented, or a value judged (judge_case).
void tally_observed(Tally& tally, const TestPlan& plan, const TestCase& c, const LabModule& reference,
                    const Expectations& known, const WireLine& line) {
  const std::string status = line.get("status");
  if (status == "error") {
    tally.error_case = c.id;
    tally.error_message = clip(line.get("message"));
  } else if (status == "not_implemented") {
    ++tally.not_implemented;
    if (tally.not_implemented_message.empty()) tally.not_implemented_message = clip(line.get("message"));
  } else {
    const auto failure = judge_case(plan, c, reference, known, line, /*detailed=*/!tally.first);
    if (failure) {
      ++tally.wrong;
      if (!tally.first) tally.first = failure, tally.first->case_id = c.id;
    } else {
      ++tally.correct;
    }
  }
}

// The run's lines in order: a case counts once, from its first "observed" line.
Tally tally_lines(const TestPlan& plan, const std::map<std::string, const TestCase*>& by_id,
                  const LabModule& reference, const Expectations& known, const ChannelLines& channel) {
  Tally tally;
  tally.malformed = channel.malformed;
  for (const WireLine& line : channel.lines) {
    const std::string id = line.get("case");
    if (line.event == "start" && by_id.count(id)) tally.last_started = id;
    else if (line.event == "refused" && tally.refused.empty()) tally.refused = clip(line.get("message"));
    else if (line.event == "load_error" && tally.load_error.empty()) tally.load_error = clip(line.get("message"));
    else if (line.event == "error" && tally.error_message.empty()) tally.error_message = clip(line.get("message"));
    else if (line.event == "observed" && by_id.count(id) && ++tally.seen[id] == 1)
      tally_observed(tally, plan, *by_id.at(id), reference, known, line);
    else if (line.event == "observed")
      ++tally.malformed;  // a case not in the plan, or a second line for one
  }
  return tally;
}

template <typename T>
Expectation expect_typed(const InputSpec& spec) {
  const auto input = make_input<T>(spec.pattern, spec.n, spec.seed);
  Expectation e;
  e.digest = digest_bytes(input.data(), input.size() * sizeof(T));
  if constexpr (std::is_same_v<T, int>) {
    e.int_sum = exact_int_sum(input);
  } else {
    const ReferenceSum sum = reference_sum(input);
    e.sum = sum.sum;
    e.sum_abs = sum.sum_abs;
    const float naive = naive_float_sum(input.data(), input.size());
    std::memcpy(&e.naive_bits, &naive, sizeof naive);
  }
  return e;
}

}  // namespace

std::string describe(const std::string& lab, const InputSpec& input) {
  std::ostringstream out;
  out << "lab " << lab << ", n = " << input.n << ", type = " << to_string(input.type)
      << ", pattern = " << to_string(input.pattern) << ", seed = " << input.seed;
  return out.str();
}

std::string describe(const std::string& lab, const TestCase& c) {
  if (c.kind != CaseKind::operator_) return describe(lab, c.input);
  std::ostringstream out;
  out << "lab " << lab << ", operator = " << ops::operator_name(c.op) << ", n = " << c.input.n
      << ", type = " << to_string(c.input.type) << ", input = " << to_string(c.data) << ", seed = " << c.input.seed;
  if (c.special != Special::none) out << ", element " << c.special_at << " = " << to_string(c.special);
  if (c.offset) out << ", d_in = a 16-byte aligned buffer + " << c.offset << " element(s)";
  return out.str();
}

std::string input_key(const InputSpec& input) {
  return to_string(input.type) + ":" + std::to_string(input.n) + ":" + to_string(input.pattern) + ":" +
         std::to_string(input.seed);
}

Expectation expect_input(const InputSpec& input) {
  return input.type == Type::int32 ? expect_typed<int>(input) : expect_typed<float>(input);
}

void add_expectations(const TestPlan& plan, Expectations& known) {
  for (const auto& c : plan.cases) {
    if (c.kind == CaseKind::operator_) continue;  // judged from its regenerated input (judge_operator_case)
    for (const InputSpec* spec : {&c.input, c.second ? &*c.second : nullptr}) {
      if (spec == nullptr || known.count(input_key(*spec))) continue;
      known[input_key(*spec)] = expect_input(*spec);
    }
  }
}

std::string write_expectations(const Expectations& known) {
  std::ostringstream out;
  out.precision(17);
  for (const auto& [key, e] : known)
    out << key << " " << e.int_sum << " " << e.sum << " " << e.sum_abs << " " << e.digest << " " << e.naive_bits << "\n";
  return out.str();
}

Expectations read_expectations(const std::string& text) {
  Expectations known;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string key;
    Expectation e;
    if (!(in >> key >> e.int_sum >> e.sum >> e.sum_abs >> e.digest >> e.naive_bits))
      throw std::invalid_argument("bad expectations line: " + line.substr(0, 80));
    known[key] = e;
  }
  return known;
}

std::string check_tests(const TestPlan& plan, const LabModule& reference, const Expectations& known,
                        const std::string& observed, const std::string& token, const std::string& section) {
  std::map<std::string, const TestCase*> by_id;
  for (const auto& c : plan.cases) by_id[c.id] = &c;
  const ChannelLines channel =
      section.empty() ? read_channel(observed, token) : section_of(read_channel(observed, token), section);
  const Tally tally = tally_lines(plan, by_id, reference, known, channel);
  int duplicates = 0;
  for (const auto& [id, count] : tally.seen) duplicates += count - 1;
  std::ostringstream out;
  const auto field = [&out](const char* key, const std::string& value) { out << ",\"" << key << "\":" << json_string(value); };
  out << "{\"format\":\"" REDUCTION_TESTS_REPORT "\",\"version\":" << REDUCTION_REPORT_VERSION;
  field("lab", plan.lab);
  field("seed", std::to_string(plan.seed));
  out << ",\"cases\":" << plan.cases.size() << ",\"observed\":" << tally.seen.size() << ",\"correct\":" << tally.correct
      << ",\"wrong\":" << tally.wrong << ",\"not_implemented\":" << tally.not_implemented
      << ",\"malformed\":" << tally.malformed << ",\"duplicates\":" << duplicates << ",\"forged\":" << channel.forged
      << ",\"after_end\":" << channel.after_end << ",\"end\":" << (channel.end ? "true" : "false");
  field("refused", tally.refused);
  field("load_error", tally.load_error);
  field("error_case", tally.error_case);
  field("error_message", tally.error_message);
  field("not_implemented_message", tally.not_implemented_message);
  field("last_started", tally.last_started);
  field("last_started_what", tally.last_started.empty() ? "" : describe(plan.lab, *by_id[tally.last_started]));
  out << ",\"last_started_elements\":" << (tally.last_started.empty() ? 0 : call_limit_elements(*by_id[tally.last_started]));
  const std::optional<Failure>& first = tally.first;
  if (first) {
    out << ",\"first_failure\":{\"case\":" << json_string(first->case_id) << ",\"what\":" << json_string(first->what)
        << ",\"expected\":" << json_string(first->expected) << ",\"got\":" << json_string(first->got)
        << ",\"hint\":" << json_string(first->hint) << "}";
  } else {
    out << ",\"first_failure\":null";
  }
  out << "}\n";
  return out.str();
}

}  // namespace reduction::grading
