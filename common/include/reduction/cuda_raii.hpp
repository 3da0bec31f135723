// RAII owners for device and pinned host memory, streams and events: copy deleted, move defaulted, released on
// destruction (errors at release are ignored: a destructor must not throw).
#pragma once

#include <reduction/check.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace reduction {

namespace detail {
struct DeviceFree {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
struct StreamDestroy {
  void operator()(CUstream_st* s) const noexcept { cudaStreamDestroy(s); }
};
struct EventDestroy {
  void operator()(CUevent_st* e) const noexcept { cudaEventDestroy(e); }
};
struct HostFree {
  void operator()(void* p) const noexcept { cudaFreeHost(p); }
};
}  // namespace detail

// A typed device allocation of `size` elements.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    void* p = nullptr;
    REDUCTION_CHECK(cudaMalloc(&p, (size == 0 ? 1 : size) * sizeof(T)));
    ptr_.reset(p);
  }
  T* get() const noexcept { return static_cast<T*>(ptr_.get()); }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    REDUCTION_CHECK(cudaMemcpy(get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    REDUCTION_CHECK(cudaMemcpy(host.data(), get(), bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  std::unique_ptr<void, detail::DeviceFree> ptr_;
  std::size_t size_ = 0;
};

class Stream {
 public:
  Stream() {
    cudaStream_t s = nullptr;
    REDUCTION_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream_.reset(s);
  }
  cudaStream_t get() const noexcept { return stream_.get(); }
  void synchronize() const { REDUCTION_CHECK(cudaStreamSynchronize(get())); }

 private:
  std::unique_ptr<CUstream_st, detail::StreamDestroy> stream_;
};

class Event {
 public:
  Event() {
    cudaEvent_t e = nullptr;
    REDUCTION_CHECK(cudaEventCreate(&e));
    event_.reset(e);
  }
  cudaEvent_t get() const noexcept { return event_.get(); }
  void record(cudaStream_t stream) const { REDUCTION_CHECK(cudaEventRecord(get(), stream)); }

  // Milliseconds from `start` to this event; both must have completed.
  float elapsed_ms_since(const Event& start) const {
    float ms = 0.0f;
    REDUCTION_CHECK(cudaEventElapsedTime(&ms, start.get(), get()));
    return ms;
  }

 private:
  std::unique_ptr<CUevent_st, detail::EventDestroy> event_;
};

// Page-locked host memory of `size` elements: the target of a stream-ordered copy that must
// land before the stream's next synchronize returns (a pageable copy may not be ordered).
template <typename T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t size) {
    void* p = nullptr;
    REDUCTION_CHECK(cudaMallocHost(&p, size * sizeof(T)));
    ptr_.reset(p);
  }
  T* get() const noexcept { return static_cast<T*>(ptr_.get()); }

 private:
  std::unique_ptr<void, detail::HostFree> ptr_;
};

}  // namespace reduction
