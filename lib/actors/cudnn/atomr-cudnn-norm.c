/* atomr-cudnn-norm.c — layer, RMS, group and instance normalization
 *
 * cuDNN 9 has these only as backend "norm" graphs whose engines cover
 * layer, RMS and instance normalization for some layouts and no group
 * normalization at all (the legacy cudnnNormalization* calls are
 * deprecated).  All four are one computation on a view, so they run as
 * three generated kernels (NVRTC, through the kernel cache) that take any
 * strides: the operand is seen as a table of loops (one per dimension of x,
 * C split into groups × channels for group norms), each loop marked as a
 * "row" loop (one mean and 1/σ per row) or a "normalized" loop, with a
 * stride per operand: x, y (dx), dy, the parameters and the row index.
 *
 *   atomr_norm_fwd        one block per row: mean, variance (two passes,
 *                         in f32, f64 for f64), y, and the saved stats
 *   atomr_norm_bwd_data   one block per row: dx from the saved stats
 *   atomr_norm_bwd_param  32 scale elements per block (8 partial sums
 *                         each): Σ dy·x̂ and Σ dy, combined in a fixed
 *                         order (no atomics: every run gives the same bits)
 *
 * Layer and RMS norms whose normalized dimensions are packed innermost in
 * x, y, dy and dx and whose rows are one stride apart (the common case)
 * take a row fast path instead (see rows_enqueue()):
 *
 *   atomr_norm_fwd_rows[_vec]        a warp per row (up to 256 threads
 *   atomr_norm_bwd_data_rows[_vec]   for wide rows), the row in registers
 *                                    (8 vectors a thread), _vec: 16-byte
 *                                    loads and stores
 *   atomr_norm_bwd_param_rows/_sum   dγ, dβ: per-block partial sums over
 *                                    row chunks into the workspace, then
 *                                    a fixed-order pass over the chunks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-norm.h"
#include "actors/cudnn/atomr-cudnn-norm-private.h"
#include "actors/cudnn/atomr-cudnn-actor-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-tensor-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-nvrtc-private.h"

G_DEFINE_ENUM_TYPE (AtomrNormMode, atomr_norm_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_NORM_LAYER, "layer"),
  G_DEFINE_ENUM_VALUE (ATOMR_NORM_RMS, "rms"),
  G_DEFINE_ENUM_VALUE (ATOMR_NORM_GROUP, "group"),
  G_DEFINE_ENUM_VALUE (ATOMR_NORM_INSTANCE, "instance"))

/**
 * AtomrNormalization:
 *
 * What a layer, RMS, group or instance normalization is, apart from its
 * operands: the [enum@Atomr.NormMode], epsilon (added to the variance),
 * the first normalized dimension for layer and RMS norms
 * ([property@Atomr.Normalization:axis]) and the number of groups for group
 * norms.  Used by [method@Atomr.CudnnActor.normalization_forward_async] and
 * [method@Atomr.CudnnActor.normalization_backward_async], which copy it
 * when called.
 *
 * A bare g_object_new() gives a layer normalization over every dimension
 * but the first, epsilon 1e-5, one group.
 *
 * Since: 0.2
 */
struct _AtomrNormalization
{
  GObject        parent_instance;
  AtomrNormMode  mode;
  gdouble        epsilon;
  guint          axis;
  guint          groups;
};

