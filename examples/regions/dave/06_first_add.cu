// Each block adds two elements per thread during the load, then the sequential tree.
template <typename T>
__global__ void reduce_first_add(const T* __restrict__ d_in, std::size_t num_items, T* d_out) {
  __shared__ T partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlockItems + tid;
  T sum = i < num_items ? d_in[i] : T{0};
  if (i + kBlockThreads < num_items) sum += d_in[i + kBlockThreads];
  partial[tid] = sum;
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }

  if (tid == 0) atomicAdd(d_out, partial[0]);
}

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  (void)d_temp_storage, (void)temp_storage_bytes;
  REDUCTION_CHECK(cudaMemsetAsync(d_out, 0, sizeof(T), stream));
  if (num_items == 0) return;
  // half as many blocks as lab 05 (at least one, or the launch fails for small inputs)
  const unsigned blocks = num_items < kBlockItems ? 1u : static_cast<unsigned>(num_items / kBlockItems);
  reduce_first_add<<<blocks, kBlockThreads, 0, stream>>>(d_in, num_items, d_out);
  REDUCTION_CHECK(cudaGetLastError());
}
