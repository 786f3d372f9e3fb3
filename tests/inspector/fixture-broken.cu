// fixture-broken.cu — one error (line 8), one warning (line 6)
extern "C" __global__ void
broken (float *y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int unused = 3;
  if (i < n)
    y[i] = undefined_value * 2.0f;
}