G_DEFINE_FINAL_TYPE (AtomrNormalization, atomr_normalization, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_MODE,
  PROP_EPSILON,
  PROP_AXIS,
  PROP_GROUPS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
atomr_normalization_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  AtomrNormalization *self = ATOMR_NORMALIZATION (object);

  switch (prop_id)
    {
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_EPSILON:
      g_value_set_double (value, self->epsilon);
      break;
    case PROP_AXIS:
      g_value_set_uint (value, self->axis);
      break;
    case PROP_GROUPS:
      g_value_set_uint (value, self->groups);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_normalization_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  AtomrNormalization *self = ATOMR_NORMALIZATION (object);

  switch (prop_id)
    {
    case PROP_MODE:
      atomr_normalization_set_mode (self, g_value_get_enum (value));
      break;
    case PROP_EPSILON:
      atomr_normalization_set_epsilon (self, g_value_get_double (value));
      break;
    case PROP_AXIS:
      atomr_normalization_set_axis (self, g_value_get_uint (value));
      break;
    case PROP_GROUPS:
      atomr_normalization_set_groups (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_normalization_class_init (AtomrNormalizationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = atomr_normalization_get_property;
  object_class->set_property = atomr_normalization_set_property;

  /**
   * AtomrNormalization:mode:
   *
   * What is averaged over.
   *
   * Since: 0.2
   */
  properties[PROP_MODE] =
    g_param_spec_enum ("mode", NULL, NULL, ATOMR_TYPE_NORM_MODE, ATOMR_NORM_LAYER,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrNormalization:epsilon:
   *
   * Added to the variance (the mean square for RMS norms) before the
   * square root; positive.
   *
   * Since: 0.2
   */
  properties[PROP_EPSILON] =
    g_param_spec_double ("epsilon", NULL, NULL, G_MINDOUBLE, G_MAXDOUBLE, 1e-5,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrNormalization:axis:
   *
   * Layer and RMS norms: the first normalized dimension.  Dimensions
   * [0, axis) index the rows, [axis, rank) are normalized together (a
   * transformer's B × S × H activations: axis 2).
   *
   * Since: 0.2
   */
  properties[PROP_AXIS] =
    g_param_spec_uint ("axis", NULL, NULL, 1, ATOMR_TENSOR_MAX_DIMS - 1, 1,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrNormalization:groups:
   *
   * Group norms: how many groups the channels fall into (it must divide
   * C).
   *
   * Since: 0.2
   */
  properties[PROP_GROUPS] =
    g_param_spec_uint ("groups", NULL, NULL, 1, G_MAXINT32, 1,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_normalization_init (AtomrNormalization *self)
{
  self->mode = ATOMR_NORM_LAYER;
  self->epsilon = 1e-5;
  self->axis = 1;
  self->groups = 1;
}

/**
 * atomr_normalization_new:
 * @mode: what is averaged over
 * @epsilon: added to the variance, positive
 *
 * Creates a normalization; layer and RMS norms start with
 * [property@Atomr.Normalization:axis] 1, group norms with one group.
 *
 * Returns: (transfer full): a new [class@Atomr.Normalization]
 *
 * Since: 0.2
 */
AtomrNormalization *
atomr_normalization_new (AtomrNormMode mode,
                         gdouble       epsilon)
{
  g_return_val_if_fail (mode <= ATOMR_NORM_INSTANCE, NULL);
  g_return_val_if_fail (epsilon > 0, NULL);
  return g_object_new (ATOMR_TYPE_NORMALIZATION, "mode", mode, "epsilon", epsilon, NULL);
}

/**
 * atomr_normalization_get_mode:
 * @self: an [class@Atomr.Normalization]
 *
 * Gets [property@Atomr.Normalization:mode].
 *
 * Returns: what is averaged over
 *
 * Since: 0.2
 */
AtomrNormMode
atomr_normalization_get_mode (AtomrNormalization *self)
{
  g_return_val_if_fail (ATOMR_IS_NORMALIZATION (self), ATOMR_NORM_LAYER);
  return self->mode;
}

/**
 * atomr_normalization_set_mode:
 * @self: an [class@Atomr.Normalization]
 * @mode: what is averaged over
 *
 * Sets [property@Atomr.Normalization:mode].
 *
 * Since: 0.2
 */
void
atomr_normalization_set_mode (AtomrNormalization *self,
                              AtomrNormMode       mode)
{
  g_return_if_fail (ATOMR_IS_NORMALIZATION (self));
  g_return_if_fail (mode <= ATOMR_NORM_INSTANCE);
  if (self->mode == mode)
    return;
  self->mode = mode;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODE]);
}

/**
 * atomr_normalization_get_epsilon:
 * @self: an [class@Atomr.Normalization]
 *
 * Gets [property@Atomr.Normalization:epsilon].
 *
 * Returns: what is added to the variance
 *
 * Since: 0.2
 */
gdouble
atomr_normalization_get_epsilon (AtomrNormalization *self)
{
  g_return_val_if_fail (ATOMR_IS_NORMALIZATION (self), 0);
  return self->epsilon;
}

/**
 * atomr_normalization_set_epsilon:
 * @self: an [class@Atomr.Normalization]
 * @epsilon: added to the variance, positive
 *
 * Sets [property@Atomr.Normalization:epsilon].
 *
 * Since: 0.2
 */
void
atomr_normalization_set_epsilon (AtomrNormalization *self,
                                 gdouble             epsilon)
{
  g_return_if_fail (ATOMR_IS_NORMALIZATION (self));
  g_return_if_fail (epsilon > 0 && isfinite (epsilon));
  if (self->epsilon == epsilon)
    return;
  self->epsilon = epsilon;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EPSILON]);
}

/**
 * atomr_normalization_get_axis:
 * @self: an [class@Atomr.Normalization]
 *
 * Gets [property@Atomr.Normalization:axis].
 *
 * Returns: the first normalized dimension of layer and RMS norms
 *
 * Since: 0.2
 */
guint
atomr_normalization_get_axis (AtomrNormalization *self)
{
  g_return_val_if_fail (ATOMR_IS_NORMALIZATION (self), 1);
  return self->axis;
}

/**
 * atomr_normalization_set_axis:
 * @self: an [class@Atomr.Normalization]
 * @axis: the first normalized dimension, 1 to 7
 *
 * Sets [property@Atomr.Normalization:axis].
 *
 * Since: 0.2
 */
void
atomr_normalization_set_axis (AtomrNormalization *self,
                              guint               axis)
{
  g_return_if_fail (ATOMR_IS_NORMALIZATION (self));
  g_return_if_fail (axis >= 1 && axis < ATOMR_TENSOR_MAX_DIMS);
  if (self->axis == axis)
    return;
  self->axis = axis;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AXIS]);
}

/**
 * atomr_normalization_get_groups:
 * @self: an [class@Atomr.Normalization]
 *
 * Gets [property@Atomr.Normalization:groups].
 *
 * Returns: the number of channel groups of a group norm
 *
 * Since: 0.2
 */
guint
atomr_normalization_get_groups (AtomrNormalization *self)
{
  g_return_val_if_fail (ATOMR_IS_NORMALIZATION (self), 1);
  return self->groups;
}

/**
 * atomr_normalization_set_groups:
 * @self: an [class@Atomr.Normalization]
 * @groups: how many groups the channels fall into, at least 1
 *
 * Sets [property@Atomr.Normalization:groups].
 *
 * Since: 0.2
 */
void
atomr_normalization_set_groups (AtomrNormalization *self,
                                guint               groups)
{
  g_return_if_fail (ATOMR_IS_NORMALIZATION (self));
  g_return_if_fail (groups >= 1 && groups <= G_MAXINT32);
  if (self->groups == groups)
    return;
  self->groups = groups;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GROUPS]);
}

/* ------------------------------------------------------------------ */
/* Kernels                                                              */

#define NL (ATOMR_TENSOR_MAX_DIMS + 1)   /* loops: C may be split in two */

/* Operand rows of the loop table. */
enum { OP_X, OP_Y, OP_DY, OP_PARAM, OP_ROW, N_OPS };

/* Laid out exactly as `struct Loops` in the kernel source. */
typedef struct {
  gint64 ext[NL];
  gint64 s[N_OPS][NL];
  gint32 inner[NL];    /* a normalized loop (else a row loop) */
  gint32 pdim[NL];     /* a loop the parameters vary along */
  gint32 first[4];     /* per selection (see offsets()): its outermost loop, or -1 */
  gint32 n;
} NormLoops;

/* The row fast path's register tiles: vectors per thread kept in
 * registers (in the dtype) by the forward and the backward-data kernels
 * (the backward keeps x and dy). */
#define ROWS_TILE_FWD 8
#define ROWS_TILE_BWD 8

gchar *
atomr_cudnn_norm_kernel_source (AtomrDtype dtype)
{
  GString *s = g_string_new (NULL);
  gboolean f64 = dtype == ATOMR_DTYPE_F64;

  g_string_append_printf (s,
    "typedef long long i64;\n"
    "#define NL %d\n"
    "struct Loops { i64 ext[NL]; i64 s[%d][NL]; int inner[NL]; int pdim[NL]; int first[4]; int n; };\n",
    NL, N_OPS);
  /* No header: halves convert with PTX cvt, so NVRTC needs no include
   * path (as the Tensor actor's kernels). */
  switch (dtype)
    {
    case ATOMR_DTYPE_F16:
      g_string_append (s,
        "typedef unsigned short T; typedef float acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { float f; unsigned short h = *p;"
        " asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { unsigned short h;"
        " asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v)); *p = h; }\n");
      break;
    case ATOMR_DTYPE_BF16:
      g_string_append (s,
        "typedef unsigned short T; typedef float acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { return __uint_as_float(((unsigned int) *p) << 16); }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { unsigned short h;"
        " asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v)); *p = h; }\n");
      break;
    case ATOMR_DTYPE_F64:
      g_string_append (s,
        "typedef double T; typedef double acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { return *p; }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { *p = v; }\n");
      break;
    default:
      g_string_append (s,
        "typedef float T; typedef float acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { return *p; }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { *p = v; }\n");
      break;
    }
  g_string_append_printf (s, "#define RSQRT(v) (%s)\n",
                          f64 ? "1.0 / sqrt(v)" : "1.0f / sqrtf(v)");
  g_string_append (s,
    /* Adds the offsets of index @idx over the selected loops (0: row
     * loops, 1: normalized loops, 2: parameter loops, 3: the others),
     * last loop fastest.  The outermost selected loop takes what is
     * left without a division (one loop: no division at all). */
    "__device__ __forceinline__ void offsets(const Loops &L, int sel, i64 idx, i64 *o) {\n"
    "  int first = L.first[sel];\n"
    "  for (int k = L.n - 1; k >= first && k >= 0; k--) {\n"
    "    int on = sel == 0 ? !L.inner[k] : sel == 1 ? L.inner[k] : sel == 2 ? L.pdim[k] : !L.pdim[k];\n"
    "    if (!on) continue;\n"
    "    i64 i;\n"
    "    if (k == first) i = idx; else { i64 e = L.ext[k]; i = idx % e; idx /= e; }\n"
    "    for (int q = 0; q < 5; q++) o[q] += i * L.s[q][k];\n"
    "  }\n"
    "}\n"
    /* Sum over the block (blockDim.x a multiple of 32, at most 1024);
     * every thread gets the result. */
    "__device__ acc_t block_sum(acc_t v, acc_t *sh) {\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
    "  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
    "  __syncthreads();\n"
    "  if (lane == 0) sh[w] = v;\n"
    "  __syncthreads();\n"
    "  if (w == 0) {\n"
    "    v = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : (acc_t) 0;\n"
    "    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
    "    if (threadIdx.x == 0) sh[32] = v;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  return sh[32];\n"
    "}\n"
    "#define LOAD_OFFSETS(sel, j) i64 o[5] = { base[0], base[1], base[2], base[3], base[4] }; offsets(L, sel, j, o)\n"
    /* With @cached, the row lives in dynamic shared memory (m values,
     * each thread keeping its own): x is read from memory once. */
    "extern \"C\" __global__ void atomr_norm_fwd(const T *x, T *y, const T *scale, const T *bias,\n"
    "    acc_t *mean_out, acc_t *rstd_out, acc_t eps, int rms, i64 rows, i64 m, int cached, Loops L) {\n"
    "  __shared__ acc_t sh[33];\n"
    "  extern __shared__ acc_t cache[];\n"
    "  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {\n"
    "    i64 base[5] = { 0, 0, 0, 0, 0 };\n"
    "    offsets(L, 0, row, base);\n"
    "    acc_t mean = 0, var, s = 0;\n"
    "    for (i64 j = threadIdx.x; j < m; j += blockDim.x) {\n"
    "      LOAD_OFFSETS(1, j); acc_t v = ld(x + o[0]);\n"
    "      if (cached) cache[j] = v;\n"
    "      s += rms ? v * v : v;\n"
    "    }\n"
    "    if (rms) var = block_sum(s, sh) / (acc_t) m;\n"
    "    else {\n"
    "      mean = block_sum(s, sh) / (acc_t) m;\n"
    "      s = 0;\n"
    "      for (i64 j = threadIdx.x; j < m; j += blockDim.x) {\n"
    "        acc_t v;\n"
    "        if (cached) v = cache[j]; else { LOAD_OFFSETS(1, j); v = ld(x + o[0]); }\n"
    "        acc_t d = v - mean; s += d * d;\n"
    "      }\n"
    "      var = block_sum(s, sh) / (acc_t) m;\n"
    "    }\n"
    "    acc_t rstd = RSQRT(var + eps);\n"
    "    if (threadIdx.x == 0) {\n"
    "      if (mean_out) mean_out[row] = mean;\n"
    "      if (rstd_out) rstd_out[row] = rstd;\n"
    "    }\n"
    "    for (i64 j = threadIdx.x; j < m; j += blockDim.x) {\n"
    "      LOAD_OFFSETS(1, j);\n"
    "      acc_t v = ((cached ? cache[j] : ld(x + o[0])) - mean) * rstd;\n"
    "      if (scale) v *= ld(scale + o[3]);\n"
    "      if (bias) v += ld(bias + o[3]);\n"
    "      st(y + o[1], v);\n"
    "    }\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void atomr_norm_bwd_data(const T *x, const T *dy, T *dx, const T *scale,\n"
    "    const acc_t *mean_in, const acc_t *rstd_in, int rms, i64 rows, i64 m, Loops L) {\n"
    "  __shared__ acc_t sh[33];\n"
    "  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {\n"
    "    i64 base[5] = { 0, 0, 0, 0, 0 };\n"
    "    offsets(L, 0, row, base);\n"
    "    acc_t mean = rms ? (acc_t) 0 : mean_in[row], rstd = rstd_in[row], s1 = 0, s2 = 0;\n"
    "    for (i64 j = threadIdx.x; j < m; j += blockDim.x) {\n"
    "      LOAD_OFFSETS(1, j);\n"
    "      acc_t g = ld(dy + o[2]);\n"
    "      if (scale) g *= ld(scale + o[3]);\n"
    "      acc_t xh = (ld(x + o[0]) - mean) * rstd;\n"
    "      s1 += g; s2 += g * xh;\n"
    "    }\n"
    "    acc_t c1 = rms ? (acc_t) 0 : block_sum(s1, sh) / (acc_t) m;\n"
    "    acc_t c2 = block_sum(s2, sh) / (acc_t) m;\n"
    "    for (i64 j = threadIdx.x; j < m; j += blockDim.x) {\n"
    "      LOAD_OFFSETS(1, j);\n"
    "      acc_t g = ld(dy + o[2]);\n"
    "      if (scale) g *= ld(scale + o[3]);\n"
    "      acc_t xh = (ld(x + o[0]) - mean) * rstd;\n"
    "      st(dx + o[1], rstd * (g - c1 - xh * c2));\n"
    "    }\n"
    "  }\n"
    "}\n"
    /* 32 consecutive parameters per block (threadIdx.x: coalesced when
     * they are the fastest dimension, as in layer norms), 8 rows of
     * threads splitting the sum, combined in a fixed order. */
    "extern \"C\" __global__ void atomr_norm_bwd_param(const T *x, const T *dy, T *dscale, T *dbias,\n"
    "    const acc_t *mean_in, const acc_t *rstd_in, int rms, i64 n_param, i64 n_red, Loops L) {\n"
    "  __shared__ acc_t sh1[8][33], sh2[8][33];\n"
    "  int tx = threadIdx.x, ty = threadIdx.y;\n"
    "  for (i64 p0 = (i64) blockIdx.x * 32; p0 < n_param; p0 += (i64) gridDim.x * 32) {\n"
    "    i64 p = p0 + tx;\n"
    "    acc_t s1 = 0, s2 = 0;\n"
    "    i64 base[5] = { 0, 0, 0, 0, 0 };\n"
    "    if (p < n_param) {\n"
    "      offsets(L, 2, p, base);\n"
    "      for (i64 q = ty; q < n_red; q += blockDim.y) {\n"
    "        LOAD_OFFSETS(3, q);\n"
    "        acc_t mean = rms ? (acc_t) 0 : mean_in[o[4]];\n"
    "        acc_t d = ld(dy + o[2]);\n"
    "        s1 += d * (ld(x + o[0]) - mean) * rstd_in[o[4]];\n"
    "        s2 += d;\n"
    "      }\n"
    "    }\n"
    "    sh1[ty][tx] = s1; sh2[ty][tx] = s2;\n"
    "    __syncthreads();\n"
    "    if (ty == 0 && p < n_param) {\n"
    "      for (int k = 1; k < (int) blockDim.y; k++) { s1 += sh1[k][tx]; s2 += sh2[k][tx]; }\n"
    "      if (dscale) st(dscale + base[3], s1);\n"
    "      if (dbias) st(dbias + base[3], s2);\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "}\n");
  g_string_append_printf (s, "#define VW %d\n#define RF %d\n#define RB %d\n",
                          16 / (gint) atomr_dtype_get_size (dtype), ROWS_TILE_FWD, ROWS_TILE_BWD);
  g_string_append (s,
    /* ---- The row fast path (layer and RMS norms whose normalized
     * dimensions are packed innermost and whose rows are one stride
     * apart): TPR threads per row (a warp, or the whole block), V
     * elements per load (16 bytes when aligned, else 1), the row in
     * registers when it fits in R vectors per thread, no index math. */
    "template<int V> struct alignas(V * sizeof(T)) Raw { T v[V]; };\n"
    "template<int V> struct Vio {\n"
    "  static __device__ __forceinline__ void load_raw(const T *p, Raw<V> &r) {\n"
    "    if (V * sizeof(T) == 16) *(uint4 *) &r = *(const uint4 *) p;\n"
    "    else {\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < V; i++) r.v[i] = p[i]; }\n"
    "  }\n"
    "  static __device__ __forceinline__ void cvt(const Raw<V> &r, acc_t *o) {\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < V; i++) o[i] = ld(&r.v[i]);\n"
    "  }\n"
    "  static __device__ __forceinline__ void load(const T *p, acc_t *o) {\n"
    "    if (V * sizeof(T) == 16) { uint4 u = *(const uint4 *) p; const T *t = (const T *) &u;\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < V; i++) o[i] = ld(t + i); }\n"
    "    else {\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < V; i++) o[i] = ld(p + i); }\n"
    "  }\n"
    "  static __device__ __forceinline__ void store(T *p, const acc_t *v) {\n"
    "    if (V * sizeof(T) == 16) {\n"
    /* one 16-byte store, written out: NVVM splits a uint4 store
     * into four after the unrolled row loop */
    "      unsigned int w[4] = { 0, 0, 0, 0 };\n"
    "      if (sizeof(T) == 2) {\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < V / 2; q++) { T lo, hi; st(&lo, v[2 * q]); st(&hi, v[2 * q + 1]);\n"
    "          w[q] = (unsigned int) lo | ((unsigned int) hi << 16); } }\n"
    "      else if (sizeof(T) == 4) {\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < V && q < 4; q++) w[q] = __float_as_uint((float) v[q]); }\n"
    "      else {\n"
    "#pragma unroll\n"
    "        for (int q = 0; q < V && q < 2; q++) { unsigned long long b = (unsigned long long) __double_as_longlong((double) v[q]);\n"
    "          w[2 * q] = (unsigned int) b; w[2 * q + 1] = (unsigned int) (b >> 32); } }\n"
    "      asm volatile(\"st.v4.b32 [%0], {%1, %2, %3, %4};\" :: \"l\"(p), \"r\"(w[0]), \"r\"(w[1]), \"r\"(w[2]), \"r\"(w[3]) : \"memory\");\n"
    "    }\n"
    "    else {\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < V; i++) st(p + i, v[i]); }\n"
    "  }\n"
    "};\n"
    /* Sum over the TPR threads of a row, the same bits in every one of
     * them: a warp by shuffles; wider rows (one per block) through
     * @sh in warp order. */
    "__device__ __forceinline__ acc_t row_sum(acc_t v, int tpr, acc_t *sh) {\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
    "  if (tpr > 32) {\n"
    "    __syncthreads();\n"
    "    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;\n"
    "    __syncthreads();\n"
    "    v = 0;\n"
    "    for (int k = 0; k < (tpr >> 5); k++) v += sh[k];\n"
    "  }\n"
    "  return v;\n"
    "}\n"
    /* Visits this thread's vectors of the row as a[]: from registers
     * (r[k], kept in T: half the registers for halves) when cached, else
     * loaded from @src. */
    "#define ROW_VISIT(src, r, ...) \\\n"
    "  if (cached) {\\\n"
    "    _Pragma(\"unroll\") for (int k = 0; k < R; k++) { i64 j = (i64) k * tpr + t;\\\n"
    "      if (j < nv) { acc_t a[V]; Vio<V>::cvt(r[k], a); __VA_ARGS__ } } }\\\n"
    "  else for (i64 j = t; j < nv; j += tpr) { acc_t a[V]; Vio<V>::load((src) + j * V, a); __VA_ARGS__ }\n"
    "template<int V, int R> __device__ __forceinline__ void norm_fwd_rows(const T *x, T *y, const T *scale,\n"
    "    const T *bias, acc_t *mean_out, acc_t *rstd_out, acc_t eps, int rms, i64 rows, i64 m,\n"
    "    i64 xs, i64 ys, int tpr) {\n"
    "  __shared__ acc_t sh[32];\n"
    "  int rpb = blockDim.x / tpr, t = threadIdx.x % tpr, g = threadIdx.x / tpr;\n"
    "  i64 nv = m / V;\n"
    "  int cached = nv <= (i64) tpr * R;\n"
    "  Raw<V> v[R];\n"
    "  for (i64 row = (i64) blockIdx.x * rpb + g; row < rows; row += (i64) gridDim.x * rpb) {\n"
    "    const T *xr = x + row * xs;\n"
    "    T *yr = y + row * ys;\n"
    "    acc_t s = 0, mean = 0, var;\n"
    "    if (cached) {\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < R; k++) { i64 j = (i64) k * tpr + t; if (j < nv) Vio<V>::load_raw(xr + j * V, v[k]); }\n"
    "    }\n"
    "    ROW_VISIT(xr, v, for (int i = 0; i < V; i++) s += rms ? a[i] * a[i] : a[i];)\n"
    "    if (rms) var = row_sum(s, tpr, sh) / (acc_t) m;\n"
    "    else {\n"
    "      mean = row_sum(s, tpr, sh) / (acc_t) m;\n"
    "      s = 0;\n"
    "      ROW_VISIT(xr, v, for (int i = 0; i < V; i++) { acc_t d = a[i] - mean; s += d * d; })\n"
    "      var = row_sum(s, tpr, sh) / (acc_t) m;\n"
    "    }\n"
    "    acc_t rstd = RSQRT(var + eps);\n"
    "    if (t == 0) {\n"
    "      if (mean_out) mean_out[row] = mean;\n"
    "      if (rstd_out) rstd_out[row] = rstd;\n"
    "    }\n"
    "    ROW_VISIT(xr, v, {\n"
    "      acc_t o[V], p[V];\n"
    "      for (int i = 0; i < V; i++) o[i] = (a[i] - mean) * rstd;\n"
    "      if (scale) { Vio<V>::load(scale + j * V, p); for (int i = 0; i < V; i++) o[i] *= p[i]; }\n"
    "      if (bias) { Vio<V>::load(bias + j * V, p); for (int i = 0; i < V; i++) o[i] += p[i]; }\n"
    "      Vio<V>::store(yr + j * V, o); })\n"
    "  }\n"
    "}\n"
    /* dx: x and dy of the row in registers when they fit. */
    "template<int V, int R> __device__ __forceinline__ void norm_bwd_rows(const T *x, const T *dy, T *dx,\n"
    "    const T *scale, const acc_t *mean_in, const acc_t *rstd_in, int rms, i64 rows, i64 m,\n"
    "    i64 xs, i64 dys, i64 dxs, int tpr) {\n"
    "  __shared__ acc_t sh[32];\n"
    "  int rpb = blockDim.x / tpr, t = threadIdx.x % tpr, g = threadIdx.x / tpr;\n"
    "  i64 nv = m / V;\n"
    "  int cached = nv <= (i64) tpr * R;\n"
    "  Raw<V> xv[R], dv[R];\n"
    "  for (i64 row = (i64) blockIdx.x * rpb + g; row < rows; row += (i64) gridDim.x * rpb) {\n"
    "    const T *xr = x + row * xs, *dyr = dy + row * dys;\n"
    "    T *dxr = dx + row * dxs;\n"
    "    acc_t mean = rms ? (acc_t) 0 : mean_in[row], rstd = rstd_in[row], s1 = 0, s2 = 0;\n"
    "    if (cached) {\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < R; k++) { i64 j = (i64) k * tpr + t;\n"
    "        if (j < nv) {\n"
    "          acc_t a[V], d[V], p[V];\n"
    "          Vio<V>::load_raw(xr + j * V, xv[k]); Vio<V>::load_raw(dyr + j * V, dv[k]);\n"
    "          Vio<V>::cvt(xv[k], a); Vio<V>::cvt(dv[k], d);\n"
    "          if (scale) { Vio<V>::load(scale + j * V, p); for (int i = 0; i < V; i++) d[i] *= p[i]; }\n"
    "          for (int i = 0; i < V; i++) { acc_t xh = (a[i] - mean) * rstd; s1 += d[i]; s2 += d[i] * xh; }\n"
    "        } }\n"
    "    } else {\n"
    "      for (i64 j = t; j < nv; j += tpr) {\n"
    "        acc_t a[V], d[V], p[V];\n"
    "        Vio<V>::load(xr + j * V, a); Vio<V>::load(dyr + j * V, d);\n"
    "        if (scale) { Vio<V>::load(scale + j * V, p); for (int i = 0; i < V; i++) d[i] *= p[i]; }\n"
    "        for (int i = 0; i < V; i++) { acc_t xh = (a[i] - mean) * rstd; s1 += d[i]; s2 += d[i] * xh; }\n"
    "      }\n"
    "    }\n"
    "    acc_t c1 = rms ? (acc_t) 0 : row_sum(s1, tpr, sh) / (acc_t) m;\n"
    "    acc_t c2 = row_sum(s2, tpr, sh) / (acc_t) m;\n"
    "    if (cached) {\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < R; k++) { i64 j = (i64) k * tpr + t;\n"
    "        if (j < nv) {\n"
    "          acc_t a[V], d[V], p[V], o[V];\n"
    "          Vio<V>::cvt(xv[k], a); Vio<V>::cvt(dv[k], d);\n"
    "          if (scale) { Vio<V>::load(scale + j * V, p); for (int i = 0; i < V; i++) d[i] *= p[i]; }\n"
    "          for (int i = 0; i < V; i++) o[i] = rstd * (d[i] - c1 - (a[i] - mean) * rstd * c2);\n"
    "          Vio<V>::store(dxr + j * V, o);\n"
    "        } }\n"
    "    } else {\n"
    "      for (i64 j = t; j < nv; j += tpr) {\n"
    "        acc_t a[V], d[V], p[V], o[V];\n"
    "        Vio<V>::load(xr + j * V, a); Vio<V>::load(dyr + j * V, d);\n"
    "        if (scale) { Vio<V>::load(scale + j * V, p); for (int i = 0; i < V; i++) d[i] *= p[i]; }\n"
    "        for (int i = 0; i < V; i++) o[i] = rstd * (d[i] - c1 - (a[i] - mean) * rstd * c2);\n"
    "        Vio<V>::store(dxr + j * V, o);\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    /* at most 256 threads a block (so any register count launches);
     * two blocks an SM for dx */
    "#define RB_BOUNDS __launch_bounds__(256, 2)\n"
    "#define NORM_FWD_ROWS_ARGS const T *x, T *y, const T *scale, const T *bias, acc_t *mean_out,\\\n"
    "    acc_t *rstd_out, acc_t eps, int rms, i64 rows, i64 m, i64 xs, i64 ys, int tpr\n"
    "#define NORM_BWD_ROWS_ARGS const T *x, const T *dy, T *dx, const T *scale, const acc_t *mean_in,\\\n"
    "    const acc_t *rstd_in, int rms, i64 rows, i64 m, i64 xs, i64 dys, i64 dxs, int tpr\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_norm_fwd_rows_vec(NORM_FWD_ROWS_ARGS) {\n"
    "  norm_fwd_rows<VW, RF>(x, y, scale, bias, mean_out, rstd_out, eps, rms, rows, m, xs, ys, tpr); }\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_norm_fwd_rows(NORM_FWD_ROWS_ARGS) {\n"
    "  norm_fwd_rows<1, RF>(x, y, scale, bias, mean_out, rstd_out, eps, rms, rows, m, xs, ys, tpr); }\n"
    "extern \"C\" __global__ void RB_BOUNDS atomr_norm_bwd_data_rows_vec(NORM_BWD_ROWS_ARGS) {\n"
    "  norm_bwd_rows<VW, RB>(x, dy, dx, scale, mean_in, rstd_in, rms, rows, m, xs, dys, dxs, tpr); }\n"
    "extern \"C\" __global__ void RB_BOUNDS atomr_norm_bwd_data_rows(NORM_BWD_ROWS_ARGS) {\n"
    "  norm_bwd_rows<1, RB>(x, dy, dx, scale, mean_in, rstd_in, rms, rows, m, xs, dys, dxs, tpr); }\n"
    /* dγ, dβ in two passes: block (x, y) sums columns [32x, 32x + 32)
     * over its chunk of @chunk rows (8 rows of threads, combined in
     * order) into part[y][c] (Σ dy·x̂, then Σ dy at part + chunks·m);
     * then one thread per column adds the chunks in order. */
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_norm_bwd_param_rows(const T *x, const T *dy, acc_t *part,\n"
    "    const acc_t *mean_in, const acc_t *rstd_in, int rms, i64 rows, i64 m, i64 xs, i64 dys, i64 chunk) {\n"
    "  __shared__ acc_t sh1[8][33], sh2[8][33];\n"
    "  int tx = threadIdx.x, ty = threadIdx.y;\n"
    "  i64 c = (i64) blockIdx.x * 32 + tx, r0 = (i64) blockIdx.y * chunk, r1 = r0 + chunk;\n"
    "  acc_t s1 = 0, s2 = 0;\n"
    "  if (r1 > rows) r1 = rows;\n"
    "  if (c < m)\n"
    "    for (i64 r = r0 + ty; r < r1; r += 8) {\n"
    "      acc_t d = ld(dy + r * dys + c);\n"
    "      acc_t mean = rms ? (acc_t) 0 : mean_in[r];\n"
    "      s1 += d * (ld(x + r * xs + c) - mean) * rstd_in[r];\n"
    "      s2 += d;\n"
    "    }\n"
    "  sh1[ty][tx] = s1; sh2[ty][tx] = s2;\n"
    "  __syncthreads();\n"
    "  if (ty == 0 && c < m) {\n"
    "    for (int k = 1; k < 8; k++) { s1 += sh1[k][tx]; s2 += sh2[k][tx]; }\n"
    "    part[(i64) blockIdx.y * m + c] = s1;\n"
    "    part[((i64) gridDim.y + blockIdx.y) * m + c] = s2;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_norm_bwd_param_sum(const acc_t *part, T *dscale, T *dbias,\n"
    "    i64 m, int chunks) {\n"
    "  for (i64 c = (i64) blockIdx.x * blockDim.x + threadIdx.x; c < m; c += (i64) gridDim.x * blockDim.x) {\n"
    "    acc_t s1 = 0, s2 = 0;\n"
    "    for (int k = 0; k < chunks; k++) { s1 += part[(i64) k * m + c]; s2 += part[((i64) chunks + k) * m + c]; }\n"
    "    if (dscale) st(dscale + c, s1);\n"
    "    if (dbias) st(dbias + c, s2);\n"
    "  }\n"
    "}\n");
  return g_string_free (s, FALSE);
}

static AtomrKernel *
get_kernel (AtomrCudnnActor *self,
            AtomrDtype       dtype,
            const gchar     *name,
            GError         **error)
{
  AtomrDevice *device = atomr_actor_get_device (ATOMR_ACTOR (self));
  GHashTable *kernels = atomr_cudnn_actor_get_kernels (self);
  g_autofree gchar *key = g_strdup_printf ("norm/%s/%s", atomr_dtype_get_name (dtype), name);
  g_autofree gchar *source = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrModule) module = NULL;
  AtomrKernel *kernel;

  kernel = g_hash_table_lookup (kernels, key);
  if (kernel != NULL && !atomr_kernel_is_stale (kernel))
    return kernel;
  source = atomr_cudnn_norm_kernel_source (dtype);
  options = atomr_compile_options_new ();
  atomr_compile_options_set_arch (options, "native");
  module = atomr_nvrtc_compile_for_device (source, "atomr-cudnn-norm.cu", options,
                                           atomr_kernel_cache_get_default (), device, error);
  if (module == NULL)
    {
      g_prefix_error (error, "normalization kernel %s: ", key);
      return NULL;
    }
  kernel = atomr_kernel_new_loaded (device, module, name, error);
  if (kernel == NULL)
    return NULL;
  g_hash_table_replace (kernels, g_steal_pointer (&key), kernel);
  return kernel;
}

/* ------------------------------------------------------------------ */
/* Requests                                                             */

typedef struct {
  const gchar  *opname;
  gboolean      backward;
  gboolean      rms;
  AtomrDtype    dtype;
  gdouble       epsilon;
  gint64        rows, m, n_param;
  NormLoops     loops;
  /* the row fast path: every operand of x's shape has its normalized
   * dimensions packed innermost and its rows one stride apart (these) */
  gboolean      rows_fast;
  gint64        rs_x, rs_y, rs_dy;
  /* forward: x, y, scale, bias, mean, inv_std;
   * backward: x, dx, dy, scale, mean, inv_std, dscale, dbias */
  AtomrTensor  *x, *y, *dy, *scale, *bias, *mean, *inv_std, *dscale;
} NormRequest;

static void
norm_request_clear (gpointer data)
{
  NormRequest *r = data;

  g_clear_object (&r->x);
  g_clear_object (&r->y);
  g_clear_object (&r->dy);
  g_clear_object (&r->scale);
  g_clear_object (&r->bias);
  g_clear_object (&r->mean);
  g_clear_object (&r->inv_std);
  g_clear_object (&r->dscale);
}

#define PTR_OR_0(t) ((t) != NULL ? atomr_tensor_get_ptr (t) : (CUdeviceptr) 0)

static guint
grid_of (gint64 n)
{
  return (guint) MIN (n, (gint64) G_MAXINT32);
}

/* Threads per row of the row fast path: a warp, doubled until a
 * thread's share of the row's @nv vectors fits in its register @tile (at
 * most 256, the kernels' launch bound: wider rows are read from memory
 * again on every pass). */
static gint
rows_tpr (gint64 nv,
          gint   tile)
{
  gint tpr = 32;

  while (tpr < 256 && nv > (gint64) tpr * tile)
    tpr *= 2;
  return tpr;
}

/* A row kernel: 256-thread blocks of 8 one-warp rows, or one block of tpr threads per wider row. */
static gboolean
rows_launch (AtomrKernel  *kernel,
             gint64        rows,
             gint          tpr,
             CUstream      stream,
             void        **params,
             const gchar  *what,
             GError      **error)
{
  /* a row wider than a warp gets its block: row_sum() combines the
   * warps of the block, and every thread of it takes part in the same rows */
  guint threads = tpr > 32 ? (guint) tpr : 256;
  gint64 rpb = threads / tpr;

  return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                     grid_of ((rows + rpb - 1) / rpb), 1, 1,
                                                     threads, 1, 1, 0, stream, params, NULL),
                           what, error);
}

