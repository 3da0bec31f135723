// Lab 12 — any operator: lab 10's two-step reduction written once, generic over an operator with
// an identity (common/include/reduction/operators.hpp): sum, product, min and max of int and
// float, and the mean and standard deviation of float as (count, mean, M2) triples combined by
// Chan et al.'s parallel formula. The same kernels, the same grid and the same tree for every
// operator; the sum is lab 10's, addition for addition.
//
// You edit only the region between the BEGIN/END STUDENT CODE markers. Everything else in this
// file is fixed: it is identical to the reference solution, and a test checks that it stays so.
#include <reduction/operators.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace {

[[maybe_unused]] constexpr int kBlockThreads = 256;  // threads per block, both kernels
[[maybe_unused]] constexpr int kWarpThreads = 32;
[[maybe_unused]] constexpr int kBlockWarps = kBlockThreads / kWarpThreads;
[[maybe_unused]] constexpr unsigned kFullWarp = 0xffffffffu;
[[maybe_unused]] constexpr int kVectorItems = 4;  // elements per 16-byte load (int4, float4)
// U, the loads in flight: 16-byte loads each thread issues back to back (all in flight at once)
// per round of its grid-stride loop, each feeding its own accumulator. Try 1, 2, 4, 8.
[[maybe_unused]] constexpr int kVectorsPerThread = 4;
// Blocks of the first kernel per SM: all resident at once (__launch_bounds__ holds the compiler
// to registers that allow it), so the grid is a single wave.
[[maybe_unused]] constexpr int kBlocksPerSm = 4;
static_assert(kBlockThreads % kWarpThreads == 0 && kBlockWarps <= kWarpThreads);
static_assert(kVectorsPerThread >= 1 && (kVectorsPerThread & (kVectorsPerThread - 1)) == 0,
              "the accumulators are combined pairwise: a power of two");

// The number of SMs of the current device (cudaDevAttrMultiProcessorCount: one attribute read,
// cheap enough to do on every call).
int device_sm_count() {
  int device = 0;
  int sm_count = 0;
  REDUCTION_CHECK(cudaGetDevice(&device));
  REDUCTION_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return sm_count;
}

// Blocks of the first kernel for n elements on a GPU of sm_count SMs: kBlocksPerSm per SM, fewer
// when n would not give every thread one full round of kVectorsPerThread loads. A function of n
// and the device only: the same split (for a given offset of d_in from a 16-byte boundary),
// hence the same float result, on every call.
unsigned partial_blocks_for(std::size_t num_items, int sm_count) {
  const std::size_t block_round = std::size_t{kBlockThreads} * kVectorsPerThread * kVectorItems;
  const std::size_t wanted = reduction::ceil_div(num_items, block_round);
  const std::size_t full_wave = static_cast<std::size_t>(std::max(sm_count, 1)) * kBlocksPerSm;
  return static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, full_wave));
}

// ==== BEGIN STUDENT CODE ====
template <typename T>
struct Vector4;  // the 16-byte vector of four T
template <>
struct Vector4<int> {
  using type = int4;
};
template <>
struct Vector4<float> {
  using type = float4;
};

// __shfl_down_sync for any value: one shuffle per 32-bit word (MeanStddev's 16-byte triple takes
// four, a sum's int or float one, as in lab 10). The copies stay in registers.
template <typename Value>
__device__ Value shuffle_down(const Value& value, int offset) {
  static_assert(sizeof(Value) % sizeof(unsigned) == 0, "a Value is shuffled as whole 32-bit words");
  unsigned words[sizeof(Value) / sizeof(unsigned)];
  memcpy(words, &value, sizeof(Value));
#pragma unroll
  for (unsigned& word : words) word = __shfl_down_sync(kFullWarp, word, offset);
  Value result;
  memcpy(&result, words, sizeof(Value));
  return result;
}

template <typename Op>
__device__ typename Op::Value warp_reduce(typename Op::Value value) {  // lane 0 gets the warp's value
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) value = Op::combine(value, shuffle_down(value, offset));
  return value;
}

