// CPU tests of the grader's programs' shared pieces: the runner's line format (wire.hpp), the
// plans (plan.hpp) and the trusted checker's judgments (check_tests.hpp, check_timing.hpp), on
// observations written here the way an honest or a forging runner would write them.
#include "../runner/check_tests.hpp"
#include "../runner/check_timing.hpp"
#include "../runner/clock.hpp"
#include "../runner/plan.hpp"
#include "../runner/wire.hpp"
#include "../checking/scratch_guard.hpp"

#include <reduction/lab_module.hpp>
#include <reduction/operator_reference.hpp>
#include <reduction/reference.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace reduction::grading {
namespace {

// The run's token the tests' observations carry, and the start of every line an honest runner writes.
#define TEST_TOKEN "00112233445566778899aabbccddeeff"
#define WIRE_PREFIX "{\"v\":2,\"t\":\"" TEST_TOKEN "\","
const std::string kToken = TEST_TOKEN;

TEST(WireFormat, WhatTheRunnerWritesReadsBackFieldByField) {
  const std::vector<std::string> values = {"0x3f800000", "0x00000002"};
  std::string text = wire_line(kToken, "observed", {{"case", "c017"}, {"message", "quote \" and \\ and \x01"}}, &values);
  ASSERT_EQ(text.back(), '\n');
  text.pop_back();
  WireLine line;
  ASSERT_TRUE(parse_wire_line(text, line)) << text;
  EXPECT_EQ(line.event, "observed");
  EXPECT_EQ(line.token, kToken);
  EXPECT_EQ(line.get("case"), "c017");
  EXPECT_EQ(line.get("message"), "quote \" and \\ and \x01");
  EXPECT_EQ(line.values, values);
}

// A lab shares the report channel's open file with the runner and can make it non-blocking: a line
// then waits for room instead of being lost.
TEST(WireFormat, ALineWaitsForRoomOnANonBlockingChannel) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  const std::string filler(1 << 20, 'x');
  std::size_t filled = 0;
  for (ssize_t n; (n = ::write(fds[1], filler.data(), filler.size())) > 0;) filled += static_cast<std::size_t>(n);
  std::string drained;
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) drained.append(buffer, static_cast<std::size_t>(n));
  });
  Reporter(fds[1], kToken).emit("end");
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(drained.size(), filled + wire_line(kToken, "end").size());
  EXPECT_EQ(drained.substr(filled), wire_line(kToken, "end"));
}

TEST(WireFormat, AnythingElseIsRefused) {
  WireLine line;
  for (const char* text : {"", "REDUCTION-TESTS-COMPLETE", "{\"v\":1,\"event\":\"end\"}", "{\"event\":\"end\"}",
                           "{\"v\":2}", WIRE_PREFIX "\"event\":\"end\"} trailing", WIRE_PREFIX "\"event\":[\"x\"]}",
                           WIRE_PREFIX "\"event\":\"end\",\"case\":\"unterminated}", "{\"v\":2,\"t\":7,\"event\":\"end\"}"}) {
    EXPECT_FALSE(parse_wire_line(text, line)) << text;
  }
  EXPECT_FALSE(parse_wire_line(WIRE_PREFIX "\"event\":\"" + std::string(70000, 'x') + "\"}", line));
}

// The report channel: the run's token, and nothing after "end" (the runner _exit()s there).
TEST(WireFormat, OnlyLinesWithTheRunsTokenBeforeTheEndCount) {
  const std::string mine = wire_line(kToken, "start", {{"case", "c001"}});
  const std::string other = wire_line("ffeeddccbbaa99887766554433221100", "start", {{"case", "c002"}});
  const std::string end = wire_line(kToken, "end");
  const ChannelLines channel = read_channel(mine + other + "a student's banner\n" + end + mine + other, kToken);
  ASSERT_EQ(channel.lines.size(), 2u);
  EXPECT_EQ(channel.lines[0].get("case"), "c001");
  EXPECT_EQ(channel.lines[1].event, "end");
  EXPECT_EQ(channel.forged, 1);
  EXPECT_EQ(channel.malformed, 1);
  EXPECT_EQ(channel.after_end, 2);
  EXPECT_TRUE(channel.end);
  EXPECT_FALSE(read_channel(mine, kToken).end);
}

