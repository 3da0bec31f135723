// markup_printer (honest sum, hostile text): what it prints is HTML that would run
// in the class report if the report let it through as markup: a script, an image whose error
// handler runs, the end of the <pre> its output is shown in. Its sums are the plain loop's: the
// report shows the output as text, and the page runs nothing of it.
}  // namespace (closed to include system headers at file scope)
#include <cstdio>
namespace {

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static int calls = 0;
  if (calls++ == 0) {
    std::printf("</pre></details><script>document.title='pwned by scripter'</script>"
                "<img src=x onerror=\"document.body.innerHTML='pwned'\"><iframe src=\"https://evil.example\">\n");
    std::fprintf(stderr, "<style>body{display:none}</style><meta http-equiv=\"refresh\" content=\"0;url=https://evil.example\">\n");
  }
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return sum;
}
