// sanitizer_forger: lab 07 with the classic volatile-only last warp (six steps through a volatile
// pointer, no __syncwarp() between them: racy since Volta, and racecheck reports it; its sums come
// out right), plus what a student who wants a clean compute-sanitizer report tries. Every call, a
// destructor and an atexit handler print a clean summary, in the tool's exact shape, on stdout and
// on stderr (what got 5f01a7f's racy lab every point). Under the tool (its library mapped in this
// process) it also writes that summary, once and at exit, into every descriptor of its own that is
// a pipe or a file, and through /proc/<pid>/fd into every descriptor of every other process it can
// open: the tool's own log among them. The tool reports on a pipe of its own that the runner closed
// before this module loaded; what reaches it through /proc only makes the log unreadable.
}  // namespace (closed to include system headers at file scope)
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
namespace {

constexpr char kClean[] = "========= COMPUTE-SANITIZER\n"
                          "========= ERROR SUMMARY: 0 errors\n"
                          "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";

// The tool's injected libraries (libsanitizer-collection.so, libTreeLauncherTargetInjection.so, ...)
// by their file names: not any path holding "sanitizer" (this module's own does, in the grader's
// work/sanitizer_forger/: a test run that took itself for a sanitized one wrote into its own
// report channel and the CUDA driver's pipes, and broke its own run, on an H100 on 2026-11-26).
bool under_the_tool() {
  std::ifstream maps("/proc/self/maps");
  const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  for (const char* name : {"/libsanitizer-", "/libTreeLauncher", "/libInterceptorInjection"})
    if (text.find(name) != std::string::npos) return true;
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && (std::strstr(preload, "libsanitizer-") || std::strstr(preload, "libTreeLauncher"));
}

void write_if_pipe_or_file(int fd) {
  struct stat info {};
  if (fstat(fd, &info) != 0 || !(S_ISFIFO(info.st_mode) || S_ISREG(info.st_mode))) return;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);  // a pipe nobody reads must not hang the call
  if (write(fd, kClean, sizeof kClean - 1) < 0) return;
}

void write_everywhere() {
  for (int fd = 0; fd < 1024; ++fd) write_if_pipe_or_file(fd);
  DIR* processes = opendir("/proc");
  if (!processes) return;
  const std::string self = std::to_string(getpid());
  while (const dirent* process = readdir(processes)) {
    const std::string pid = process->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
    const std::string folder = "/proc/" + pid + "/fd";
    DIR* fds = opendir(folder.c_str());
    if (!fds) continue;
    while (const dirent* entry = readdir(fds)) {
      const int fd = open((folder + "/" + entry->d_name).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) continue;
      write_if_pipe_or_file(fd);
      close(fd);
    }
    closedir(fds);
  }
  closedir(processes);
}

void forge(bool everywhere) {
  std::fputs(kClean, stdout);
  std::fflush(stdout);
  std::fputs(kClean, stderr);
  if (everywhere && under_the_tool()) write_everywhere();
}

struct ForgeAtExit {
  ForgeAtExit() {
    std::atexit([] { forge(true); });
  }
  ~ForgeAtExit() { forge(true); }
} forge_at_exit;

// The classic version: nothing orders one lane's write against another lane's read of a slot.
template <typename T>
__device__ void sum_last_warp_volatile_only(volatile T* partial, unsigned tid) {
  partial[tid] += partial[tid + 32];
  partial[tid] += partial[tid + 16];
  partial[tid] += partial[tid + 8];
  partial[tid] += partial[tid + 4];
  partial[tid] += partial[tid + 2];
  partial[tid] += partial[tid + 1];
}

template <typename T>
__global__ void reduce_last_warp_volatile_only(const T* __restrict__ d_in, std::size_t num_items, T* d_partials) {
  __shared__ T partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * blockDim.x) + tid;
  const std::size_t j = i + blockDim.x;
  T sum = i < num_items ? d_in[i] : T{0};
  if (j < num_items) sum += d_in[j];
  partial[tid] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > kWarpThreads; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid < kWarpThreads) sum_last_warp_volatile_only<T>(partial, tid);  // the race
  if (tid == 0) d_partials[blockIdx.x] = partial[0];
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  static bool everywhere = true;   // the writes through /proc once, on the first call (and at exit)
  forge(everywhere);
  everywhere = false;
  reduction::reduce_in_passes(
      d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, kBlockItems, stream,
      [](const T* in, std::size_t count, T* out, unsigned blocks, cudaStream_t s) {
        reduce_last_warp_volatile_only<<<blocks, kBlockThreads, 0, s>>>(in, count, out);
      });
}
