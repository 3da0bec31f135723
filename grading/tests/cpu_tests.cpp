// CPU-side tests of the harness: statistics, tolerance rule, inputs, references, bug hints,
// module loading, the watchdog and the scratch guards' check. They need no GPU and always run.
#include "../checking/diagnosis.hpp"
#include "../checking/lab_runner.hpp"
#include "../checking/scratch_guard.hpp"

#include <reduction/input.hpp>
#include <reduction/lab_module.hpp>
#include <reduction/reference.hpp>
#include <reduction/timing.hpp>
#include <reduction/watchdog.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace reduction {
namespace {

using testing::diagnose_int_sum;

TEST(SampleStatistics, MedianQuartilesAndMinOfAnOddSet) {
  const SampleStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.iqr(), 2);
  EXPECT_EQ(s.count, 5u);
}

TEST(SampleStatistics, MedianOfAnEvenSetInterpolates) {
  EXPECT_DOUBLE_EQ(summarize({10, 20, 30, 40}).median, 25);
}

TEST(SampleStatistics, RelativeStandardDeviationIsSampleStdOverMean) {
  const SampleStats s = summarize({9, 11});
  EXPECT_NEAR(s.rsd, std::sqrt(2.0) / 10.0, 1e-12);
  EXPECT_DOUBLE_EQ(summarize({7, 7, 7}).rsd, 0.0);
}

TEST(SampleStatistics, EmptySetGivesZeroCount) { EXPECT_EQ(summarize({}).count, 0u); }

TEST(FloatTolerance, StrictBoundIsGammaHTimesSumOfMagnitudes) {
  const FloatTolerance t = float_tolerance(8, 1000.0);
  const double hu = 8 * kUnitRoundoff;
  EXPECT_TRUE(t.strict);
  EXPECT_DOUBLE_EQ(t.bound, hu / (1 - hu) * 1000.0);
}

TEST(FloatTolerance, DeepChainsFallBackToTheDocumentedLooseCheck) {
  const FloatTolerance t = float_tolerance(std::size_t{1} << 24, 1000.0);
  EXPECT_FALSE(t.strict);
  EXPECT_DOUBLE_EQ(t.bound, 1000.0 / 1024.0);
  EXPECT_NE(t.rule.find("looser"), std::string::npos);
}

TEST(FloatTolerance, BoundGrowsWithDepthUpToTheLimit) {
  EXPECT_LT(float_tolerance(10, 1.0).bound, float_tolerance(kStrictDepthLimit, 1.0).bound);
}

TEST(FloatTolerance, ErrorInUnitsOfSum) {
  EXPECT_DOUBLE_EQ(error_in_ulps_of_sum(1.0 + 4 * kUnitRoundoff, 1.0, 1.0), 4.0);
}

TEST(InputPatterns, SameSeedGivesTheSameValuesAtAnyIndex) {
  const auto a = make_input<float>(Pattern::mixed_sign, 100000, 42);
  EXPECT_EQ(a[77777], input_value<float>(Pattern::mixed_sign, 42, 77777));
  EXPECT_EQ(a, make_input<float>(Pattern::mixed_sign, 100000, 42));
}

TEST(InputPatterns, DifferentSeedsGiveDifferentValues) {
  EXPECT_NE(make_input<int>(Pattern::uniform_positive, 1000, 1), make_input<int>(Pattern::uniform_positive, 1000, 2));
}

TEST(InputPatterns, ValuesStayInTheirDocumentedRangesAndAreNeverAllZero) {
  for (Pattern p : kAllPatterns) {
    const auto f = make_input<float>(p, 50000, 7);
    const auto i = make_input<int>(p, 50000, 7);
    EXPECT_TRUE(std::any_of(f.begin(), f.end(), [](float x) { return x != 0; })) << to_string(p);
    EXPECT_TRUE(std::any_of(i.begin(), i.end(), [](int x) { return x != 0; })) << to_string(p);
    for (float x : f) ASSERT_TRUE(x >= -8 && x <= 8) << to_string(p);
    for (int x : i) ASSERT_TRUE(x >= -100 && x <= 100) << to_string(p);
  }
  const auto positive = make_input<float>(Pattern::uniform_positive, 50000, 7);
  EXPECT_TRUE(std::all_of(positive.begin(), positive.end(), [](float x) { return x >= 0 && x < 1; }));
  const auto mixed = make_input<int>(Pattern::mixed_sign, 50000, 7);
  EXPECT_TRUE(std::any_of(mixed.begin(), mixed.end(), [](int x) { return x < 0; }));
}

