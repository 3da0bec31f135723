// Deterministic, seeded test inputs. Element i of a pattern is a pure function of (seed, i),
// so any failure can be replayed from the seed it prints, at any size, in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define REDUCTION_INPUT_HD __host__ __device__
#else
#define REDUCTION_INPUT_HD
#endif

namespace reduction {

enum class Pattern {
  uniform_positive,  // float in [0, 1); int in [0, 100)
  mixed_sign,        // float in [-1, 1); int in [-100, 100]
  all_ones,          // 1
  small_integers,    // integers in [-8, 8], also for float (exact while partial sums stay small)
};

inline constexpr Pattern kAllPatterns[] = {Pattern::uniform_positive, Pattern::mixed_sign,
                                           Pattern::all_ones, Pattern::small_integers};

std::string to_string(Pattern pattern);
std::optional<Pattern> parse_pattern(const std::string& text);

// The default seed of the suites; override with REDUCTION_SEED to explore other inputs.
std::uint64_t default_seed();

// A 64-bit mix of (seed, index): splitmix64 finalizer.
REDUCTION_INPUT_HD constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Element `index` of a pattern, in one place for the host and the device (the grader's runner
// writes its test inputs on the GPU, the checker regenerates them on the host: the same bits).
REDUCTION_INPUT_HD inline std::uint64_t input_bits(std::uint64_t seed, std::size_t index) {
  return mix64(seed * 0xD1B54A32D192ED03ull + index);
}
// Uniform in [0, 1) with 24 random bits: exactly representable in float.
REDUCTION_INPUT_HD inline double input_unit(std::uint64_t b) { return static_cast<double>(b >> 40) * 0x1p-24; }
REDUCTION_INPUT_HD inline float float_input(Pattern pattern, std::uint64_t b) {
  switch (pattern) {
    case Pattern::uniform_positive: return static_cast<float>(input_unit(b));
    case Pattern::mixed_sign: return static_cast<float>(2.0 * input_unit(b) - 1.0);  // exact: no rounding to differ
    case Pattern::all_ones: return 1.0f;
    case Pattern::small_integers: return static_cast<float>(static_cast<int>(b % 17) - 8);
  }
  return 0.0f;
}
REDUCTION_INPUT_HD inline int int_input(Pattern pattern, std::uint64_t b) {
  switch (pattern) {
    case Pattern::uniform_positive: return static_cast<int>(b % 100);
    case Pattern::mixed_sign: return static_cast<int>(b % 201) - 100;
    case Pattern::all_ones: return 1;
    case Pattern::small_integers: return static_cast<int>(b % 17) - 8;
  }
  return 0;
}

// The same, on the host; throws std::invalid_argument for a value outside the enum.
template <typename T>
T input_value(Pattern pattern, std::uint64_t seed, std::size_t index);

// n values of the pattern, generated in parallel on the host.
template <typename T>
std::vector<T> make_input(Pattern pattern, std::size_t n, std::uint64_t seed);

}  // namespace reduction
