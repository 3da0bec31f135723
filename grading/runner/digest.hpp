// The digest of a lab's input after a call: the runner reports it, the checker compares it with
// the digest of the input it regenerates. A sum (mod 2^64) over the input's 8-byte words of
// mix64(word + index x K), the last word zero-padded, started from the byte count: order-free, so
// the runner takes it on the GPU in one pass (device_input.hpp) and the checker on the host, with
// the same bits. Any one changed word changes it (mix64 is a bijection); it detects an honest
// write to d_in, nothing more: the runner is untrusted and could report any digest.
#pragma once

#include <reduction/input.hpp>

#include <cstddef>
#include <cstdint>

namespace reduction::grading {

REDUCTION_INPUT_HD inline std::uint64_t digest_start(std::size_t bytes) { return mix64(bytes); }
REDUCTION_INPUT_HD inline std::uint64_t digest_term(std::uint64_t word, std::uint64_t index) {
  return mix64(word + index * 0x9E3779B97F4A7C15ull);
}

}  // namespace reduction::grading