// The combination of `value` over the block, in thread 0: lab 09's two shuffle stages, with
// Op::identity() where lab 10 had 0. Called once per kernel by all kBlockThreads threads.
template <typename Op>
__device__ typename Op::Value block_reduce(typename Op::Value value) {
  using Value = typename Op::Value;
  __shared__ Value warp_totals[kBlockWarps];
  const unsigned lane = threadIdx.x % kWarpThreads;
  const unsigned warp = threadIdx.x / kWarpThreads;
  value = warp_reduce<Op>(value);
  if (lane == 0) warp_totals[warp] = value;
  __syncthreads();
  value = Op::identity();
  if (warp == 0) value = warp_reduce<Op>(lane < kBlockWarps ? warp_totals[lane] : Op::identity());
  return value;
}

// The value of one 16-byte vector: (x + y) + (z + w) for the sum, as in lab 10.
template <typename Op, typename Vector>
__device__ typename Op::Value combine_vector(const Vector& v) {
  return Op::combine(Op::combine(Op::lift(v.x), Op::lift(v.y)), Op::combine(Op::lift(v.z), Op::lift(v.w)));
}

// Fixes: one kernel per operator. This is lab 10's first kernel with its three uses of `+` and
// `0` replaced by Op::combine, Op::lift and Op::identity, so every operator gets the one-wave grid,
// the 16-byte loads and the VectorsPerThread loads in flight that put lab 10 at the read roof.
// Still slow: nothing for sum, min and max (DRAM is the floor); MeanStddev does a division and
// two 64-bit-to-float conversions per vector in the accumulator's combine, about ten times the
// arithmetic of a sum per element: still well under what the SMs can do while DRAM delivers.
template <typename Op, int VectorsPerThread>
__global__ void __launch_bounds__(kBlockThreads, kBlocksPerSm)
    reduce_grid_stride_partials(const typename Op::Input* __restrict__ d_in, std::size_t num_items,
                                typename Op::Value* __restrict__ d_partials) {
  using T = typename Op::Input;
  using Value = typename Op::Value;
  using Vector = typename Vector4<T>::type;
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * kBlockThreads + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kBlockThreads;

  // [0, n) = a scalar head up to the first 16-byte boundary, a body of whole 16-byte vectors,
  // and a scalar tail (lab 10's split).
  const std::size_t misaligned =
      (reinterpret_cast<std::uintptr_t>(d_in) % sizeof(Vector)) / sizeof(T);
  const std::size_t to_boundary = (kVectorItems - misaligned) % kVectorItems;
  const std::size_t head = to_boundary < num_items ? to_boundary : num_items;
  const Vector* body = reinterpret_cast<const Vector*>(d_in + head);
  const std::size_t body_vectors = (num_items - head) / kVectorItems;
  const std::size_t tail = head + body_vectors * kVectorItems;

  Value acc[VectorsPerThread];  // independent accumulators: one dependency chain each
#pragma unroll
  for (int k = 0; k < VectorsPerThread; ++k) acc[k] = Op::identity();
  if (thread < head) acc[0] = Op::combine(acc[0], Op::lift(d_in[thread]));
  if (tail + thread < num_items) acc[0] = Op::combine(acc[0], Op::lift(d_in[tail + thread]));

  std::size_t v = thread;
  for (; v + (VectorsPerThread - 1) * threads < body_vectors; v += VectorsPerThread * threads) {
    Vector x[VectorsPerThread];
#pragma unroll
    for (int k = 0; k < VectorsPerThread; ++k) x[k] = __ldg(body + v + k * threads);
#pragma unroll
    for (int k = 0; k < VectorsPerThread; ++k) acc[k] = Op::combine(acc[k], combine_vector<Op>(x[k]));
  }
#pragma unroll
  for (int k = 0; k + 1 < VectorsPerThread; ++k) {
    if (v + k * threads < body_vectors) acc[k] = Op::combine(acc[k], combine_vector<Op>(__ldg(body + v + k * threads)));
  }

#pragma unroll
  for (int width = VectorsPerThread / 2; width > 0; width /= 2) {
#pragma unroll
    for (int k = 0; k < width; ++k) acc[k] = Op::combine(acc[k], acc[k + width]);
  }
  const Value total = block_reduce<Op>(acc[0]);
  if (threadIdx.x == 0) d_partials[blockIdx.x] = total;
}