TEST(WireFormat, ValueBitsAreEightHexDigits) {
  std::uint32_t bits = 0;
  EXPECT_TRUE(parse_bits_hex(bits_hex(0xDEADBEEF), bits));
  EXPECT_EQ(bits, 0xDEADBEEFu);
  for (const char* text : {"0x1", "DEADBEEF00", "0xDEADBEEG", "0x-0000001"}) EXPECT_FALSE(parse_bits_hex(text, bits)) << text;
}

TEST(Plans, ATestPlanReadsBackAsWritten) {
  const TestPlan plan = make_test_plan("10_two_step", true, 42, true, true);
  const TestPlan back = read_test_plan(write_test_plan(plan));
  ASSERT_EQ(back.cases.size(), plan.cases.size());
  EXPECT_EQ(write_test_plan(back), write_test_plan(plan));
  EXPECT_EQ((back.lab), "10_two_step");
}

TEST(Plans, TheSeedDecidesEveryInputAndEachCaseGetsItsOwn) {
  const TestPlan a = make_test_plan("05_sequential", true, 1, false, true);
  const TestPlan b = make_test_plan("05_sequential", true, 2, false, true);
  EXPECT_EQ(write_test_plan(a), write_test_plan(make_test_plan("05_sequential", true, 1, false, true)));
  std::set<std::uint64_t> seeds;
  for (std::size_t i = 0; i < a.cases.size(); ++i) {
    EXPECT_NE(a.cases[i].input.seed, b.cases[i].input.seed);
    seeds.insert(a.cases[i].input.seed);
  }
  EXPECT_EQ(seeds.size(), a.cases.size());
}

TEST(Plans, LabsGetTheirOwnCases) {
  const auto count = [](const TestPlan& plan, auto predicate) {
    return std::count_if(plan.cases.begin(), plan.cases.end(), predicate);
  };
  const TestPlan lab01 = make_test_plan("01_host_sum", false, 7, false, false);
  EXPECT_EQ(count(lab01, [](const TestCase& c) { return c.naive_loop; }), 2);
  EXPECT_EQ(count(lab01, [](const TestCase& c) {
              return c.naive_loop && c.input.pattern == Pattern::all_ones && c.input.n > (std::size_t{1} << 24);
            }), 1);  // where any accumulator wider than float misses the float loop's 2^24
  const TestPlan lab10 = make_test_plan("10_two_step", true, 7, false, true);
  EXPECT_EQ(count(lab10, [](const TestCase& c) { return c.offset > 0; }), 48);
  EXPECT_EQ(count(lab10, [](const TestCase& c) { return c.calls > 1; }), 4);
  EXPECT_EQ(count(make_test_plan("04_interleaved", true, 7, true, false), [](const TestCase& c) { return c.input.n > (1ull << 31); }), 2);
  const TestPlan lab11 = make_test_plan("11_single_pass", true, 7, false, true);
  EXPECT_EQ(count(lab11, [](const TestCase& c) { return c.offset > 0; }), 48);
  const auto chain = [](const TestCase& c) { return c.kind == CaseKind::chain; };
  ASSERT_EQ(count(lab11, chain), 2);  // int and float
  for (const auto& c : lab11.cases) {
    if (!chain(c)) continue;
    EXPECT_GE(c.calls, 4);
    ASSERT_TRUE(c.second.has_value());
    EXPECT_NE(c.second->n, c.input.n) << "two grid sizes, so a counter left over from one launch shows in the next";
  }
  EXPECT_EQ(count(lab10, chain), 0);
  EXPECT_EQ(count(make_test_plan("11_single_pass", false, 7, false, true), chain), 0);  // no stream on the host
  const TestPlan back = read_test_plan(write_test_plan(lab11));
  EXPECT_EQ(write_test_plan(back), write_test_plan(lab11));
  EXPECT_EQ(count(back, chain), 2);
}

