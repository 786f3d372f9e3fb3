// atomr-fft-kernels.cu — normalisation after a cuFFT transform: multiplies
// exactly the output elements of an advanced layout (batch, dims, embed,
// stride, dist) by a scale, leaving the gaps between them untouched.
// Compiled to PTX by build-aux/gen-ptx.sh (checked in as
// atomr-fft-kernels-ptx.h) and loaded with cuModuleLoadData on first use.
//
// SPDX-License-Identifier: LGPL-2.1-or-later

#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ static void
scale_f16 (__half *p, double scale)
{
  *p = __float2half_rn (__half2float (*p) * (float) scale);
}

__device__ static void
scale_bf16 (__nv_bfloat16 *p, double scale)
{
  *p = __float2bfloat16_rn (__bfloat162float (*p) * (float) scale);
}

// kind: 0 f32, 1 f64, 2 c64 (two f32), 3 c128 (two f64), 4 f16, 5 bf16,
// 6 complex f16 (two f16), 7 complex bf16 (two bf16); halves are scaled
// in f32 and rounded once
extern "C" __global__ void
atomr_fft_scale (void *data, int kind, double scale, unsigned long long total,
                 long long d0, long long d1, long long d2,
                 long long e1, long long e2, long long stride, long long dist)
{
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < total;
       i += (unsigned long long) gridDim.x * blockDim.x)
    {
      unsigned long long r = i;
      long long i2 = r % d2; r /= d2;
      long long i1 = r % d1; r /= d1;
      long long i0 = r % d0; r /= d0;
      long long b = r;
      long long at = b * dist + ((i0 * e1 + i1) * e2 + i2) * stride;

      switch (kind)
        {
        case 0: ((float *) data)[at] *= (float) scale; break;
        case 1: ((double *) data)[at] *= scale; break;
        case 2: ((float *) data)[2 * at] *= (float) scale; ((float *) data)[2 * at + 1] *= (float) scale; break;
        case 3: ((double *) data)[2 * at] *= scale; ((double *) data)[2 * at + 1] *= scale; break;
        case 4: scale_f16 ((__half *) data + at, scale); break;
        case 5: scale_bf16 ((__nv_bfloat16 *) data + at, scale); break;
        case 6: scale_f16 ((__half *) data + 2 * at, scale); scale_f16 ((__half *) data + 2 * at + 1, scale); break;
        default:
          scale_bf16 ((__nv_bfloat16 *) data + 2 * at, scale);
          scale_bf16 ((__nv_bfloat16 *) data + 2 * at + 1, scale);
          break;
        }
    }
}