TEST(InputPatterns, NamesRoundTrip) {
  for (Pattern p : kAllPatterns) EXPECT_EQ(parse_pattern(to_string(p)), p);
  EXPECT_FALSE(parse_pattern("zeros").has_value());
}

TEST(References, DoubleReferenceOfKnownValues) {
  const ReferenceSum r = reference_sum(std::vector<float>{8, -6, 7, 5, -3, 0, 9});
  EXPECT_DOUBLE_EQ(r.sum, 20);
  EXPECT_DOUBLE_EQ(r.sum_abs, 38);
}

TEST(References, CompensatedDoubleSurvivesCancellation) {
  std::vector<float> v = {1e8f, 1.0f, -1e8f};
  v.insert(v.end(), 1000, 1e-3f);
  EXPECT_NEAR(reference_sum(v).sum, 1.0 + 1000 * static_cast<double>(1e-3f), 1e-9);
}

TEST(References, ExactIntSumWrapsModulo2To32LikeTheHardware) {
  EXPECT_EQ(exact_int_sum({2147483647, 1}), -2147483647 - 1);
  EXPECT_EQ(exact_int_sum({8, 6, 7, 5, 3, 0, 9}), 38);
}

TEST(References, NaiveFloatLoopDriftsAtTwoTo24WhileKahanStaysClose) {
  const auto v = make_input<float>(Pattern::uniform_positive, std::size_t{1} << 24, 3);
  const double exact = reference_sum(v).sum;
  const double naive_error = std::fabs(naive_float_sum(v.data(), v.size()) - exact);
  const double kahan_error = std::fabs(kahan_sum(v.data(), v.size()) - exact);
  EXPECT_GT(naive_error, 16 * kahan_error);
  EXPECT_LE(kahan_error, 2.0);  // a couple of float ulps at 2^23
}

TEST(BugHints, DroppedTailIsRecognised) {
  const auto v = make_input<int>(Pattern::uniform_positive, 1000, 5);
  const int first_768 = std::accumulate(v.begin(), v.begin() + 768, 0);
  EXPECT_NE(diagnose_int_sum(v, first_768, exact_int_sum(v)).find("tail"), std::string::npos);
}

TEST(BugHints, ZeroSentinelDoubleAndStaleAccumulatorAreRecognised) {
  const auto v = make_input<int>(Pattern::uniform_positive, 1000, 5);
  const int sum = exact_int_sum(v);
  EXPECT_NE(diagnose_int_sum(v, 0, sum).find("0"), std::string::npos);
  EXPECT_NE(diagnose_int_sum(v, testing::kIntSentinel, sum).find("sentinel"), std::string::npos);
  EXPECT_NE(diagnose_int_sum(v, 2 * sum, sum).find("twice"), std::string::npos);
  EXPECT_NE(diagnose_int_sum(v, sum + 12345, sum, 12345).find("previous"), std::string::npos);
}

TEST(BugHints, OneBlockOnlyAndLostPairElementAreRecognised) {
  const auto v = make_input<int>(Pattern::uniform_positive, 4096, 9);
  const int sum = exact_int_sum(v);
  const int first_block = std::accumulate(v.begin(), v.begin() + 256, 0);
  EXPECT_NE(diagnose_int_sum(v, first_block, sum).find("one block"), std::string::npos);
  int first_of_pairs = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i % 512 < 256) first_of_pairs += v[i];
  EXPECT_NE(diagnose_int_sum(v, first_of_pairs, sum).find("second element"), std::string::npos);
}