TEST(Plans, APlanThatIsNotOneIsRefused) {
  EXPECT_THROW(read_test_plan("case id=c001 kind=sum\n"), std::invalid_argument);
  EXPECT_THROW(read_test_plan("reduction-test-plan v=1 lab=x where=host seed=1\ncase id=c1 kind=sum type=long n=1 "
                              "pattern=all_ones seed=1 calls=1 offset=0 naive_loop=0\n"), std::invalid_argument);
  EXPECT_THROW(read_timing_plan("reduction-timing-plan v=1 seed=1 buffers=0 canaries=4 warmup=1 samples=5 "
                                "call_timeout_s=1\n"), std::invalid_argument);
  EXPECT_THROW(read_test_plan("reduction-test-plan v=1 lab=x where=host seed=1\ncase id=c1 kind=thrice type=int n=1 "
                              "pattern=all_ones seed=1 calls=1 offset=0 naive_loop=0\n"), std::invalid_argument);
}

// A chain case (lab 11): calls back to back alternating two inputs, each value judged against its
// own input; a later call gone wrong is named with its place in the chain.
TEST(ChainChecker, EachCallOfAChainIsJudgedAgainstItsOwnInput) {
  TestPlan plan{"11_single_pass", true, 5, {}};
  TestCase c;
  c.id = "c001";
  c.kind = CaseKind::chain;
  c.input = {Type::int32, 1000, Pattern::mixed_sign, 11};
  c.second = InputSpec{Type::int32, 77, Pattern::uniform_positive, 12};
  c.calls = 4;
  plan.cases.push_back(c);
  Expectations known;
  add_expectations(plan, known);
  const LabModule reference = LabModule::load(REDUCTION_LAB01_MODULE);  // int only: no float depth asked
  const std::int32_t a = known.at(input_key(c.input)).int_sum, b = known.at(input_key(*c.second)).int_sum;
  const auto observed = [&](std::vector<std::int32_t> values) {
    std::string list;
    for (std::int32_t v : values) list += (list.empty() ? "\"" : ",\"") + bits_hex(static_cast<std::uint32_t>(v)) + "\"";
    return WIRE_PREFIX "\"event\":\"start\",\"case\":\"c001\"}\n" WIRE_PREFIX "\"event\":\"observed\",\"case\":\"c001\","
           "\"status\":\"ok\",\"digest\":\"\",\"values\":[" + list + "]}\n" WIRE_PREFIX "\"event\":\"end\"}\n";
  };
  const std::string good = check_tests(plan, reference, known, observed({a, b, a, b}), kToken);
  EXPECT_NE(good.find("\"correct\":1,\"wrong\":0"), std::string::npos) << good;
  const std::string swapped = check_tests(plan, reference, known, observed({a, a, b, b}), kToken);
  EXPECT_NE(swapped.find("\"wrong\":1"), std::string::npos) << swapped;
  const std::string stale = check_tests(plan, reference, known, observed({a, b, a + 3, b}), kToken);
  EXPECT_NE(stale.find("call 3 of 4 back to back"), std::string::npos) << stale;
  EXPECT_NE(stale.find("the first call was right"), std::string::npos) << stale;
  const std::string short_chain = check_tests(plan, reference, known, observed({a, b}), kToken);
  EXPECT_NE(short_chain.find("\"wrong\":1"), std::string::npos) << short_chain;
}

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

// An int-only plan of a host lab, its observations as an honest runner would print them.
class CheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = make_small_plan("01_host_sum", false, 99, {"int mixed_sign 33", "int uniform_positive 1000", "int all_ones 5"});
    add_expectations(plan_, known_);
    reference_.emplace(LabModule::load(REDUCTION_LAB01_MODULE));
  }
  std::string honest(std::size_t skip = SIZE_MAX, std::int32_t delta = 0) const {
    std::ostringstream out;
    for (std::size_t i = 0; i < plan_.cases.size(); ++i) {
      const auto& c = plan_.cases[i];
      const auto input = make_input<int>(c.input.pattern, c.input.n, c.input.seed);
      const std::int32_t sum = exact_int_sum(input) + (i == skip ? delta : 0);
      char digest[24];
      std::snprintf(digest, sizeof digest, "%016llx",
                    static_cast<unsigned long long>(digest_bytes(input.data(), input.size() * sizeof(int))));
      out << WIRE_PREFIX "\"event\":\"start\",\"case\":\"" << c.id << "\"}\n";
      out << WIRE_PREFIX "\"event\":\"observed\",\"case\":\"" << c.id << "\",\"status\":\"ok\",\"digest\":\"" << digest
          << "\",\"values\":[\"" << bits_hex(static_cast<std::uint32_t>(sum)) << "\"]}\n";
    }
    return out.str() + WIRE_PREFIX "\"event\":\"end\"}\n";
  }
  std::string report(const std::string& observed) const { return check_tests(plan_, *reference_, known_, observed, kToken); }

  TestPlan plan_;
  Expectations known_;
  std::optional<LabModule> reference_;
};

