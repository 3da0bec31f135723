// Accumulate in double: more precise than summing in T.
template <typename T>
T host_sum(const T* values, std::size_t num_items) {
  double sum = 0;
  for (std::size_t i = 0; i < num_items; ++i) sum += values[i];
  return static_cast<T>(sum);
}
