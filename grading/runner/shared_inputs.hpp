// Device memory the timekeeper writes and the timing worker reads, across two processes (and the
// sandbox between them): a CUDA virtual-memory allocation exported as a POSIX file descriptor,
// which the worker inherits and maps (cuMemImportFromShareableHandle). The descriptor is the only
// way in, so it crosses PID namespaces and uids as any inherited descriptor does.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace reduction::grading {

// The timekeeper's allocation. Its descriptor stays open (and inheritable) for the worker.
class SharedInputs {
 public:
  // `bytes` rounded up to the allocation granularity; nullptr and `why` when this device or driver
  // cannot share memory this way (no virtual memory management, no POSIX descriptor handles).
  static std::unique_ptr<SharedInputs> create(std::size_t bytes, std::string& why);
  ~SharedInputs();
  SharedInputs(const SharedInputs&) = delete;
  SharedInputs& operator=(const SharedInputs&) = delete;

  void* data() const { return data_; }
  int fd() const { return fd_; }
  std::size_t bytes() const { return bytes_; }

 private:
  SharedInputs() = default;
  void* data_ = nullptr;
  int fd_ = -1;
  std::size_t bytes_ = 0;
  unsigned long long handle_ = 0;
  bool mapped_ = false;
};

// The worker's mapping of it (read and write: the lab's d_in; the timekeeper rewrites it before
// every call, so nothing a lab leaves there lasts).
class MappedInputs {
 public:
  // Throws std::runtime_error naming the driver call that failed. Closes `fd` (imported or not).
  MappedInputs(int fd, std::size_t bytes);
  ~MappedInputs();
  MappedInputs(const MappedInputs&) = delete;
  MappedInputs& operator=(const MappedInputs&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  unsigned long long handle_ = 0;
  bool mapped_ = false;
};

}  // namespace reduction::grading
