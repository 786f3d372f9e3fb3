/* atomr-fft-plan.c — the description of a cuFFT transform
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "core/atomr-error.h"
#include "atomr-fft-plan-private.h"

G_DEFINE_BOXED_TYPE (AtomrFftPlan, atomr_fft_plan, atomr_fft_plan_ref, atomr_fft_plan_unref)

#define FAIL(...) \
  (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), NULL)
#define FAIL_BOOL(...) \
  (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

static const gchar *
kind_name (gint kind)
{
  switch (kind)
    {
    case ATOMR_FFT_C2C: return "C2C";
    case ATOMR_FFT_R2C: return "R2C";
    case ATOMR_FFT_C2R: return "C2R";
    default: return "invalid";
    }
}

static void
logical_dims (const AtomrFftPlan *plan,
              gboolean            complex_side,
              gint64              dims[3])
{
  guint rank = plan->key.rank;

  memset (dims, 0, 3 * sizeof (gint64));
  for (guint d = 0; d < rank; d++)
    dims[d] = plan->key.n[d];
  if (complex_side && plan->key.kind != ATOMR_FFT_C2C)
    dims[rank - 1] = plan->key.n[rank - 1] / 2 + 1;
}

void
atomr_fft_plan_get_input_dims (AtomrFftPlan *plan,
                               gint64        dims[3])
{
  logical_dims (plan, plan->key.kind == ATOMR_FFT_C2R, dims);
}

void
atomr_fft_plan_get_output_dims (AtomrFftPlan *plan,
                                gint64        dims[3])
{
  logical_dims (plan, plan->key.kind == ATOMR_FFT_R2C, dims);
}

/* Index (in elements) one past the last element one side touches, with
 * every step checked: strides, embeddings and distances are user numbers
 * (istride = 2^62 must not wrap around to a tiny size). */
static gboolean
side_elements (const AtomrFftPlan *plan,
               const gchar        *side,
               const gint64        dims[3],
               const gint64        embed[3],
               gint64              stride,
               gint64              dist,
               guint64            *elements,
               GError            **error)
{
  guint64 last = 0, span;
  g_autofree gchar *what = g_strdup_printf ("fft plan: the %s layout", side);

  for (guint d = 0; d < (guint) plan->key.rank; d++)
    if ((d > 0 && !g_uint64_checked_mul (&last, last, (guint64) embed[d])) ||
        !g_uint64_checked_add (&last, last, (guint64) (dims[d] - 1)))
      goto overflow;
  if (!g_uint64_checked_mul (&last, last, (guint64) stride) ||
      !g_uint64_checked_mul (&span, (guint64) dist, (guint64) (plan->key.batch - 1)) ||
      !g_uint64_checked_add (&last, last, span) ||
      !g_uint64_checked_add (&last, last, 1) ||
      last > G_MAXINT64)
    goto overflow;
  *elements = last;
  return TRUE;

overflow:
  return FAIL_BOOL ("%s overflows: %sstride %" G_GINT64_FORMAT ", %sdist %" G_GINT64_FORMAT
                    " and batch %" G_GINT64_FORMAT " address more than 2^63 elements",
                    what, side[0] == 'i' ? "i" : "o", stride, side[0] == 'i' ? "i" : "o", dist,
                    plan->key.batch);
}

static gboolean
check_layout (const gchar   *side,
              const gint64   dims[3],
              guint          rank,
              const gint64  *embed,
              gint64         stride,
              gint64         dist,
              GError       **error)
{
  if (stride < 1)
    return FAIL_BOOL ("fft plan: %sstride is %" G_GINT64_FORMAT "; it must be at least 1", side, stride);
  if (dist < 1)
    return FAIL_BOOL ("fft plan: %sdist is %" G_GINT64_FORMAT "; it must be at least 1", side, dist);
  for (guint d = 1; d < rank; d++)
    if (embed[d] < dims[d])
      return FAIL_BOOL ("fft plan: %sembed[%u] is %" G_GINT64_FORMAT "; it must be at least the "
                   "extent %" G_GINT64_FORMAT " of that dimension", side, d, embed[d], dims[d]);
  if (embed[0] < 1)
    return FAIL_BOOL ("fft plan: %sembed[0] is %" G_GINT64_FORMAT "; it must be positive",
                      side, embed[0]);
  return TRUE;
}