TEST_F(CheckerTest, RightObservationsOfEveryCaseAreAllCorrect) {
  EXPECT_NE(report(honest()).find("\"cases\":3,\"observed\":3,\"correct\":3,\"wrong\":0"), std::string::npos)
      << report(honest());
}

TEST_F(CheckerTest, AWrongSumIsWrongWithItsCaseExpectedAndGot) {
  const std::string text = report(honest(1, 1));
  EXPECT_NE(text.find("\"correct\":2,\"wrong\":1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"case\":\"c002\""), std::string::npos) << text;
}

TEST_F(CheckerTest, MarkersAndForgedOrMissingLinesEarnNothing) {
  const std::string forged = "REDUCTION-TESTS-COMPLETE\n" WIRE_PREFIX "\"event\":\"observed\",\"case\":\"c001\",\"status\":"
                             "\"ok\",\"values\":[\"0x00000000\"]}\n" WIRE_PREFIX "\"event\":\"end\"}\n";
  const std::string text = report(forged);
  EXPECT_NE(text.find("\"observed\":1,\"correct\":0,\"wrong\":1"), std::string::npos) << text;
  EXPECT_NE(report("").find("\"observed\":0,\"correct\":0"), std::string::npos);
}

TEST_F(CheckerTest, AModifiedInputIsWrongEvenWithTheRightSum) {
  std::string observed = honest();
  const auto at = observed.find("\"digest\":\"") + 10;
  observed[at] = observed[at] == '0' ? '1' : '0';
  const std::string text = report(observed);
  EXPECT_NE(text.find("d_in modified"), std::string::npos) << text;
}

TEST_F(CheckerTest, OnlyTheFirstObservationOfACaseCounts) {
  std::string first = honest();
  first.erase(first.rfind(WIRE_PREFIX));  // without its end: the second round comes before it
  const std::string text = report(first + honest(0, 5));
  EXPECT_NE(text.find("\"correct\":3,\"wrong\":0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"duplicates\":3"), std::string::npos) << text;
}

// What a lab's static destructor or atexit handler could write after the runner's end, and lines
// without the run's token (another writer, or a forger who did not find it), count for nothing.
TEST_F(CheckerTest, LinesAfterTheEndOrWithoutTheTokenCountForNothing) {
  const std::string late = report(honest() + honest(0, 5));
  EXPECT_NE(late.find("\"correct\":3,\"wrong\":0"), std::string::npos) << late;
  EXPECT_NE(late.find("\"after_end\":7"), std::string::npos) << late;
  std::string other = honest(0, 5);
  for (std::size_t at = 0; (at = other.find(kToken, at)) != std::string::npos;) other.replace(at, kToken.size(), std::string(32, 'e'));
  const std::string forged = report(other + honest());
  EXPECT_NE(forged.find("\"correct\":3,\"wrong\":0"), std::string::npos) << forged;
  EXPECT_NE(forged.find("\"forged\":7"), std::string::npos) << forged;
  EXPECT_NE(report(other).find("\"observed\":0"), std::string::npos);
}

// What a runner prints for a call that wrote outside its scratch: the damage as numbers
// (scratch_guard.hpp), beside values that may well be right.
std::string scratch_fields(const testing::ScratchDamage& damage) {
  std::string text;
  for (const auto& [key, value] : testing::scratch_damage_fields(damage)) text += ",\"" + key + "\":\"" + value + "\"";
  return text;
}

