// channel_forger: its host_sum returns 0, and it forges on the runner's report pipe instead. A
// static constructor (run when the module loads, before any case) finds the pipe in /proc/self/fd
// and writes an "observed" line with the right-looking shape for every case id c001..c400, once
// without a token and once with each 32-hex-digit string it finds in its own memory; every call
// writes them again; a destructor and an atexit handler write them after the runner's end. Lines
// without the token count for nothing, its own calls come first with the token it found only if it
// found it (then they are wrong sums: its own), and nothing runs after the runner's end.
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

std::string forged_observations(const std::string& token) {
  std::ostringstream out;
  for (int c = 1; c <= 400; ++c) {
    char id[8];
    std::snprintf(id, sizeof id, "c%03d", c);
    out << "{\"v\":2," << (token.empty() ? "" : "\"t\":\"" + token + "\",") << "\"event\":\"observed\",\"case\":\"" << id
        << "\",\"status\":\"ok\",\"digest\":\"\",\"message\":\"\",\"values\":[\"0x00000000\"]}\n";
  }
  return out.str();
}

void forge() {
  std::string text = forged_observations("");
  for (const std::string& token : token_candidates()) text += forged_observations(token);
  for (int fd = 3; fd < 256; ++fd) {
    char link[64] = "";
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (readlink(path.c_str(), link, sizeof link - 1) > 0 && std::string(link).rfind("pipe:", 0) == 0) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);  // without blocking: a pipe nobody reads
      if (write(fd, text.data(), text.size()) < 0) continue;
    }
  }
}

struct ForgeAlways {
  ForgeAlways() {
    forge();
    std::atexit(forge);
  }
  ~ForgeAlways() { forge(); }
} forge_always;

template <typename T>
T host_sum(const T*, std::size_t) {
  static int calls = 0;
  if (calls++ % 64 == 0) forge();
  return T{0};
}
