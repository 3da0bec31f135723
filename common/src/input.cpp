// Seeded input patterns: element i depends only on (seed, i).
#include <reduction/input.hpp>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace reduction {

std::string to_string(Pattern pattern) {
  switch (pattern) {
    case Pattern::uniform_positive: return "uniform_positive";
    case Pattern::mixed_sign: return "mixed_sign";
    case Pattern::all_ones: return "all_ones";
    case Pattern::small_integers: return "small_integers";
  }
  return "unknown";
}

std::optional<Pattern> parse_pattern(const std::string& text) {
  for (Pattern p : kAllPatterns)
    if (to_string(p) == text) return p;
  return std::nullopt;
}

std::uint64_t default_seed() {
  if (const char* text = std::getenv("REDUCTION_SEED")) return std::strtoull(text, nullptr, 0);
  return 20261121;
}

namespace {
std::uint64_t bits(std::uint64_t seed, std::size_t index) {
  return mix64(seed * 0xD1B54A32D192ED03ull + index);
}
// Uniform in [0, 1) with 24 random bits: exactly representable in float.
double unit(std::uint64_t b) { return static_cast<double>(b >> 40) * 0x1p-24; }
}  // namespace

template <>
float input_value<float>(Pattern pattern, std::uint64_t seed, std::size_t index) {
  const std::uint64_t b = bits(seed, index);
  switch (pattern) {
    case Pattern::uniform_positive: return static_cast<float>(unit(b));
    case Pattern::mixed_sign: return static_cast<float>(2.0 * unit(b) - 1.0);
    case Pattern::all_ones: return 1.0f;
    case Pattern::small_integers: return static_cast<float>(static_cast<int>(b % 17) - 8);
  }
  throw std::invalid_argument("unknown pattern");
}

template <>
int input_value<int>(Pattern pattern, std::uint64_t seed, std::size_t index) {
  const std::uint64_t b = bits(seed, index);
  switch (pattern) {
    case Pattern::uniform_positive: return static_cast<int>(b % 100);
    case Pattern::mixed_sign: return static_cast<int>(b % 201) - 100;
    case Pattern::all_ones: return 1;
    case Pattern::small_integers: return static_cast<int>(b % 17) - 8;
  }
  throw std::invalid_argument("unknown pattern");
}

template <typename T>
std::vector<T> make_input(Pattern pattern, std::size_t n, std::uint64_t seed) {
  std::vector<T> values(n);
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1 << 16) + 1);
  const std::size_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const std::size_t end = std::min(n, (w + 1) * chunk);
      for (std::size_t i = w * chunk; i < end; ++i) values[i] = input_value<T>(pattern, seed, i);
    });
  }
  for (auto& t : threads) t.join();
  return values;
}

template std::vector<int> make_input<int>(Pattern, std::size_t, std::uint64_t);
template std::vector<float> make_input<float>(Pattern, std::size_t, std::uint64_t);

}  // namespace reduction
