// Seeded input patterns: element i depends only on (seed, i).
#include <reduction/input.hpp>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <type_traits>

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
bool known(Pattern pattern) {
  for (Pattern p : kAllPatterns)
    if (p == pattern) return true;
  return false;
}
}  // namespace

template <>
float input_value<float>(Pattern pattern, std::uint64_t seed, std::size_t index) {
  if (!known(pattern)) throw std::invalid_argument("unknown pattern");
  return float_input(pattern, input_bits(seed, index));
}

template <>
int input_value<int>(Pattern pattern, std::uint64_t seed, std::size_t index) {
  if (!known(pattern)) throw std::invalid_argument("unknown pattern");
  return int_input(pattern, input_bits(seed, index));
}

template <typename T>
std::vector<T> make_input(Pattern pattern, std::size_t n, std::uint64_t seed) {
  if (!known(pattern)) throw std::invalid_argument("unknown pattern");
  std::vector<T> values(n);
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1 << 16) + 1);
  const std::size_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const std::size_t end = std::min(n, (w + 1) * chunk);
      for (std::size_t i = w * chunk; i < end; ++i) {
        const std::uint64_t b = input_bits(seed, i);
        if constexpr (std::is_same_v<T, float>) values[i] = float_input(pattern, b);
        else values[i] = int_input(pattern, b);
      }
    });
  }
  for (auto& t : threads) t.join();
  return values;
}

template std::vector<int> make_input<int>(Pattern, std::size_t, std::uint64_t);
template std::vector<float> make_input<float>(Pattern, std::size_t, std::uint64_t);

}  // namespace reduction