TEST(BugHints, UnexplainedErrorsPointAtRaces) {
  const auto v = make_input<int>(Pattern::uniform_positive, 1000, 5);
  EXPECT_NE(diagnose_int_sum(v, exact_int_sum(v) + 1, exact_int_sum(v)).find("race"), std::string::npos);
}

TEST(LabModules, AMissingFileGivesAnErrorNamingIt) {
  try {
    LabModule::load("/nonexistent/lab99_nothing.so");
    FAIL() << "expected LabLoadError";
  } catch (const LabLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/lab99_nothing.so"), std::string::npos);
  }
}

TEST(LabModules, ALibraryWithoutTheEntryPointIsRejected) {
  try {
    LabModule::load("libm.so.6");
    FAIL() << "expected LabLoadError";
  } catch (const LabLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("not a lab module"), std::string::npos);
  }
}

TEST(LabModules, ModuleFileNameFollowsTheFolder) { EXPECT_EQ(module_file_name("02_atomic"), "lab02_atomic.so"); }

TEST(Watchdog, WorkThatFinishesInTimeReturnsAndItsExceptionsPropagate) {
  int value = 0;
  run_with_deadline([&] { value = 42; }, 5.0, "quick work");
  EXPECT_EQ(value, 42);
  EXPECT_THROW(run_with_deadline([] { throw std::runtime_error("boom"); }, 5.0, "throwing work"), std::runtime_error);
}

TEST(WatchdogDeathTest, WorkThatHangsEndsTheProcessWithTheTimeoutCode) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(run_with_deadline([] { std::this_thread::sleep_for(std::chrono::seconds(30)); }, 0.2, "a hanging kernel"),
              ::testing::ExitedWithCode(kTimeoutExitCode), "REDUCTION-TIMEOUT: a hanging kernel");
}

// A call's deadline grown with its input (the grader's test runs; RunnerOptions::seconds_for).
TEST(CallDeadline, GrowsFromTheFloorToTheFullLimitWithTheInputAndStaysThere) {
  testing::RunnerOptions options;
  options.call_seconds = 20.0;
  options.call_floor_seconds = 2.0;
  options.full_call_elements = 1000;
  EXPECT_DOUBLE_EQ(options.seconds_for(0), 2.0);
  EXPECT_DOUBLE_EQ(options.seconds_for(1), 2.018);
  EXPECT_DOUBLE_EQ(options.seconds_for(500), 11.0);
  EXPECT_DOUBLE_EQ(options.seconds_for(1000), 20.0);
  EXPECT_DOUBLE_EQ(options.seconds_for(std::size_t{1} << 40), 20.0);   // never past the full limit
}

TEST(CallDeadline, WithoutAFullSizeOrWithAFloorAtTheLimitEveryCallGetsTheLimit) {
  testing::RunnerOptions options;
  options.call_seconds = 60.0;   // the students' tests: no floor
  EXPECT_DOUBLE_EQ(options.seconds_for(0), 60.0);
  options.call_floor_seconds = 60.0;
  options.full_call_elements = 1000;
  EXPECT_DOUBLE_EQ(options.seconds_for(0), 60.0);
  options.call_floor_seconds = 90.0;   // a floor above the limit does not raise it
  EXPECT_DOUBLE_EQ(options.seconds_for(0), 60.0);
}

// The guards' check on host memory: what GuardedScratch::inspect() does to the bytes it reads back.
std::vector<unsigned char> fresh_guard() {
  std::vector<unsigned char> guard(testing::kScratchGuardBytes);
  for (std::size_t i = 0; i < guard.size(); ++i) guard[i] = testing::scratch_guard_byte(i);
  return guard;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ScratchGuards, IntactGuardsShowNothing) {
  const auto guard = fresh_guard();
  for (auto side : {testing::GuardSide::before, testing::GuardSide::after}) {
    const auto damage = testing::inspect_guard(guard.data(), guard.size(), side);
    EXPECT_EQ(damage.changed, 0u);
    EXPECT_EQ(damage.reach, 0u);
  }
  EXPECT_EQ(testing::describe_scratch_damage({1052672, {}, {}}), "");
}