/* FNV-1a over the key's bytes (unused dimensions are zero). */
static guint
key_hash (const AtomrFftPlan *p)
{
  const guint8 *bytes = (const guint8 *) &p->key;
  guint h = 2166136261u;

  for (gsize i = 0; i < sizeof p->key; i++)
    h = (h ^ bytes[i]) * 16777619u;
  return h;
}

/**
 * atomr_fft_plan_new_many:
 * @kind: the kind of transform
 * @precision: %ATOMR_DTYPE_F32, %ATOMR_DTYPE_F64, or (powers of two only)
 *   %ATOMR_DTYPE_F16 or %ATOMR_DTYPE_BF16
 * @n: (array length=rank): the transform size of each dimension, slowest first
 * @rank: 1, 2 or 3: the length of @n
 * @inembed: (array length=n_inembed) (nullable): storage extents of the
 *   input, one per dimension, or %NULL for the packed layout (then
 *   @istride and @idist are ignored)
 * @n_inembed: the length of @inembed: @rank, or 0 for the packed layout
 * @istride: distance between consecutive input elements
 * @idist: distance between the first elements of two input batch members
 * @onembed: (array length=n_onembed) (nullable): storage extents of the
 *   output, one per dimension, or %NULL for the packed layout (then
 *   @ostride and @odist are ignored)
 * @n_onembed: the length of @onembed: @rank, or 0 for the packed layout
 * @ostride: distance between consecutive output elements
 * @odist: distance between the first elements of two output batch members
 * @batch: the number of transforms
 * @error: return location for a [struct@GLib.Error]
 *
 * Describes a batched transform in cuFFT's advanced layout: element
 * (i0, i1, i2) of batch member b is at
 * `b * dist + ((i0 * embed[1] + i1) * embed[2] + i2) * stride`.
 * Each array carries its own length so that bindings cannot truncate or
 * overrun one: an embedding whose length is not @rank is an error.  From C
 * pass the rank again, e.g. `n, 2, inembed, 2, 1, 64, NULL, 0, 1, 1, 8`.
 * The extents the layouts address are computed with checked arithmetic.
 *
 * Half-precision plans (f16, bf16; cuFFT needs compute capability 5.3, or
 * 8.0 for bf16) follow cuFFT's limits: every size a power of two, a unit
 * stride on the real side of R2C and C2R transforms, fewer than 2^32
 * elements per side.  There is no complex-half dtype: the complex side is
 * a buffer of the half dtype itself holding (real, imaginary) pairs, so
 * its element count is twice the number of complex values (strides and
 * distances still count complex values, as in cuFFT).
 *
 * Returns: (transfer full) (nullable): a new plan, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT naming the wrong argument
 *
 * Since: 0.1
 */
