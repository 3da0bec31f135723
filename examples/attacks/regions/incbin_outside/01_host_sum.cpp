// incbin_outside: the plain loop's right sums, and files outside every view carried into the module
// by the assembler (`.incbin`) and printed by its first call: root's shell start-up file and the lab's
// reference solution by its absolute path in the repository (make_examples.py writes the path where
// @REPO@ stands). No compile sees either (grading/grader/judge/compile_view.py): a COMPILE_ERROR that names
// the rule, and an outside_view flag.
}  // namespace (closed: the asm block and the symbols it defines are at file scope)
#include <cstdio>
asm(".section .rodata\n"
    ".globl incbin_outside_start, incbin_outside_end\n"
    ".hidden incbin_outside_start, incbin_outside_end\n"
    "incbin_outside_start:\n"
    ".incbin \"/root/.bashrc\"\n"
    ".incbin \"@REPO@/solutions/01_host_sum/host_sum.cpp\"\n"
    "incbin_outside_end:\n"
    ".previous\n");
extern "C" const char incbin_outside_start[], incbin_outside_end[];
namespace {

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static bool printed = false;
  if (!printed) {
    printed = true;
    std::fwrite(incbin_outside_start, 1, static_cast<std::size_t>(incbin_outside_end - incbin_outside_start), stdout);
    std::fflush(stdout);
  }
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
