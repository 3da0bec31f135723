// A test input written where the lab reads it, on the GPU, and its digest taken there after the
// call: a device case then moves no input through the host (a 2^24 case spent about 140 ms of a
// test run's 3.6 s generating, copying, copying back and hashing on the host; H100, 2026-11-27).
// The values are input_value's bit for bit (input.hpp's element functions, compiled for both), so
// the checker, which regenerates every input on the host, expects exactly what the lab was given.
#pragma once

#include <reduction/input.hpp>

#include <cstddef>
#include <cstdint>

namespace reduction::testing {

// n values of `pattern` from `seed` at `d` (int or float), on the legacy default stream; `enqueue`
// returns at once, `write` when they are written.
template <typename T>
void enqueue_input_on_device(T* d, Pattern pattern, std::size_t n, std::uint64_t seed);
template <typename T>
void write_input_on_device(T* d, Pattern pattern, std::size_t n, std::uint64_t seed);

// grading::digest_bytes of the `bytes` at `d` (4-byte aligned, a multiple of 4 bytes), on the device.
std::uint64_t digest_on_device(const void* d, std::size_t bytes);

// The same in two steps, so that a caller waits once for all its reads: the digest's sum enqueued on
// the legacy default stream into the device word `sum`; then, once that word is read back,
// digest_of_sum gives digest_on_device's value.
void enqueue_digest(const void* d, std::size_t bytes, unsigned long long* sum);
std::uint64_t digest_of_sum(std::size_t bytes, unsigned long long sum);

}  // namespace reduction::testing
