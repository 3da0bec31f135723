// dlopen-based loading of lab modules. RTLD_LOCAL keeps a student's and the reference's
// identically named symbols apart; RTLD_NODELETE keeps a module mapped until exit, because
// the CUDA runtime still holds its kernels.
#include <reduction/lab_module.hpp>

#include <dlfcn.h>

#include <cstdio>

namespace reduction {

LabModule LabModule::load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw LabLoadError("cannot load lab module '" + path + "': " + (reason ? reason : "unknown"));
  }
  auto entry = reinterpret_cast<ReductionLabEntryFn>(dlsym(handle, REDUCTION_LAB_ENTRY_SYMBOL));
  if (entry == nullptr)
    throw LabLoadError("'" + path + "' is not a lab module: it exports no " +
                       REDUCTION_LAB_ENTRY_SYMBOL + " (did the file lose its REDUCTION_DEFINE_LAB line?)");
  const ReductionLab* lab = entry();
  if (lab == nullptr || lab->abi_version != REDUCTION_LAB_ABI_VERSION)
    throw LabLoadError("'" + path + "' was built against another version of lab.hpp: rebuild it");
  // The operator entry is optional: most labs have none.
  const ReductionOperatorLab* operators = nullptr;
  if (auto operator_entry = reinterpret_cast<ReductionOperatorEntryFn>(dlsym(handle, REDUCTION_OPERATOR_ENTRY_SYMBOL))) {
    operators = operator_entry();
    if (operators == nullptr || operators->abi_version != REDUCTION_OPERATOR_ABI_VERSION ||
        operators->reduce_int == nullptr || operators->reduce_float == nullptr || operators->moments_float == nullptr)
      throw LabLoadError("'" + path + "' was built against another version of operators.hpp: rebuild it");
  }
  return LabModule(path, lab, operators);
}

std::string LabModule::folder() const {
  char number[8];
  std::snprintf(number, sizeof number, "%02d", lab_->number);
  return std::string(number) + "_" + lab_->name;
}

template <>
LabCallResult LabModule::sum<int>(const int* in, std::size_t num_items, int* out, void* temp,
                                  std::size_t temp_bytes, cudaStream_t stream) const {
  char message[1024] = "";
  const ReductionLabStatus status =
      lab_->sum_int(in, num_items, out, temp, temp_bytes, stream, message, sizeof message);
  return {status, message};
}

template <>
LabCallResult LabModule::sum<float>(const float* in, std::size_t num_items, float* out,
                                    void* temp, std::size_t temp_bytes, cudaStream_t stream) const {
  char message[1024] = "";
  const ReductionLabStatus status =
      lab_->sum_float(in, num_items, out, temp, temp_bytes, stream, message, sizeof message);
  return {status, message};
}

const ReductionOperatorLab& LabModule::operators() const {
  if (operators_ == nullptr)
    throw std::logic_error("lab " + folder() + " has no operator entry (" + REDUCTION_OPERATOR_ENTRY_SYMBOL + ")");
  return *operators_;
}

template <>
LabCallResult LabModule::reduce<int>(ReductionOperator op, const int* in, std::size_t num_items, int* out,
                                     void* temp, std::size_t temp_bytes, cudaStream_t stream) const {
  char message[1024] = "";
  const ReductionLabStatus status =
      operators().reduce_int(op, in, num_items, out, temp, temp_bytes, stream, message, sizeof message);
  return {status, message};
}

template <>
LabCallResult LabModule::reduce<float>(ReductionOperator op, const float* in, std::size_t num_items, float* out,
                                       void* temp, std::size_t temp_bytes, cudaStream_t stream) const {
  char message[1024] = "";
  const ReductionLabStatus status =
      operators().reduce_float(op, in, num_items, out, temp, temp_bytes, stream, message, sizeof message);
  return {status, message};
}

LabCallResult LabModule::moments(const float* in, std::size_t num_items, ReductionMoments* out, void* temp,
                                 std::size_t temp_bytes, cudaStream_t stream) const {
  char message[1024] = "";
  const ReductionLabStatus status =
      operators().moments_float(in, num_items, out, temp, temp_bytes, stream, message, sizeof message);
  return {status, message};
}

std::string module_file_name(const std::string& folder) { return "lab" + folder + ".so"; }

}  // namespace reduction
