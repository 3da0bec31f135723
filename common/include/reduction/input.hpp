// Deterministic, seeded test inputs. Element i of a pattern is a pure function of (seed, i),
// so any failure can be replayed from the seed it prints, at any size, in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <typename T>
T input_value(Pattern pattern, std::uint64_t seed, std::size_t index);

// n values of the pattern, generated in parallel on the host.
template <typename T>
std::vector<T> make_input(Pattern pattern, std::size_t n, std::uint64_t seed);

}  // namespace reduction
