// Timing the way nvbench does it: CUDA events on the stream around the launch only, L2 flushed
// before every sample, warm-up first, at least min_samples, stop when the relative standard
// deviation is under target_rsd or the time budget is spent; samples taken while the SM clock
// sat well below its peak are discarded (and counted).
#pragma once

#include <reduction/cuda_raii.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace reduction {

struct TimingOptions {
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 1000;
  double target_rsd = 0.005;       // 0.5 %
  double budget_seconds = 1.0;     // per measured implementation
  double throttle_fraction = 0.75; // discard samples with SM clock below this share of peak
};

// Order statistics of a set of samples (microseconds).
struct SampleStats {
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0, mean = 0, rsd = 0;
  std::size_t count = 0;
  double iqr() const { return q3 - q1; }
};
SampleStats summarize(std::vector<double> samples);

struct Timing {
  SampleStats stats;
  std::size_t discarded_throttled = 0;
  bool converged = false;  // rsd reached the target (else the budget ran out)
};

// Something to time: enqueues one run on the stream (device) or runs it (host).
using Launch = std::function<void(cudaStream_t)>;

class Timer {
 public:
  // Allocates the L2 flush buffer (twice the device's L2) and measures the peak SM clock.
  explicit Timer(TimingOptions options = {});

  // Times one device implementation.
  Timing time_device(const Launch& launch);
  // Times several implementations interleaved sample by sample, in rotating order, so slow
  // drift of the machine affects all alike (student vs reference, A/A check).
  std::vector<Timing> time_device_interleaved(const std::vector<Launch>& launches);
  // Times a host function with a steady clock (lab 01), same stopping rule.
  Timing time_host(const std::function<void()>& run);

  cudaStream_t stream() const { return stream_.get(); }
  const TimingOptions& options() const { return options_; }
  // Enqueues a write of twice the L2's size on stream(): what the next sample reads is cold.
  void flush_l2();

 private:
  double sm_clock_mhz();  // measured on the stream, just after a sample
  bool throttled(double mhz) const;

  TimingOptions options_;
  Stream stream_;
  DeviceBuffer<unsigned char> flush_buffer_;
  DeviceBuffer<unsigned long long> clock_probe_;
  Event start_, stop_;
  double peak_mhz_ = 0;
  unsigned char flush_value_ = 0;
};

// The read roof: a kernel that only reads `bytes` bytes with 16-byte loads over a grid-stride
// loop; its time is the floor for any reduction of that many bytes.
class ReadRoof {
 public:
  explicit ReadRoof(std::size_t max_bytes);
  void launch(std::size_t bytes, cudaStream_t stream) const;

 private:
  DeviceBuffer<unsigned char> data_;
  DeviceBuffer<unsigned int> sink_;
  int grid_ = 0;
};

}  // namespace reduction