#define ALIGNED16(p) (((p) & 15) == 0)

/* 16-byte vectors fit: the row length, every row stride and every
 * pointer are multiples of 16 bytes. */
static gboolean
rows_vec (NormRequest *r,
          CUdeviceptr  x,
          CUdeviceptr  y,
          CUdeviceptr  dy,
          CUdeviceptr  scale,
          CUdeviceptr  bias)
{
  gint64 vw = 16 / (gint64) atomr_dtype_get_size (r->dtype);

  return r->m % vw == 0 && r->rs_x % vw == 0 && r->rs_y % vw == 0 &&
         (!r->backward || r->rs_dy % vw == 0) &&
         ALIGNED16 (x) && ALIGNED16 (y) && ALIGNED16 (dy) && ALIGNED16 (scale) &&
         (r->backward || ALIGNED16 (bias));   /* backward: dbias, written per element */
}

/* What of the row fast path has passed the GPU tests: 16-byte vectors and
 * one warp per row (rows of up to 32 × ROWS_TILE vectors: 2048 bf16
 * elements forward).  Wider rows took several rows per block, and
 * row_sum() then added the first row's warps for every row (f16 6 × 4096
 * was 1.7 % off on the H100); rows_launch() now gives such a row its own
 * block, but until that runs on a GPU they, and the one-element path, take
 * the generic kernels. */
