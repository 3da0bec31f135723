// The runner's inputs written on the GPU (device_input.hpp) against the host's make_input, and the
// input digest (digest.hpp) taken on either side.
#include "../checking/device_input.hpp"
#include "../runner/plan.hpp"

#include <reduction/cuda_raii.hpp>
#include <reduction/device_info.hpp>
#include <reduction/input.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace reduction::testing {
namespace {

using grading::digest_bytes;

TEST(InputDigest, AnyChangedElementChangesIt) {
  const auto input = make_input<int>(Pattern::mixed_sign, 1001, 7);  // an odd count: a zero-padded last word
  const auto digest = digest_bytes(input.data(), input.size() * sizeof(int));
  for (std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{500}, std::size_t{1000}}) {
    auto changed = input;
    changed[at] += 1;
    EXPECT_NE(digest_bytes(changed.data(), changed.size() * sizeof(int)), digest) << "element " << at;
  }
  auto swapped = input;
  std::swap(swapped[10], swapped[11]);
  ASSERT_NE(swapped[10], swapped[11]);
  EXPECT_NE(digest_bytes(swapped.data(), swapped.size() * sizeof(int)), digest) << "two elements swapped";
  EXPECT_NE(digest_bytes(input.data(), 1000 * sizeof(int)), digest) << "one element fewer";
  EXPECT_EQ(digest_bytes(input.data(), input.size() * sizeof(int)), digest);
}

class DeviceInput : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_available())
      GTEST_SKIP() << "no CUDA device present: GPU test skipped (it runs on a machine with a GPU)";
  }
};

template <typename T>
void expect_same_as_host(Pattern pattern, std::size_t n, std::size_t offset) {
  const std::uint64_t seed = 20261127 + n;
  const auto host = make_input<T>(pattern, n, seed);
  DeviceBuffer<T> buffer(n + offset);
  write_input_on_device(buffer.get() + offset, pattern, n, seed);
  std::vector<T> device(n);
  if (n) REDUCTION_CHECK(cudaMemcpy(device.data(), buffer.get() + offset, n * sizeof(T), cudaMemcpyDeviceToHost));
  ASSERT_EQ(std::memcmp(device.data(), host.data(), n * sizeof(T)), 0)
      << to_string(pattern) << " n = " << n << " offset = " << offset;
  EXPECT_EQ(digest_on_device(buffer.get() + offset, n * sizeof(T)), digest_bytes(host.data(), n * sizeof(T)))
      << to_string(pattern) << " n = " << n << " offset = " << offset;
}

TEST_F(DeviceInput, IsTheHostInputBitForBitWithTheSameDigest) {
  for (Pattern pattern : kAllPatterns)
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4099}, std::size_t{1000003}})
      for (std::size_t offset : {0, 1, 2, 3}) {
        expect_same_as_host<int>(pattern, n, offset);
        expect_same_as_host<float>(pattern, n, offset);
      }
}

TEST_F(DeviceInput, ADigestOnTheDeviceSeesOneChangedElement) {
  const std::size_t n = 65537;
  DeviceBuffer<float> buffer(n);
  write_input_on_device(buffer.get(), Pattern::uniform_positive, n, 3);
  const auto before = digest_on_device(buffer.get(), n * sizeof(float));
  const float other = 2.0f;  // outside the pattern's [0, 1)
  REDUCTION_CHECK(cudaMemcpy(buffer.get() + n - 1, &other, sizeof other, cudaMemcpyHostToDevice));
  EXPECT_NE(digest_on_device(buffer.get(), n * sizeof(float)), before);
}

}  // namespace
}  // namespace reduction::testing
