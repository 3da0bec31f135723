// CPU tests of the grader's programs' shared pieces: the runner's line format (wire.hpp), the
// plans (plan.hpp) and the trusted checker's judgments of test runs (check_tests.hpp), on
// observations written here the way an honest or a forging runner would write them. The timing
// runs' clock and checker: timing_checker_test.cpp; lab 12's operator cases: operator_checker_test.cpp.
#include "../runner/check_tests.hpp"
#include "../runner/check_timing.hpp"
#include "../runner/clock.hpp"
#include "../runner/plan.hpp"
#include "../runner/wire.hpp"
#include "../checking/scratch_guard.hpp"
#include "checker_test_support.hpp"

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

// A run of several labs (the runner's "lab" lines): each lab is judged on its own part only.
TEST_F(CheckerTest, ALabsPartOfARunOfSeveralIsJudgedAloneAndEndsWhereTheNextBegins) {
  const auto lab_line = [](const std::string& lab) { return std::string(WIRE_PREFIX "\"event\":\"lab\",\"lab\":\"") + lab + "\"}\n"; };
  std::string body = honest();
  body.erase(body.rfind(WIRE_PREFIX));  // its end: the run's comes after the last lab
  const std::string end = WIRE_PREFIX "\"event\":\"end\"}\n";
  const auto part = [&](const std::string& observed) { return check_tests(plan_, *reference_, known_, observed, kToken, "01_host_sum"); };
  // first of two, then second of two: all correct and closed either way
  for (const std::string& observed : {lab_line("01_host_sum") + body + lab_line("02_atomic") + honest(0, 5),
                                      lab_line("02_atomic") + honest(1, 1).substr(0, 40) + "\n" + lab_line("01_host_sum") + body + end}) {
    const std::string text = part(observed);
    EXPECT_NE(text.find("\"correct\":3,\"wrong\":0"), std::string::npos) << text;
    EXPECT_NE(text.find("\"end\":true"), std::string::npos) << text;
  }
  // the run ended inside this lab's part: not closed; another lab's wrong sums are not this lab's
  const std::string cut = part(lab_line("01_host_sum") + body);
  EXPECT_NE(cut.find("\"end\":false"), std::string::npos) << cut;
  const std::string other = part(lab_line("02_atomic") + honest(0, 5) + lab_line("03_shared_atomic") + end);
  EXPECT_NE(other.find("\"observed\":0,\"correct\":0,\"wrong\":0"), std::string::npos) << other;
  EXPECT_NE(other.find("\"end\":false"), std::string::npos) << other;
  // a second part for the same lab is not believed, and is counted
  const std::string twice = part(lab_line("01_host_sum") + body + lab_line("01_host_sum") + honest(0, 5) + end);
  EXPECT_NE(twice.find("\"correct\":3,\"wrong\":0,\"not_implemented\":0,\"malformed\":1"), std::string::npos) << twice;
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

}  // namespace
}  // namespace reduction::grading