static gboolean
rows_verified (NormRequest *r,
               gboolean     vec)
{
  gint64 nv;

  if (!vec)
    return FALSE;
  nv = r->m / (16 / (gint64) atomr_dtype_get_size (r->dtype));
  return rows_tpr (nv, r->backward ? ROWS_TILE_BWD : ROWS_TILE_FWD) == 32;
}

/* The row fast path (r->rows_fast): 16-byte vectors when the row length,
 * every row stride and every pointer allow them, else one element per
 * load; the parameter gradients in two fixed-order passes through the
 * actor's workspace. */
static gboolean
rows_enqueue (AtomrCudnnActor *self,
              NormRequest     *r,
              CUstream         stream,
              CUdeviceptr      x,
              CUdeviceptr      y,
              CUdeviceptr      dy,
              CUdeviceptr      scale,
              CUdeviceptr      bias,
              CUdeviceptr      mean,
              CUdeviceptr      rstd,
              CUdeviceptr      dscale,
              gboolean         vec,
              GError         **error)
{
  gint64 nv = vec ? r->m / (16 / (gint64) atomr_dtype_get_size (r->dtype)) : r->m;
  gint rms = r->rms;
  gfloat eps_f = (gfloat) r->epsilon;
  gdouble eps_d = r->epsilon;
  gint tpr;
  AtomrKernel *kernel;
  void *params[16];

  if (!r->backward)
    {
      kernel = get_kernel (self, r->dtype, vec ? "atomr_norm_fwd_rows_vec" : "atomr_norm_fwd_rows", error);
      if (kernel == NULL)
        return FALSE;
      tpr = rows_tpr (nv, ROWS_TILE_FWD);
      params[0] = &x;
      params[1] = &y;
      params[2] = &scale;
      params[3] = &bias;
      params[4] = &mean;
      params[5] = &rstd;
      params[6] = r->dtype == ATOMR_DTYPE_F64 ? (void *) &eps_d : (void *) &eps_f;
      params[7] = &rms;
      params[8] = &r->rows;
      params[9] = &r->m;
      params[10] = &r->rs_x;
      params[11] = &r->rs_y;
      params[12] = &tpr;
      return rows_launch (kernel, r->rows, tpr, stream, params,
                          "cuLaunchKernel (normalization forward, rows)", error);
    }

  kernel = get_kernel (self, r->dtype, vec ? "atomr_norm_bwd_data_rows_vec" : "atomr_norm_bwd_data_rows", error);
  if (kernel == NULL)
    return FALSE;
  tpr = rows_tpr (nv, ROWS_TILE_BWD);
  params[0] = &x;
  params[1] = &dy;
  params[2] = &y;           /* dx */
  params[3] = &scale;
  params[4] = &mean;
  params[5] = &rstd;
  params[6] = &rms;
  params[7] = &r->rows;
  params[8] = &r->m;
  params[9] = &r->rs_x;
  params[10] = &r->rs_dy;
  params[11] = &r->rs_y;
  params[12] = &tpr;
  if (!rows_launch (kernel, r->rows, tpr, stream, params,
                    "cuLaunchKernel (normalization backward data, rows)", error))
    return FALSE;
  if (r->dscale == NULL && r->bias == NULL)
    return TRUE;

  {
    /* about 2048 blocks of 32 columns × a chunk of at least 8 rows; the
     * split depends on the shape only, so the sums' order (and bits)
     * do not change from run to run */
    gint64 col_tiles = (r->m + 31) / 32;
    gint64 chunks = CLAMP (2048 / col_tiles, 1, MIN ((r->rows + 7) / 8, 65535));
    gint64 chunk = (r->rows + chunks - 1) / chunks;
    gint n_chunks = (gint) ((r->rows + chunk - 1) / chunk);
    gsize acc_size = r->dtype == ATOMR_DTYPE_F64 ? 8 : 4;
    void *ws = NULL;
    CUdeviceptr part;

    if (!atomr_cudnn_actor_reserve_workspace (self, stream, 2 * (gsize) n_chunks * (gsize) r->m * acc_size,
                                              &ws, error))
      return FALSE;
    part = (CUdeviceptr) (uintptr_t) ws;
    kernel = get_kernel (self, r->dtype, "atomr_norm_bwd_param_rows", error);
    if (kernel == NULL)
      return FALSE;
    params[0] = &x;
    params[1] = &dy;
    params[2] = &part;
    params[3] = &mean;
    params[4] = &rstd;
    params[5] = &rms;
    params[6] = &r->rows;
    params[7] = &r->m;
    params[8] = &r->rs_x;
    params[9] = &r->rs_dy;
    params[10] = &chunk;
    if (!atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                     grid_of (col_tiles), (guint) n_chunks, 1, 32, 8, 1, 0,
                                                     stream, params, NULL),
                           "cuLaunchKernel (normalization backward parameters, rows)", error))
      return FALSE;
    kernel = get_kernel (self, r->dtype, "atomr_norm_bwd_param_sum", error);
    if (kernel == NULL)
      return FALSE;
    params[0] = &part;
    params[1] = &dscale;
    params[2] = &bias;      /* dbias */
    params[3] = &r->m;
    params[4] = &n_chunks;
    return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                       grid_of ((r->m + 255) / 256), 1, 1, 256, 1, 1, 0,
                                                       stream, params, NULL),
                             "cuLaunchKernel (normalization backward parameter sums, rows)", error);
  }
}

