// The trusted verdict on a timing run (see check_timing.hpp). The expected sum of call k is the
// timekeeper's (a device call on the input it wrote), or recomputed by replaying the worker's own
// input rotation and the canaries of the call's nonce (a host call, or memory not shared); and each
// claimed time is set beside the timekeeper's stamps of that call, for the grader to judge.
#include "check_timing.hpp"

#include "wire.hpp"

#include "../checking/scratch_guard.hpp"

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
};

// The timekeeper's line for one call: when it began preparing the input, said go and read the
// worker's report (microseconds on its clock; -1 when not there), and what the call had to return.
struct Window {
  double prep_us = -1, go_us = -1, done_us = -1;
  std::string inputs;        // "shared" (the timekeeper's input), "in_process" or "host" (the worker's own)
  std::uint64_t nonce = 0;   // the canaries' nonce where the worker keeps its own inputs
  double sum = 0, sum_abs = 0;
  std::uint32_t int_sum = 0;
};
using Windows = std::map<int, Window>;

double stamp(const WireLine& line, const std::string& key) {
  const std::string text = line.get(key);
  if (text.empty()) return -1;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && std::isfinite(value) && value >= 0 ? value : -1;
}

// The timekeeper's "window" lines, by item and call (the first of each).
std::map<std::string, Windows> read_windows(const std::vector<WireLine>& clock) {
  std::map<std::string, Windows> windows;
  for (const WireLine& line : clock) {
    if (line.event != "window") continue;
    Window w;
    w.prep_us = stamp(line, "prep_us");
    w.go_us = stamp(line, "go_us");
    w.done_us = stamp(line, "done_us");
    w.inputs = line.get("inputs");
    w.nonce = std::strtoull(line.get("nonce").c_str(), nullptr, 16);
    w.sum = std::strtod(line.get("sum").c_str(), nullptr);
    w.sum_abs = std::strtod(line.get("sum_abs").c_str(), nullptr);
    std::uint32_t bits = 0;
    if (parse_bits_hex(line.get("int_sum"), bits)) w.int_sum = bits;
    int call = -1;
    try {
      call = std::stoi(line.get("call"));
    } catch (const std::exception&) {
      continue;
    }
    windows[line.get("item")].emplace(call, w);
  }
  return windows;
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

  // Applies the canaries of call k's nonce; returns the buffer it reads.
  int advance(int call, std::uint64_t nonce) {
    const Type type = std::is_same_v<T, int> ? Type::int32 : Type::float32;
    const int b = timing_buffer_of_call(plan_, call);
    for (const Canary& c : timing_canaries_of_nonce(plan_, type, n_, nonce)) {
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
  std::string inputs;   // as the timekeeper gave them
  // the timekeeper's clock, medians over the timed calls: from preparing the input to reading the
  // report, less the time claimed (the harness's and the channel's share); go to report; preparing
  double excess_us = -1, window_us = -1, prep_us = -1;
  double excess_min_us = -1;  // the least of the calls' excess: what the harness takes at the least, noise
                              // (a busy core, a late wake-up) only ever adds to it
  std::size_t clocked = 0;  // timed calls with every stamp
  // each timed call's claimed time, in call order (nullopt: not reported): a paired run's ratio is
  // taken call by call (benchmark.py)
  std::vector<std::optional<double>> calls_us;
};

template <typename T>
bool right_sum(const Window& w, std::uint32_t bits, std::size_t depth) {
  if constexpr (std::is_same_v<T, int>) {
    return bits == w.int_sum;
  } else {
    float got;
    std::memcpy(&got, &bits, sizeof got);
    return std::fabs(static_cast<double>(got) - w.sum) <= float_tolerance(depth, w.sum_abs).bound;
  }
}

template <typename T>
std::string shown(std::uint32_t bits) {
  std::ostringstream out;
  out.precision(10);
  float as_float;
  std::memcpy(&as_float, &bits, sizeof as_float);
  if constexpr (std::is_same_v<T, int>) out << static_cast<std::int32_t>(bits);
  else out << as_float;
  return out.str();
}

template <typename T>
std::string expected_of(const Window& w) {
  std::ostringstream out;
  out.precision(10);
  if constexpr (std::is_same_v<T, int>) out << static_cast<std::int32_t>(w.int_sum);
  else out << w.sum;
  return out.str();
}

void add_clock(const Window& w, double claimed, std::vector<double>& excess, std::vector<double>& window,
               std::vector<double>& prep) {
  if (w.prep_us < 0 || w.go_us < 0 || w.done_us < 0) return;
  excess.push_back(w.done_us - w.prep_us - claimed);
  window.push_back(w.done_us - w.go_us);
  prep.push_back(w.go_us - w.prep_us);
}

// `over`: the calls the timekeeper gave the item when it ended it early (its budget spent), or -1.
template <typename T>
ItemReport judge_item(const TimingPlan& plan, const TimingItem& item, const std::map<int, Reported>& calls,
                      const Windows& windows, int over, std::size_t depth, bool has_value, Expectations& known) {
  ItemReport report;
  std::vector<double> samples, excess, window, prep;
  std::optional<Replay<T>> replay;
  int total = plan.warmup + plan.samples;
  const auto fail = [&](const std::string& why) {
    if (report.problem.empty()) report.problem = why;
  };
  if (over >= 0 && over < plan.warmup + timing_min_samples(plan))
    fail("the timekeeper ended the item after " + std::to_string(over) + " calls, fewer than the plan's least");
  else if (over >= 0 && over < total)
    total = over;
  for (int k = 0; k < total; ++k) {
    const auto w = windows.find(k);
    if (w == windows.end()) {
      fail("call " + std::to_string(k) + " was never started by the timekeeper");
      break;
    }
    if (report.inputs.empty()) report.inputs = w->second.inputs;
    const bool shared = w->second.inputs == "shared";
    int b = 0;
    if (has_value && !shared) {
      if (!replay) replay.emplace(plan, item.n, known);
      b = replay->advance(k, w->second.nonce);
    }
    const auto it = calls.find(k);
    if (k >= plan.warmup) report.calls_us.push_back(it == calls.end() ? std::nullopt : std::optional(it->second.us));
    if (it == calls.end()) {
      fail("call " + std::to_string(k) + " was not reported");
      continue;
    }
    if (has_value) {
      const bool right = shared ? right_sum<T>(w->second, it->second.bits, depth)
                                : replay->correct(b, it->second.bits, depth);
      if (!right)
        fail("timed call " + std::to_string(k) + " returned " + shown<T>(it->second.bits) + ", expected " +
             (shared ? expected_of<T>(w->second) : replay->expected(b)) +
             " (a cached or stale result, or work outside the timed stream)");
    }
    if (k >= plan.warmup) {
      samples.push_back(it->second.us);
      add_clock(w->second, it->second.us, excess, window, prep);
    }
  }
  if (!samples.empty()) report.stats = summarize(samples);
  report.clocked = excess.size();
  if (!excess.empty()) {
    report.excess_us = summarize(excess).median;
    report.excess_min_us = summarize(excess).min;
    report.window_us = summarize(window).median;
    report.prep_us = summarize(prep).median;
  }
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

// The timekeeper's "item_over" lines: the calls of each item it ended before its last (the first line
// of each; -1 where a count does not parse).
std::map<std::string, int> read_items_over(const std::vector<WireLine>& clock) {
  std::map<std::string, int> over;
  for (const WireLine& line : clock) {
    if (line.event != "item_over") continue;
    int calls = -1;
    try {
      calls = std::stoi(line.get("calls"));
    } catch (const std::exception&) {
      calls = -1;
    }
    over.emplace(line.get("item"), calls < 0 ? -1 : calls);
  }
  return over;
}

// What the worker reported, as the timekeeper relayed it: each item's calls by number, its
// item_error, and the device it ran on.
struct WorkerReport {
  std::map<std::string, std::map<int, Reported>> calls;
  std::map<std::string, WireLine> item_errors;
  std::string device;
  int malformed = 0;
};

WorkerReport read_worker_report(const ChannelLines& channel) {
  WorkerReport worker;
  worker.malformed = channel.malformed;
  for (const WireLine& line : channel.lines) {
    if (line.event == "device" && worker.device.empty()) worker.device = line.get("name");
    if (line.event == "item_error") worker.item_errors.emplace(line.get("item"), line);
    if (line.event != "sample") continue;
    Reported r;
    int call = -1;
    try {
      call = std::stoi(line.get("call"));
      r.us = std::stod(line.get("us"));
    } catch (const std::exception&) {
      call = -1;
    }
    const bool has_bits = line.get("value").empty() || parse_bits_hex(line.get("value"), r.bits);
    if (call < 0 || !has_bits || !std::isfinite(r.us) || r.us <= 0 || r.us > 1e8 ||
        !worker.calls[line.get("item")].emplace(call, r).second)
      ++worker.malformed;  // a bad number, or a second report of one call
  }
  return worker;
}

// What the timekeeper said of the run as a whole: where the inputs were (and why), and its error.
struct ClockNotes {
  std::string inputs, inputs_why, clock_error;
};

ClockNotes read_clock_notes(const std::vector<WireLine>& clock) {
  ClockNotes notes;
  for (const WireLine& line : clock) {
    if (line.event == "clock" && notes.inputs.empty())
      notes.inputs = line.get("inputs"), notes.inputs_why = line.get("why");
    if (line.event == "clock_error" && notes.clock_error.empty())
      notes.clock_error = line.get("message").substr(0, 300);
  }
  return notes;
}

// The depth of an item's float tolerance: its lab's reference module's (each loaded once), or for a
// baseline (no module) CUB's fixed relative check.
std::size_t float_depth(const TimingItem& item, const std::string& reference_dir,
                        std::map<std::string, std::unique_ptr<LabModule>>& references) {
  if (item.module.empty()) return kStrictDepthLimit + 1;  // CUB: the fixed relative check
  auto& ref = references[item.lab];
  if (!ref) ref = std::make_unique<LabModule>(LabModule::load(reference_dir + "/" + module_file_name(item.lab)));
  return ref->float_error_depth(item.n);
}

// An item's entry in the report's "items".
void write_item(std::ostream& out, const TimingItem& item, const ItemReport& report, const std::string& error_message) {
  out << "{\"id\":" << json_string(item.id) << ",\"lab\":" << json_string(item.lab)
      << ",\"type\":" << json_string(to_string(item.type)) << ",\"n\":" << item.n
      << ",\"samples\":" << report.stats.count << ",\"median_us\":" << report.stats.median
      << ",\"min_us\":" << report.stats.min << ",\"q1_us\":" << report.stats.q1 << ",\"q3_us\":" << report.stats.q3
      << ",\"verified\":" << (report.problem.empty() ? "true" : "false")
      << ",\"problem\":" << json_string(report.problem) << ",\"error_message\":" << json_string(error_message)
      << ",\"inputs\":" << json_string(report.inputs) << ",\"clocked\":" << report.clocked
      << ",\"excess_us\":" << report.excess_us << ",\"excess_min_us\":" << report.excess_min_us
      << ",\"window_us\":" << report.window_us
      << ",\"prep_us\":" << report.prep_us << ",\"calls_us\":[";
  for (std::size_t k = 0; k < report.calls_us.size(); ++k) {
    if (k) out << ",";
    if (report.calls_us[k]) out << *report.calls_us[k];
    else out << "null";
  }
  out << "]}";
}

}  // namespace

std::string check_timing(const TimingPlan& plan, const std::string& reference_dir, const std::string& observed,
                         Expectations& known, const std::string& token) {
  const ChannelLines channel = read_channel(observed, token, true);
  WorkerReport worker = read_worker_report(channel);
  const std::map<std::string, Windows> windows = read_windows(channel.clock);
  const ClockNotes clock = read_clock_notes(channel.clock);
  const std::map<std::string, int> over = read_items_over(channel.clock);
  std::map<std::string, std::unique_ptr<LabModule>> references;
  std::ostringstream out;
  out << "{\"format\":\"" REDUCTION_TIMING_REPORT "\",\"version\":" << REDUCTION_REPORT_VERSION
      << ",\"device\":" << json_string(worker.device)
      << ",\"malformed\":" << worker.malformed << ",\"forged\":" << channel.forged
      << ",\"after_end\":" << channel.after_end << ",\"end\":" << (channel.end ? "true" : "false")
      << ",\"inputs\":" << json_string(clock.inputs)
      << ",\"inputs_why\":" << json_string(clock.inputs_why.substr(0, 300))
      << ",\"clock_error\":" << json_string(clock.clock_error) << ",\"items\":[";
  static const Windows no_windows;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const TimingItem& item = plan.items[i];
    const bool has_value = item.lab != "roof";
    const std::size_t depth = float_depth(item, reference_dir, references);
    const auto w = windows.find(item.id);
    const Windows& mine = w == windows.end() ? no_windows : w->second;
    std::map<int, Reported>& calls = worker.calls[item.id];
    const auto ended = over.find(item.id);
    const int over_at = ended == over.end() ? -1 : std::max(ended->second, 0);
    ItemReport report = item.type == Type::int32
                            ? judge_item<int>(plan, item, calls, mine, over_at, depth, has_value, known)
                            : judge_item<float>(plan, item, calls, mine, over_at, depth, has_value, known);
    std::string error_message;  // the run's own words: the grader quotes only what it recognizes
    if (const auto it = worker.item_errors.find(item.id); it != worker.item_errors.end())
      report.problem = item_error_problem(it->second, error_message);
    if (i) out << ",";
    write_item(out, item, report, error_message);
  }
  out << "]}\n";
  return out.str();
}

}  // namespace reduction::grading
