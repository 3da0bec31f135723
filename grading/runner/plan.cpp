// Test and timing plans: what is run, written down so the trusted side can recompute it.
#include "plan.hpp"

#include "../checking/test_sizes.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>
#include <stdexcept>

namespace reduction::grading {
namespace {

using testing::kDeterminismCalls;
using testing::kDeterminismSizes;
using testing::kLargeSize;
using testing::kSizes;
using testing::kUnalignedOffsets;
using testing::kUnalignedSizes;

constexpr const char* kTestPlanHeader = "reduction-test-plan";
constexpr const char* kTimingPlanHeader = "reduction-timing-plan";
constexpr int kPlanVersion = 1;
constexpr int kChainCalls = 6;  // a chain case's calls: input, second, input, ...

// Lab 12's operator cases: each operator on the data its tests use (lab12.cpp), at n = 0 (the
// identity), 1, within one block of the reference (4096 elements a block round) and over many
// blocks, and once unaligned; float min and max also with a NaN or an infinity in the input.
struct OperatorPlanCase {
  ReductionOperator op;
  Type type;
  OperatorData data;
};
constexpr OperatorPlanCase kOperatorPlanCases[] = {
    {REDUCTION_OPERATOR_SUM, Type::int32, OperatorData::mixed_sign},
    {REDUCTION_OPERATOR_PRODUCT, Type::int32, OperatorData::odd_integers},
    {REDUCTION_OPERATOR_MIN, Type::int32, OperatorData::mixed_sign},
    {REDUCTION_OPERATOR_MAX, Type::int32, OperatorData::mixed_sign},
    {REDUCTION_OPERATOR_SUM, Type::float32, OperatorData::uniform_positive},
    {REDUCTION_OPERATOR_PRODUCT, Type::float32, OperatorData::near_one},
    {REDUCTION_OPERATOR_MIN, Type::float32, OperatorData::mixed_sign},
    {REDUCTION_OPERATOR_MAX, Type::float32, OperatorData::uniform_positive},
    {REDUCTION_OPERATOR_MOMENTS, Type::float32, OperatorData::mixed_sign},
    {REDUCTION_OPERATOR_MOMENTS, Type::float32, OperatorData::large_mean}};
constexpr std::size_t kOperatorPlanSizes[] = {0, 1, 1000, 1000003};
constexpr std::size_t kOperatorUnalignedSize = 4099, kOperatorUnalignedOffset = 3;
constexpr std::size_t kSpecialValueSize = 65537;

// "key=value" tokens of one line, after the first word.
struct Fields {
  std::vector<std::pair<std::string, std::string>> items;
  std::string get(const std::string& key) const {
    for (const auto& [k, v] : items)
      if (k == key) return v;
    throw std::invalid_argument("plan line without '" + key + "'");
  }
  std::string get_or(const std::string& key, const std::string& fallback) const {
    for (const auto& [k, v] : items)
      if (k == key) return v;
    return fallback;
  }
};

Fields parse_fields(std::istringstream& line) {
  Fields fields;
  std::string token;
  while (line >> token) {
    const auto eq = token.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("plan token without '=': " + token);
    fields.items.emplace_back(token.substr(0, eq), token.substr(eq + 1));
  }
  return fields;
}

std::uint64_t to_u64(const std::string& text) { return std::stoull(text); }

Pattern to_pattern(const std::string& text) {
  const auto pattern = parse_pattern(text);
  if (!pattern) throw std::invalid_argument("unknown pattern '" + text + "'");
  return *pattern;
}

std::string input_fields(const InputSpec& in, const std::string& suffix) {
  std::ostringstream out;
  out << " type" << suffix << "=" << to_string(in.type) << " n" << suffix << "=" << in.n << " pattern" << suffix
      << "=" << to_string(in.pattern) << " seed" << suffix << "=" << in.seed;
  return out.str();
}

InputSpec read_input(const Fields& f, const std::string& suffix) {
  return {parse_type(f.get("type" + suffix)), static_cast<std::size_t>(to_u64(f.get("n" + suffix))),
          to_pattern(f.get("pattern" + suffix)), to_u64(f.get("seed" + suffix))};
}

Special parse_special(const std::string& text) {
  for (Special special : {Special::none, Special::nan, Special::plus_inf, Special::minus_inf})
    if (to_string(special) == text) return special;
  throw std::invalid_argument("unknown special value '" + text + "'");
}

// The operator, data and special value of an operator case; what the observer may not be asked
// (moments of ints, a special value in int data or outside the input) is refused here.
void read_operator_fields(const Fields& f, TestCase& c) {
  c.op = ops::parse_operator(f.get("op"));
  const auto data = parse_operator_data(f.get("data"));
  if (!data) throw std::invalid_argument("case " + c.id + ": unknown data '" + f.get("data") + "'");
  c.data = *data;
  c.special = parse_special(f.get("special"));
  c.special_at = static_cast<std::size_t>(to_u64(f.get("at")));
  if (c.op == REDUCTION_OPERATOR_MOMENTS && c.input.type != Type::float32)
    throw std::invalid_argument("case " + c.id + ": moments are float only");
  if (c.special != Special::none && (c.input.type != Type::float32 || c.special_at >= c.input.n))
    throw std::invalid_argument("case " + c.id + ": a special value is for float data, inside the input");
}

// Another seed for each input of a plan, derived from the run's seed, so no two cases share data
// by accident and none can be known before the run.
std::uint64_t case_seed(std::uint64_t seed, std::size_t index) { return mix64(seed ^ (index * 0x9E37ull)); }

}  // namespace

std::size_t call_limit_elements(const TestCase& c) {
  if (c.kind != CaseKind::chain || !c.second) return c.input.n;
  const std::size_t firsts = static_cast<std::size_t>(c.calls + 1) / 2;   // input, second, input, ...
  return firsts * c.input.n + (static_cast<std::size_t>(c.calls) - firsts) * c.second->n;
}

namespace {

class PlanBuilder {
 public:
  explicit PlanBuilder(TestPlan& plan) : plan_(plan) {}
  TestCase& add(CaseKind kind, Type type, std::size_t n, Pattern pattern) {
    TestCase c;
    c.id = next_id();
    c.kind = kind;
    c.input = {type, n, pattern, case_seed(plan_.seed, plan_.cases.size())};
    plan_.cases.push_back(c);
    return plan_.cases.back();
  }

