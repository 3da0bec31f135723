// Device description through cudaDeviceGetAttribute (the cudaDeviceProp clock fields are gone).
#include <reduction/check.hpp>
#include <reduction/device_info.hpp>

#include <cuda_runtime_api.h>

#include <sstream>

namespace reduction {
namespace {
int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  REDUCTION_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}
}  // namespace

bool cuda_device_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

DeviceInfo query_device_info() {
  DeviceInfo info;
  REDUCTION_CHECK(cudaGetDevice(&info.ordinal));
  cudaDeviceProp prop{};
  REDUCTION_CHECK(cudaGetDeviceProperties(&prop, info.ordinal));
  info.name = prop.name;
  info.global_memory_bytes = prop.totalGlobalMem;
  info.compute_major = attribute(cudaDevAttrComputeCapabilityMajor, info.ordinal);
  info.compute_minor = attribute(cudaDevAttrComputeCapabilityMinor, info.ordinal);
  info.sm_count = attribute(cudaDevAttrMultiProcessorCount, info.ordinal);
  info.l2_bytes = static_cast<std::size_t>(attribute(cudaDevAttrL2CacheSize, info.ordinal));
  info.sm_clock_khz = attribute(cudaDevAttrClockRate, info.ordinal);
  info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, info.ordinal);
  info.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, info.ordinal);
  REDUCTION_CHECK(cudaDriverGetVersion(&info.driver_version));
  REDUCTION_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

double DeviceInfo::theoretical_bandwidth_gbps() const {
  // Double data rate: two transfers per memory clock.
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

std::string DeviceInfo::summary() const {
  std::ostringstream out;
  out << name << " (sm_" << compute_major << compute_minor << ", " << sm_count << " SMs, "
      << l2_bytes / (1024 * 1024) << " MiB L2, SM clock " << sm_clock_khz / 1000 << " MHz, "
      << "memory " << memory_clock_khz / 1000 << " MHz x " << memory_bus_bits << " bit, driver "
      << driver_version / 1000 << "." << (driver_version % 1000) / 10 << ", runtime "
      << runtime_version / 1000 << "." << (runtime_version % 1000) / 10 << ")";
  return out.str();
}

}  // namespace reduction
