// CPU tests of lab 12's operator cases: the plan's operators, identities and special values, and the
// trusted checker's judgment of them (check_tests.hpp, operator_reference.hpp), on observations
// written here the way an honest or a forging runner would write them.
#include "../runner/check_tests.hpp"
#include "../runner/plan.hpp"
#include "../runner/wire.hpp"
#include "checker_test_support.hpp"

#include <reduction/lab_module.hpp>
#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace reduction::grading {
namespace {

// Lab 12 on the device: every operator of each type at n = 0 and beyond, unaligned, and float min
// and max with NaN and infinities; nothing of it for another lab or on the host.
TEST(Plans, Lab12GetsEveryOperatorWithItsIdentityAndSpecialValues) {
  const TestPlan plan = make_test_plan("12_any_operator", true, 7, false, true);
  std::set<std::string> identities, operators;
  int specials = 0, unaligned = 0;
  for (const auto& c : plan.cases) {
    if (c.kind != CaseKind::operator_) continue;
    const std::string name = std::string(ops::operator_name(c.op)) + "/" + to_string(c.input.type);
    operators.insert(name);
    if (c.input.n == 0) identities.insert(name);
    if (c.offset) ++unaligned;
    if (c.special != Special::none) {
      ++specials;
      EXPECT_TRUE(c.op == REDUCTION_OPERATOR_MIN || c.op == REDUCTION_OPERATOR_MAX) << c.id;
      EXPECT_LT(c.special_at, c.input.n);
    }
  }
  EXPECT_EQ(operators.size(), 9u);  // sum, product, min, max of int and float, moments of float
  EXPECT_EQ(identities, operators);
  EXPECT_EQ(specials, 8);
  EXPECT_GE(unaligned, 10);
  const TestPlan back = read_test_plan(write_test_plan(plan));
  EXPECT_EQ(write_test_plan(back), write_test_plan(plan));
  const auto operator_cases = [](const TestPlan& p) {
    return std::count_if(p.cases.begin(), p.cases.end(), [](const TestCase& c) { return c.kind == CaseKind::operator_; });
  };
  EXPECT_EQ(operator_cases(make_test_plan("12_any_operator", false, 7, false, true)), 0);
  EXPECT_EQ(operator_cases(make_test_plan("11_single_pass", true, 7, false, true)), 0);
  EXPECT_THROW(read_test_plan("reduction-test-plan v=1 lab=x where=device seed=1\ncase id=c1 kind=operator type=int "
                              "n=5 pattern=mixed_sign seed=1 calls=1 offset=0 naive_loop=0 op=moments "
                              "data=mixed_sign special=none at=0\n"), std::invalid_argument);
  EXPECT_THROW(read_test_plan("reduction-test-plan v=1 lab=x where=device seed=1\ncase id=c1 kind=operator type=float "
                              "n=5 pattern=mixed_sign seed=1 calls=1 offset=0 naive_loop=0 op=min "
                              "data=mixed_sign special=nan at=5\n"), std::invalid_argument);
}

// Operator cases (lab 12), judged by the checker against observations an honest runner would
// print: the one judgment of operator_reference.hpp (exact int, declared float bounds, NaN rules,
// identities), with the trusted lab 12 module's depth.
class OperatorCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reference_.emplace(LabModule::load(REDUCTION_LAB12_MODULE));
    add(REDUCTION_OPERATOR_MIN, Type::int32, OperatorData::mixed_sign, 1000);
    add(REDUCTION_OPERATOR_PRODUCT, Type::int32, OperatorData::odd_integers, 0);
    add(REDUCTION_OPERATOR_MIN, Type::float32, OperatorData::mixed_sign, 4099).special = Special::nan;
    plan_.cases.back().special_at = 17;
    add(REDUCTION_OPERATOR_MAX, Type::float32, OperatorData::mixed_sign, 4099).special = Special::plus_inf;
    plan_.cases.back().special_at = 4098;
    add(REDUCTION_OPERATOR_SUM, Type::float32, OperatorData::uniform_positive, 1000003);
    add(REDUCTION_OPERATOR_MOMENTS, Type::float32, OperatorData::large_mean, 65537);
    add(REDUCTION_OPERATOR_MOMENTS, Type::float32, OperatorData::mixed_sign, 0);
  }
  TestCase& add(ReductionOperator op, Type type, OperatorData data, std::size_t n) {
    TestCase c;
    c.id = "c00" + std::to_string(plan_.cases.size() + 1);
    c.kind = CaseKind::operator_;
    c.input = {type, n, Pattern::mixed_sign, 100 + plan_.cases.size()};
    c.op = op;
    c.data = data;
    plan_.cases.push_back(c);
    return plan_.cases.back();
  }
  // The right values, from host computations independent of the judgment: std::min_element,
  // a plain product, a double sum, Chan's pairwise formula on the host.
  template <typename T>
  static std::vector<std::string> right_values(const TestCase& c) {
    const auto input = operator_case_input<T>(c);
    const auto bits = [](auto value) {
      std::uint32_t b;
      std::memcpy(&b, &value, sizeof b);
      return bits_hex(b);
    };
    if constexpr (std::is_same_v<T, float>) {
      if (c.op == REDUCTION_OPERATOR_MOMENTS) {
        const ReductionMoments m = pairwise_float_moments(input.data(), input.size());
        return {bits_hex64(m.count), bits(m.mean), bits(m.m2)};
      }
      if (c.special == Special::nan) return {bits(std::numeric_limits<float>::quiet_NaN())};
      if (c.op == REDUCTION_OPERATOR_SUM) {
        double sum = 0;
        for (float x : input) sum += x;
        return {bits(static_cast<float>(sum))};
      }
    }
    T value = c.op == REDUCTION_OPERATOR_PRODUCT ? T{1} : T{0};
    if (c.op == REDUCTION_OPERATOR_MIN) value = *std::min_element(input.begin(), input.end());
    if (c.op == REDUCTION_OPERATOR_MAX) value = *std::max_element(input.begin(), input.end());
    if (c.op == REDUCTION_OPERATOR_PRODUCT)
      for (T x : input) value = static_cast<T>(static_cast<unsigned>(value) * static_cast<unsigned>(x));
    return {bits(value)};
  }
  std::string honest(const std::string& replace_case = "", const std::string& replacement = "") const {
    std::ostringstream out;
    for (const auto& c : plan_.cases) {
      out << WIRE_PREFIX "\"event\":\"start\",\"case\":\"" << c.id << "\"}\n";
      if (c.id == replace_case) {
        out << replacement << "\n";
        continue;
      }
      const bool is_int = c.input.type == Type::int32;
      const auto values = is_int ? right_values<int>(c) : right_values<float>(c);
      const std::uint64_t digest = is_int ? digest_of(operator_case_input<int>(c)) : digest_of(operator_case_input<float>(c));
      char hex[24];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(digest));
      out << WIRE_PREFIX "\"event\":\"observed\",\"case\":\"" << c.id << "\",\"status\":\"ok\",\"digest\":\"" << hex
          << "\",\"values\":[";
      for (std::size_t k = 0; k < values.size(); ++k) out << (k ? ",\"" : "\"") << values[k] << "\"";
      out << "]}\n";
    }
    return out.str() + WIRE_PREFIX "\"event\":\"end\"}\n";
  }
  template <typename T>
  static std::uint64_t digest_of(const std::vector<T>& input) { return digest_bytes(input.data(), input.size() * sizeof(T)); }
  std::string report(const std::string& observed) const {
    Expectations known;
    add_expectations(plan_, known);
    return check_tests(plan_, *reference_, known, observed, kToken);
  }

  TestPlan plan_{"12_any_operator", true, 3, {}};
  std::optional<LabModule> reference_;
};