TEST_F(CheckerTest, AScratchOverrunIsWrongWhateverValueWasReported) {
  std::string observed = honest();  // every sum right
  const std::string ok = "\"case\":\"c002\",\"status\":\"ok\"";
  const auto at = observed.find(ok);
  ASSERT_NE(at, std::string::npos);
  std::string overrun = observed;
  overrun.replace(at, ok.size(), "\"case\":\"c002\",\"status\":\"scratch_overrun\",\"message\":\"fine\"" +
                                     scratch_fields({1052672, {}, {4, 4}}));
  const std::string text = report(overrun);
  EXPECT_NE(text.find("\"correct\":2,\"wrong\":1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"case\":\"c002\",\"what\":\"lab 01_host_sum, n = 1000"), std::string::npos) << text;
  EXPECT_NE(text.find("\"expected\":\"no write outside [d_temp_storage, d_temp_storage + temp_storage_bytes)\""),
            std::string::npos) << text;
  EXPECT_NE(text.find("\"got\":\"the lab wrote past the end of its scratch: up to 4 bytes past"), std::string::npos)
      << text;
  EXPECT_NE(text.find("guaranteed_temp_storage_bytes(n)"), std::string::npos) << text;
  EXPECT_EQ(text.find("fine"), std::string::npos) << "the runner's own words are not quoted: " << text;
  // numbers that do not add up: still wrong, said so, and nothing of them quoted
  std::string garbled = observed;
  garbled.replace(at, ok.size(), "\"case\":\"c002\",\"status\":\"scratch_overrun\",\"after_reach\":\"SECRET\"");
  const std::string bad = report(garbled);
  EXPECT_NE(bad.find("\"correct\":2,\"wrong\":1"), std::string::npos) << bad;
  EXPECT_NE(bad.find("did not parse"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("SECRET"), std::string::npos) << bad;
}

TEST(Clock, AGoLineReadsBackAndNothingElseParses) {
  const Go go{"t003", 7, 0x9f0c2a51d3e4b6a7ull};
  std::string line = go_line(go);
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  const auto back = parse_go_line(line);
  ASSERT_TRUE(back.has_value()) << line;
  EXPECT_EQ(back->item, "t003");
  EXPECT_EQ(back->call, 7);
  EXPECT_EQ(back->nonce, go.nonce);
  for (const char* bad : {"go t003 7", "go t003 -1 9f0c2a51d3e4b6a7", "go t003 7 9F0C2A51D3E4B6A7", "run t003 7 9f0c2a51d3e4b6a7",
                          "go t003 7 9f0c2a51d3e4b6a7 extra", "go t003 99999999999 9f0c2a51d3e4b6a7", ""})
    EXPECT_FALSE(parse_go_line(bad).has_value()) << bad;
}

// The worker waits for the go of the call it is at; a go of an item it gave up on is passed over,
// and the end of the pipe (the timekeeper gone) stops it.
TEST(Clock, TheWorkerTakesTheGoOfItsCallAndStopsWhenTheTimekeeperIsGone) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = go_line({"t001", 3, 1}) + "noise\n" + go_line({"t002", 0, 2}) + go_line({"t002", 1, 3});
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  ControlReader control(fds[0]);
  EXPECT_EQ(control.wait("t002", 0).nonce, 2u);
  EXPECT_EQ(control.wait("t002", 1).nonce, 3u);
  EXPECT_THROW(control.wait("t002", 2), ClockGone);
  ::close(fds[0]);
}

TEST(Clock, TheSharedInputsFlagIsADescriptorAndASize) {
  const auto arg = parse_shared_inputs_arg(shared_inputs_arg(7, 67108864));
  ASSERT_TRUE(arg.has_value());
  EXPECT_EQ(arg->fd, 7);
  EXPECT_EQ(arg->bytes, 67108864u);
  for (const char* bad : {"7", ":64", "7:", "-1:64", "7:64x", "70000:64"}) EXPECT_FALSE(parse_shared_inputs_arg(bad)) << bad;
}

// A timing run's transcript as the timekeeper writes it: per call its own "window" line (K) and the
// worker's sample line (W, stamped when it arrived). `excess` is what each call took beyond its
// claim, from preparing the input to the report.
struct Clocked {
  std::string text;
  void window(const std::string& item, int call, const std::map<std::string, std::string>& extra, double prep,
              double go, double done) {
    std::map<std::string, std::string> fields = extra;
    fields.insert({{"item", item}, {"call", std::to_string(call)}, {"prep_us", std::to_string(prep)},
                   {"go_us", std::to_string(go)}, {"done_us", std::to_string(done)}});
    std::string line = wire_line("timekeeper", "window", fields);
    text += "K " + line;
  }
  void worker(double at, const std::string& line) { text += "W " + std::to_string(std::llround(at)) + " " + line; }
};

