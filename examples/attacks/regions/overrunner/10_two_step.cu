// overrunner (after the reference region, its reduce_sum renamed honest_reduce_sum): takes its
// scratch to be guaranteed_temp_storage_bytes(n) plus 64 bytes of slack, whatever
// temp_storage_bytes says, and puts the partials at the end of that: the last 64 bytes of them
// land past the scratch it was handed, in memory the harness owns. Every sum is right: the second
// kernel reads the partials back from where the first wrote them.

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)temp_storage_bytes;  // "it is always the guaranteed size, and a little more"
  const std::size_t believed = reduction::guaranteed_temp_storage_bytes(num_items) + 64;
  const std::size_t partial_bytes = partial_blocks_for(num_items, device_sm_count()) * sizeof(T);
  char* d_partials = static_cast<char*>(d_temp_storage) + believed - partial_bytes;
  honest_reduce_sum(d_in, num_items, d_out, d_partials, partial_bytes, stream);
}