TEST_F(OperatorCheckerTest, RightObservationsOfEveryOperatorAreAllCorrect) {
  const std::string text = report(honest());
  EXPECT_NE(text.find("\"cases\":7,\"observed\":7,\"correct\":7,\"wrong\":0"), std::string::npos) << text;
}

TEST_F(OperatorCheckerTest, AWrongMinIsWrongWithItsOperatorExpectedAndGot) {
  const TestCase& c = plan_.cases[0];
  const auto input = operator_case_input<int>(c);
  const int wrong = *std::min_element(input.begin(), input.end()) + 1;  // one off: still a plausible value
  const std::string line = WIRE_PREFIX "\"event\":\"observed\",\"case\":\"c001\",\"status\":\"ok\",\"digest\":\"\","
                           "\"values\":[\"" + bits_hex(static_cast<std::uint32_t>(wrong)) + "\"]}";
  const std::string text = report(honest("c001", line));
  EXPECT_NE(text.find("\"correct\":6,\"wrong\":1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"case\":\"c001\""), std::string::npos) << text;
  EXPECT_NE(text.find("operator = min, n = 1000, type = int"), std::string::npos) << text;
  EXPECT_NE(text.find("\"expected\":\"" + std::to_string(wrong - 1) + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"got\":\"" + std::to_string(wrong) + "\""), std::string::npos) << text;
}

