// sample_forger (after the reference region, its reduce_sum renamed honest_reduce_sum): correct
// but about 500x slow at n >= 2^22 (it holds the GPU 25 ms after the real work), and it forges its
// timing: at the first large call it takes the report pipe its command line names (--report-fd=,
// the test runner's and the timing worker's), looks for the run's token in its own memory
// (/proc/self/mem), and writes a "sample" line of 50 us for every call of every item, with each
// token it found and with none; its static destructor and atexit handler do it again and rewrite
// the start of its stdout. What it wrote earns nothing: lines without the token count for nothing,
// forged lines with it repeat calls the worker reports too (the run's timings are then unusable),
// and the worker _exit()s after its report ends, so no destructor runs. It writes line by line,
// each line whole: one write of all of it would stop where the pipe is full, in the middle of a
// line, and spoil the runner's next line (a test case lost: a RUNTIME_ERROR of its own making).
}  // namespace (closed to include system headers at file scope)
#include <fcntl.h>
#include <unistd.h>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>
namespace {

__global__ void hold_the_gpu(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// The report pipe: the descriptor its command line names.
int report_fd() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  for (std::string word; std::getline(in, word, '\0');)
    if (word.rfind("--report-fd=", 0) == 0) return std::atoi(word.c_str() + 12);
  return -1;
}

// 32 hex digits in a row, anywhere in the process's writable memory.
std::set<std::string> token_candidates() {
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  const int mem = open("/proc/self/mem", O_RDONLY);
  for (std::string line; mem >= 0 && std::getline(maps, line) && found.size() < 16;) {
    unsigned long begin = 0, end = 0, inode = 0;
    char perms[8] = "";
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %*s %*s %lu %n", &begin, &end, perms, &inode, &path_at) < 4 ||
        perms[0] != 'r' || perms[1] != 'w')
      continue;
    const std::string path = path_at > 0 ? line.substr(path_at) : "";
    // The heap and anonymous memory only (not the driver's device mappings, slow or unreadable).
    if (inode != 0 || (!path.empty() && path != "[heap]") || end - begin > (16ul << 20)) continue;
    std::vector<char> bytes(end - begin);
    if (pread(mem, bytes.data(), bytes.size(), static_cast<off_t>(begin)) <= 0) continue;
    std::size_t run = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      run = std::isxdigit(static_cast<unsigned char>(bytes[i])) ? run + 1 : 0;
      if (run == 32 && (i + 1 == bytes.size() || !std::isxdigit(static_cast<unsigned char>(bytes[i + 1]))))
        found.insert(std::string(bytes.data() + i - 31, 32));
    }
  }
  if (mem >= 0) close(mem);
  return found;
}

std::string forged_samples(const std::string& token) {
  std::ostringstream out;
  for (int item = 1; item <= 40; ++item)
    for (int call = 0; call < 40; ++call) {
      char id[8];
      std::snprintf(id, sizeof id, "t%03d", item);
      out << "{\"v\":2," << (token.empty() ? "" : "\"t\":\"" + token + "\",") << "\"event\":\"sample\",\"item\":\"" << id
          << "\",\"call\":\"" << call << "\",\"us\":\"50.0000\",\"value\":\"0x4b800000\"}\n";
    }
  return out.str();
}

void forge() {
  static const std::set<std::string> tokens = token_candidates();
  const int fd = report_fd();
  if (fd < 0) return;
  std::string text = forged_samples("");
  for (const std::string& token : tokens) text += forged_samples(token);
  // Without blocking (nobody may be reading), a line a write: a pipe takes a write of up to
  // PIPE_BUF bytes whole or not at all.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  for (std::size_t at = 0, end; at < text.size(); at = end + 1) {
    end = text.find('\n', at);
    if (write(fd, text.data() + at, end + 1 - at) < 0) break;
  }
}

struct ForgeAtExit {
  ForgeAtExit() {
    std::atexit([] {
      forge();
      const std::string text = forged_samples("");
      if (pwrite(1, text.data(), text.size(), 0) < 0) return;
    });
  }
  ~ForgeAtExit() { forge(); }
} forge_at_exit;

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
  if (num_items >= (std::size_t{1} << 22)) {
    static bool forged = false;
    if (!forged) forged = true, forge();
    hold_the_gpu<<<1, 1, 0, stream>>>(25ull * 1000 * 1000);
    REDUCTION_CHECK(cudaGetLastError());
  }
}