static gboolean
norm_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  NormRequest *r = atomr_op_get_data (op);
  CUstream stream = atomr_op_get_cu_stream (op);
  CUdeviceptr x, y, dy, scale, bias, mean, rstd, dscale;
  gint rms = r->rms;
  gfloat eps_f = (gfloat) r->epsilon;
  gdouble eps_d = r->epsilon;
  AtomrKernel *kernel;
  void *params[12];

  if (atomr_op_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: needs a CUDA device; the host test device runs no normalization kernels",
                   r->opname);
      return FALSE;
    }
  x = atomr_tensor_get_ptr (r->x);
  y = atomr_tensor_get_ptr (r->y);
  dy = PTR_OR_0 (r->dy);
  scale = PTR_OR_0 (r->scale);
  bias = PTR_OR_0 (r->bias);
  mean = PTR_OR_0 (r->mean);
  rstd = PTR_OR_0 (r->inv_std);
  dscale = PTR_OR_0 (r->dscale);
  if (r->rows_fast)
    {
      gboolean vec = rows_vec (r, x, y, dy, scale, bias);
      if (rows_verified (r, vec))
        return rows_enqueue (self, r, stream, x, y, dy, scale, bias, mean, rstd, dscale, vec, error);
    }

  if (!r->backward)
    {
      kernel = get_kernel (self, r->dtype, "atomr_norm_fwd", error);
      if (kernel == NULL)
        return FALSE;
      params[0] = &x;
      params[1] = &y;
      params[2] = &scale;
      params[3] = &bias;
      params[4] = &mean;
      params[5] = &rstd;
      params[6] = r->dtype == ATOMR_DTYPE_F64 ? (void *) &eps_d : (void *) &eps_f;
      params[7] = &rms;
      /* a row of at most 32 KiB of statistics-precision values stays in
       * shared memory (under the 48 KiB every launch may take) */
      gsize acc_size = r->dtype == ATOMR_DTYPE_F64 ? 8 : 4;
      gint cached = (gsize) r->m * acc_size <= 32768;
      guint shared = cached ? (guint) (r->m * acc_size) : 0;

      params[8] = &r->rows;
      params[9] = &r->m;
      params[10] = &cached;
      params[11] = &r->loops;
      return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                         grid_of (r->rows), 1, 1, 256, 1, 1, shared,
                                                         stream, params, NULL),
                               "cuLaunchKernel (normalization forward)", error);
    }

  /* backward: dx, then the parameter gradients (both read only x, dy and
   * the stats: no order between them is needed, one stream gives one) */
  kernel = get_kernel (self, r->dtype, "atomr_norm_bwd_data", error);
  if (kernel == NULL)
    return FALSE;
  params[0] = &x;
  params[1] = &dy;
  params[2] = &y;           /* dx */
  params[3] = &scale;
  params[4] = &mean;
  params[5] = &rstd;
  params[6] = &rms;
  params[7] = &r->rows;
  params[8] = &r->m;
  params[9] = &r->loops;
  if (!atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                   grid_of (r->rows), 1, 1, 256, 1, 1, 0,
                                                   stream, params, NULL),
                         "cuLaunchKernel (normalization backward data)", error))
    return FALSE;
  if (r->dscale == NULL && r->bias == NULL)
    return TRUE;
  kernel = get_kernel (self, r->dtype, "atomr_norm_bwd_param", error);
  if (kernel == NULL)
    return FALSE;
  {
    gint64 n_red = (r->rows * r->m) / r->n_param;

    params[0] = &x;
    params[1] = &dy;
    params[2] = &dscale;
    params[3] = &bias;      /* dbias */
    params[4] = &mean;
    params[5] = &rstd;
    params[6] = &rms;
    params[7] = &r->n_param;
    params[8] = &n_red;
    params[9] = &r->loops;
    return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                       grid_of ((r->n_param + 31) / 32), 1, 1, 32, 8, 1, 0,
                                                       stream, params, NULL),
                             "cuLaunchKernel (normalization backward parameters)", error);
  }
}