TEST_F(OperatorCheckerTest, NanRulesIdentitiesAndBoundsAreTheSharedOnes) {
  const auto observed = [](const std::string& id, const std::vector<std::string>& values) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "\"" : ",\"") + v + "\"";
    return WIRE_PREFIX "\"event\":\"observed\",\"case\":\"" + id + "\",\"status\":\"ok\",\"digest\":\"\",\"values\":[" +
           list + "]}";
  };
  // a min that skipped the NaN (fminf alone): the smallest number, not NaN
  const auto nan_input = operator_case_input<float>(plan_.cases[2]);
  float skipped = std::numeric_limits<float>::infinity();
  for (float x : nan_input) skipped = std::isnan(x) ? skipped : std::min(skipped, x);
  std::uint32_t b;
  std::memcpy(&b, &skipped, sizeof b);
  std::string text = report(honest("c003", observed("c003", {bits_hex(b)})));
  EXPECT_NE(text.find("\"wrong\":1"), std::string::npos) << text;
  EXPECT_NE(text.find("a NaN anywhere gives NaN"), std::string::npos) << text;
  EXPECT_NE(text.find("element 17 = nan"), std::string::npos) << text;
  // an empty int product that is 0, not the identity 1
  text = report(honest("c002", observed("c002", {bits_hex(0)})));
  EXPECT_NE(text.find("the identity of an empty input"), std::string::npos) << text;
  // moments one element short: the count is exact
  const ReductionMoments m = pairwise_float_moments(operator_case_input<float>(plan_.cases[5]).data(), 65536);
  std::uint32_t mean, m2;
  std::memcpy(&mean, &m.mean, 4);
  std::memcpy(&m2, &m.m2, 4);
  text = report(honest("c006", observed("c006", {bits_hex64(m.count), bits_hex(mean), bits_hex(m2)})));
  EXPECT_NE(text.find("the count is exact"), std::string::npos) << text;
  // a float sum far outside its bound
  text = report(honest("c005", observed("c005", {bits_hex(0x3f800000)})));
  EXPECT_NE(text.find("\"case\":\"c005\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"wrong\":1"), std::string::npos) << text;
}

TEST_F(OperatorCheckerTest, AModuleWithoutTheOperatorEntryFailsEveryOperatorCase) {
  std::string observed;
  for (const auto& c : plan_.cases)
    observed += WIRE_PREFIX "\"event\":\"observed\",\"case\":\"" + c.id +
                "\",\"status\":\"no_operator_entry\",\"message\":\"the module exports no reduction_operator_lab_v1\"}\n";
  const std::string text = report(observed + WIRE_PREFIX "\"event\":\"end\"}\n");
  EXPECT_NE(text.find("\"correct\":0,\"wrong\":7"), std::string::npos) << text;
  EXPECT_NE(text.find("REDUCTION_DEFINE_OPERATOR_LAB"), std::string::npos) << text;
  // and an operator case answered with a sum's shape (one value for moments) is wrong, not a crash
  const std::string shape = report(honest("c006", WIRE_PREFIX "\"event\":\"observed\",\"case\":\"c006\",\"status\":"
                                                  "\"ok\",\"values\":[\"0x00000000\"]}"));
  EXPECT_NE(shape.find("\"correct\":6,\"wrong\":1"), std::string::npos) << shape;
}

}  // namespace
}  // namespace reduction::grading