 private:
  std::string next_id() const {
    std::ostringstream id;
    id << "c" << (plan_.cases.size() + 1 < 100 ? (plan_.cases.size() + 1 < 10 ? "00" : "0") : "")
       << plan_.cases.size() + 1;
    return id.str();
  }
  TestPlan& plan_;
};

// Lab 12's operator cases (kOperatorPlanCases), each at every size of kOperatorPlanSizes and once unaligned.
void add_operator_cases(PlanBuilder& add) {
  for (const OperatorPlanCase& o : kOperatorPlanCases) {
    const auto add_operator = [&](std::size_t n, std::size_t offset) -> TestCase& {
      TestCase& c = add.add(CaseKind::operator_, o.type, n, Pattern::mixed_sign);
      c.op = o.op;
      c.data = o.data;
      c.offset = offset;
      return c;
    };
    for (std::size_t n : kOperatorPlanSizes) add_operator(n, 0);
    add_operator(kOperatorUnalignedSize, kOperatorUnalignedOffset);
  }
}

// Lab 12's float min and max with a NaN or an infinity in the input.
void add_special_value_cases(PlanBuilder& add) {
  for (ReductionOperator op : {REDUCTION_OPERATOR_MIN, REDUCTION_OPERATOR_MAX}) {
    bool tail = true;  // the first NaN goes to the last element (a vectorized kernel's scalar tail)
    for (Special special : {Special::nan, Special::nan, Special::plus_inf, Special::minus_inf}) {
      TestCase& c = add.add(CaseKind::operator_, Type::float32, kSpecialValueSize, Pattern::mixed_sign);
      c.op = op;
      c.data = OperatorData::mixed_sign;
      c.offset = 1;  // element 0 in the scalar head of a vectorized kernel
      c.special = special;
      c.special_at = tail ? kSpecialValueSize - 1 : static_cast<std::size_t>(mix64(c.input.seed) % kSpecialValueSize);
      tail = false;
    }
  }
}

}  // namespace

std::string to_string(Type type) { return type == Type::int32 ? "int" : "float"; }

std::string to_string(CaseKind kind) {
  switch (kind) {
    case CaseKind::sum: return "sum";
    case CaseKind::twice: return "twice";
    case CaseKind::chain: return "chain";
    case CaseKind::operator_: return "operator";
  }
  throw std::invalid_argument("unknown case kind");
}

CaseKind parse_case_kind(const std::string& text) {
  for (CaseKind kind : {CaseKind::sum, CaseKind::twice, CaseKind::chain, CaseKind::operator_})
    if (to_string(kind) == text) return kind;
  throw std::invalid_argument("unknown case kind '" + text + "'");
}

std::string to_string(Special special) {
  switch (special) {
    case Special::none: return "none";
    case Special::nan: return "nan";
    case Special::plus_inf: return "inf";
    case Special::minus_inf: return "-inf";
  }
  throw std::invalid_argument("unknown special value");
}

template <typename T>
std::vector<T> operator_case_input(const TestCase& c) {
  auto input = make_operator_input<T>(c.data, c.input.n, c.input.seed);
  if constexpr (std::is_same_v<T, float>) {
    if (c.special != Special::none && c.special_at < input.size())
      input[c.special_at] = c.special == Special::nan        ? std::numeric_limits<float>::quiet_NaN()
                            : c.special == Special::plus_inf ? std::numeric_limits<float>::infinity()
                                                             : -std::numeric_limits<float>::infinity();
  }
  return input;
}
template std::vector<int> operator_case_input<int>(const TestCase&);
template std::vector<float> operator_case_input<float>(const TestCase&);

Type parse_type(const std::string& text) {
  if (text == "int") return Type::int32;
  if (text == "float") return Type::float32;
  throw std::invalid_argument("unknown type '" + text + "'");
}

TestPlan make_test_plan(const std::string& lab, bool on_device, std::uint64_t seed, bool large,
                        bool float_deterministic) {
  TestPlan plan{lab, on_device, seed, {}};
  PlanBuilder add(plan);
  const bool lab01 = lab.rfind("01_", 0) == 0, lab10 = lab.rfind("10_", 0) == 0, lab11 = lab.rfind("11_", 0) == 0,
             lab12 = lab.rfind("12_", 0) == 0;
  for (Type type : {Type::int32, Type::float32}) {
    add.add(CaseKind::sum, type, 0, Pattern::all_ones);  // the identity, and d_out must be written
    for (std::size_t n : kSizes) {
      if (n == 0) continue;
      for (Pattern pattern : kAllPatterns) add.add(CaseKind::sum, type, n, pattern);
    }
    TestCase& twice = add.add(CaseKind::twice, type, 1000003, Pattern::uniform_positive);
    twice.second = InputSpec{type, 65537, Pattern::small_integers, case_seed(seed, 100000 + plan.cases.size())};
  }
  TestCase& same = add.add(CaseKind::twice, Type::int32, 1000003, Pattern::uniform_positive);
  same.second = same.input;  // calling twice on the same input: the same result
  if (lab01) {  // the float result must be the plain float loop's, bit for bit
    add.add(CaseKind::sum, Type::float32, std::size_t{1} << 24, Pattern::uniform_positive).naive_loop = true;
    // A wider accumulator can land on the float loop's value by chance on random inputs (about one
    // seed in two thousand at 2^24): past 2^24 ones the float loop stays at 2^24, any wider sum does not.
    add.add(CaseKind::sum, Type::float32, (std::size_t{1} << 24) + 4096, Pattern::all_ones).naive_loop = true;
  }
  if (float_deterministic && on_device) {
    for (std::size_t n : kDeterminismSizes)
      for (Pattern pattern : {Pattern::uniform_positive, Pattern::mixed_sign})
        add.add(CaseKind::sum, Type::float32, n, pattern).calls = kDeterminismCalls;
  }
  if (lab10 || lab11) {
    for (Type type : {Type::int32, Type::float32})
      for (std::size_t n : kUnalignedSizes)
        for (std::size_t offset : kUnalignedOffsets) add.add(CaseKind::sum, type, n, Pattern::mixed_sign).offset = offset;
  }
  if (lab11 && on_device) {  // two grids of different sizes, alternating, no host sync between the calls
    for (Type type : {Type::int32, Type::float32}) {
      TestCase& chain = add.add(CaseKind::chain, type, 1000003, Pattern::mixed_sign);
      chain.second = InputSpec{type, 65537, Pattern::uniform_positive, case_seed(seed, 200000 + plan.cases.size())};
      chain.calls = kChainCalls;
    }
  }
  if (lab12 && on_device) {  // the operator entry: no host lab has one
    add_operator_cases(add);
    add_special_value_cases(add);
  }
  if (large) {
    add.add(CaseKind::sum, Type::int32, kLargeSize, Pattern::small_integers);
    add.add(CaseKind::sum, Type::float32, kLargeSize, Pattern::mixed_sign);
  }
  return plan;
}

TestPlan make_small_plan(const std::string& lab, bool on_device, std::uint64_t seed,
                         const std::vector<std::string>& cases) {
  TestPlan plan{lab, on_device, seed, {}};
  PlanBuilder add(plan);
  for (const auto& text : cases) {
    std::istringstream in(text);
    std::string type, pattern;
    std::size_t n = 0;
    if (!(in >> type >> pattern >> n)) throw std::invalid_argument("case '" + text + "': want 'TYPE PATTERN N'");
    add.add(CaseKind::sum, parse_type(type), n, to_pattern(pattern));
  }
  return plan;
}

std::string write_test_plan(const TestPlan& plan) {
  std::ostringstream out;
  out << kTestPlanHeader << " v=" << kPlanVersion << " lab=" << plan.lab << " where="
      << (plan.on_device ? "device" : "host") << " seed=" << plan.seed << "\n";
  for (const auto& c : plan.cases) {
    out << "case id=" << c.id << " kind=" << to_string(c.kind) << input_fields(c.input, "")
        << " calls=" << c.calls << " offset=" << c.offset << " naive_loop=" << (c.naive_loop ? 1 : 0);
    if (c.second) out << input_fields(*c.second, "2");
    if (c.kind == CaseKind::operator_)
      out << " op=" << ops::operator_name(c.op) << " data=" << to_string(c.data) << " special=" << to_string(c.special)
          << " at=" << c.special_at;
    out << "\n";
  }
  return out.str();
}

TestPlan read_test_plan(const std::string& text) {
  std::istringstream lines(text);
  std::string line, word;
  TestPlan plan;
  bool header = false;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    if (!(in >> word)) continue;
    const Fields f = parse_fields(in);
    if (word == kTestPlanHeader) {
      if (std::stoi(f.get("v")) != kPlanVersion) throw std::invalid_argument("test plan of another version");
      plan.lab = f.get("lab");
      plan.on_device = f.get("where") == "device";
      plan.seed = to_u64(f.get("seed"));
      header = true;
    } else if (word == "case" && header) {
      TestCase c;
      c.id = f.get("id");
      c.kind = parse_case_kind(f.get("kind"));
      c.input = read_input(f, "");
      c.calls = std::stoi(f.get("calls"));
      c.offset = static_cast<std::size_t>(to_u64(f.get("offset")));
      c.naive_loop = f.get("naive_loop") == "1";
      if (c.kind == CaseKind::twice || c.kind == CaseKind::chain) c.second = read_input(f, "2");
      if (c.kind == CaseKind::operator_) read_operator_fields(f, c);
      if (c.calls < 1 || c.calls > 100) throw std::invalid_argument("case " + c.id + ": calls out of range");
      plan.cases.push_back(c);
    } else {
      throw std::invalid_argument("not a test plan line: " + line.substr(0, 80));
    }
  }
  if (!header) throw std::invalid_argument("no test plan header");
  return plan;
}

