// CUDA virtual memory shared through a POSIX file descriptor (shared_inputs.hpp). The driver API:
// the runtime has no call for it. Its entry points come through the runtime
// (cudaGetDriverEntryPointByVersion), not by linking libcuda: the timing programs must still start
// on a machine without a driver, where they time the host lab. Both sides use the runtime's primary
// context (each process sees its GPU by its own CUDA_VISIBLE_DEVICES: the same physical GPU).
#include "shared_inputs.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace reduction::grading {
namespace {

// A driver entry point, as of the CUDA 12.0 ABI (all of these are older than that).
template <typename Function>
Function driver_entry(const char* symbol) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !function)
    throw std::runtime_error(std::string("the CUDA driver has no ") + symbol);
  return reinterpret_cast<Function>(function);
}

// `name` of the driver API, called through its entry point (looked up once).
#define REDUCTION_DRIVER_FN(name)                                                            \
  ([]() {                                                                                    \
    static const auto entry = driver_entry<decltype(&::name)>(#name);                        \
    return entry;                                                                            \
  }())

std::string driver_error(CUresult status, const char* call) {
  const char* name = nullptr;
  try {
    REDUCTION_DRIVER_FN(cuGetErrorName)(status, &name);
  } catch (const std::exception&) {
  }
  return std::string(call) + " failed: " + (name ? name : "driver error " + std::to_string(static_cast<int>(status)));
}

#define REDUCTION_DRIVER(name, ...)                                                          \
  do {                                                                                       \
    const CUresult reduction_driver_status_ = REDUCTION_DRIVER_FN(name)(__VA_ARGS__);        \
    if (reduction_driver_status_ != CUDA_SUCCESS)                                            \
      throw std::runtime_error(driver_error(reduction_driver_status_, #name));               \
  } while (0)

// The runtime's context made current, and its device.
CUdevice current_device() {
  int ordinal = 0;
  if (cudaGetDevice(&ordinal) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
    throw std::runtime_error("no CUDA device for the shared inputs");
  CUdevice device = 0;
  REDUCTION_DRIVER(cuDeviceGet, &device, ordinal);
  return device;
}

CUmemAllocationProp allocation_properties(CUdevice device) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = static_cast<int>(device);
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

void unmap(CUdeviceptr address, std::size_t bytes) {
  REDUCTION_DRIVER_FN(cuMemUnmap)(address, bytes);
  REDUCTION_DRIVER_FN(cuMemAddressFree)(address, bytes);
}

// Reserves an address range for `bytes`, maps `handle` there and gives this device read and write.
void* map_handle(CUmemGenericAllocationHandle handle, std::size_t bytes, CUdevice device) {
  CUdeviceptr address = 0;
  REDUCTION_DRIVER(cuMemAddressReserve, &address, bytes, 0, 0, 0);
  if (const CUresult status = REDUCTION_DRIVER_FN(cuMemMap)(address, bytes, 0, handle, 0); status != CUDA_SUCCESS) {
    REDUCTION_DRIVER_FN(cuMemAddressFree)(address, bytes);
    throw std::runtime_error(driver_error(status, "cuMemMap"));
  }
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = static_cast<int>(device);
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (const CUresult status = REDUCTION_DRIVER_FN(cuMemSetAccess)(address, bytes, &access, 1); status != CUDA_SUCCESS) {
    unmap(address, bytes);
    throw std::runtime_error(driver_error(status, "cuMemSetAccess"));
  }
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
}

CUdeviceptr address_of(void* data) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(data)); }

void release(unsigned long long handle) {
  REDUCTION_DRIVER_FN(cuMemRelease)(static_cast<CUmemGenericAllocationHandle>(handle));
}

}  // namespace

std::unique_ptr<SharedInputs> SharedInputs::create(std::size_t bytes, std::string& why) {
  std::unique_ptr<SharedInputs> shared(new SharedInputs());
  try {
    const CUdevice device = current_device();
    int vmm = 0, posix = 0;
    REDUCTION_DRIVER(cuDeviceGetAttribute, &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device);
    REDUCTION_DRIVER(cuDeviceGetAttribute, &posix, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                     device);
    if (!vmm || !posix) {
      why = "the device does not share memory through a file descriptor (virtual memory management: " +
            std::to_string(vmm) + ", POSIX handles: " + std::to_string(posix) + ")";
      return nullptr;
    }
    const CUmemAllocationProp prop = allocation_properties(device);
    std::size_t granularity = 0;
    REDUCTION_DRIVER(cuMemGetAllocationGranularity, &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    shared->bytes_ = std::max<std::size_t>(1, (bytes + granularity - 1) / granularity) * granularity;
    CUmemGenericAllocationHandle handle = 0;
    REDUCTION_DRIVER(cuMemCreate, &handle, shared->bytes_, &prop, 0);
    shared->handle_ = handle;
    shared->data_ = map_handle(handle, shared->bytes_, device);
    shared->mapped_ = true;
    int fd = -1;
    REDUCTION_DRIVER(cuMemExportToShareableHandle, &fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    shared->fd_ = fd;
    ::fcntl(fd, F_SETFD, 0);  // inherited by the worker the timekeeper starts
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
  return shared;
}

SharedInputs::~SharedInputs() {
  try {
    if (mapped_) unmap(address_of(data_), bytes_);
    if (handle_) release(handle_);
  } catch (const std::exception&) {  // no driver to give it back to: the process ends anyway
  }
  if (fd_ >= 0) ::close(fd_);
}

MappedInputs::MappedInputs(int fd, std::size_t bytes) : bytes_(bytes) {
  try {
    const CUdevice device = current_device();
    CUmemGenericAllocationHandle handle = 0;
    REDUCTION_DRIVER(cuMemImportFromShareableHandle, &handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    handle_ = handle;
    ::close(fd);
    fd = -1;
    data_ = map_handle(handle, bytes_, device);
    mapped_ = true;
  } catch (...) {
    if (fd >= 0) ::close(fd);
    if (handle_) release(handle_);
    throw;
  }
}

MappedInputs::~MappedInputs() {
  try {
    if (mapped_) unmap(address_of(data_), bytes_);
    if (handle_) release(handle_);
  } catch (const std::exception&) {
  }
}

}  // namespace reduction::grading
