// reduction_variance_demo: why lab 12 combines (count, mean, M2) triples (Chan et al.) instead of
// a sum and a sum of squares. On float data with a large mean and a small spread it computes the
// standard deviation three ways in float, on the host (arithmetic, not timing: any CPU gives the
// same digits), next to a long double two-pass reference of the same float values:
//   naive       sum and sum of squares over a balanced tree, then sumsq / n - mean^2
//   Welford     MeanStddev::combine element by element
//   Chan        MeanStddev::combine over the same balanced tree as naive (the lab's algorithm)
// Usage: reduction_variance_demo [n]   (default 2^24)
#include <reduction/input.hpp>
#include <reduction/operator_reference.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Dataset {
  double mean, stddev;
};

// The error of `got` against the reference, relative when the reference spread is not 0.
std::string error_text(double got, double reference) {
  char text[48];
  if (std::isnan(got)) return "NaN";
  if (reference == 0) std::snprintf(text, sizeof text, "abs %.1e", std::fabs(got - reference));
  else std::snprintf(text, sizeof text, "%.1e", std::fabs(got - reference) / reference);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : std::size_t{1} << 24;
  if (n < 2) {
    std::fprintf(stderr, "usage: %s [n >= 2]\n", argv[0]);
    return 2;
  }
  const Dataset datasets[] = {{0.0, 1.0}, {1e2, 1e-3}, {1e3, 1e-3}, {1e6, 1.0}, {1e6, 1e-3}};
  std::printf("float data x = float(mean + spread * z), z standard normal, n = %zu, seed %llu\n", n,
              static_cast<unsigned long long>(reduction::default_seed()));
  std::printf("stddev: reference (long double, two-pass, of the float data) and three float methods "
              "with their relative errors\n\n");
  std::printf("| mean | spread | stddev of the float data | naive float | error | Welford float | error "
              "| Chan float (the lab's) | error |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& d : datasets) {
    const auto x = reduction::shifted_normal_input(n, reduction::default_seed(), d.mean, d.stddev);
    const auto reference = reduction::reference_moments(x);
    const auto naive = reduction::naive_float_moments(x.data(), n);
    const double welford = reduction::ops::stddev_of(reduction::sequential_float_moments(x.data(), n));
    const double chan = reduction::ops::stddev_of(reduction::pairwise_float_moments(x.data(), n));
    std::printf("| %g | %g | %.6g | %.6g | %s | %.6g | %s | %.6g | %s |\n", d.mean, d.stddev, reference.stddev,
                naive.stddev, error_text(naive.stddev, reference.stddev).c_str(), welford,
                error_text(welford, reference.stddev).c_str(), chan, error_text(chan, reference.stddev).c_str());
  }
  return 0;
}
