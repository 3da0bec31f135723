// Turns a wrong integer sum into a hint at the likely bug class, by checking which plausible
// mistake reproduces the wrong value exactly (integers make that possible).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reduction::testing {

// Returns a one-sentence hint, or an empty string when no known mistake reproduces `got`.
// `previous` is the value the output held before the call (the last result), if any.
std::string diagnose_int_sum(const std::vector<int>& input, std::int32_t got, std::int32_t expected,
                             std::optional<std::int32_t> previous = std::nullopt);

// The same for a float result outside its tolerance: `reference` the double sum, `bound` the
// allowed error, `previous` the value the output held before the call, if any.
std::string diagnose_float_sum(float got, double reference, double bound, std::optional<float> previous = std::nullopt);

// The int sentinel written to the output before each call, and the float one (a NaN payload).
inline constexpr std::int32_t kIntSentinel = 0x5EADBEEF;
inline constexpr std::uint32_t kFloatSentinelBits = 0x7FBADBADu;

}  // namespace reduction::testing
