// A host replay of lab 12's reference reduction (solutions/12_any_operator/any_operator.cu):
// the same grid for n on a GPU of a given number of SMs, the same split of d_in into a scalar
// head, 16-byte vectors and a scalar tail, and every Op::combine in the order and grouping the
// kernels perform it (one float operation each, so a float replay gives the GPU's bits, round to
// nearest and no contraction being all a product or a sum involves). It exists to reason about
// that order on a machine without a GPU: which elements each thread combines, and how the float
// product of near-1 data rounds in it (lab12_replay_test.cpp). Change it with the kernel.
#pragma once

#include <reduction/operators.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

namespace reduction::testing::lab12 {

// The reference's constants (any_operator.cu).
inline constexpr std::size_t kBlockThreads = 256;
inline constexpr std::size_t kWarpThreads = 32;
inline constexpr std::size_t kVectorItems = 4;
inline constexpr std::size_t kVectorsPerThread = 4;
inline constexpr std::size_t kBlocksPerSm = 4;

// partial_blocks_for(): enough blocks for one full round of loads per thread, at most one wave.
inline std::size_t partial_blocks_for(std::size_t num_items, std::size_t sm_count) {
  const std::size_t block_round = kBlockThreads * kVectorsPerThread * kVectorItems;
  const std::size_t wanted = (num_items + block_round - 1) / block_round;
  return std::clamp<std::size_t>(wanted, 1, std::max<std::size_t>(sm_count, 1) * kBlocksPerSm);
}

// warp_reduce(): lane 0's value after the shuffle-down tree (offsets 16, 8, 4, 2, 1). A lane whose
// partner is past the warp gets its own value back, which only lanes lane 0 never reads use.
template <typename Op>
typename Op::Value warp_reduce(std::array<typename Op::Value, kWarpThreads> lanes) {
  for (std::size_t offset = kWarpThreads / 2; offset > 0; offset /= 2)
    for (std::size_t lane = 0; lane + offset < kWarpThreads; ++lane)
      lanes[lane] = Op::combine(lanes[lane], lanes[lane + offset]);
  return lanes[0];
}

// block_reduce(): each warp's tree, then warp 0 over the warps' totals, Op::identity() past them.
template <typename Op>
typename Op::Value block_reduce(const typename Op::Value* threads) {
  std::array<typename Op::Value, kWarpThreads> totals;
  totals.fill(Op::identity());
  for (std::size_t warp = 0; warp < kBlockThreads / kWarpThreads; ++warp) {
    std::array<typename Op::Value, kWarpThreads> lanes;
    std::copy(threads + warp * kWarpThreads, threads + (warp + 1) * kWarpThreads, lanes.begin());
    totals[warp] = warp_reduce<Op>(lanes);
  }
  return warp_reduce<Op>(totals);
}

// reduce<Op>() over n elements whose first lies `misaligned` elements past a 16-byte boundary
// (0 to 3), on a GPU of sm_count SMs. lift_at(i) is Op::lift(d_in[i]) (a test may count the calls).
template <typename Op, typename LiftAt>
typename Op::Value replay(std::size_t num_items, std::size_t misaligned, std::size_t sm_count, const LiftAt& lift_at) {
  using Value = typename Op::Value;
  const std::size_t blocks = partial_blocks_for(num_items, sm_count);
  const std::size_t threads = blocks * kBlockThreads;
  const std::size_t to_boundary = (kVectorItems - misaligned % kVectorItems) % kVectorItems;
  const std::size_t head = std::min(to_boundary, num_items);
  const std::size_t body_vectors = (num_items - head) / kVectorItems;
  const std::size_t tail = head + body_vectors * kVectorItems;
  const auto vector_value = [&](std::size_t v) {  // combine_vector(): (x + y) + (z + w)
    const std::size_t i = head + v * kVectorItems;
    return Op::combine(Op::combine(lift_at(i), lift_at(i + 1)), Op::combine(lift_at(i + 2), lift_at(i + 3)));
  };

  // reduce_grid_stride_partials: each thread's accumulators, then each block's total.
  std::vector<Value> partials(blocks);
  std::vector<Value> block_threads(kBlockThreads);
  for (std::size_t block = 0; block < blocks; ++block) {
    for (std::size_t t = 0; t < kBlockThreads; ++t) {
      const std::size_t thread = block * kBlockThreads + t;
      std::array<Value, kVectorsPerThread> acc;
      acc.fill(Op::identity());
      if (thread < head) acc[0] = Op::combine(acc[0], lift_at(thread));
      if (tail + thread < num_items) acc[0] = Op::combine(acc[0], lift_at(tail + thread));
      std::size_t v = thread;
      for (; v + (kVectorsPerThread - 1) * threads < body_vectors; v += kVectorsPerThread * threads) {
        std::array<Value, kVectorsPerThread> x;  // loaded (and their vectors combined) before any accumulates
        for (std::size_t k = 0; k < kVectorsPerThread; ++k) x[k] = vector_value(v + k * threads);
        for (std::size_t k = 0; k < kVectorsPerThread; ++k) acc[k] = Op::combine(acc[k], x[k]);
      }
      for (std::size_t k = 0; k + 1 < kVectorsPerThread; ++k)
        if (v + k * threads < body_vectors) acc[k] = Op::combine(acc[k], vector_value(v + k * threads));
      for (std::size_t width = kVectorsPerThread / 2; width > 0; width /= 2)
        for (std::size_t k = 0; k < width; ++k) acc[k] = Op::combine(acc[k], acc[k + width]);
      block_threads[t] = acc[0];
    }
    partials[block] = block_reduce<Op>(block_threads.data());
  }
  if (blocks == 1) return partials[0];

  // reduce_block_partials: one block, thread t over partials t, t + 256, ..., then the block tree.
  for (std::size_t t = 0; t < kBlockThreads; ++t) {
    Value value = Op::identity();
    for (std::size_t k = t; k < blocks; k += kBlockThreads) value = Op::combine(value, partials[k]);
    block_threads[t] = value;
  }
  return block_reduce<Op>(block_threads.data());
}

}  // namespace reduction::testing::lab12