std::string write_timing_plan(const TimingPlan& plan) {
  std::ostringstream out;
  out << kTimingPlanHeader << " v=" << kPlanVersion << " seed=" << plan.seed << " buffers=" << plan.buffers
      << " canaries=" << plan.canaries << " warmup=" << plan.warmup << " samples=" << plan.samples
      << " min_samples=" << timing_min_samples(plan) << " budget_ms=" << plan.budget_ms
      << " call_timeout_s=" << plan.call_timeout_s << "\n";
  for (const auto& item : plan.items) {
    out << "item id=" << item.id << " lab=" << item.lab << " where=" << (item.on_device ? "device" : "host")
        << " type=" << to_string(item.type) << " n=" << item.n;
    if (!item.module.empty()) out << " module=" << item.module;  // paths from the grader: no spaces
    out << "\n";
  }
  return out.str();
}

int timing_min_samples(const TimingPlan& plan) {
  return plan.min_samples > 0 ? std::min(plan.min_samples, plan.samples) : plan.samples;
}

bool timing_item_over(const TimingPlan& plan, int call, double timed_us) {
  const int made = call + 1;
  if (made >= plan.warmup + plan.samples) return true;
  return plan.budget_ms > 0 && made >= plan.warmup + timing_min_samples(plan) && timed_us >= 1000.0 * plan.budget_ms;
}

