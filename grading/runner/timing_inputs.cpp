// A timing plan's inputs: the rotating buffers, the canaries each call's go plants, and the digest
// of a buffer (see plan.hpp). What the timekeeper writes and the checker expects, from the plan alone.
#include "plan.hpp"

#include "digest.hpp"

#include <reduction/input.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

namespace reduction::grading {

InputSpec timing_buffer(const TimingPlan& plan, Type type, std::size_t n, int buffer) {
  const std::uint64_t key = mix64(plan.seed ^ mix64(n * 4 + (type == Type::float32 ? 1 : 0)) ^ (buffer + 1ull) << 48);
  return {type, n, Pattern::mixed_sign, key};
}

int timing_buffer_of_call(const TimingPlan& plan, int call) { return call % plan.buffers; }

std::vector<Canary> timing_canaries_of_nonce(const TimingPlan& plan, Type type, std::size_t n, std::uint64_t nonce) {
  std::vector<Canary> canaries;
  if (n == 0) return canaries;
  const std::uint64_t base = mix64(timing_buffer(plan, type, n, 0).seed ^ mix64(nonce ^ 0xCA7A11ull));
  for (int k = 0; k < plan.canaries; ++k) {
    const std::uint64_t bits = mix64(base + static_cast<std::uint64_t>(k));
    const std::uint64_t value_bits = mix64(bits);
    Canary c;
    c.index = static_cast<std::size_t>(bits % n);
    c.int_value = static_cast<std::int64_t>(value_bits % 2001) - 1000;            // far outside the data's range
    c.float_value = static_cast<float>(static_cast<double>(value_bits >> 40) * 0x1p-20 - 8.0);  // [-8, 8)
    canaries.push_back(c);
  }
  return canaries;
}

std::uint64_t digest_bytes(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t hash = digest_start(bytes);
  const std::size_t words = bytes / 8;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t word;
    std::memcpy(&word, p + 8 * i, 8);
    hash += digest_term(word, i);
  }
  if (bytes % 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + 8 * words, bytes % 8);
    hash += digest_term(word, words);
  }
  return hash;
}

}  // namespace reduction::grading
