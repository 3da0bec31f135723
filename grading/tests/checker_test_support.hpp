// What the checker tests (checker_test.cpp, operator_checker_test.cpp, timing_checker_test.cpp) write
// the way a runner would: the run's token their observations carry, the start of every line an
// honest runner writes, and a call's scratch damage as fields.
#pragma once

#include "../checking/scratch_guard.hpp"

#include <string>

#define TEST_TOKEN "00112233445566778899aabbccddeeff"
#define WIRE_PREFIX "{\"v\":2,\"t\":\"" TEST_TOKEN "\","

namespace reduction::grading {
inline const std::string kToken = TEST_TOKEN;

// What a runner prints for a call that wrote outside its scratch: the damage as numbers
// (scratch_guard.hpp), beside values that may well be right.
inline std::string scratch_fields(const testing::ScratchDamage& damage) {
  std::string text;
  for (const auto& [key, value] : testing::scratch_damage_fields(damage)) text += ",\"" + key + "\":\"" + value + "\"";
  return text;
}
}  // namespace reduction::grading
