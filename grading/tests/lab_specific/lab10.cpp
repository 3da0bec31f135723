// Lab 10's own tests: float results bitwise identical from call to call (the lab declares
// REDUCTION_LAB_FLOAT_DETERMINISTIC, and this is what checks it), and right sums when d_in is
// not 16-byte aligned (the head and tail that the 16-byte loads cannot take).
#include "lab_specific.hpp"

#include <reduction/cuda_raii.hpp>
#include <reduction/lab.hpp>
#include <reduction/watchdog.hpp>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

namespace reduction::testing {
namespace {

constexpr int kCalls = 5;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  std::ostringstream out;
  out << value << " (0x" << std::hex << bits << ")";
  return out.str();
}

void add_determinism_case(const LabModule& lab, const LabRunner& runner, std::size_t n, Pattern pattern) {
  const std::string name = "FloatIsBitwiseIdenticalOver5Calls_" + to_string(pattern) + "_n" + std::to_string(n);
  register_test("Lab10", name, [&lab, &runner, n, pattern] {
    const std::uint64_t seed = default_seed();
    const auto input = make_input<float>(pattern, n, seed);
    const std::string what = describe_case(lab, n, "float", pattern, seed);
    const auto first = runner.run(input, what);
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(first);
    expect_correct_sum(lab, input, first, what);
    EXPECT_TRUE(lab.float_deterministic())
        << "lab 10 must declare REDUCTION_LAB_FLOAT_DETERMINISTIC in REDUCTION_DEFINE_LAB";
    for (int call = 2; call <= kCalls; ++call) {
      const auto again = runner.run(input, what + ", call " + std::to_string(call));
      EXPECT_TRUE(same_bits(again.value, first.value))
          << what << "\n  call 1 gave " << bits_of(first.value) << ", call " << call << " gave "
          << bits_of(again.value)
          << "\n  hint: the same n on the same GPU must add the same numbers in the same order. An atomic, "
             "a grid that depends on anything but n and the device, or a partial read before it was "
             "written (a missing dependency between the two kernels) makes the order vary.";
    }
  }, /*needs_gpu=*/true);
}

// One call with d_in = a cudaMalloc'd buffer + `offset` elements (so 4 * offset bytes past a
// 16-byte boundary), n elements, the output holding the sentinel before the call.
template <typename T>
LabRun<T> run_at_offset(const LabModule& lab, const std::vector<T>& input, std::size_t offset,
                        const std::string& what) {
  DeviceBuffer<T> buffer(input.size() + offset);
  DeviceBuffer<T> output(1);
  DeviceBuffer<unsigned char> temp(guaranteed_temp_storage_bytes(input.size()));
  Stream stream;
  REDUCTION_CHECK(cudaMemset(buffer.get(), 0xFF, buffer.bytes()));  // the skipped slots: garbage
  REDUCTION_CHECK(cudaMemset(temp.get(), 0xFF, temp.bytes()));
  REDUCTION_CHECK(cudaMemcpy(buffer.get() + offset, input.data(), input.size() * sizeof(T), cudaMemcpyHostToDevice));
  const T before = sentinel<T>();
  REDUCTION_CHECK(cudaMemcpy(output.get(), &before, sizeof(T), cudaMemcpyHostToDevice));
  LabRun<T> run;
  run_with_deadline(
      [&] {
        const LabCallResult result = lab.sum<T>(buffer.get() + offset, input.size(), output.get(), temp.get(),
                                                temp.bytes(), stream.get());
        run.not_implemented = result.status == REDUCTION_LAB_NOT_IMPLEMENTED;
        run.message = result.message;
        if (result.status == REDUCTION_LAB_ERROR) throw std::runtime_error(what + ": " + result.message);
        stream.synchronize();
      },
      call_timeout_seconds(60.0), what);
  REDUCTION_CHECK(cudaMemcpy(&run.value, output.get(), sizeof(T), cudaMemcpyDeviceToHost));
  return run;
}

template <typename T>
void add_unaligned_case(const LabModule& lab, std::size_t n) {
  const std::string type = type_name<T>();
  register_test("Lab10", "UnalignedInputGivesTheRightSum_" + type + "_n" + std::to_string(n), [&lab, n, type] {
    const std::uint64_t seed = default_seed();
    const auto input = make_input<T>(Pattern::mixed_sign, n, seed);
    for (std::size_t offset : {1, 2, 3}) {
      const std::string what = describe_case(lab, n, type, Pattern::mixed_sign, seed) + ", d_in = a 16-byte " +
                               "aligned buffer + " + std::to_string(offset) + " element(s)";
      const auto run = run_at_offset(lab, input, offset, what);
      REDUCTION_STOP_IF_NOT_IMPLEMENTED(run);
      expect_correct_sum(lab, input, run, what + " (hint: the scalar head before the first 16-byte boundary, "
                                              "or the tail after the last whole vector)");
    }
  }, /*needs_gpu=*/true);
}

}  // namespace

void register_lab10_tests(const LabModule& lab, const LabRunner& runner) {
  for (std::size_t n : {(std::size_t{1} << 24) + 7, std::size_t{1000003}}) {
    add_determinism_case(lab, runner, n, Pattern::uniform_positive);
    add_determinism_case(lab, runner, n, Pattern::mixed_sign);
  }
  // Sizes below, at and above the head (0-3 elements), a block's round and the one-block limit.
  for (std::size_t n : {1, 2, 3, 4, 5, 7, 4099, 1000003}) {
    add_unaligned_case<int>(lab, n);
    add_unaligned_case<float>(lab, n);
  }
}

}  // namespace reduction::testing