// Fixes: lab 10's second kernel for any operator: one block combines the few hundred partials in
// an order fixed by the thread layout and writes *d_out.
// Still slow: a whole launch for a few kilobytes, a few microseconds that matter only at small n.
template <typename Op>
__global__ void __launch_bounds__(kBlockThreads)
    reduce_block_partials(const typename Op::Value* __restrict__ d_partials, unsigned count,
                          typename Op::Value* d_out) {
  typename Op::Value value = Op::identity();
  for (unsigned k = threadIdx.x; k < count; k += kBlockThreads) value = Op::combine(value, d_partials[k]);
  value = block_reduce<Op>(value);
  if (threadIdx.x == 0) *d_out = value;
}

template <typename Op>
void reduce(const typename Op::Input* d_in, std::size_t num_items, typename Op::Value* d_out,
            void* d_temp_storage, std::size_t temp_storage_bytes, cudaStream_t stream) {
  using Value = typename Op::Value;
  // n = 0 needs no special case: one block over nothing writes Op::identity() to *d_out.
  const unsigned blocks = partial_blocks_for(num_items, device_sm_count());
  if (blocks > 1 && temp_storage_bytes < blocks * sizeof(Value))
    throw std::length_error("lab 12: the scratch space is too small for one partial per block");
  Value* d_partials = blocks == 1 ? d_out : static_cast<Value*>(d_temp_storage);
  reduce_grid_stride_partials<Op, kVectorsPerThread>
      <<<blocks, kBlockThreads, 0, stream>>>(d_in, num_items, d_partials);
  REDUCTION_CHECK(cudaGetLastError());
  if (blocks == 1) return;
  reduce_block_partials<Op><<<1, kBlockThreads, 0, stream>>>(d_partials, blocks, d_out);
  REDUCTION_CHECK(cudaGetLastError());
}
// ==== END STUDENT CODE ====

// The sum entry every lab exports (lab.hpp): the generic reduction with Sum, so the generic
// suite, the benchmark and the grader treat this lab's sum like any other lab's.
template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  reduce<reduction::ops::Sum<T>>(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
}

// The longest chain of combines (of additions, for the sum; the same tree for every operator),
// with B = kBlockThreads, U = kVectorsPerThread and G = partial_blocks_for(n):
// a thread has at most m = ceil((n / 4) / (G * B)) vectors; its accumulator k gets every U-th
// one, ceil(m / U) additions, each of a vector's sum (2 levels: (x + y) + (z + w)), plus the
// head and tail elements (at most 2 more); log2(U) levels combine the accumulators, log2(B) the
// block; the second kernel's threads add ceil(G / B) partials each, then log2(B) levels.
std::size_t float_error_depth(std::size_t num_items) {
  if (num_items == 0) return 0;
  int sm_count = 1;  // no device to ask: assume the smallest grid, which gives the longest chains
  try {
    sm_count = device_sm_count();
  } catch (const reduction::CudaError&) {
    (void)cudaGetLastError();  // clear it: this query's failure is not the lab's
  }
  const std::size_t blocks = partial_blocks_for(num_items, sm_count);
  const std::size_t vectors_per_thread =
      reduction::ceil_div(num_items / kVectorItems, blocks * kBlockThreads);
  const std::size_t per_accumulator = reduction::ceil_div(vectors_per_thread, kVectorsPerThread);
  return 2 + per_accumulator + 2 + reduction::log2_floor(kVectorsPerThread) +
         reduction::log2_floor(kBlockThreads) + reduction::ceil_div(blocks, kBlockThreads) +
         reduction::log2_floor(kBlockThreads);
}

}  // namespace

REDUCTION_DEFINE_LAB(12, "any_operator", "one generic reduction, any operator",
                     reduce_sum, float_error_depth, REDUCTION_LAB_FLOAT_DETERMINISTIC)
REDUCTION_DEFINE_OPERATOR_LAB(reduce)
