// The cgroup freezer of a paired run (cgroup_freezer.hpp).
#include "cgroup_freezer.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace reduction::grading {
namespace {

constexpr long kPollNs = 50'000;  // 50 us between looks at the kernel's word

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

bool write_file(const std::string& path, const char* text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t size = std::strlen(text);
  const bool ok = ::write(fd, text, size) == static_cast<ssize_t>(size);
  ::close(fd);
  return ok;
}

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
}

double now_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

}  // namespace

Freezer::Freezer(std::string folder) : folder_(std::move(folder)) {
  if (exists(folder_ + "/cgroup.freeze")) v2_ = true;
  else if (exists(folder_ + "/freezer.state")) v2_ = false;
  else throw std::invalid_argument("no cgroup freezer in " + folder_);
}

bool Freezer::write_state(bool frozen) {
  return v2_ ? write_file(folder_ + "/cgroup.freeze", frozen ? "1" : "0")
             : write_file(folder_ + "/freezer.state", frozen ? "FROZEN" : "THAWED");
}

bool Freezer::reports(bool frozen) const {
  if (!v2_) return read_file(folder_ + "/freezer.state").rfind(frozen ? "FROZEN" : "THAWED", 0) == 0;
  const std::string events = "\n" + read_file(folder_ + "/cgroup.events");
  return events.find(frozen ? "\nfrozen 1" : "\nfrozen 0") != std::string::npos;
}

bool Freezer::freeze(int timeout_ms, std::string& why) {
  if (!write_state(true)) {
    why = "cannot freeze the cgroup " + folder_ + ": " + std::strerror(errno);
    return false;
  }
  frozen_ = true;
  const double deadline = now_ms() + timeout_ms;
  const timespec pause{0, kPollNs};
  while (!reports(true)) {
    if (now_ms() > deadline) {
      why = "the student's processes were not all frozen within " + std::to_string(timeout_ms) + " ms";
      thaw(timeout_ms);
      return false;
    }
    ::nanosleep(&pause, nullptr);
  }
  return true;
}

void Freezer::thaw(int timeout_ms) {
  if (!frozen_) return;
  frozen_ = false;
  if (!write_state(false)) return;
  const double deadline = now_ms() + timeout_ms;
  const timespec pause{0, kPollNs};
  while (!reports(false) && now_ms() < deadline) ::nanosleep(&pause, nullptr);
}

bool join_cgroups(const std::vector<std::string>& procs_files) {
  char digits[24], pid[24];
  int length = 0;
  for (unsigned value = static_cast<unsigned>(::getpid()); value > 0 || length == 0; value /= 10)
    digits[length++] = static_cast<char>('0' + value % 10);
  for (int k = 0; k < length; ++k) pid[k] = digits[length - 1 - k];
  for (const std::string& file : procs_files) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, pid, static_cast<std::size_t>(length)) == length;
    ::close(fd);
    if (!ok) return false;
  }
  return true;
}

}  // namespace reduction::grading
