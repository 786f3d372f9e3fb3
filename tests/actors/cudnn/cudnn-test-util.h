/* cudnn-test-util.h — host data, operands and error measures shared by the
 * cuDNN GPU tests (test-gpu-cudnn, -norm and -attention include it)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <math.h>
#include <string.h>

#include <atomr.h>

typedef struct {
  AtomrDevice     *device;
  AtomrCudnnActor *actor;
  GRand           *rand;
} Fixture;

static inline void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->rand = g_rand_new_with_seed (20261123);
  f->device = atomr_device_get (0, &error);
  if (f->device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      return;
    }
  f->actor = atomr_cudnn_actor_new (f->device, &error);
  g_assert_no_error (error);
}

static inline void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->actor)
    g_assert_finalize_object (f->actor);
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

#define SKIP_WITHOUT_DEVICE(f) \
  G_STMT_START { if ((f)->device == NULL) { g_test_skip ("no CUDA device"); return; } } G_STMT_END

/* ------------------------------------------------------------------ */
/* Host data                                                            */

static inline guint16
f32_to_bf16 (gfloat v)
{
  guint32 u;
  memcpy (&u, &v, 4);
  return (guint16) ((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static inline gfloat
bf16_to_f32 (guint16 h)
{
  guint32 u = (guint32) h << 16;
  gfloat v;
  memcpy (&v, &u, 4);
  return v;
}

static inline GBytes *
pack (AtomrDtype dtype, const gdouble *d, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  guint8 *out = g_malloc0 (size * n);

  for (gsize i = 0; i < n; i++)
    {
      guint8 *p = out + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: { gfloat v = (gfloat) d[i]; memcpy (p, &v, 4); } break;
        case ATOMR_DTYPE_F64: memcpy (p, &d[i], 8); break;
        case ATOMR_DTYPE_F16: { _Float16 v = (_Float16) d[i]; memcpy (p, &v, 2); } break;
        case ATOMR_DTYPE_BF16: { guint16 v = f32_to_bf16 ((gfloat) d[i]); memcpy (p, &v, 2); } break;
        default: g_assert_not_reached ();
        }
    }
  return g_bytes_new_take (out, size * n);
}

static inline void
unpack (AtomrDtype dtype, GBytes *bytes, gdouble *d, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  const guint8 *in = g_bytes_get_data (bytes, NULL);

  g_assert_cmpuint (g_bytes_get_size (bytes), >=, n * size);
  for (gsize i = 0; i < n; i++)
    {
      const guint8 *p = in + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: { gfloat v; memcpy (&v, p, 4); d[i] = v; } break;
        case ATOMR_DTYPE_F64: memcpy (&d[i], p, 8); break;
        case ATOMR_DTYPE_F16: { _Float16 v; memcpy (&v, p, 2); d[i] = v; } break;
        case ATOMR_DTYPE_BF16: { guint16 v; memcpy (&v, p, 2); d[i] = bf16_to_f32 (v); } break;
        default: g_assert_not_reached ();
        }
    }
}

/* One operand: device storage, its view (logical N × C × spatial order),
 * and the host copy of the storage. */
typedef struct {
  AtomrBuffer *buffer;
  AtomrTensor *view;
  gdouble     *host;      /* storage order */
  gsize        n;
  guint        n_dims;
  gint64       shape[5];
  gint64       strides[5];
} Operand;

static inline void
operand_clear (Operand *o)
{
  g_clear_object (&o->view);
  g_clear_object (&o->buffer);
  g_clear_pointer (&o->host, g_free);
}

/* A random operand (values in [-1, 1], rounded to @dtype; zeros when
 * !@random) of logical shape @shape, stored channels-last when @nhwc. */
static inline void
operand_init (Fixture *f, Operand *o, AtomrDtype dtype, const gint64 *shape, guint n_dims,
              gboolean nhwc, gboolean random)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrTensor) storage = NULL;
  gint64 stored[5];
  guint perm[5];
  const gint64 *st;

  memset (o, 0, sizeof *o);
  o->n_dims = n_dims;
  o->n = 1;
  for (guint i = 0; i < n_dims; i++)
    {
      o->shape[i] = shape[i];
      o->n *= shape[i];
    }
  o->host = g_new0 (gdouble, o->n);
  if (random)
    {
      for (gsize i = 0; i < o->n; i++)
        o->host[i] = g_rand_double_range (f->rand, -1, 1);
      bytes = pack (dtype, o->host, o->n);
      unpack (dtype, bytes, o->host, o->n);
    }
  else
    bytes = pack (dtype, o->host, o->n);
  o->buffer = atomr_buffer_new (f->device, dtype, o->n, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (o->buffer, bytes, NULL, &error));
  g_assert_no_error (error);

  /* storage N × spatial × C when channels-last, permuted back to N × C × spatial */
  for (guint i = 0; i < n_dims; i++)
    {
      perm[i] = i;
      stored[i] = shape[i];
    }
  if (nhwc && n_dims > 2)
    {
      stored[0] = shape[0];
      for (guint i = 2; i < n_dims; i++)
        stored[i - 1] = shape[i];
      stored[n_dims - 1] = shape[1];
      perm[0] = 0;
      perm[1] = n_dims - 1;
      for (guint i = 2; i < n_dims; i++)
        perm[i] = i - 1;
    }
  storage = atomr_tensor_new (o->buffer, stored, n_dims, &error);
  g_assert_no_error (error);
  o->view = atomr_tensor_permute (storage, perm, n_dims, &error);
  g_assert_no_error (error);
  st = atomr_tensor_get_strides (o->view, NULL);
  for (guint i = 0; i < n_dims; i++)
    o->strides[i] = st[i];
}