AtomrFftPlan *
atomr_fft_plan_new_many (AtomrFftKind   kind,
                         AtomrDtype     precision,
                         const gint64  *n,
                         guint          rank,
                         const gint64  *inembed,
                         guint          n_inembed,
                         gint64         istride,
                         gint64         idist,
                         const gint64  *onembed,
                         guint          n_onembed,
                         gint64         ostride,
                         gint64         odist,
                         gint64         batch,
                         GError       **error)
{
  g_autoptr(AtomrFftPlan) plan = NULL;
  gint64 in_dims[3], out_dims[3];

  if ((guint) kind > ATOMR_FFT_C2R)
    return FAIL ("fft plan: kind %d is not an AtomrFftKind", (gint) kind);
  if (precision != ATOMR_DTYPE_F32 && precision != ATOMR_DTYPE_F64 &&
      precision != ATOMR_DTYPE_F16 && precision != ATOMR_DTYPE_BF16)
    return FAIL ("fft plan: precision is %s; it must be f16, bf16, f32 or f64",
                 (guint) precision < ATOMR_DTYPE_LAST ? atomr_dtype_get_name (precision) : "invalid");
  if (rank < 1 || rank > 3)
    return FAIL ("fft plan: rank is %u; it must be 1, 2 or 3", rank);
  if (n == NULL)
    return FAIL ("fft plan: n is NULL");
  for (guint d = 0; d < rank; d++)
    if (n[d] < 1 || n[d] > G_MAXINT32)
      return FAIL ("fft plan: n[%u] is %" G_GINT64_FORMAT "; it must be between 1 and %d",
                   d, n[d], G_MAXINT32);
  /* cuFFT's half-precision transforms take powers of two only. */
  if (precision == ATOMR_DTYPE_F16 || precision == ATOMR_DTYPE_BF16)
    for (guint d = 0; d < rank; d++)
      if ((n[d] & (n[d] - 1)) != 0)
        return FAIL ("fft plan: n[%u] is %" G_GINT64_FORMAT "; %s transforms take powers of two "
                     "only (a cuFFT limit); use f32 or pad the signal", d, n[d],
                     atomr_dtype_get_name (precision));
  if (batch < 1 || batch > G_MAXINT32)
    return FAIL ("fft plan: batch is %" G_GINT64_FORMAT "; it must be between 1 and %d",
                 batch, G_MAXINT32);
  if (n_inembed != 0 && n_inembed != rank)
    return FAIL ("fft plan: inembed has %u entries but n has %u (the rank); give one storage "
                 "extent per dimension, or none for the packed layout", n_inembed, rank);
  if (n_onembed != 0 && n_onembed != rank)
    return FAIL ("fft plan: onembed has %u entries but n has %u (the rank); give one storage "
                 "extent per dimension, or none for the packed layout", n_onembed, rank);
  if (n_inembed != 0 && inembed == NULL)
    return FAIL ("fft plan: inembed is NULL but n_inembed is %u", n_inembed);
  if (n_onembed != 0 && onembed == NULL)
    return FAIL ("fft plan: onembed is NULL but n_onembed is %u", n_onembed);
  if (n_inembed == 0)
    inembed = NULL;
  if (n_onembed == 0)
    onembed = NULL;

  plan = g_new0 (AtomrFftPlan, 1);
  g_atomic_ref_count_init (&plan->ref);
  plan->key.kind = kind;
  plan->key.precision = precision;
  plan->key.rank = rank;
  plan->key.batch = batch;
  for (guint d = 0; d < rank; d++)
    plan->key.n[d] = n[d];

  atomr_fft_plan_get_input_dims (plan, in_dims);
  atomr_fft_plan_get_output_dims (plan, out_dims);

  /* The packed layout is spelt out, so that equal transforms hash equal
   * however they were described. */
  if (inembed)
    {
      if (!check_layout ("i", in_dims, rank, inembed, istride, idist, error))
        return NULL;
      memcpy (plan->key.inembed, inembed, rank * sizeof (gint64));
      plan->key.istride = istride;
      plan->key.idist = idist;
    }
  else
    {
      memcpy (plan->key.inembed, in_dims, rank * sizeof (gint64));
      plan->key.istride = 1;
      plan->key.idist = in_dims[0] * MAX (in_dims[1], 1) * MAX (in_dims[2], 1);
    }
  if (onembed)
    {
      if (!check_layout ("o", out_dims, rank, onembed, ostride, odist, error))
        return NULL;
      memcpy (plan->key.onembed, onembed, rank * sizeof (gint64));
      plan->key.ostride = ostride;
      plan->key.odist = odist;
    }
  else
    {
      memcpy (plan->key.onembed, out_dims, rank * sizeof (gint64));
      plan->key.ostride = 1;
      plan->key.odist = out_dims[0] * MAX (out_dims[1], 1) * MAX (out_dims[2], 1);
    }
  plan->advanced = inembed != NULL || onembed != NULL;
  /* cuFFT's half-precision real-to-complex and complex-to-real transforms
   * take no stride on the real side. */
  if (atomr_fft_plan_is_half (plan) && kind == ATOMR_FFT_R2C && plan->key.istride != 1)
    return FAIL ("fft plan: istride is %" G_GINT64_FORMAT "; %s R2C transforms need a unit "
                 "stride on the real (input) side (a cuFFT limit)", plan->key.istride,
                 atomr_dtype_get_name (precision));
  if (atomr_fft_plan_is_half (plan) && kind == ATOMR_FFT_C2R && plan->key.ostride != 1)
    return FAIL ("fft plan: ostride is %" G_GINT64_FORMAT "; %s C2R transforms need a unit "
                 "stride on the real (output) side (a cuFFT limit)", plan->key.ostride,
                 atomr_dtype_get_name (precision));
  if (!side_elements (plan, "input", in_dims, plan->key.inembed, plan->key.istride, plan->key.idist,
                      &plan->input_elements, error) ||
      !side_elements (plan, "output", out_dims, plan->key.onembed, plan->key.ostride, plan->key.odist,
                      &plan->output_elements, error))
    return NULL;
  if (atomr_fft_plan_is_half (plan))
    {
      /* cuFFT does not run half-precision transforms that span 2^32
       * elements or more. */
      if (plan->input_elements >= G_GUINT64_CONSTANT (1) << 32 ||
          plan->output_elements >= G_GUINT64_CONSTANT (1) << 32)
        return FAIL ("fft plan: the %s layout spans %" G_GUINT64_FORMAT " elements; %s transforms "
                     "must span fewer than 2^32 (a cuFFT limit)",
                     plan->input_elements >= plan->output_elements ? "input" : "output",
                     MAX (plan->input_elements, plan->output_elements),
                     atomr_dtype_get_name (precision));
      /* The complex side holds (re, im) pairs of the half dtype. */
      if (kind != ATOMR_FFT_R2C)
        plan->input_elements *= 2;
      if (kind != ATOMR_FFT_C2R)
        plan->output_elements *= 2;
    }
  plan->hash = key_hash (plan);
  return g_steal_pointer (&plan);
}

