/* nvrtc-test-sources.h — kernels shared by the NVRTC tests and benchmark
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define SAXPY_SOURCE \
  "extern \"C\" __global__ void saxpy (float a, const float *x, float *y, size_t n)\n" \
  "{\n" \
  "  size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;\n" \
  "  if (i < n)\n" \
  "    y[i] = a * x[i] + y[i];\n" \
  "}\n"

/* Templated: only name expressions make an instance exist. */
#define SCALE_SOURCE \
  "template <typename T, int BLOCK>\n" \
  "__global__ void scale (T *x, T factor, int n)\n" \
  "{\n" \
  "  int i = blockIdx.x * BLOCK + threadIdx.x;\n" \
  "  if (i < n)\n" \
  "    x[i] = x[i] * factor + (T) BLOCK;\n" \
  "}\n"

#define SCALE_FLOAT_256 "scale<float, 256>"
#define SCALE_FLOAT_256_LOWERED "_Z5scaleIfLi256EEvPT_S0_i"
#define SCALE_DOUBLE_128 "scale<double, 128>"
#define SCALE_DOUBLE_128_LOWERED "_Z5scaleIdLi128EEvPT_S0_i"

/* Dynamic shared memory: reverses each block's slice through it. */
#define REVERSE_SOURCE \
  "extern \"C\" __global__ void reverse_blocks (const int *in, int *out)\n" \
  "{\n" \
  "  extern __shared__ int tile[];\n" \
  "  int base = blockIdx.x * blockDim.x;\n" \
  "  tile[threadIdx.x] = in[base + threadIdx.x];\n" \
  "  __syncthreads ();\n" \
  "  out[base + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];\n" \
  "}\n"

#define EMPTY_SOURCE \
  "extern \"C\" __global__ void empty (void) { }\n"

#define BROKEN_SOURCE \
  "extern \"C\" __global__ void broken (float *x)\n" \
  "{\n" \
  "  x[0] = undeclared_variable;\n" \
  "}\n"