/* The storage index of a logical 4-D or 5-D index. */
static inline gsize
at (const Operand *o, const gint64 *idx)
{
  gint64 off = 0;
  for (guint i = 0; i < o->n_dims; i++)
    off += idx[i] * o->strides[i];
  return (gsize) off;
}

static inline void
operand_download (Operand *o, gdouble *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (o->buffer, NULL, &error);

  g_assert_no_error (error);
  unpack (atomr_buffer_get_dtype (o->buffer), bytes, out, o->n);
}

/* Relative error of the device contents of @o against @ref (storage order). */
static inline gdouble
rel_error (Operand *o, const gdouble *ref)
{
  g_autofree gdouble *got = g_new0 (gdouble, o->n);
  gdouble num = 0, den = 0;

  operand_download (o, got);
  for (gsize i = 0; i < o->n; i++)
    {
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static inline gdouble
tolerance (AtomrDtype dtype, gboolean fma)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F64: return 1e-12;
    case ATOMR_DTYPE_F16: return 5e-3;
    case ATOMR_DTYPE_BF16: return 2e-2;
    default: return fma ? 1e-5 : 2e-3;
    }
}

static inline void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static inline GAsyncResult *
wait (GAsyncResult **res)
{
  while (*res == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *res;
}

/* Runs @call (which passes store_result, &res_) and asserts that @finish
 * succeeds; the error is asserted first so a failure prints its message. */
#define RUN(call, finish) G_STMT_START {                                     \
    GAsyncResult *res_ = NULL;                                               \
    g_autoptr(GError) err_ = NULL;                                           \
    gboolean ok_;                                                            \
    call;                                                                    \
    ok_ = finish (f->actor, wait (&res_), &err_);                            \
    g_assert_no_error (err_);                                                \
    g_assert_true (ok_);                                                     \
    g_object_unref (res_);                                                   \
  } G_STMT_END

/* ------------------------------------------------------------------ */
/* Convolutions                                                         */

typedef struct {
  const gchar *name;
  AtomrDtype   dtype;
  gboolean     nhwc;
  gboolean     fma;
  guint        n_spatial;
  gint64       n, c, k, size, filter;
  gint64       pad, stride, dilation;
  guint        groups;
} ConvCase;
