// CPU tests of the timing side of the grader's programs: the timekeeper's go lines and the worker's
// wait for them (clock.hpp), and the trusted checker's judgment of a timing run's transcript
// (check_timing.hpp), on transcripts written here the way the timekeeper and a worker would.
#include "../runner/check_timing.hpp"
#include "../runner/clock.hpp"
#include "../runner/plan.hpp"
#include "../runner/wire.hpp"
#include "../checking/scratch_guard.hpp"
#include "checker_test_support.hpp"

#include <reduction/lab_module.hpp>
#include <reduction/reference.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace reduction::grading {
namespace {

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
  EXPECT_EQ(control.wait("t002", 0)->nonce, 2u);
  EXPECT_EQ(control.wait("t002", 1)->nonce, 3u);
  EXPECT_THROW(control.wait("t002", 2), ClockGone);
  ::close(fds[0]);
}

// An item the timekeeper ends early (its budget spent): the worker waiting for its next call hears
// so and goes on; the end of another item, or a line that only starts like one, is passed over.
TEST(Clock, TheWorkerHearsThatItsItemIsOver) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = go_line({"t001", 0, 1}) + over_line("t002") + "over t001x\n" + over_line("t001") +
                           go_line({"t002", 0, 5});
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  ControlReader control(fds[0]);
  EXPECT_EQ(control.wait("t001", 0)->nonce, 1u);
  EXPECT_FALSE(control.wait("t001", 1).has_value());
  EXPECT_EQ(control.wait("t002", 0)->nonce, 5u);
  ::close(fds[0]);
}