TEST(ScratchGuards, TheGuardIsNeitherZerosNorThePoisonAndNoMemsetRestoresIt) {
  const auto guard = fresh_guard();
  for (unsigned char byte : guard) ASSERT_TRUE(byte != 0x00 && byte != 0xFF);
  for (int value = 0; value < 256; ++value) {  // a partial, a clear, a fill: at most 1 byte in 128 survives
    const std::vector<unsigned char> filled(guard.size(), static_cast<unsigned char>(value));
    const auto damage = testing::inspect_guard(filled.data(), filled.size(), testing::GuardSide::after);
    EXPECT_GE(damage.changed, guard.size() - guard.size() / 128) << "memset " << value;
  }
}

TEST(ScratchGuards, OneElementPastTheEndIsNamedWithItsBytes) {
  auto after = fresh_guard();
  std::fill(after.begin(), after.begin() + 4, 0);  // a float partial of 0.0f right after the scratch
  testing::ScratchDamage damage{1052672, {}, testing::inspect_guard(after.data(), after.size(), testing::GuardSide::after)};
  EXPECT_EQ(damage.after.changed, 4u);
  EXPECT_EQ(damage.after.reach, 4u);
  EXPECT_FALSE(damage.intact());
  const std::string text = testing::describe_scratch_damage(damage);
  EXPECT_TRUE(contains(text, "wrote past the end of its scratch: up to 4 bytes past d_temp_storage + temp_storage_bytes"))
      << text;
  EXPECT_TRUE(contains(text, "temp_storage_bytes = 1052672")) << text;
  after[64] ^= 1;  // and one byte farther out: the reach is the farthest
  EXPECT_EQ(testing::inspect_guard(after.data(), after.size(), testing::GuardSide::after).reach, 65u);
}

TEST(ScratchGuards, ABeforeTheStartWriteIsMeasuredFromDTempStorage) {
  auto before = fresh_guard();
  before.back() ^= 0x10;  // the byte right before d_temp_storage
  auto damage = testing::inspect_guard(before.data(), before.size(), testing::GuardSide::before);
  EXPECT_EQ(damage.changed, 1u);
  EXPECT_EQ(damage.reach, 1u);
  before.front() ^= 0x10;  // the guard's far edge: maybe farther still (memcheck's to see)
  damage = testing::inspect_guard(before.data(), before.size(), testing::GuardSide::before);
  EXPECT_EQ(damage.reach, testing::kScratchGuardBytes);
  const std::string text = testing::describe_scratch_damage({4096, damage, {}});
  EXPECT_TRUE(contains(text, "before the start of its scratch: as far as 16384 bytes before d_temp_storage")) << text;
  EXPECT_TRUE(contains(text, "or farther")) << text;
  EXPECT_TRUE(contains(text, "2 bytes of the guards changed")) << text;
}

TEST(ScratchGuards, TheDamageCrossesTheWireAsCheckedNumbersOnly) {
  const testing::ScratchDamage damage{1572864, {0, 0}, {64, 64}};
  const auto fields = testing::scratch_damage_fields(damage);
  const auto back = testing::parse_scratch_damage(fields);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(testing::describe_scratch_damage(*back), testing::describe_scratch_damage(damage));
  const auto broken = [&fields](const std::string& key, const std::string& value) {
    auto changed = fields;
    if (value.empty()) changed.erase(key);
    else changed[key] = value;
    return testing::parse_scratch_damage(changed);
  };
  EXPECT_FALSE(broken("after_reach", "").has_value());           // a field missing
  EXPECT_FALSE(broken("after_reach", "64 ").has_value());        // not digits only
  EXPECT_FALSE(broken("after_reach", "-1").has_value());
  EXPECT_FALSE(broken("after_reach", "99999").has_value());      // beyond the guard
  EXPECT_FALSE(broken("after_changed", "65").has_value());       // more changed than the reach allows
  EXPECT_FALSE(broken("after_changed", "0").has_value());        // a reach without a change
  EXPECT_FALSE(testing::parse_scratch_damage(testing::scratch_damage_fields({4096, {}, {}})).has_value());  // intact
}

}  // namespace
}  // namespace reduction
