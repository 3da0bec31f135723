// Lab 01's own test: the host loop really accumulates in float, and the drift it shows at
// 2^24 elements is printed next to Kahan's, so the lesson is measured rather than told.
#include "lab_specific.hpp"

#include <reduction/reference.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>

namespace reduction::testing {

void register_lab01_tests(const LabModule& lab, const LabRunner& runner) {
  register_test("Lab01", "FloatAccumulatorDriftsWhereKahanDoesNot", [&lab, &runner] {
    const std::size_t n = std::size_t{1} << 24;
    const std::uint64_t seed = default_seed();
    const auto input = make_input<float>(Pattern::uniform_positive, n, seed);
    const auto run = runner.run(input, describe_case(lab, n, "float", Pattern::uniform_positive, seed));
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(run);

    const double exact = reference_sum(input).sum;
    const float naive = naive_float_sum(input.data(), n);
    const float kahan = kahan_sum(input.data(), n);
    std::cout << std::fixed << std::setprecision(3) << "  n = 2^24 uniform [0,1): double " << exact << ", float loop " << run.value << " (error "
              << run.value - exact << "), Kahan in float " << kahan << " (error " << kahan - exact << ")\n";
    EXPECT_EQ(run.value, naive) << "host_sum<float> must be the plain loop accumulating in float, in index "
                                   "order (it gave another value than that loop: a double accumulator, or "
                                   "another order?)";
    EXPECT_GT(std::fabs(run.value - exact), 16 * std::fabs(kahan - exact))
        << "the float loop was expected to drift far more than Kahan's compensated sum";
  }, /*needs_gpu=*/false);
}

}  // namespace reduction::testing
