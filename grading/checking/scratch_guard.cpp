// The guards around a lab's scratch (see scratch_guard.hpp).
#include "scratch_guard.hpp"

#include <reduction/check.hpp>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace reduction::testing {
namespace {

const std::vector<unsigned char>& guard_pattern() {
  static const std::vector<unsigned char> pattern = [] {
    std::vector<unsigned char> bytes(kScratchGuardBytes);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = scratch_guard_byte(i);
    return bytes;
  }();
  return pattern;
}

// The pattern in device memory, written once a process: arming a guard is then a device-to-device
// copy, with no wait for the host. Kept for the process's life (a static's destructor would run
// after CUDA's own teardown).
const unsigned char* device_guard_pattern() {
  static const unsigned char* pattern = [] {
    void* p = nullptr;
    REDUCTION_CHECK(cudaMalloc(&p, kScratchGuardBytes));
    REDUCTION_CHECK(cudaMemcpy(p, guard_pattern().data(), kScratchGuardBytes, cudaMemcpyHostToDevice));
    return static_cast<const unsigned char*>(p);
  }();
  return pattern;
}

// The fields of the wire format (wire.hpp) and their names, in one place.
constexpr const char* kScratchBytesField = "scratch_bytes";
constexpr const char* kBeforeChangedField = "before_changed";
constexpr const char* kBeforeReachField = "before_reach";
constexpr const char* kAfterChangedField = "after_changed";
constexpr const char* kAfterReachField = "after_reach";

// A field of 1 to 19 decimal digits.
std::optional<std::size_t> decimal(const std::map<std::string, std::string>& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end() || it->second.empty() || it->second.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return static_cast<std::size_t>(value);
}

bool plausible(const GuardDamage& damage) {
  return damage.changed <= damage.reach && damage.reach <= kScratchGuardBytes && (damage.changed == 0) == (damage.reach == 0);
}

std::string bytes_word(std::size_t count) { return std::to_string(count) + (count == 1 ? " byte" : " bytes"); }

}  // namespace

GuardDamage inspect_guard(const unsigned char* guard, std::size_t bytes, GuardSide side) {
  GuardDamage damage;
  for (std::size_t i = 0; i < bytes; ++i) {
    if (guard[i] == scratch_guard_byte(i)) continue;
    ++damage.changed;
    // The guard before the scratch ends at d_temp_storage: its last byte is the nearest.
    const std::size_t distance = side == GuardSide::after ? i + 1 : bytes - i;
    if (distance > damage.reach) damage.reach = distance;
  }
  return damage;
}

std::string describe_scratch_damage(const ScratchDamage& damage) {
  if (damage.intact()) return "";
  std::ostringstream out;
  const bool past = damage.after.changed > 0, before = damage.before.changed > 0;
  out << "the lab wrote " << (past && before ? "outside" : past ? "past the end of" : "before the start of")
      << " its scratch: ";
  if (past) out << "up to " << bytes_word(damage.after.reach) << " past d_temp_storage + temp_storage_bytes";
  if (past && before) out << " and ";
  if (before) out << "as far as " << bytes_word(damage.before.reach) << " before d_temp_storage";
  if (damage.after.reach == kScratchGuardBytes || damage.before.reach == kScratchGuardBytes)
    out << " (or farther: that is the edge of the " << kScratchGuardBytes << "-byte guard)";
  out << " (temp_storage_bytes = " << damage.scratch_bytes << "; "
      << bytes_word(damage.before.changed + damage.after.changed) << " of the guards changed)";
  return out.str();
}

std::map<std::string, std::string> scratch_damage_fields(const ScratchDamage& damage) {
  return {{kScratchBytesField, std::to_string(damage.scratch_bytes)},
          {kBeforeChangedField, std::to_string(damage.before.changed)},
          {kBeforeReachField, std::to_string(damage.before.reach)},
          {kAfterChangedField, std::to_string(damage.after.changed)},
          {kAfterReachField, std::to_string(damage.after.reach)}};
}

std::optional<ScratchDamage> parse_scratch_damage(const std::map<std::string, std::string>& fields) {
  const auto scratch = decimal(fields, kScratchBytesField);
  const auto before_changed = decimal(fields, kBeforeChangedField), before_reach = decimal(fields, kBeforeReachField);
  const auto after_changed = decimal(fields, kAfterChangedField), after_reach = decimal(fields, kAfterReachField);
  if (!scratch || !before_changed || !before_reach || !after_changed || !after_reach) return std::nullopt;
  ScratchDamage damage{*scratch, {*before_changed, *before_reach}, {*after_changed, *after_reach}};
  if (!plausible(damage.before) || !plausible(damage.after) || damage.intact()) return std::nullopt;
  return damage;
}

GuardedScratch::GuardedScratch(std::size_t bytes) : memory_(2 * kScratchGuardBytes + bytes), bytes_(bytes) {
  arm(/*poison=*/true);
}

void GuardedScratch::resize(std::size_t bytes) {
  if (bytes > capacity()) throw std::invalid_argument("GuardedScratch::resize: more than the allocation holds");
  bytes_ = bytes;
  arm(/*poison=*/true);
}

void GuardedScratch::arm(bool poison) {
  unsigned char* base = memory_.get();
  const unsigned char* pattern = device_guard_pattern();
  REDUCTION_CHECK(cudaMemcpyAsync(base, pattern, kScratchGuardBytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
  REDUCTION_CHECK(cudaMemcpyAsync(base + kScratchGuardBytes + bytes_, pattern, kScratchGuardBytes,
                                  cudaMemcpyDeviceToDevice, cudaStreamLegacy));
  if (poison) REDUCTION_CHECK(cudaMemsetAsync(base + kScratchGuardBytes, 0xFF, bytes_, cudaStreamLegacy));
}

ScratchDamage GuardedScratch::inspect() const {
  std::vector<unsigned char> before(kScratchGuardBytes), after(kScratchGuardBytes);
  const unsigned char* base = memory_.get();
  REDUCTION_CHECK(cudaMemcpy(before.data(), base, kScratchGuardBytes, cudaMemcpyDeviceToHost));
  REDUCTION_CHECK(cudaMemcpy(after.data(), base + kScratchGuardBytes + bytes_, kScratchGuardBytes,
                             cudaMemcpyDeviceToHost));
  return damage(before.data(), after.data());
}

void GuardedScratch::enqueue_read(unsigned char* before, unsigned char* after) const {
  const unsigned char* base = memory_.get();
  REDUCTION_CHECK(cudaMemcpyAsync(before, base, kScratchGuardBytes, cudaMemcpyDeviceToHost, cudaStreamLegacy));
  REDUCTION_CHECK(cudaMemcpyAsync(after, base + kScratchGuardBytes + bytes_, kScratchGuardBytes,
                                  cudaMemcpyDeviceToHost, cudaStreamLegacy));
}

ScratchDamage GuardedScratch::damage(const unsigned char* before, const unsigned char* after) const {
  return {bytes_, inspect_guard(before, kScratchGuardBytes, GuardSide::before),
          inspect_guard(after, kScratchGuardBytes, GuardSide::after)};
}

}  // namespace reduction::testing
