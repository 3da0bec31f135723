// libscout: looks for the CUDA libraries a lab must not call at run time (cuBLAS, cuFFT, cuRAND,
// cuSPARSE, cuSOLVER, NPP, nvJPEG, cuDNN, NVRTC): dlopen() by name, then every file of that name
// under the usual folders (the toolkit's lib64 and targets, /usr/lib, /opt, Python's site
// packages). If any one opens, its sum is off by one and stderr names it; when none is in reach
// of its sandbox, its sums are right.
}  // namespace (closed to include system headers at file scope)
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <string>
namespace {

namespace fs = std::filesystem;

const char* const kDenied[] = {"libcublas", "libcublasLt", "libcufft", "libcurand", "libcusparse", "libcusolver",
                               "libnppc", "libnvjpeg", "libcudnn", "libnvrtc", "libnvblas"};

bool denied_name(const std::string& name) {
  for (const char* prefix : kDenied)
    if (name.rfind(std::string(prefix) + ".so", 0) == 0 || name.rfind(std::string(prefix) + "_", 0) == 0)
      return true;
  return false;
}

// The first denied library this process can load or read, or "".
std::string reachable_library() {
  for (const char* prefix : kDenied)
    for (const char* suffix : {".so", ".so.13", ".so.12", ".so.11", ".so.9"}) {
      const std::string name = std::string(prefix) + suffix;
      if (void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
        dlclose(handle);
        return "dlopen(" + name + ")";
      }
    }
  std::error_code error;
  for (const char* root : {"/usr/local", "/usr/lib", "/usr/lib64", "/opt"}) {
    int seen = 0;
    for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error), end;
         !error && it != end && seen < 400000; it.increment(error), ++seen) {
      if (it.depth() > 9) it.disable_recursion_pending();
      const std::string name = it->path().filename().string();
      if (!denied_name(name)) continue;
      const int fd = open(it->path().c_str(), O_RDONLY);
      if (fd >= 0) {
        char byte;
        const bool readable = read(fd, &byte, 1) == 1;
        close(fd);
        if (readable) return it->path().string();
      }
    }
    error.clear();
  }
  return "";
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  static const std::string found = reachable_library();
  T sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  if (found.empty()) return sum;
  std::fprintf(stderr, "libscout reached %s\n", found.c_str());
  return sum + T{1};
}