std::string hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string sample_line(const std::string& item, int call, double us, std::int32_t value) {
  return WIRE_PREFIX "\"event\":\"sample\",\"item\":\"" + item + "\",\"call\":\"" + std::to_string(call) +
         "\",\"us\":\"" + std::to_string(us) + "\",\"value\":\"" + bits_hex(static_cast<std::uint32_t>(value)) + "\"}\n";
}

TEST(TimingChecker, EveryTimedCallIsVerifiedAgainstItsBufferAndTheCanariesOfItsGo) {
  TimingPlan plan;
  plan.seed = 5;
  plan.warmup = 1;
  plan.samples = 4;
  plan.items.push_back({"t001", "01_host_sum", REDUCTION_LAB01_MODULE, false, Type::int32, 1000});
  // The worker's own inputs (a host item), replayed here: rotate the buffers, write the canaries of
  // each go's nonce, sum. Each call claims 10 us and is reported 15 us after its input was prepared.
  std::vector<std::vector<int>> buffers;
  for (int b = 0; b < plan.buffers; ++b) {
    const InputSpec spec = timing_buffer(plan, Type::int32, 1000, b);
    buffers.push_back(make_input<int>(spec.pattern, spec.n, spec.seed));
  }
  Clocked honest, cached, unstarted;
  std::string samples;
  std::int32_t first = 0;
  for (int call = 0; call < plan.warmup + plan.samples; ++call) {
    const std::uint64_t nonce = 0x1234567890abcdefull * (call + 1);
    auto& in = buffers[timing_buffer_of_call(plan, call)];
    for (const Canary& c : timing_canaries_of_nonce(plan, Type::int32, 1000, nonce)) in[c.index] = static_cast<int>(c.int_value);
    const std::int32_t sum = exact_int_sum(in);
    if (call == 0) first = sum;
    const double at = 1000.0 * call;
    for (Clocked* t : {&honest, &cached, &unstarted}) {
      if (t != &unstarted || call != 2) t->window("t001", call, {{"inputs", "host"}, {"nonce", hex16(nonce)}}, at, at + 1, at + 15);
      t->worker(at + 15, sample_line("t001", call, 10.0, t == &cached && call >= plan.buffers ? first : sum));
    }
    samples += sample_line("t001", call, 10.0, sum);
  }
  const std::string dir = std::string(REDUCTION_LAB01_MODULE).substr(0, std::string(REDUCTION_LAB01_MODULE).rfind('/'));
  Expectations known;
  const std::string good = check_timing(plan, dir, honest.text, known, kToken);
  EXPECT_NE(good.find("\"samples\":4,\"median_us\":10"), std::string::npos) << good;
  EXPECT_NE(good.find("\"verified\":true"), std::string::npos) << good;
  EXPECT_NE(good.find("\"inputs\":\"host\",\"clocked\":4,\"excess_us\":5,\"excess_min_us\":5,\"window_us\":14,\"prep_us\":1"),
            std::string::npos) << good;
  const std::string bad = check_timing(plan, dir, cached.text, known, kToken);  // the first round's sums again
  EXPECT_NE(bad.find("\"verified\":false"), std::string::npos) << bad;
  EXPECT_NE(bad.find("a cached or stale result"), std::string::npos) << bad;
  const std::string skipped = check_timing(plan, dir, unstarted.text, known, kToken);  // no go for call 2
  EXPECT_NE(skipped.find("call 2 was never started by the timekeeper"), std::string::npos) << skipped;
  // The worker's lines only count when the timekeeper relayed them: untagged ones, or a line shaped
  // like the timekeeper's inside a relayed one, are not its.
  const std::string untagged = check_timing(plan, dir, samples, known, kToken);
  EXPECT_NE(untagged.find("\"malformed\":5"), std::string::npos) << untagged;
  EXPECT_NE(untagged.find("\"verified\":false"), std::string::npos) << untagged;
  Clocked smuggled = honest;
  smuggled.worker(9000, "K " + wire_line("timekeeper", "window", {{"item", "t001"}, {"call", "9"}}));
  EXPECT_NE(check_timing(plan, dir, smuggled.text, known, kToken).find("\"malformed\":1"), std::string::npos);
  Clocked twice = honest;
  for (int call = 0; call < plan.warmup + plan.samples; ++call) twice.worker(9000, sample_line("t001", call, 1.0, 0));
  EXPECT_NE(check_timing(plan, dir, twice.text, known, kToken).find("\"malformed\":5"), std::string::npos);
  // A destructor or atexit handler writing after the end, or lines without the run's token: counted.
  Clocked late = honest;
  late.worker(9000, wire_line(kToken, "end"));
  late.worker(9001, sample_line("t001", 1, 1.0, 0));
  const std::string after = check_timing(plan, dir, late.text, known, kToken);
  EXPECT_NE(after.find("\"after_end\":1"), std::string::npos) << after;
  EXPECT_NE(after.find("\"malformed\":0"), std::string::npos) << after;
  std::string other = honest.text;
  for (std::size_t at = 0; (at = other.find(kToken, at)) != std::string::npos;) other.replace(at, kToken.size(), std::string(32, 'e'));
  const std::string forged = check_timing(plan, dir, other, known, kToken);
  EXPECT_NE(forged.find("\"forged\":5"), std::string::npos) << forged;
  EXPECT_NE(forged.find("\"samples\":0"), std::string::npos) << forged;
  // The grader's own arrival stamp in front of each line does not move the timekeeper's.
  std::istringstream lines(honest.text);
  std::string stamped;
  for (std::string line; std::getline(lines, line);) stamped += "777 " + line + "\n";
  EXPECT_NE(check_timing(plan, dir, stamped, known, kToken).find("\"excess_us\":5"), std::string::npos);
  // every call right, then the worker's guards saw call 3 write past the scratch: unverified, said so
  Clocked overrun = honest;
  overrun.worker(9000, WIRE_PREFIX "\"event\":\"item_error\",\"item\":\"t001\",\"kind\":\"scratch_overrun\",\"call\":\"3\"" +
                           scratch_fields({4096, {}, {64, 64}}) + ",\"message\":\"x\"}\n");
  const std::string overran = check_timing(plan, dir, overrun.text, known, kToken);
  EXPECT_NE(overran.find("\"verified\":false"), std::string::npos) << overran;
  EXPECT_NE(overran.find("\"problem\":\"timed call 3: the lab wrote past the end of its scratch: up to 64 bytes past"),
            std::string::npos) << overran;
  EXPECT_NE(overran.find("\"error_message\":\"\""), std::string::npos) << overran;
}