TimingPlan read_timing_plan(const std::string& text) {
  std::istringstream lines(text);
  std::string line, word;
  TimingPlan plan;
  bool header = false;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    if (!(in >> word)) continue;
    const Fields f = parse_fields(in);
    if (word == kTimingPlanHeader) {
      if (std::stoi(f.get("v")) != kPlanVersion) throw std::invalid_argument("timing plan of another version");
      plan.seed = to_u64(f.get("seed"));
      plan.buffers = std::stoi(f.get("buffers"));
      plan.canaries = std::stoi(f.get("canaries"));
      plan.warmup = std::stoi(f.get("warmup"));
      plan.samples = std::stoi(f.get("samples"));
      plan.call_timeout_s = std::stod(f.get("call_timeout_s"));
      plan.min_samples = std::stoi(f.get("min_samples"));
      plan.budget_ms = std::stod(f.get("budget_ms"));
      if (plan.buffers < 1 || plan.buffers > 16 || plan.samples < 1 || plan.samples > 10000 || plan.warmup < 0 ||
          plan.min_samples < 1 || plan.min_samples > plan.samples || !(plan.budget_ms >= 0) || plan.budget_ms > 1e7)
        throw std::invalid_argument("timing plan: counts out of range");
      header = true;
    } else if (word == "item" && header) {
      TimingItem item;
      item.id = f.get("id");
      item.lab = f.get("lab");
      item.module = f.get_or("module", "");
      item.on_device = f.get("where") == "device";
      item.type = parse_type(f.get("type"));
      item.n = static_cast<std::size_t>(to_u64(f.get("n")));
      plan.items.push_back(item);
    } else {
      throw std::invalid_argument("not a timing plan line: " + line.substr(0, 80));
    }
  }
  if (!header) throw std::invalid_argument("no timing plan header");
  return plan;
}

}  // namespace reduction::grading
