// The trusted verdict on a timing run (see check_timing.hpp). The expected sum of call k is
// recomputed by replaying the worker's input rotation and canary writes from the plan, and the
// claimed times are held against the arrival times of their lines (pacing_problem).
#include "check_timing.hpp"

#include "wire.hpp"

#include "../tests/scratch_guard.hpp"

#include <reduction/lab_module.hpp>
#include <reduction/reference.hpp>
#include <reduction/timing.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace reduction::grading {
namespace {

struct Reported {
  double us = 0;
  std::uint32_t bits = 0;
  double arrival_us = -1;  // when the grader read the line (-1: not known)
};

// Between the reports of two calls of an item lie the call and the worker's own steps around it
// (canaries, the L2 flush, the synchronizations, the report itself: well under a millisecond). A
// run whose calls came a median of more than max(5 ms, 4x the claimed time) beyond what they
// claimed did not time those calls: its lines were written ahead, in a burst, or by the lab itself.
constexpr double kPacingFloorUs = 5000;
constexpr double kPacingFactor = 4;

std::string pacing_problem(const std::map<int, Reported>& calls) {
  std::vector<double> slack, claimed;
  const Reported* previous = nullptr;
  int previous_call = -2;
  for (const auto& [call, r] : calls) {
    if (previous && call == previous_call + 1 && previous->arrival_us >= 0 && r.arrival_us >= 0) {
      slack.push_back(r.arrival_us - previous->arrival_us - r.us);
      claimed.push_back(r.us);
    }
    previous = &r;
    previous_call = call;
  }
  if (slack.size() < 4) return "";
  const double gap = summarize(slack).median, claim = summarize(claimed).median;
  if (gap <= std::max(kPacingFloorUs, kPacingFactor * claim)) return "";
  std::ostringstream out;
  out.precision(4);
  out << "its calls were reported a median " << gap + claim << " us apart but claimed " << claim
      << " us each: the times reported are not the calls' (written ahead, or by the lab)";
  return out.str();
}

// One item's buffers as the worker saw them: the generated inputs (known by their sums, and element
// by element through input_value) plus the canaries written so far, with the sums kept up to date.
template <typename T>
class Replay {
 public:
  Replay(const TimingPlan& plan, std::size_t n, Expectations& known) : plan_(plan), n_(n), overlay_(plan.buffers) {
    const Type type = std::is_same_v<T, int> ? Type::int32 : Type::float32;
    for (int b = 0; b < plan.buffers; ++b) {
      specs_.push_back(timing_buffer(plan, type, n, b));
      auto it = known.find(input_key(specs_.back()));
      if (it == known.end()) it = known.emplace(input_key(specs_.back()), expect_input(specs_.back())).first;
      sums_.push_back(it->second.sum);
      sum_abs_.push_back(it->second.sum_abs);
      int_sums_.push_back(static_cast<std::uint32_t>(it->second.int_sum));
    }
  }

  // Applies call k's canaries; returns the buffer it reads.
  int advance(int call) {
    const Type type = std::is_same_v<T, int> ? Type::int32 : Type::float32;
    const int b = timing_buffer_of_call(plan_, call);
    for (const Canary& c : timing_canaries(plan_, type, n_, call)) {
      const auto it = overlay_[b].find(c.index);
      const T old = it != overlay_[b].end() ? it->second : input_value<T>(specs_[b].pattern, specs_[b].seed, c.index);
      const T value = std::is_same_v<T, int> ? static_cast<T>(c.int_value) : static_cast<T>(c.float_value);
      sums_[b] += static_cast<double>(value) - static_cast<double>(old);
      sum_abs_[b] += std::fabs(static_cast<double>(value)) - std::fabs(static_cast<double>(old));
      if constexpr (std::is_same_v<T, int>)
        int_sums_[b] += static_cast<std::uint32_t>(value) - static_cast<std::uint32_t>(old);
      overlay_[b][c.index] = value;
    }
    return b;
  }

  bool correct(int b, std::uint32_t bits, std::size_t depth) const {
    if constexpr (std::is_same_v<T, int>) {
      return bits == int_sums_[b];
    } else {
      float got;
      std::memcpy(&got, &bits, sizeof got);
      return std::fabs(static_cast<double>(got) - sums_[b]) <= float_tolerance(depth, sum_abs_[b]).bound;
    }
  }
  std::string expected(int b) const {
    std::ostringstream out;
    out.precision(10);
    if constexpr (std::is_same_v<T, int>) out << static_cast<std::int32_t>(int_sums_[b]);
    else out << sums_[b];
    return out.str();
  }

