// Lab 10's own tests: right sums when d_in is not 16-byte aligned (the head and tail that the
// 16-byte loads cannot take). Its float results bitwise identical from call to call (the lab
// declares REDUCTION_LAB_FLOAT_DETERMINISTIC) are checked for every lab that declares it
// (register_lab_specific_tests), as Lab10.FloatIsBitwiseIdentical*.
#include "lab_specific.hpp"

namespace reduction::testing {

void register_lab10_tests(const LabModule& lab, const LabRunner& runner) {
  register_unaligned_input_tests(lab, runner, "Lab10");
}

}  // namespace reduction::testing