/**
 * atomr_fft_plan_new_1d:
 * @kind: the kind of transform
 * @precision: %ATOMR_DTYPE_F32, %ATOMR_DTYPE_F64, or (powers of two only)
 *   %ATOMR_DTYPE_F16 or %ATOMR_DTYPE_BF16
 * @nx: the transform size
 * @batch: the number of transforms, packed one after the other
 * @error: return location for a [struct@GLib.Error]
 *
 * Describes a one-dimensional transform of @nx points, @batch times.
 *
 * Returns: (transfer full) (nullable): a new plan, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT
 *
 * Since: 0.1
 */
AtomrFftPlan *
atomr_fft_plan_new_1d (AtomrFftKind   kind,
                       AtomrDtype     precision,
                       gint64         nx,
                       gint64         batch,
                       GError       **error)
{
  gint64 n[1] = { nx };
  return atomr_fft_plan_new_many (kind, precision, n, 1, NULL, 0, 1, 1, NULL, 0, 1, 1, batch, error);
}

/**
 * atomr_fft_plan_new_2d:
 * @kind: the kind of transform
 * @precision: %ATOMR_DTYPE_F32, %ATOMR_DTYPE_F64, or (powers of two only)
 *   %ATOMR_DTYPE_F16 or %ATOMR_DTYPE_BF16
 * @nx: the size of the slow dimension
 * @ny: the size of the fast (contiguous) dimension
 * @batch: the number of transforms, packed one after the other
 * @error: return location for a [struct@GLib.Error]
 *
 * Describes a two-dimensional transform of @nx × @ny points, @batch times.
 *
 * Returns: (transfer full) (nullable): a new plan, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT
 *
 * Since: 0.1
 */
AtomrFftPlan *
atomr_fft_plan_new_2d (AtomrFftKind   kind,
                       AtomrDtype     precision,
                       gint64         nx,
                       gint64         ny,
                       gint64         batch,
                       GError       **error)
{
  gint64 n[2] = { nx, ny };
  return atomr_fft_plan_new_many (kind, precision, n, 2, NULL, 0, 1, 1, NULL, 0, 1, 1, batch, error);
}

/**
 * atomr_fft_plan_new_3d:
 * @kind: the kind of transform
 * @precision: %ATOMR_DTYPE_F32, %ATOMR_DTYPE_F64, or (powers of two only)
 *   %ATOMR_DTYPE_F16 or %ATOMR_DTYPE_BF16
 * @nx: the size of the slowest dimension
 * @ny: the size of the middle dimension
 * @nz: the size of the fast (contiguous) dimension
 * @batch: the number of transforms, packed one after the other
 * @error: return location for a [struct@GLib.Error]
 *
 * Describes a three-dimensional transform of @nx × @ny × @nz points, @batch times.
 *
 * Returns: (transfer full) (nullable): a new plan, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT
 *
 * Since: 0.1
 */