#define FAIL(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

static const gchar *
opname_of (AtomrNormMode mode,
           gboolean      backward)
{
  static const gchar *const names[][2] = {
    { "layer-norm-fwd", "layer-norm-bwd" },
    { "rms-norm-fwd", "rms-norm-bwd" },
    { "group-norm-fwd", "group-norm-bwd" },
    { "instance-norm-fwd", "instance-norm-bwd" },
  };
  return names[mode <= ATOMR_NORM_INSTANCE ? mode : 0][backward];
}

/* @t has @x's shape. */
static gboolean
check_like_x (const gchar  *op,
              const gchar  *name,
              AtomrTensor  *t,
              AtomrTensor  *x,
              GError      **error)
{
  guint n, nx;
  const gint64 *s = atomr_tensor_get_shape (t, &n);
  const gint64 *sx = atomr_tensor_get_shape (x, &nx);

  if (n == nx && memcmp (s, sx, n * sizeof (gint64)) == 0)
    return TRUE;
  {
    g_autofree gchar *a = atomr_tensor_to_string (t);
    g_autofree gchar *b = atomr_tensor_to_string (x);
    return FAIL ("%s: %s is %s but x is %s (they must have the same shape)", op, name, a, b);
  }
}

/* A packed parameter or statistics tensor of @count elements and @dtype. */
static gboolean
check_packed (AtomrCudnnActor *self,
              const gchar     *op,
              const gchar     *name,
              AtomrTensor     *t,
              gint64           count,
              AtomrDtype       dtype,
              const gchar     *what,
              GError         **error)
{
  gint dt = dtype;

  if (!atomr_cudnn_check_tensor (self, op, name, t, 1, ATOMR_TENSOR_MAX_DIMS, &dt, error))
    return FALSE;
  if ((gint64) atomr_tensor_get_n_elements (t) != count)
    return FAIL ("%s: %s has %" G_GUINT64_FORMAT " elements (takes %" G_GINT64_FORMAT ": %s)",
                 op, name, atomr_tensor_get_n_elements (t), count, what);
  if (!atomr_tensor_is_contiguous (t))
    return FAIL ("%s: %s is not contiguous (parameters and statistics must be packed; "
                 "copy it to a new tensor first)", op, name);
  return TRUE;
}

/* Layer and RMS norms: whether @t (any operand of x's shape) has its
 * normalized dimensions [axis, rank) packed innermost and its row
 * dimensions [0, axis) at offsets row × one stride (a contiguous tensor,
 * or a slice of the rows of a wider one); that stride in @row_stride.
 * Dimensions of extent 1 take any stride. */
