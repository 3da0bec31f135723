// scripter (honest sum): its folder's name is markup, which the grader refuses as a student name;
// were it graded, it would print its name's markup once more.
}  // namespace (closed to include system headers at file scope)
#include <cstdio>
namespace {

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static bool printed = false;
  if (!printed) printed = std::puts("<script>document.title='pwned'</script>") >= 0;
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
