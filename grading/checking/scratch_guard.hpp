// Guard bytes around the scratch the harness hands a lab (d_temp_storage, temp_storage_bytes): the
// test runner, the grader's observer and its timing worker all allocate the scratch through
// GuardedScratch and check both guards after every call, once the call is synchronized and
// outside any timed region. A lab that writes past temp_storage_bytes (or before d_temp_storage)
// changes them, and that call fails by name instead of going unseen.
//
// A write farther out than the guard is not seen here: it lands outside the allocation, which is
// compute-sanitizer memcheck's to report (the sanitizer stage), or in another buffer.
#pragma once

#include <reduction/cuda_raii.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace reduction::testing {

// Bytes of guard on each side. A multiple of 256, so that d_temp_storage keeps the 256-byte
// alignment of cudaMalloc.
inline constexpr std::size_t kScratchGuardBytes = 16 * 1024;
static_assert(kScratchGuardBytes % 256 == 0, "d_temp_storage must stay 256-byte aligned");

// Byte i of either guard: 0x40..0xBF, never 0x00 (a cleared partial) nor 0xFF (the poison of the
// scratch itself), and different from its neighbours, so no memset of one byte restores a guard.
constexpr unsigned char scratch_guard_byte(std::size_t i) {
  return static_cast<unsigned char>(0x40 + (i * 37) % 128);
}

// What the failure of a scratch overrun tells the student (the tests, the checker, the timing check).
inline constexpr const char* kScratchOverrunHint =
    "temp_storage_bytes is the size of the scratch you were given: size your partials from it, or from "
    "guaranteed_temp_storage_bytes(n)";

// One guard after a call: how many of its bytes changed, and how far from the scratch the farthest
// changed byte lies (1: the byte right next to it; kScratchGuardBytes: the guard's far edge).
struct GuardDamage {
  std::size_t changed = 0;
  std::size_t reach = 0;
};

enum class GuardSide { before, after };  // before d_temp_storage, or from d_temp_storage + temp_storage_bytes on

// Compares `bytes` bytes of one guard, as read back, with the pattern. Pure: host memory only.
GuardDamage inspect_guard(const unsigned char* guard, std::size_t bytes, GuardSide side);

struct ScratchDamage {
  std::size_t scratch_bytes = 0;  // temp_storage_bytes of the call
  GuardDamage before, after;
  bool intact() const { return before.changed == 0 && after.changed == 0; }
};

// "the lab wrote past the end of its scratch: up to 4 bytes past d_temp_storage + temp_storage_bytes
// (temp_storage_bytes = 1052672; 4 guard bytes changed)"; empty when intact.
std::string describe_scratch_damage(const ScratchDamage& damage);

// The damage as the runners report it (wire.hpp): five fields of decimal digits. The reader takes
// them back only when all five are there, in range and consistent; otherwise nullopt.
std::map<std::string, std::string> scratch_damage_fields(const ScratchDamage& damage);
std::optional<ScratchDamage> parse_scratch_damage(const std::map<std::string, std::string>& fields);

// Device scratch of `bytes` bytes between two guards, in one allocation:
//   [guard | scratch (d_temp_storage, `bytes`) | guard]
// The guard after starts right at d_temp_storage + bytes: a write of one byte past is seen.
class GuardedScratch {
 public:
  explicit GuardedScratch(std::size_t bytes);
  void* get() const noexcept { return memory_.get() + kScratchGuardBytes; }  // d_temp_storage
  std::size_t bytes() const noexcept { return bytes_; }                       // temp_storage_bytes
  std::size_t capacity() const noexcept { return memory_.bytes() - 2 * kScratchGuardBytes; }

  // The same allocation lent to the next call: a scratch of `bytes` (at most capacity()), the guard
  // after it moved to d_temp_storage + bytes, armed and poisoned as a new one.
  void resize(std::size_t bytes);

  // Writes the pattern into both guards and, with `poison`, 0xFF into the scratch (garbage, never
  // zeros): device-to-device copies and a memset enqueued on the legacy stream, returning at once.
  // Synchronize the device before the lab runs.
  void arm(bool poison);
  // Reads both guards back (a blocking copy). Only once the lab's work has been synchronized.
  ScratchDamage inspect() const;
  // The same in two steps, so that a caller waits once for all its reads: both guards' copies to
  // `before` and `after` (kScratchGuardBytes each, pinned host memory) enqueued on the legacy
  // stream; once it is synchronized, damage() judges them.
  void enqueue_read(unsigned char* before, unsigned char* after) const;
  ScratchDamage damage(const unsigned char* before, const unsigned char* after) const;

 private:
  DeviceBuffer<unsigned char> memory_;
  std::size_t bytes_;
};

}  // namespace reduction::testing