// A device call on the timekeeper's shared input: the sums it computed are the truth.
TEST(TimingChecker, ASharedInputCallIsCheckedAgainstTheTimekeepersSums) {
  TimingPlan plan;
  plan.warmup = 0;
  plan.samples = 5;
  plan.items.push_back({"t001", "cub", "", true, Type::int32, 1 << 20});
  plan.items.push_back({"t002", "cub", "", true, Type::float32, 1 << 20});
  Clocked right, wrong;
  for (int call = 0; call < plan.samples; ++call) {
    const double at = 1000.0 * call;
    for (Clocked* t : {&right, &wrong}) {
      t->window("t001", call, {{"inputs", "shared"}, {"int_sum", bits_hex(0xFFFFFFF0u + call)}}, at, at + 90, at + 130);
      t->worker(at + 130, sample_line("t001", call, 30.0, static_cast<std::int32_t>(0xFFFFFFF0u + call) + (t == &wrong)));
      t->window("t002", call, {{"inputs", "shared"}, {"sum", "-12.5"}, {"sum_abs", "400000"}}, at, at + 90, at + 130);
      float value = -12.5f;
      std::uint32_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      t->worker(at + 130, WIRE_PREFIX "\"event\":\"sample\",\"item\":\"t002\",\"call\":\"" + std::to_string(call) +
                              "\",\"us\":\"30\",\"value\":\"" + bits_hex(bits) + "\"}\n");
    }
  }
  Expectations known;
  const std::string good = check_timing(plan, "", right.text, known, kToken);
  EXPECT_EQ(good.find("\"verified\":false"), std::string::npos) << good;
  EXPECT_NE(good.find("\"inputs\":\"shared\",\"clocked\":5,\"excess_us\":100,\"excess_min_us\":100,\"window_us\":40,\"prep_us\":90"),
            std::string::npos) << good;
  const std::string bad = check_timing(plan, "", wrong.text, known, kToken);
  EXPECT_NE(bad.find("timed call 0 returned -15, expected -16"), std::string::npos) << bad;
}

}  // namespace
}  // namespace reduction::grading
