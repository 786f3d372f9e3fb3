// scale.cu — a templated kernel: NVRTC instantiates one per name
// expression (scale<float>, scale<double>, scale<int>) and reports each
// one's lowered (mangled) name, which the cache keeps.

template <typename T>
__global__ void
scale (T *data, T factor, unsigned int n)
{
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    data[i] *= factor;
}