gboolean
atomr_cudnn_norm_rows_layout (AtomrTensor *t,
                              guint        axis,
                              gint64      *row_stride)
{
  guint n;
  const gint64 *shape = atomr_tensor_get_shape (t, &n);
  const gint64 *strides = atomr_tensor_get_strides (t, NULL);
  gint64 expect = 1, rows_after = 1;
  gboolean have = FALSE;

  if (axis >= n)
    return FALSE;
  for (gint i = (gint) n - 1; i >= (gint) axis; i--)
    {
      if (shape[i] != 1 && strides[i] != expect)
        return FALSE;
      expect *= shape[i];
    }
  *row_stride = expect;
  for (gint i = (gint) axis - 1; i >= 0; i--)
    {
      if (shape[i] != 1)
        {
          if (!have)
            {
              /* rows_after is 1 here: every later row dimension has extent 1 */
              *row_stride = strides[i];
              have = TRUE;
            }
          else if (strides[i] != *row_stride * rows_after)
            return FALSE;
        }
      rows_after *= shape[i];
    }
  return TRUE;
}

/* Validates the parameters and x, builds the loop table of @r. */
static gboolean
check_norm (AtomrCudnnActor    *self,
            NormRequest        *r,
            AtomrNormalization *norm,
            AtomrTensor        *x,
            GError            **error)
{
  const gchar *op = r->opname;
  gint dtype = -1;
  guint n;
  const gint64 *shape, *strides;
  AtomrNormMode mode;
  NormLoops *L = &r->loops;

  if (norm == NULL || !ATOMR_IS_NORMALIZATION (norm))
    return FAIL ("%s: norm is not an AtomrNormalization", op);
  mode = norm->mode;
  if (!atomr_cudnn_check_tensor (self, op, "x", x, 2, ATOMR_TENSOR_MAX_DIMS, &dtype, error))
    return FALSE;
  r->dtype = dtype;
  r->epsilon = norm->epsilon;
  r->rms = mode == ATOMR_NORM_RMS;
  r->x = g_object_ref (x);
  shape = atomr_tensor_get_shape (x, &n);
  strides = atomr_tensor_get_strides (x, NULL);

  memset (L, 0, sizeof *L);
  if (mode == ATOMR_NORM_LAYER || mode == ATOMR_NORM_RMS)
    {
      gint64 pstride = 1, rstride = 1;

      if (norm->axis >= n)
        return FAIL ("%s: axis is %u but x has %u dimensions (the normalized dimensions are "
                     "[axis, %u): axis must be 1 to %u)", op, norm->axis, n, n, n - 1);
      L->n = n;
      for (gint i = (gint) n - 1; i >= 0; i--)
        {
          L->ext[i] = shape[i];
          L->s[OP_X][i] = strides[i];
          if ((guint) i >= norm->axis)
            {
              L->inner[i] = 1;
              L->pdim[i] = 1;
              L->s[OP_PARAM][i] = pstride;
              pstride *= shape[i];
            }
          else
            {
              L->s[OP_ROW][i] = rstride;
              rstride *= shape[i];
            }
        }
      r->rows = rstride;
      r->m = pstride;
      r->n_param = pstride;
    }
  else
    {
      gint64 c = shape[1], groups = mode == ATOMR_NORM_INSTANCE ? shape[1] : norm->groups;
      gint64 cg, spatial = 1;

      if (c % groups != 0)
        return FAIL ("%s: x has %" G_GINT64_FORMAT " channels, which %" G_GINT64_FORMAT
                     " groups do not divide", op, c, groups);
      cg = c / groups;
      for (guint i = 2; i < n; i++)
        spatial *= shape[i];
      /* loops: N, groups, channels in a group, spatial... */
      L->n = n + 1;
      L->ext[0] = shape[0];
      L->s[OP_X][0] = strides[0];
      L->s[OP_ROW][0] = groups;
      L->ext[1] = groups;
      L->s[OP_X][1] = cg * strides[1];
      L->s[OP_PARAM][1] = cg;
      L->s[OP_ROW][1] = 1;
      L->pdim[1] = 1;
      L->ext[2] = cg;
      L->s[OP_X][2] = strides[1];
      L->s[OP_PARAM][2] = 1;
      L->inner[2] = 1;
      L->pdim[2] = 1;
      for (guint i = 2; i < n; i++)
        {
          L->ext[i + 1] = shape[i];
          L->s[OP_X][i + 1] = strides[i];
          L->inner[i + 1] = 1;
        }
      r->rows = shape[0] * groups;
      r->m = cg * spatial;
      r->n_param = c;
    }
  for (gint sel = 0; sel < 4; sel++)
    {
      L->first[sel] = -1;
      for (gint k = L->n - 1; k >= 0; k--)
        {
          gboolean on = sel == 0 ? !L->inner[k] : sel == 1 ? L->inner[k] : sel == 2 ? L->pdim[k] : !L->pdim[k];
          if (on)
            L->first[sel] = k;
        }
    }
  return TRUE;
}

/* Copies @t's strides into operand row @row of the loop table (x's
 * layout of loops, C split for group norms). */
static void
set_loop_strides (NormRequest *r,
                  guint        row,
                  AtomrTensor *t,
                  AtomrNormMode mode)
{
  guint n;
  const gint64 *st;
  NormLoops *L = &r->loops;

  st = atomr_tensor_get_strides (t, &n);
  if (mode == ATOMR_NORM_LAYER || mode == ATOMR_NORM_RMS)
    {
      for (guint i = 0; i < n; i++)
        L->s[row][i] = st[i];
      return;
    }
  L->s[row][0] = st[0];
  L->s[row][1] = L->ext[2] * st[1];
  L->s[row][2] = st[1];
  for (guint i = 2; i < n; i++)
    L->s[row][i + 1] = st[i];
}

static AtomrDtype
stats_dtype (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F64 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
}

static const gchar *
param_what (AtomrNormMode mode)
{
  return mode == ATOMR_NORM_LAYER || mode == ATOMR_NORM_RMS ? "one per normalized element"
                                                            : "one per channel";
}

