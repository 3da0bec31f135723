// What the harness needs to know about the GPU, read through cudaDeviceGetAttribute.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace reduction {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_memory_bytes = 0;
  int sm_clock_khz = 0;      // peak SM clock
  int memory_clock_khz = 0;  // peak memory clock
  int memory_bus_bits = 0;
  int driver_version = 0;    // e.g. 13000
  int runtime_version = 0;

  // Datasheet-style peak DRAM bandwidth from clock and bus width (GB/s); a lead, not a roof.
  double theoretical_bandwidth_gbps() const;
  std::string summary() const;
};

// True when at least one CUDA device can be used.
bool cuda_device_available();

// The current device's description; throws CudaError when there is none.
DeviceInfo query_device_info();

}  // namespace reduction
