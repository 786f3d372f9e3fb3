// reduce.cu — sum of a float array: a block-wide tree in shared memory,
// one atomicAdd per block.  Launch with blockDim.x == 256.

#define BLOCK 256

extern "C" __global__ void
reduce_sum (const float *__restrict__ in, float *out, unsigned int n)
{
  __shared__ float partial[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x * 2 + tid;
  float v = 0.0f;

  if (i < n)
    v = in[i];
  if (i + blockDim.x < n)
    v += in[i + blockDim.x];
  partial[tid] = v;
  __syncthreads ();

  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1)
    {
      if (tid < s)
        partial[tid] += partial[tid + s];
      __syncthreads ();
    }
  if (tid < 32)
    {
      v = partial[tid] + partial[tid + 32];
      for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync (0xffffffffu, v, offset);
      if (tid == 0)
        atomicAdd (out, v);
    }
}
