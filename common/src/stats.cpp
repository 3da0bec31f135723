// Order statistics of timing samples.
#include <reduction/timing.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace reduction {
namespace {
// Linear interpolation between closest ranks (the common "type 7" quantile).
double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted[below] * (1.0 - weight) + sorted[above] * weight;
}
}  // namespace

SampleStats summarize(std::vector<double> samples) {
  SampleStats stats;
  stats.count = samples.size();
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = quantile(samples, 0.5);
  stats.q1 = quantile(samples, 0.25);
  stats.q3 = quantile(samples, 0.75);
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  if (samples.size() > 1 && stats.mean > 0) {
    double squares = 0;
    for (double s : samples) squares += (s - stats.mean) * (s - stats.mean);
    stats.rsd = std::sqrt(squares / (samples.size() - 1)) / stats.mean;
  }
  return stats;
}

}  // namespace reduction