// The budget: an item ends at its last call, or once it has its least timed calls and they took the
// budget; without a budget only the last call ends it. A plan carries both through its text.
TEST(Clock, AnItemEndsAtItsLastCallOrWhenItsBudgetIsSpentAfterItsLeastCalls) {
  TimingPlan plan;
  plan.warmup = 2;
  plan.samples = 10;
  plan.min_samples = 3;
  plan.budget_ms = 5;
  EXPECT_FALSE(timing_item_over(plan, 3, 1e9));    // 2 timed calls so far: fewer than 3
  EXPECT_TRUE(timing_item_over(plan, 4, 5000));    // 3 timed, 5 ms
  EXPECT_FALSE(timing_item_over(plan, 4, 4999));
  EXPECT_TRUE(timing_item_over(plan, 11, 0));      // the last call
  const TimingPlan back = read_timing_plan(write_timing_plan(plan));
  EXPECT_EQ(back.min_samples, 3);
  EXPECT_EQ(back.budget_ms, 5);
  plan.budget_ms = 0;
  EXPECT_FALSE(timing_item_over(plan, 10, 1e12));
  plan.min_samples = 0;  // unset: every sample
  EXPECT_EQ(timing_min_samples(plan), 10);
  EXPECT_EQ(read_timing_plan(write_timing_plan(plan)).min_samples, 10);
  plan.min_samples = 11;  // more than the samples: a plan no reader takes
  std::string text = write_timing_plan(plan);
  text.replace(text.find("min_samples=10"), 14, "min_samples=11");
  EXPECT_THROW(read_timing_plan(text), std::invalid_argument);
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

// A host item's timing run (lab 01) and its transcripts. The worker's own inputs, replayed here:
// rotate the buffers, write the canaries of each go's nonce, sum. Each call claims 10 us and is
// reported 15 us after its input was prepared.
struct HostRun {
  TimingPlan plan;
  std::string dir;      // the reference modules'
  Clocked honest;       // every call right
  Clocked cached;       // from call `plan.buffers` on, call 0's sum again (a cached result)
  Clocked unstarted;    // no go for call 2
  std::string samples;  // the honest sample lines, not relayed by the timekeeper
};

HostRun host_run() {
  HostRun run;
  TimingPlan& plan = run.plan;
  plan.seed = 5;
  plan.warmup = 1;
  plan.samples = 4;
  plan.items.push_back({"t001", "01_host_sum", REDUCTION_LAB01_MODULE, false, Type::int32, 1000});
  std::vector<std::vector<int>> buffers;
  for (int b = 0; b < plan.buffers; ++b) {
    const InputSpec spec = timing_buffer(plan, Type::int32, 1000, b);
    buffers.push_back(make_input<int>(spec.pattern, spec.n, spec.seed));
  }
  std::int32_t first = 0;
  for (int call = 0; call < plan.warmup + plan.samples; ++call) {
    const std::uint64_t nonce = 0x1234567890abcdefull * (call + 1);
    auto& in = buffers[timing_buffer_of_call(plan, call)];
    for (const Canary& c : timing_canaries_of_nonce(plan, Type::int32, 1000, nonce)) in[c.index] = static_cast<int>(c.int_value);
    const std::int32_t sum = exact_int_sum(in);
    if (call == 0) first = sum;
    const double at = 1000.0 * call;
    for (Clocked* t : {&run.honest, &run.cached, &run.unstarted}) {
      if (t != &run.unstarted || call != 2)
        t->window("t001", call, {{"inputs", "host"}, {"nonce", hex16(nonce)}}, at, at + 1, at + 15);
      t->worker(at + 15, sample_line("t001", call, 10.0, t == &run.cached && call >= plan.buffers ? first : sum));
    }
    run.samples += sample_line("t001", call, 10.0, sum);
  }
  run.dir = std::string(REDUCTION_LAB01_MODULE).substr(0, std::string(REDUCTION_LAB01_MODULE).rfind('/'));
  return run;
}

// A transcript with every token replaced by another run's.
std::string with_another_token(std::string text) {
  for (std::size_t at = 0; (at = text.find(kToken, at)) != std::string::npos;) text.replace(at, kToken.size(), std::string(32, 'e'));
  return text;
}

// A transcript with the grader's own arrival stamp in front of each line.
std::string with_arrival_stamps(const std::string& text) {
  std::istringstream lines(text);
  std::string stamped;
  for (std::string line; std::getline(lines, line);) stamped += "777 " + line + "\n";
  return stamped;
}

TEST(TimingChecker, EveryTimedCallIsVerifiedAgainstItsBufferAndTheCanariesOfItsGo) {
  const HostRun run = host_run();
  const TimingPlan& plan = run.plan;
  const std::string& dir = run.dir;
  Expectations known;
  const std::string good = check_timing(plan, dir, run.honest.text, known, kToken);
  EXPECT_NE(good.find("\"samples\":4,\"median_us\":10"), std::string::npos) << good;
  EXPECT_NE(good.find("\"verified\":true"), std::string::npos) << good;
  EXPECT_NE(good.find("\"inputs\":\"host\",\"clocked\":4,\"excess_us\":5,\"excess_min_us\":5,\"window_us\":14,\"prep_us\":1"),
            std::string::npos) << good;
  const std::string bad = check_timing(plan, dir, run.cached.text, known, kToken);  // the first round's sums again
  EXPECT_NE(bad.find("\"verified\":false"), std::string::npos) << bad;
  EXPECT_NE(bad.find("a cached or stale result"), std::string::npos) << bad;
  const std::string skipped = check_timing(plan, dir, run.unstarted.text, known, kToken);  // no go for call 2
  EXPECT_NE(skipped.find("call 2 was never started by the timekeeper"), std::string::npos) << skipped;
  // The worker's lines only count when the timekeeper relayed them: untagged ones, or a line shaped
  // like the timekeeper's inside a relayed one, are not its.
  const std::string untagged = check_timing(plan, dir, run.samples, known, kToken);
  EXPECT_NE(untagged.find("\"malformed\":5"), std::string::npos) << untagged;
  EXPECT_NE(untagged.find("\"verified\":false"), std::string::npos) << untagged;
  Clocked smuggled = run.honest;
  smuggled.worker(9000, "K " + wire_line("timekeeper", "window", {{"item", "t001"}, {"call", "9"}}));
  EXPECT_NE(check_timing(plan, dir, smuggled.text, known, kToken).find("\"malformed\":1"), std::string::npos);
  Clocked twice = run.honest;
  for (int call = 0; call < plan.warmup + plan.samples; ++call) twice.worker(9000, sample_line("t001", call, 1.0, 0));
  EXPECT_NE(check_timing(plan, dir, twice.text, known, kToken).find("\"malformed\":5"), std::string::npos);
  // A destructor or atexit handler writing after the end, or lines without the run's token: counted.
  Clocked late = run.honest;
  late.worker(9000, wire_line(kToken, "end"));
  late.worker(9001, sample_line("t001", 1, 1.0, 0));
  const std::string after = check_timing(plan, dir, late.text, known, kToken);
  EXPECT_NE(after.find("\"after_end\":1"), std::string::npos) << after;
  EXPECT_NE(after.find("\"malformed\":0"), std::string::npos) << after;
  const std::string forged = check_timing(plan, dir, with_another_token(run.honest.text), known, kToken);
  EXPECT_NE(forged.find("\"forged\":5"), std::string::npos) << forged;
  EXPECT_NE(forged.find("\"samples\":0"), std::string::npos) << forged;
  // The grader's own arrival stamp in front of each line does not move the timekeeper's.
  const std::string stamped = with_arrival_stamps(run.honest.text);
  EXPECT_NE(check_timing(plan, dir, stamped, known, kToken).find("\"excess_us\":5"), std::string::npos);
  // every call right, then the worker's guards saw call 3 write past the scratch: unverified, said so
  Clocked overrun = run.honest;
  overrun.worker(9000, WIRE_PREFIX "\"event\":\"item_error\",\"item\":\"t001\",\"kind\":\"scratch_overrun\",\"call\":\"3\"" +
                           scratch_fields({4096, {}, {64, 64}}) + ",\"message\":\"x\"}\n");
  const std::string overran = check_timing(plan, dir, overrun.text, known, kToken);
  EXPECT_NE(overran.find("\"verified\":false"), std::string::npos) << overran;
  EXPECT_NE(overran.find("\"problem\":\"timed call 3: the lab wrote past the end of its scratch: up to 64 bytes past"),
            std::string::npos) << overran;
  EXPECT_NE(overran.find("\"error_message\":\"\""), std::string::npos) << overran;
}

// An item the timekeeper ended early: the calls it made are the item's, as long as they are at least
// the plan's least; a count below it, or missing, is the timekeeper's word against the plan: no timing.
TEST(TimingChecker, AnItemEndedOnItsBudgetIsJudgedOnTheCallsItHad) {
  HostRun run = host_run();  // warm-up 1, samples 4, every call right
  run.plan.min_samples = 2;
  Clocked ended, short_of_least;
  for (Clocked* t : {&ended, &short_of_least}) t->text = run.honest.text;
  ended.text += "K " + wire_line("timekeeper", "item_over", {{"item", "t001"}, {"calls", "3"}});
  short_of_least.text += "K " + wire_line("timekeeper", "item_over", {{"item", "t001"}, {"calls", "2"}});
  Expectations known;
  const std::string good = check_timing(run.plan, run.dir, ended.text, known, kToken);
  EXPECT_NE(good.find("\"samples\":2,\"median_us\":10"), std::string::npos) << good;
  EXPECT_NE(good.find("\"verified\":true"), std::string::npos) << good;
  EXPECT_NE(good.find("\"calls_us\":[10,10]"), std::string::npos) << good;
  const std::string bad = check_timing(run.plan, run.dir, short_of_least.text, known, kToken);
  EXPECT_NE(bad.find("\"verified\":false"), std::string::npos) << bad;
  EXPECT_NE(bad.find("ended the item after 2 calls, fewer than the plan's least"), std::string::npos) << bad;
  // The same words from the worker are only the worker's: every call is still due.
  Clocked claimed;
  claimed.text = run.unstarted.text;
  claimed.worker(9000, "K " + wire_line("timekeeper", "item_over", {{"item", "t001"}, {"calls", "2"}}));
  const std::string refused = check_timing(run.plan, run.dir, claimed.text, known, kToken);
  EXPECT_NE(refused.find("call 2 was never started by the timekeeper"), std::string::npos) << refused;
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
