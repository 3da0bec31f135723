// Judging a timing run: every timed call's result recomputed, then the statistics.
#pragma once

#include "check_tests.hpp"
#include "plan.hpp"

#include <string>

namespace reduction::grading {

// The report (one JSON object, format "reduction-check-timing"): per item the sample count, the
// median, min and quartiles of the timed calls in microseconds, each timed call's claim in call
// order (calls_us, null where unreported), and whether every call (warm-up included) returned the right sum for the buffer and canaries it was given; a lab's float
// tolerance comes from its reference module in `reference_dir`. The sums of the timing buffers
// come from `known` (the run's cache), computed and added there when missing.
// Only the channel's lines with the run's `token` before its "end" count; a line that does not
// parse, has another token, comes after "end" or reports a call twice is counted in the report
// (malformed, forged, after_end) and makes the whole run's timings unusable to the grader.
std::string check_timing(const TimingPlan& plan, const std::string& reference_dir, const std::string& observed,
                         Expectations& known, const std::string& token);

}  // namespace reduction::grading
