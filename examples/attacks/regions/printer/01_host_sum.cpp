// printer (honest): prints the way students debug. Its first call prints a banner without a
// newline, every call prints n in a terminal colour (an escape sequence), and every 50th call
// writes a line on stderr that looks like the runner's own report. Its sums are the plain loop's:
// printing never costs a point, and the report shows the text as program output.
}  // namespace (closed to include system headers at file scope)
#include <cstdio>
namespace {

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static int calls = 0;
  if (calls++ == 0) std::printf("host_sum by printer, v2 -- ");  // no newline: whatever comes next glues on
  if (calls % 50 == 0) std::fprintf(stderr, "{\"v\":2,\"event\":\"end\"} (call %d, n = %zu)\n", calls, num_items);
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  std::printf("\x1b[32m%zu\x1b[0m ", num_items);
  return sum;
}
