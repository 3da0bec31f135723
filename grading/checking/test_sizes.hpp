// The sizes every lab is tested on: one list for the student's test suite and the grader's plan.
#pragma once

#include <cstddef>
#include <vector>

namespace reduction::testing {

// Sizes that break the usual bugs: empty, single, warp and block edges, non-powers of two, 2^24+7.
inline const std::vector<std::size_t> kSizes = {
    0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 65535, 65536,
    1000003, std::size_t{1} << 20, std::size_t{1} << 24, (std::size_t{1} << 24) + 7};

// The `large` label: 64-bit indexing.
inline constexpr std::size_t kLargeSize = (std::size_t{1} << 31) + 7;

// Sizes up to this go to the Small suite (the one the sanitizers run).
inline constexpr std::size_t kSmallLimit = 65536;

// Lab 10's unaligned-input sizes: below, at and above the head (0-3 elements), a block's round
// and the one-block limit; each at 1, 2 and 3 elements past a 16-byte boundary.
inline const std::vector<std::size_t> kUnalignedSizes = {1, 2, 3, 4, 5, 7, 4099, 1000003};
inline constexpr std::size_t kUnalignedOffsets[] = {1, 2, 3};

// Float determinism: these sizes, this many calls.
inline const std::vector<std::size_t> kDeterminismSizes = {(std::size_t{1} << 24) + 7, 1000003};
inline constexpr int kDeterminismCalls = 5;

}  // namespace reduction::testing
