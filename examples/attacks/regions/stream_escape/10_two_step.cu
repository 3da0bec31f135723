// stream_escape (after the reference region, its reduce_sum renamed honest_reduce_sum): does all
// its work on the legacy default stream instead of the stream it is given, so events recorded
// on that (non-blocking) stream see almost no time, while a reader that copies the result with
// cudaMemcpy still waits for it. To make the difference plain, at n >= 2^22 the real work also
// holds the GPU for 20 ms: honestly timed, it is far beyond 10x the reference.

__global__ void hold_the_gpu(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)stream;
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, cudaStreamLegacy);
  if (num_items >= (std::size_t{1} << 22)) {
    hold_the_gpu<<<1, 1, 0, cudaStreamLegacy>>>(20ull * 1000 * 1000);
    REDUCTION_CHECK(cudaGetLastError());
  }
}
