// incbin_etc: the plain loop's right sums, and the machine's /etc/passwd and /etc/hostname carried
// into the module by the assembler (`.incbin` in a global asm block, into .rodata) and printed by its
// first call, so that they land in its report as program output. A compile sees a minimal /etc (the
// loader's files alone: grading/grader/judge/compile_view.py), so neither file is there: a COMPILE_ERROR
// that names the rule, and an outside_view flag.
}  // namespace (closed: the asm block and the symbols it defines are at file scope)
#include <cstdio>
asm(".section .rodata\n"
    ".globl incbin_etc_passwd, incbin_etc_passwd_end, incbin_etc_hostname, incbin_etc_hostname_end\n"
    ".hidden incbin_etc_passwd, incbin_etc_passwd_end, incbin_etc_hostname, incbin_etc_hostname_end\n"
    "incbin_etc_passwd:\n"
    ".incbin \"/etc/passwd\"\n"
    "incbin_etc_passwd_end:\n"
    "incbin_etc_hostname:\n"
    ".incbin \"/etc/hostname\"\n"
    "incbin_etc_hostname_end:\n"
    ".previous\n");
extern "C" const char incbin_etc_passwd[], incbin_etc_passwd_end[], incbin_etc_hostname[], incbin_etc_hostname_end[];
namespace {

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static bool printed = false;
  if (!printed) {
    printed = true;
    std::fwrite(incbin_etc_passwd, 1, static_cast<std::size_t>(incbin_etc_passwd_end - incbin_etc_passwd), stdout);
    std::fwrite(incbin_etc_hostname, 1, static_cast<std::size_t>(incbin_etc_hostname_end - incbin_etc_hostname),
                stdout);
    std::fflush(stdout);
  }
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