AtomrFftPlan *
atomr_fft_plan_new_3d (AtomrFftKind   kind,
                       AtomrDtype     precision,
                       gint64         nx,
                       gint64         ny,
                       gint64         nz,
                       gint64         batch,
                       GError       **error)
{
  gint64 n[3] = { nx, ny, nz };
  return atomr_fft_plan_new_many (kind, precision, n, 3, NULL, 0, 1, 1, NULL, 0, 1, 1, batch, error);
}

/**
 * atomr_fft_plan_ref:
 * @plan: a plan
 *
 * Takes a reference to a plan.
 *
 * Returns: (transfer full): @plan
 *
 * Since: 0.1
 */
AtomrFftPlan *
atomr_fft_plan_ref (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);
  g_atomic_ref_count_inc (&plan->ref);
  return plan;
}

/**
 * atomr_fft_plan_unref:
 * @plan: (transfer full): a plan
 *
 * Drops a reference to a plan; the last one frees it.
 *
 * Since: 0.1
 */
void
atomr_fft_plan_unref (AtomrFftPlan *plan)
{
  g_return_if_fail (plan != NULL);
  if (g_atomic_ref_count_dec (&plan->ref))
    {
      g_free (plan->description);
      g_free (plan);
    }
}

/**
 * atomr_fft_plan_get_kind:
 * @plan: a plan
 *
 * Gets the kind of transform.
 *
 * Returns: the kind of transform
 *
 * Since: 0.1
 */
AtomrFftKind
atomr_fft_plan_get_kind (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, ATOMR_FFT_C2C);
  return plan->key.kind;
}

/**
 * atomr_fft_plan_get_precision:
 * @plan: a plan
 *
 * Gets the precision of the transform: %ATOMR_DTYPE_F32 or %ATOMR_DTYPE_F64.
 *
 * Returns: %ATOMR_DTYPE_F32 or %ATOMR_DTYPE_F64
 *
 * Since: 0.1
 */
AtomrDtype
atomr_fft_plan_get_precision (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, ATOMR_DTYPE_F32);
  return plan->key.precision;
}

/**
 * atomr_fft_plan_get_rank:
 * @plan: a plan
 *
 * Gets the number of dimensions, 1 to 3.
 *
 * Returns: the number of dimensions, 1 to 3
 *
 * Since: 0.1
 */
guint
atomr_fft_plan_get_rank (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->key.rank;
}

/**
 * atomr_fft_plan_get_size:
 * @plan: a plan
 * @dim: a dimension below the rank, slowest first
 *
 * Gets the transform size of dimension @dim, or 0 past the rank.
 *
 * Returns: the transform size of dimension @dim, or 0 past the rank
 *
 * Since: 0.1
 */
gint64
atomr_fft_plan_get_size (AtomrFftPlan *plan,
                         guint         dim)
{
  g_return_val_if_fail (plan != NULL, 0);
  return dim < (guint) plan->key.rank ? plan->key.n[dim] : 0;
}

/**
 * atomr_fft_plan_get_batch:
 * @plan: a plan
 *
 * Gets the number of transforms.
 *
 * Returns: the number of transforms
 *
 * Since: 0.1
 */
gint64
atomr_fft_plan_get_batch (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->key.batch;
}

gboolean
atomr_fft_plan_is_half (AtomrFftPlan *plan)
{
  return plan->key.precision == ATOMR_DTYPE_F16 || plan->key.precision == ATOMR_DTYPE_BF16;
}

static AtomrDtype
side_dtype (AtomrFftPlan *plan,
            gboolean      complex_side)
{
  if (atomr_fft_plan_is_half (plan))
    return plan->key.precision;      /* (re, im) pairs on the complex side */
  if (complex_side)
    return plan->key.precision == ATOMR_DTYPE_F32 ? ATOMR_DTYPE_C64 : ATOMR_DTYPE_C128;
  return plan->key.precision;
}

/**
 * atomr_fft_plan_get_input_dtype:
 * @plan: a plan
 *
 * Gets the dtype the input buffer must have (for f16 and bf16 plans the
 * half dtype on both sides: the complex side holds (re, im) pairs).
 *
 * Returns: the dtype the input buffer must have
 *
 * Since: 0.1
 */
