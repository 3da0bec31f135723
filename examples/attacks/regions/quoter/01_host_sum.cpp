// quoter: a compile error made of other people's files. Each file it can see is #included, so
// the compiler's diagnostics quote its lines: /etc/passwd, the compiler's own environment, the
// reference solution (with `sum` and `values` made into stray characters, so every line of its
// student region that uses them is an error the compiler prints), a classmate's spliced file and
// the reference module; then /etc/hostname, unguarded, which no compile of the grader sees (the
// compile's view: a COMPILE_ERROR that names it). It never compiles: the last line is an #error.
#if __has_include("/etc/passwd")
#include "/etc/passwd"
#endif
#if __has_include("/proc/self/environ")
#include "/proc/self/environ"
#endif
#define sum @
#define values `
#if __has_include("/work/main/solutions/01_host_sum/host_sum.cpp")
#include "/work/main/solutions/01_host_sum/host_sum.cpp"
#elif __has_include(<../../solutions/01_host_sum/host_sum.cpp>)
#include <../../solutions/01_host_sum/host_sum.cpp>
#endif
#if __has_include("../../../aaron/src/01_host_sum/host_sum.cpp")
#include "../../../aaron/src/01_host_sum/host_sum.cpp"
#endif
#undef sum
#undef values
#if __has_include("/work/main/build/solutions/solutions/lab01_host_sum.so")
#include "/work/main/build/solutions/solutions/lab01_host_sum.so"
#endif
#include "/etc/hostname"
#error "quoter: nothing to compile here"
