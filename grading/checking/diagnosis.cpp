// Bug-class hints for wrong integer sums (see diagnosis.hpp).
#include "diagnosis.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace reduction::testing {
namespace {

std::int32_t wrapped_sum_if(const std::vector<int>& input, std::size_t end,
                            bool (*keep)(std::size_t, std::size_t), std::size_t block) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < end; ++i)
    if (keep(i, block)) sum += static_cast<std::uint32_t>(input[i]);
  return static_cast<std::int32_t>(sum);
}

bool always(std::size_t, std::size_t) { return true; }
bool first_of_pair(std::size_t i, std::size_t block) { return i % (2 * block) < block; }

}  // namespace

std::string diagnose_int_sum(const std::vector<int>& input, std::int32_t got, std::int32_t expected,
                             std::optional<std::int32_t> previous) {
  const std::size_t n = input.size();
  std::ostringstream hint;
  if (got == kIntSentinel)
    return "the output still holds the sentinel the test wrote before the call: nothing was ever "
           "written to d_out (was the kernel launched? did it return early?)";
  if (got == 0 && expected != 0)
    return "the result is 0: no element reached the output (is the kernel launched, and is d_out "
           "reset before the launch rather than after it?)";
  if (previous && *previous != 0 &&
      static_cast<std::int32_t>(static_cast<std::uint32_t>(expected) + static_cast<std::uint32_t>(*previous)) == got)
    return "the result is this call's sum plus the previous result: the accumulator was not reset "
           "before the launch (reset d_out with cudaMemsetAsync on the stream, every call)";
  if (static_cast<std::int32_t>(2u * static_cast<std::uint32_t>(expected)) == got && expected != 0)
    return "the result is exactly twice the sum: every element was added twice (overlapping "
           "ranges, or a grid that covers the input twice)";
  if (n > 0 && static_cast<std::int32_t>(static_cast<std::uint32_t>(expected) - static_cast<std::uint32_t>(input[n - 1])) == got)
    return "the result misses exactly the last element: an off-by-one in the bounds check (< n - 1?)";
  for (std::size_t block = 32; block <= 8192; block *= 2) {
    const std::size_t full = n - n % block;
    if (full == n || full == 0) continue;
    if (wrapped_sum_if(input, full, always, block) == got) {
      hint << "the result equals the sum of the first " << full << " elements (n rounded down to a "
           << "multiple of " << block << "): the tail past the last full block was dropped; "
           << "launch ceil(n / per_block) blocks and bounds-check every load";
      return hint.str();
    }
  }
  for (std::size_t block = 32; block <= 4096 && block < n; block *= 2) {
    if (wrapped_sum_if(input, block, always, block) == got) {  // callers pass a wrong result only
      hint << "the result equals the sum of the first " << block << " elements only: just one "
           << "block's partial reached the output (the other blocks' partials were not combined)";
      return hint.str();
    }
  }
  for (std::size_t block = 64; block <= 2048 && block < n; block *= 2) {
    if (wrapped_sum_if(input, n, first_of_pair, block) == got) {
      hint << "the result equals the sum of only the first " << block << " of every " << 2 * block
           << " elements: the second element of each pair was never added during the load";
      return hint.str();
    }
  }
  return "no simple pattern (dropped tail, lost block, double count) explains it: suspect a race "
         "(does the result change from run to run?), a missing __syncthreads(), or wrong indexing";
}

std::string diagnose_float_sum(float got, double reference, double bound, std::optional<float> previous) {
  std::uint32_t bits;
  std::memcpy(&bits, &got, sizeof bits);
  if (bits == kFloatSentinelBits)
    return "the output still holds the sentinel (a NaN) written before the call: d_out was never written";
  if (std::isnan(got))
    return "NaN: an element was read from uninitialised memory (out of bounds, or shared memory a thread never wrote)";
  if (previous && std::fabs(got - (reference + *previous)) <= bound + 1e-6 * std::fabs(*previous))
    return "the result is this call's sum plus the previous result: the accumulator was not reset before the launch";
  return "compare with the int results of the same size: if they are exact, the float path differs: values "
         "truncated (a shared array or variable of the wrong type), or a longer chain of additions than this "
         "lab's algorithm (the h of the bound), as atomics or a long loop per thread make; if they fail too, "
         "follow their hint";
}

}  // namespace reduction::testing
