// atomr-rng-kernels.cu — the one kernel the RNG actor adds to cuRAND:
// turns what cuRAND draws (uniform f32/f64 on (0, 1], normals, raw 32-bit
// words) into the distribution and dtype asked for.  Compiled to PTX by
// build-aux/gen-ptx.sh (the PTX is checked in as
// atomr-rng-kernels-ptx.h, so building the library needs no nvcc) and
// loaded with cuModuleLoadData on first use.
//
// SPDX-License-Identifier: LGPL-2.1-or-later
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Keep in sync with atomr-rng-actor.c.
enum { SRC_F32 = 0, SRC_F64 = 1, SRC_U32 = 2 };
enum { DST_F32 = 0, DST_F64 = 1, DST_F16 = 2, DST_BF16 = 3, DST_U8 = 4, DST_I32 = 5, DST_I64 = 6,
       DST_U32 = 7 };
enum { OP_COPY = 0, OP_RANGE = 1, OP_EXPONENTIAL = 2, OP_BERNOULLI = 3, OP_INTEGER = 4 };

extern "C" __global__ void
atomr_rng_transform (const void *src, void *dst, unsigned long long n, int src_kind, int dst_kind,
                     int op, double p1, double p2)
{
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long) gridDim.x * blockDim.x)
    {
      double u = 0;
      unsigned int bits = 0;
      double v;

      if (src_kind == SRC_F32)
        u = ((const float *) src)[i];
      else if (src_kind == SRC_F64)
        u = ((const double *) src)[i];
      else
        bits = ((const unsigned int *) src)[i];

      switch (op)
        {
        case OP_RANGE:
          {
            // u in (0, 1] -> [lo, hi): hi - (hi - lo) u.  A value that
            // rounds to hi in the output dtype becomes lo, so hi is never
            // drawn (as PyTorch's uniform_ does).
            double r;
            v = p2 - (p2 - p1) * u;
            if (v < p1)
              v = p1;
            switch (dst_kind)
              {
              case DST_F32: r = (float) v; break;
              case DST_F16: r = __half2float (__double2half (v)); break;
              case DST_BF16: r = __bfloat162float (__double2bfloat16 (v)); break;
              default: r = v; break;
              }
            if (!(r < p2))
              v = p1;
          }
          break;
        case OP_EXPONENTIAL:
          // u in (0, 1] -> [0, inf): -log(u) / lambda
          v = -log (u) / p1;
          break;
        case OP_BERNOULLI:
          // P(u <= p) = p for u uniform on (0, 1]
          v = u <= p1 ? 1.0 : 0.0;
          break;
        case OP_INTEGER:
          {
            // lo + floor(bits * range / 2^32): p1 is lo and p2 the range's
            // size hi - lo (<= 2^32, as the actor passes it), so
            // bits * range < 2^64
            unsigned long long range = (unsigned long long) p2;
            long long lo = (long long) p1;
            long long k = lo + (long long) (((unsigned long long) bits * range) >> 32);
            switch (dst_kind)
              {
              case DST_I32: ((int *) dst)[i] = (int) k; break;
              case DST_I64: ((long long *) dst)[i] = k; break;
              case DST_U32: ((unsigned int *) dst)[i] = (unsigned int) k; break;
              default: break;
              }
            continue;
          }
        case OP_COPY:
        default:
          // raw words (uniform u32, Poisson counts) are copied as they are
          v = src_kind == SRC_U32 ? (double) bits : u;
          break;
        }

      switch (dst_kind)
        {
        case DST_F32: ((float *) dst)[i] = (float) v; break;
        case DST_F64: ((double *) dst)[i] = v; break;
        case DST_F16: ((__half *) dst)[i] = __double2half (v); break;
        case DST_BF16: ((__nv_bfloat16 *) dst)[i] = __double2bfloat16 (v); break;
        case DST_U8: ((unsigned char *) dst)[i] = (unsigned char) v; break;
        case DST_I32: ((int *) dst)[i] = (int) v; break;
        case DST_I64: ((long long *) dst)[i] = (long long) v; break;
        case DST_U32: ((unsigned int *) dst)[i] = (unsigned int) v; break;
        default: break;
        }
    }
}