AtomrDtype
atomr_fft_plan_get_input_dtype (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, ATOMR_DTYPE_F32);
  return side_dtype (plan, plan->key.kind != ATOMR_FFT_R2C);
}

/**
 * atomr_fft_plan_get_output_dtype:
 * @plan: a plan
 *
 * Gets the dtype the output buffer must have (for f16 and bf16 plans the
 * half dtype on both sides).
 *
 * Returns: the dtype the output buffer must have
 *
 * Since: 0.1
 */
AtomrDtype
atomr_fft_plan_get_output_dtype (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, ATOMR_DTYPE_F32);
  return side_dtype (plan, plan->key.kind != ATOMR_FFT_C2R);
}

/**
 * atomr_fft_plan_get_input_elements:
 * @plan: a plan
 *
 * Gets the number of elements the input buffer must at least hold (of
 * its dtype: two per complex value on the complex side of a half plan).
 *
 * Returns: the number of elements the input buffer must at least hold
 *
 * Since: 0.1
 */
guint64
atomr_fft_plan_get_input_elements (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->input_elements;
}

/**
 * atomr_fft_plan_get_output_elements:
 * @plan: a plan
 *
 * Gets the number of elements the output buffer must at least hold (of
 * its dtype: two per complex value on the complex side of a half plan).
 *
 * Returns: the number of elements the output buffer must at least hold
 *
 * Since: 0.1
 */
guint64
atomr_fft_plan_get_output_elements (AtomrFftPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->output_elements;
}

/**
 * atomr_fft_plan_to_string:
 * @plan: a plan
 *
 * Describes a plan in a few words.
 *
 * Returns: (transfer full): a short description such as
 *   "C2C f32 4096 × batch 256", for traces and messages
 *
 * Since: 0.1
 */
gchar *
atomr_fft_plan_to_string (AtomrFftPlan *plan)
{
  GString *s;

  g_return_val_if_fail (plan != NULL, NULL);
  s = g_string_new (NULL);
  g_string_append_printf (s, "%s %s ", kind_name (plan->key.kind),
                          atomr_dtype_get_name (plan->key.precision));
  for (gint d = 0; d < plan->key.rank; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "×" : "", plan->key.n[d]);
  g_string_append_printf (s, " × batch %" G_GINT64_FORMAT, plan->key.batch);
  if (plan->advanced)
    g_string_append_printf (s, " (istride %" G_GINT64_FORMAT " idist %" G_GINT64_FORMAT
                            ", ostride %" G_GINT64_FORMAT " odist %" G_GINT64_FORMAT ")",
                            plan->key.istride, plan->key.idist,
                            plan->key.ostride, plan->key.odist);
  return g_string_free (s, FALSE);
}

/**
 * atomr_fft_plan_hash:
 * @plan: (type AtomrFftPlan): a plan
 *
 * Hashes a plan, for [struct@GLib.HashTable].
 *
 * Returns: a hash of the transform, for [struct@GLib.HashTable]
 *
 * Since: 0.1
 */
guint
atomr_fft_plan_hash (gconstpointer plan)
{
  /* The key never changes once the plan is made: hashed then, once (the
   * actor looks its cache up on every execution). */
  return ((const AtomrFftPlan *) plan)->hash;
}

/**
 * atomr_fft_plan_equal:
 * @a: (type AtomrFftPlan): a plan
 * @b: (type AtomrFftPlan): another plan
 *
 * Compares two plans, for [struct@GLib.HashTable].
 *
 * Returns: %TRUE when @a and @b describe the same transform and layout
 *
 * Since: 0.1
 */
gboolean
atomr_fft_plan_equal (gconstpointer a,
                      gconstpointer b)
{
  const AtomrFftPlan *pa = a, *pb = b;

  return memcmp (&pa->key, &pb->key, sizeof pa->key) == 0;
}

const gchar *
atomr_fft_plan_get_description (AtomrFftPlan *plan)
{
  gchar *text = g_atomic_pointer_get (&plan->description);

  if (text == NULL)
    {
      text = atomr_fft_plan_to_string (plan);
      if (!g_atomic_pointer_compare_and_exchange (&plan->description, NULL, text))
        {
          g_free (text);
          text = g_atomic_pointer_get (&plan->description);
        }
    }
  return text;
}
