// Runs a piece of work with a wall-clock deadline. A kernel that never terminates cannot be
// stopped from the host, so on a missed deadline the process reports what was running and
// ends with exit code 124 (the `timeout` convention): the test fails instead of blocking the run.
#pragma once

#include <functional>
#include <string>

namespace reduction {

inline constexpr int kTimeoutExitCode = 124;

// Seconds allowed for one call of a lab: REDUCTION_CALL_TIMEOUT_S, else `default_seconds`.
double call_timeout_seconds(double default_seconds);

// Runs `work` on a helper thread. Exceptions from `work` are rethrown here. If it has not
// finished after `seconds`, prints "REDUCTION-TIMEOUT: <what> ..." and _Exit(124)s.
void run_with_deadline(const std::function<void()>& work, double seconds, const std::string& what);

}  // namespace reduction
