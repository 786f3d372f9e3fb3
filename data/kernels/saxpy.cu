// saxpy.cu — y = a·x + y, one thread per element
//
// Compile with Ctrl+Enter: NVRTC runs in the background and the result
// lands in the kernel cache (the Cache page).  Diagnostics are marked on
// their lines; the PTX and the registers ptxas allocated appear below.

extern "C" __global__ void
saxpy (float a, const float *__restrict__ x, float *__restrict__ y, unsigned int n)
{
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    y[i] = a * x[i] + y[i];
}