/**
 * atomr_cudnn_actor_normalization_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @norm: the normalization
 * @x: the input: N × C × spatial for group and instance norms, any rank
 *   from 2 for layer and RMS norms
 * @scale: (nullable): γ, packed: one element per normalized element for
 *   layer and RMS norms (the shape of x from
 *   [property@Atomr.Normalization:axis] on, or flat), C elements for group
 *   and instance norms; %NULL for 1
 * @bias: (nullable): β, laid out as @scale; %NULL for 0
 * @y: the output, x's shape, any layout
 * @mean: (nullable): training: where each row's mean goes (packed, one
 *   element per row, f32 — f64 when x is f64); %NULL for inference.  RMS
 *   norms have no mean: pass %NULL.
 * @inv_std: (nullable): training: where each row's 1/√(var + ε) goes
 *   (as @mean); %NULL for inference
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * y = (x − mean) / √(var + ε) · γ + β over the rows @norm describes (RMS:
 * y = x / √(mean (x²) + ε) · γ + β), as PyTorch's layer_norm, rms_norm,
 * group_norm and instance_norm (biased variance).  Trace names
 * `cudnn · layer-norm-fwd`, `rms-norm-fwd`, `group-norm-fwd`,
 * `instance-norm-fwd`.  Statistics accumulate in f32 (f64 for f64)
 * whatever the dtype; x, y, γ and β share one dtype.  The saved @mean and
 * @inv_std are what [method@Atomr.CudnnActor.normalization_backward_async]
 * takes.  @y, @mean and @inv_std overlap no input and no other output.
 *
 * Runs as a generated kernel (NVRTC, compiled once per dtype and cached),
 * not through cuDNN's deprecated cudnnNormalization* calls.  Layer and RMS
 * norms over packed innermost dimensions (rows one stride apart) take
 * faster per-row kernels, with 16-byte loads when the row length, the
 * row strides and the pointers are multiples of 16 bytes.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_normalization_forward_async (AtomrCudnnActor     *self,
                                               AtomrNormalization  *norm,
                                               AtomrTensor         *x,
                                               AtomrTensor         *scale,
                                               AtomrTensor         *bias,
                                               AtomrTensor         *y,
                                               AtomrTensor         *mean,
                                               AtomrTensor         *inv_std,
                                               GCancellable        *cancellable,
                                               GAsyncReadyCallback  callback,
                                               gpointer             user_data)
{
  AtomrNormMode mode;
  const gchar *opname;
  AtomrOp *op;
  NormRequest *r;
  GError *error = NULL;
  gint dtype;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  mode = norm != NULL && ATOMR_IS_NORMALIZATION (norm) ? norm->mode : ATOMR_NORM_LAYER;
  opname = opname_of (mode, FALSE);
  op = atomr_op_new (self, opname, atomr_cudnn_actor_normalization_forward_async, cancellable,
                     callback, user_data);
  r = atomr_op_alloc_data (op, sizeof (NormRequest), norm_request_clear);
  memset (r, 0, sizeof *r);
  r->opname = opname;
  if (!check_norm (self, r, norm, x, &error))
    return atomr_op_fail (op, error);
  dtype = r->dtype;
  if (!atomr_cudnn_check_tensor (self, opname, "y", y, 2, ATOMR_TENSOR_MAX_DIMS, &dtype, &error) ||
      !check_like_x (opname, "y", y, x, &error) ||
      (scale && !check_packed (self, opname, "scale", scale, r->n_param, r->dtype, param_what (mode), &error)) ||
      (bias && !check_packed (self, opname, "bias", bias, r->n_param, r->dtype, param_what (mode), &error)))
    return atomr_op_fail (op, error);
  if (mode == ATOMR_NORM_RMS && mean != NULL)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: an RMS norm has no mean: pass no mean tensor "
                                           "(inv_std alone saves its statistics)", opname));
  if (mode != ATOMR_NORM_RMS && (mean == NULL) != (inv_std == NULL))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: mean is %s but inv_std is %s (training saves "
                                           "both, inference neither)", opname,
                                           mean ? "given" : "NULL", inv_std ? "given" : "NULL"));
  if ((mean && !check_packed (self, opname, "mean", mean, r->rows, stats_dtype (r->dtype),
                              "one per row", &error)) ||
      (inv_std && !check_packed (self, opname, "inv_std", inv_std, r->rows, stats_dtype (r->dtype),
                                 "one per row", &error)) ||
      !atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y),
                                             ATOMR_OPERAND_TENSOR ("mean", mean),
                                             ATOMR_OPERAND_TENSOR ("inv_std", inv_std)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x),
                                             ATOMR_OPERAND_TENSOR ("scale", scale),
                                             ATOMR_OPERAND_TENSOR ("bias", bias)),
                             &error))
    return atomr_op_fail (op, error);

  set_loop_strides (r, OP_Y, y, mode);
  r->rows_fast = (mode == ATOMR_NORM_LAYER || mode == ATOMR_NORM_RMS) &&
                 atomr_cudnn_norm_rows_layout (x, norm->axis, &r->rs_x) && atomr_cudnn_norm_rows_layout (y, norm->axis, &r->rs_y);
  r->y = g_object_ref (y);
  r->scale = scale ? g_object_ref (scale) : NULL;
  r->bias = bias ? g_object_ref (bias) : NULL;
  r->mean = mean ? g_object_ref (mean) : NULL;
  r->inv_std = inv_std ? g_object_ref (inv_std) : NULL;

  atomr_op_read_tensor (op, x);
  if (scale)
    atomr_op_read_tensor (op, scale);
  if (bias)
    atomr_op_read_tensor (op, bias);
  atomr_op_write_tensor (op, y);
  if (mean)
    atomr_op_write_tensor (op, mean);
  if (inv_std)
    atomr_op_write_tensor (op, inv_std);
  atomr_op_set_enqueue (op, norm_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_cudnn_actor_normalization_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.normalization_forward_async].
 *
 * Returns: %TRUE when y (and the statistics) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_normalization_forward_finish (AtomrCudnnActor  *self,
                                                GAsyncResult     *result,
                                                GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_normalization_forward_async, error);
}

/**
 * atomr_cudnn_actor_normalization_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @norm: the normalization of the forward pass
 * @x: the forward pass's input
 * @dy: the gradient of the output, x's shape
 * @scale: (nullable): the forward pass's γ, %NULL when it had none
 * @mean: (nullable): the means the forward pass saved (%NULL for RMS
 *   norms)
 * @inv_std: the 1/σ the forward pass saved
 * @dx: the gradient of x, x's shape, any layout
 * @dscale: (nullable): where the gradient of γ goes (laid out as γ), or
 *   %NULL
 * @dbias: (nullable): where the gradient of β goes, or %NULL
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the gradients are computed
 * @user_data: data for @callback
 *
 * The gradients of [method@Atomr.CudnnActor.normalization_forward_async]
 * from its saved statistics (trace names `cudnn · layer-norm-bwd`,
 * `rms-norm-bwd`, `group-norm-bwd`, `instance-norm-bwd`).  With x̂ = (x −
 * mean) · inv_std and g = dy · γ: dx = inv_std · (g − mean (g) − x̂ · mean
 * (g · x̂)) over each row (RMS: without the mean (g) term), dγ = Σ dy · x̂
 * and dβ = Σ dy over everything but the parameter's own index.  The sums
 * are in a fixed order: the same inputs give the same bits.  Outputs
 * overlap no input and no other output.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_normalization_backward_async (AtomrCudnnActor     *self,
                                                AtomrNormalization  *norm,
                                                AtomrTensor         *x,
                                                AtomrTensor         *dy,
                                                AtomrTensor         *scale,
                                                AtomrTensor         *mean,
                                                AtomrTensor         *inv_std,
                                                AtomrTensor         *dx,
                                                AtomrTensor         *dscale,
                                                AtomrTensor         *dbias,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data)
{
  AtomrNormMode mode;
  const gchar *opname;
  AtomrOp *op;
  NormRequest *r;
  GError *error = NULL;
  gint dtype;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  mode = norm != NULL && ATOMR_IS_NORMALIZATION (norm) ? norm->mode : ATOMR_NORM_LAYER;
  opname = opname_of (mode, TRUE);
  op = atomr_op_new (self, opname, atomr_cudnn_actor_normalization_backward_async, cancellable,
                     callback, user_data);
  r = atomr_op_alloc_data (op, sizeof (NormRequest), norm_request_clear);
  memset (r, 0, sizeof *r);
  r->opname = opname;
  r->backward = TRUE;
  if (!check_norm (self, r, norm, x, &error))
    return atomr_op_fail (op, error);
  dtype = r->dtype;
  if (!atomr_cudnn_check_tensor (self, opname, "dy", dy, 2, ATOMR_TENSOR_MAX_DIMS, &dtype, &error) ||
      !check_like_x (opname, "dy", dy, x, &error) ||
      !atomr_cudnn_check_tensor (self, opname, "dx", dx, 2, ATOMR_TENSOR_MAX_DIMS, &dtype, &error) ||
      !check_like_x (opname, "dx", dx, x, &error) ||
      (scale && !check_packed (self, opname, "scale", scale, r->n_param, r->dtype, param_what (mode), &error)) ||
      (dscale && !check_packed (self, opname, "dscale", dscale, r->n_param, r->dtype, param_what (mode), &error)) ||
      (dbias && !check_packed (self, opname, "dbias", dbias, r->n_param, r->dtype, param_what (mode), &error)))
    return atomr_op_fail (op, error);
  if (inv_std == NULL)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: inv_std is NULL (the backward pass needs the "
                                           "statistics a training forward pass saved)", opname));
  if (mode == ATOMR_NORM_RMS && mean != NULL)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: an RMS norm has no mean: pass no mean tensor", opname));
  if (mode != ATOMR_NORM_RMS && mean == NULL)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: mean is NULL (the backward pass needs the "
                                           "statistics a training forward pass saved)", opname));
  if ((mean && !check_packed (self, opname, "mean", mean, r->rows, stats_dtype (r->dtype),
                              "one per row", &error)) ||
      !check_packed (self, opname, "inv_std", inv_std, r->rows, stats_dtype (r->dtype),
                     "one per row", &error) ||
      !atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx),
                                             ATOMR_OPERAND_TENSOR ("dscale", dscale),
                                             ATOMR_OPERAND_TENSOR ("dbias", dbias)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x),
                                             ATOMR_OPERAND_TENSOR ("dy", dy),
                                             ATOMR_OPERAND_TENSOR ("scale", scale),
                                             ATOMR_OPERAND_TENSOR ("mean", mean),
                                             ATOMR_OPERAND_TENSOR ("inv_std", inv_std)),
                             &error))
    return atomr_op_fail (op, error);

  set_loop_strides (r, OP_Y, dx, mode);
  set_loop_strides (r, OP_DY, dy, mode);
  r->rows_fast = (mode == ATOMR_NORM_LAYER || mode == ATOMR_NORM_RMS) &&
                 atomr_cudnn_norm_rows_layout (x, norm->axis, &r->rs_x) && atomr_cudnn_norm_rows_layout (dx, norm->axis, &r->rs_y) &&
                 atomr_cudnn_norm_rows_layout (dy, norm->axis, &r->rs_dy);
  r->y = g_object_ref (dx);
  r->dy = g_object_ref (dy);
  r->scale = scale ? g_object_ref (scale) : NULL;
  r->mean = mean ? g_object_ref (mean) : NULL;
  r->inv_std = g_object_ref (inv_std);
  r->dscale = dscale ? g_object_ref (dscale) : NULL;
  r->bias = dbias ? g_object_ref (dbias) : NULL;     /* dbias */

  atomr_op_read_tensor (op, x);
  atomr_op_read_tensor (op, dy);
  if (scale)
    atomr_op_read_tensor (op, scale);
  if (mean)
    atomr_op_read_tensor (op, mean);
  atomr_op_read_tensor (op, inv_std);
  atomr_op_write_tensor (op, dx);
  if (dscale)
    atomr_op_write_tensor (op, dscale);
  if (dbias)
    atomr_op_write_tensor (op, dbias);
  atomr_op_set_enqueue (op, norm_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_cudnn_actor_normalization_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.normalization_backward_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_normalization_backward_finish (AtomrCudnnActor  *self,
                                                 GAsyncResult     *result,
                                                 GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_normalization_backward_async, error);
}