 private:
  const TimingPlan& plan_;
  std::size_t n_;
  std::vector<InputSpec> specs_;
  std::vector<std::map<std::size_t, T>> overlay_;
  std::vector<double> sums_, sum_abs_;
  std::vector<std::uint32_t> int_sums_;
};

struct ItemReport {
  std::string problem;  // empty: every call present and right
  SampleStats stats;
};

template <typename T>
ItemReport judge_item(const TimingPlan& plan, const TimingItem& item, const std::map<int, Reported>& calls,
                      std::size_t depth, bool has_value, Expectations& known) {
  ItemReport report;
  std::vector<double> samples;
  std::optional<Replay<T>> replay;
  if (has_value) replay.emplace(plan, item.n, known);
  const int total = plan.warmup + plan.samples;
  for (int k = 0; k < total; ++k) {
    const auto it = calls.find(k);
    const int b = replay ? replay->advance(k) : 0;
    if (it == calls.end()) {
      if (report.problem.empty()) report.problem = "call " + std::to_string(k) + " was not reported";
      continue;
    }
    if (replay && !replay->correct(b, it->second.bits, depth) && report.problem.empty()) {
      float as_float;
      std::memcpy(&as_float, &it->second.bits, sizeof as_float);
      std::ostringstream got;
      got.precision(10);
      if constexpr (std::is_same_v<T, int>) got << static_cast<std::int32_t>(it->second.bits);
      else got << as_float;
      report.problem = "timed call " + std::to_string(k) + " returned " + got.str() + ", expected " +
                       replay->expected(b) + " (a cached or stale result, or work outside the timed stream)";
    }
    if (k >= plan.warmup) samples.push_back(it->second.us);
  }
  if (!samples.empty()) report.stats = summarize(samples);
  if (report.problem.empty()) report.problem = pacing_problem(calls);
  return report;
}

// The problem an item_error makes of its item. A scratch overrun (the worker's guards) is worded
// here from its numbers; any other error is the run's own words, which the grader quotes only
// where it recognizes them (`error_message`).
std::string item_error_problem(const WireLine& line, std::string& error_message) {
  if (line.get("kind") == "scratch_overrun") {
    if (const auto damage = testing::parse_scratch_damage(line.fields)) {
      const std::string call = line.get("call");
      const bool numbered = !call.empty() && call.size() <= 6 && call.find_first_not_of("0123456789") == std::string::npos;
      return (numbered ? "timed call " + call + ": " : std::string()) + testing::describe_scratch_damage(*damage) +
             "; " + testing::kScratchOverrunHint;
    }
  }
  error_message = line.get("message").substr(0, 300);
  return "the run reported an error";
}

}  // namespace

std::string check_timing(const TimingPlan& plan, const std::string& reference_dir, const std::string& observed,
                         Expectations& known, const std::string& token) {
  std::map<std::string, std::map<int, Reported>> calls;
  std::map<std::string, WireLine> item_errors;
  std::string device;
  const ChannelLines channel = read_channel(observed, token);
  int malformed = channel.malformed;
  for (std::size_t index = 0; index < channel.lines.size(); ++index) {
    const WireLine& line = channel.lines[index];
    if (line.event == "device" && device.empty()) device = line.get("name");
    if (line.event == "item_error") item_errors.emplace(line.get("item"), line);
    if (line.event != "sample") continue;
    Reported r;
    r.arrival_us = channel.arrival_us[index];
    int call = -1;
    try {
      call = std::stoi(line.get("call"));
      r.us = std::stod(line.get("us"));
    } catch (const std::exception&) {
      call = -1;
    }
    const bool has_bits = line.get("value").empty() || parse_bits_hex(line.get("value"), r.bits);
    if (call < 0 || !has_bits || !std::isfinite(r.us) || r.us <= 0 || r.us > 1e8 ||
        !calls[line.get("item")].emplace(call, r).second)
      ++malformed;  // a bad number, or a second report of one call
  }
  std::map<std::string, std::unique_ptr<LabModule>> references;
  std::ostringstream out;
  out << "{\"format\":\"" REDUCTION_TIMING_REPORT "\",\"version\":" << REDUCTION_REPORT_VERSION
      << ",\"device\":" << json_string(device)
      << ",\"malformed\":" << malformed << ",\"forged\":" << channel.forged
      << ",\"after_end\":" << channel.after_end << ",\"end\":" << (channel.end ? "true" : "false")
      << ",\"items\":[";
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const TimingItem& item = plan.items[i];
    const bool baseline = item.module.empty();
    const bool has_value = item.lab != "roof";
    std::size_t depth = kStrictDepthLimit + 1;  // CUB: the fixed relative check
    if (!baseline) {
      auto& ref = references[item.lab];
      if (!ref) ref = std::make_unique<LabModule>(LabModule::load(reference_dir + "/" + module_file_name(item.lab)));
      depth = ref->float_error_depth(item.n);
    }
    ItemReport report = item.type == Type::int32
                            ? judge_item<int>(plan, item, calls[item.id], depth, has_value, known)
                            : judge_item<float>(plan, item, calls[item.id], depth, has_value, known);
    std::string error_message;  // the run's own words: the grader quotes only what it recognizes
    if (const auto it = item_errors.find(item.id); it != item_errors.end())
      report.problem = item_error_problem(it->second, error_message);
    if (i) out << ",";
    out << "{\"id\":" << json_string(item.id) << ",\"lab\":" << json_string(item.lab)
        << ",\"type\":" << json_string(to_string(item.type)) << ",\"n\":" << item.n
        << ",\"samples\":" << report.stats.count << ",\"median_us\":" << report.stats.median
        << ",\"min_us\":" << report.stats.min << ",\"q1_us\":" << report.stats.q1 << ",\"q3_us\":" << report.stats.q3
        << ",\"verified\":" << (report.problem.empty() ? "true" : "false")
        << ",\"problem\":" << json_string(report.problem) << ",\"error_message\":" << json_string(error_message) << "}";
  }
  out << "]}\n";
  return out.str();
}

}  // namespace reduction::grading
