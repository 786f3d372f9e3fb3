/* test-gpu-tensor.c — strided copies and BLAS on sub-views, on the GPU,
 * against CPU references
 *
 * Values are small integers, so every product and sum is exact in f32 and
 * f64: results are compared for equality, and the memory around each
 * view is checked to be untouched.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "core/atomr-tensor-private.h"

typedef struct {
  AtomrDevice    *device;
  AtomrCopyActor *copy;
  AtomrBlasActor *blas;
  GRand          *rand;
} Fixture;

static void
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
  f->copy = atomr_copy_actor_new (f->device, &error);
  g_assert_no_error (error);
  f->blas = atomr_blas_actor_new (f->device, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->copy)
    g_assert_finalize_object (f->copy);
  if (f->blas)
    g_assert_finalize_object (f->blas);
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

#define SKIP_WITHOUT_DEVICE(f)            \
  G_STMT_START {                          \
    if ((f)->device == NULL)              \
      {                                   \
        g_test_skip ("no CUDA device");   \
        return;                           \
      }                                   \
  } G_STMT_END

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static GAsyncResult *
await (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *result;
}

/* A buffer of @n values of @dtype (f32 or f64) holding @values. */
static AtomrBuffer *
upload_values (Fixture *f, AtomrDtype dtype, const gdouble *values, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, dtype, n, &error);
  g_autoptr(GBytes) bytes = NULL;

  g_assert_no_error (error);
  if (dtype == ATOMR_DTYPE_F32)
    {
      gfloat *v = g_new (gfloat, n);
      for (gsize i = 0; i < n; i++)
        v[i] = (gfloat) values[i];
      bytes = g_bytes_new_take (v, n * sizeof (gfloat));
    }
  else
    bytes = g_bytes_new (values, n * sizeof (gdouble));
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&buffer);
}

static gdouble *
download_values (AtomrBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  gsize n = atomr_buffer_get_n_elements (buffer);
  gdouble *out = g_new (gdouble, n);
  const guint8 *data;

  g_assert_no_error (error);
  data = g_bytes_get_data (bytes, NULL);
  for (gsize i = 0; i < n; i++)
    {
      if (atomr_buffer_get_dtype (buffer) == ATOMR_DTYPE_F32)
        out[i] = ((const gfloat *) data)[i];
      else
        out[i] = ((const gdouble *) data)[i];
    }
  return out;
}

static gdouble *
random_ints (Fixture *f, gsize n)
{
  gdouble *v = g_new (gdouble, n);
  for (gsize i = 0; i < n; i++)
    v[i] = (gdouble) g_rand_int_range (f->rand, -4, 5);
  return v;
}

/* Element offset of a multi-index in a view (relative to the buffer). */
static gint64
offset_of (AtomrTensor *t, const gint64 *index)
{
  gint64 off = (gint64) (atomr_tensor_get_byte_offset (t) /
                         atomr_dtype_get_size (atomr_tensor_get_dtype (t)));
  for (guint k = 0; k < atomr_tensor_get_n_dims (t); k++)
    off += index[k] * atomr_tensor_get_stride (t, k);
  return off;
}

/* Advances a row-major multi-index; FALSE after the last. */
static gboolean
next_index (AtomrTensor *t, gint64 *index)
{
  for (gint k = (gint) atomr_tensor_get_n_dims (t) - 1; k >= 0; k--)
    {
      if (++index[k] < atomr_tensor_get_dim (t, k))
        return TRUE;
      index[k] = 0;
    }
  return FALSE;
}

static AtomrTensor *
view (AtomrBuffer *buffer, gint64 offset, guint n, const gint64 *shape, const gint64 *strides)
{
  g_autoptr(GError) error = NULL;
  AtomrDtype dtype = atomr_buffer_get_dtype (buffer);
  AtomrTensor *t = atomr_tensor_new_strided (buffer, dtype, offset * atomr_dtype_get_size (dtype),
                                             shape, n, strides, n, &error);
  g_assert_no_error (error);
  return t;
}

/* ------------------------------------------------------------------ */
/* Copies                                                               */

static void
check_copy (Fixture *f, AtomrTensor *src, AtomrTensor *dst)
{
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;
  AtomrBuffer *sb = atomr_tensor_get_buffer (src), *db = atomr_tensor_get_buffer (dst);
  g_autofree gdouble *s = download_values (sb);
  g_autofree gdouble *before = download_values (db);
  g_autofree gdouble *after = NULL;
  g_autofree gboolean *written = g_new0 (gboolean, atomr_buffer_get_n_elements (db));
  gint64 index[ATOMR_TENSOR_MAX_DIMS] = { 0, };

  atomr_actor_copy_tensor_async (ATOMR_ACTOR (f->copy), src, dst, NULL, store_result, &result);
  g_assert_true (atomr_actor_copy_tensor_finish (ATOMR_ACTOR (f->copy), await (&result), &error));
  g_assert_no_error (error);
  g_object_unref (result);
  after = download_values (db);
  do
    {
      gint64 so = offset_of (src, index), d = offset_of (dst, index);
      g_assert_cmpfloat (after[d], ==, s[so]);
      written[d] = TRUE;
    }
  while (next_index (src, index));
  for (gsize i = 0; i < atomr_buffer_get_n_elements (db); i++)
    if (!written[i])
      g_assert_cmpfloat (after[i], ==, before[i]);
}

static void
test_copy (Fixture *f, gconstpointer data)
{
  g_autofree gdouble *v = NULL;
  g_autoptr(AtomrBuffer) a = NULL;
  g_autoptr(AtomrBuffer) b = NULL;

  SKIP_WITHOUT_DEVICE (f);

  v = random_ints (f, 5 * 6 * 7);
  a = upload_values (f, ATOMR_DTYPE_F32, v, 5 * 6 * 7);
  g_free (v);
  v = random_ints (f, 4 * 8 * 9);
  b = upload_values (f, ATOMR_DTYPE_F32, v, 4 * 8 * 9);

  {
    /* a 2 × 3 × 4 box of a 5 × 6 × 7 volume into a box of a 4 × 8 × 9 one: one cuMemcpy3D */
    const gint64 shape[] = { 2, 3, 4 }, sa[] = { 42, 7, 1 }, sb[] = { 72, 9, 1 };
    g_autoptr(AtomrTensor) src = view (a, 42 + 14 + 1, 3, shape, sa);
    g_autoptr(AtomrTensor) dst = view (b, 72 + 9 * 3 + 2, 3, shape, sb);
    check_copy (f, src, dst);
  }
  {
    /* a sub-matrix into a transposed sub-matrix: element rows (cuMemcpy2D of 4 bytes) */
    const gint64 shape[] = { 3, 5 }, sa[] = { 7, 1 }, sb[] = { 1, 9 };
    g_autoptr(AtomrTensor) src = view (a, 8, 2, shape, sa);
    g_autoptr(AtomrTensor) dst = view (b, 10, 2, shape, sb);
    check_copy (f, src, dst);
  }
  {
    /* reversed on both sides */
    const gint64 shape[] = { 4, 6 }, sa[] = { -7, -1 }, sb[] = { -9, -1 };
    g_autoptr(AtomrTensor) src = view (a, 7 * 5 + 6, 2, shape, sa);
    g_autoptr(AtomrTensor) dst = view (b, 9 * 6 + 8, 2, shape, sb);
    check_copy (f, src, dst);
  }
  {
    /* four dimensions that do not merge: several pieces */
    const gint64 shape[] = { 2, 2, 3, 2 }, sa[] = { 105, 42, 7, 2 }, sb[] = { 144, 72, 9, 1 };
    g_autoptr(AtomrBuffer) big = NULL;
    g_autoptr(AtomrTensor) src = NULL;
    g_autoptr(AtomrTensor) dst = NULL;
    g_autofree gdouble *w = random_ints (f, 2 * 105);
    big = upload_values (f, ATOMR_DTYPE_F32, w, 2 * 105);
    src = view (big, 1, 4, shape, sa);
    dst = view (b, 3, 4, shape, sb);
    check_copy (f, src, dst);
  }
}

static void
test_upload_download_body (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autofree gdouble *v = random_ints (f, 8 * 9);
  g_autoptr(AtomrBuffer) a = upload_values (f, ATOMR_DTYPE_F64, v, 8 * 9);
  const gint64 shape[] = { 3, 4 }, strides[] = { 18, -1 };
  g_autoptr(AtomrTensor) t = NULL;
  g_autoptr(GBytes) down = NULL;
  g_autoptr(GBytes) up = NULL;
  g_autofree gdouble *after = NULL;
  GAsyncResult *result = NULL;
  gdouble packed[12];
  gint64 index[2] = { 0, 0 };
  guint i = 0;


  /* every other row, columns 5..2 reversed: reversed on the device side
   * only, so one copy per column */
  t = view (a, 5, 2, shape, strides);
  atomr_actor_download_tensor_async (ATOMR_ACTOR (f->copy), t, NULL, store_result, &result);
  down = atomr_actor_download_tensor_finish (ATOMR_ACTOR (f->copy), await (&result), &error);
  g_assert_no_error (error);
  g_clear_object (&result);
  do
    g_assert_cmpfloat (((const gdouble *) g_bytes_get_data (down, NULL))[i++], ==, v[offset_of (t, index)]);
  while (next_index (t, index));
  g_clear_pointer (&down, g_bytes_unref);
  g_clear_object (&t);
  i = 0;

  {
    const gint64 fwd[] = { 18, 1 };
    t = view (a, 2, 2, shape, fwd);
  }
  atomr_actor_download_tensor_async (ATOMR_ACTOR (f->copy), t, NULL, store_result, &result);
  down = atomr_actor_download_tensor_finish (ATOMR_ACTOR (f->copy), await (&result), &error);
  g_assert_no_error (error);
  g_clear_object (&result);
  g_assert_cmpuint (g_bytes_get_size (down), ==, sizeof packed);
  do
    g_assert_cmpfloat (((const gdouble *) g_bytes_get_data (down, NULL))[i++], ==, v[offset_of (t, index)]);
  while (next_index (t, index));

  for (i = 0; i < 12; i++)
    packed[i] = 100 + i;
  up = g_bytes_new (packed, sizeof packed);
  atomr_actor_upload_tensor_async (ATOMR_ACTOR (f->copy), t, up, NULL, store_result, &result);
  g_assert_true (atomr_actor_upload_tensor_finish (ATOMR_ACTOR (f->copy), await (&result), &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  after = download_values (a);
  index[0] = index[1] = 0;
  i = 0;
  do
    {
      gint64 o = offset_of (t, index);
      g_assert_cmpfloat (after[o], ==, packed[i++]);
      v[o] = after[o];
    }
  while (next_index (t, index));
  for (i = 0; i < 72; i++)
    g_assert_cmpfloat (after[i], ==, v[i]);
}

/* ------------------------------------------------------------------ */
/* BLAS on views                                                        */

/* value of element (i, j) of a 2-D view, from the host mirror */
#define AT(mirror, t, i, j) \
  ((mirror)[offset_of ((t), (const gint64[]) { (i), (j) })])

static void
check_gemm_layout (Fixture *f, AtomrDtype dtype, gboolean a_t, gboolean b_t, gboolean c_t)
{
  g_autoptr(GError) error = NULL;
  const gint64 m = 5, n = 6, k = 7, ld = 13;
  /* each operand is a sub-matrix of a 12 × 13 parent; transposed views
   * come from a parent read column-major */
  g_autofree gdouble *pa = random_ints (f, 12 * ld);
  g_autofree gdouble *pb = random_ints (f, 12 * ld);
  g_autofree gdouble *pc = random_ints (f, 12 * ld);
  g_autoptr(AtomrBuffer) ba = upload_values (f, dtype, pa, 12 * ld);
  g_autoptr(AtomrBuffer) bb = upload_values (f, dtype, pb, 12 * ld);
  g_autoptr(AtomrBuffer) bc = upload_values (f, dtype, pc, 12 * ld);
  const gint64 row[] = { ld, 1 }, col[] = { 1, ld };
  g_autoptr(AtomrTensor) a = view (ba, ld * 1 + 2, 2, (const gint64[]) { m, k }, a_t ? col : row);
  g_autoptr(AtomrTensor) b = view (bb, ld * 3 + 1, 2, (const gint64[]) { k, n }, b_t ? col : row);
  g_autoptr(AtomrTensor) c = view (bc, ld * 2 + 4, 2, (const gint64[]) { m, n }, c_t ? col : row);
  g_autofree gdouble *got = NULL;
  g_autofree gdouble *expected = g_memdup2 (pc, 12 * ld * sizeof (gdouble));

  g_assert_true (atomr_blas_actor_gemm_tensor_sync (f->blas, 2.0, a, b, -1.0, c, NULL, &error));
  g_assert_no_error (error);
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        gdouble s = 0;
        for (gint64 l = 0; l < k; l++)
          s += AT (pa, a, i, l) * AT (pb, b, l, j);
        AT (expected, c, i, j) = 2.0 * s - AT (pc, c, i, j);
      }
  got = download_values (bc);
  for (gint64 i = 0; i < 12 * ld; i++)
    if (got[i] != expected[i])
      g_error ("gemm-tensor %s A%s B%s C%s: element %" G_GINT64_FORMAT " is %g, expected %g",
               atomr_dtype_get_name (dtype), a_t ? "ᵀ" : "", b_t ? "ᵀ" : "", c_t ? "ᵀ" : "",
               i, got[i], expected[i]);
}

static void
test_gemm (Fixture *f, gconstpointer data)
{
  static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    for (guint mask = 0; mask < 8; mask++)
      check_gemm_layout (f, dtypes[d], mask & 1, mask & 2, mask & 4);
}

static void
test_gemv_axpy_body (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  const gint64 ld = 11;
  g_autofree gdouble *pa = random_ints (f, 10 * ld);
  g_autofree gdouble *px = random_ints (f, 10 * ld);
  g_autofree gdouble *py = random_ints (f, 40);
  g_autoptr(AtomrBuffer) ba = upload_values (f, ATOMR_DTYPE_F32, pa, 10 * ld);
  g_autoptr(AtomrBuffer) bx = upload_values (f, ATOMR_DTYPE_F32, px, 10 * ld);
  g_autoptr(AtomrBuffer) by = upload_values (f, ATOMR_DTYPE_F32, py, 40);
  GAsyncResult *result = NULL;
  g_autofree gdouble *got = NULL;
  g_autofree gdouble *expected = g_memdup2 (py, 40 * sizeof (gdouble));


  for (guint trans = 0; trans < 2; trans++)
    {
      /* A: 6 × 4 sub-matrix (or its transpose), x: a column of another
       * matrix (stride ld), y: every third element */
      const gint64 row[] = { ld, 1 }, col[] = { 1, ld };
      g_autoptr(AtomrTensor) a = view (ba, ld + 3, 2, (const gint64[]) { 6, 4 }, trans ? col : row);
      g_autoptr(AtomrTensor) x = view (bx, 2, 1, (const gint64[]) { 4 }, (const gint64[]) { ld });
      g_autoptr(AtomrTensor) y = view (by, 1 + trans, 1, (const gint64[]) { 6 }, (const gint64[]) { 3 });

      atomr_blas_actor_gemv_tensor_async (f->blas, 3.0, 0.0, a, x, 0.5, 0.0, y, NULL, store_result, &result);
      g_assert_true (atomr_blas_actor_gemv_tensor_finish (f->blas, await (&result), &error));
      g_assert_no_error (error);
      g_clear_object (&result);
      for (gint64 i = 0; i < 6; i++)
        {
          gdouble s = 0;
          for (gint64 j = 0; j < 4; j++)
            s += AT (pa, a, i, j) * px[offset_of (x, (const gint64[]) { j })];
          gint64 o = offset_of (y, (const gint64[]) { i });
          expected[o] = 3.0 * s + 0.5 * expected[o];
        }
    }
  {
    /* axpy: a row of A (stride 1) into every other element of y */
    g_autoptr(AtomrTensor) x = view (ba, 2 * ld, 1, (const gint64[]) { 5 }, (const gint64[]) { 1 });
    g_autoptr(AtomrTensor) y = view (by, 20, 1, (const gint64[]) { 5 }, (const gint64[]) { 2 });
    atomr_blas_actor_axpy_tensor_async (f->blas, -2.0, 0.0, x, y, NULL, store_result, &result);
    g_assert_true (atomr_blas_actor_axpy_tensor_finish (f->blas, await (&result), &error));
    g_assert_no_error (error);
    g_clear_object (&result);
    for (gint64 i = 0; i < 5; i++)
      expected[20 + 2 * i] += -2.0 * pa[2 * ld + i];
  }
  got = download_values (by);
  for (guint i = 0; i < 40; i++)
    g_assert_cmpfloat (got[i], ==, expected[i]);
}

static void
test_errors (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree gdouble *p = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrTensor) m = NULL;
  g_autoptr(AtomrTensor) step = NULL;
  const gint64 shape[] = { 8, 8 };

  SKIP_WITHOUT_DEVICE (f);
  p = random_ints (f, 64);
  buffer = upload_values (f, ATOMR_DTYPE_F32, p, 64);
  m = atomr_tensor_new (buffer, shape, 2, &error);
  g_assert_no_error (error);
  step = atomr_tensor_slice (m, 1, 0, 8, 2, &error);
  g_assert_no_error (error);

  /* no BLAS layout for every other column */
  g_assert_false (atomr_blas_actor_gemm_tensor_sync (f->blas, 1.0, step, m, 0.0, m, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  /* C aliasing A */
  g_assert_false (atomr_blas_actor_gemm_tensor_sync (f->blas, 1.0, m, m, 0.0, m, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "overlaps"));
  g_clear_error (&error);
}

static void
test_upload_download (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  test_upload_download_body (f);
}

static void
test_gemv_axpy (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  test_gemv_axpy_body (f);
}

static void
test_memory_pool (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  AtomrMemoryPool *pool;
  AtomrBuffer *buffers[4];
  guint64 used, reserved;

  SKIP_WITHOUT_DEVICE (f);
  pool = atomr_device_get_memory_pool (f->device);
  for (guint i = 0; i < 4; i++)
    {
      buffers[i] = atomr_buffer_new (f->device, ATOMR_DTYPE_U8, 1 << 20, &error);
      g_assert_no_error (error);
    }
  used = atomr_memory_pool_get_used (pool);
  reserved = atomr_memory_pool_get_reserved (pool);
  g_test_message ("pool with 4 MiB allocated: used %" G_GUINT64_FORMAT " reserved %" G_GUINT64_FORMAT
                  " high-water %" G_GUINT64_FORMAT, used, reserved, atomr_memory_pool_get_high_water (pool));
  /* the buffers come from our pool: it accounts for them */
  g_assert_cmpuint (used, >=, 4 << 20);
  g_assert_cmpuint (reserved, >=, used);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), >=, used);
  for (guint i = 0; i < 4; i++)
    g_object_unref (buffers[i]);
  /* freed memory stays reserved (default threshold: keep everything) */
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), >=, 4 << 20);
  g_assert_true (atomr_memory_pool_trim (pool, 0, &error));
  g_assert_no_error (error);
  atomr_memory_pool_set_release_threshold (pool, 64 << 20);
  g_assert_cmpuint (atomr_memory_pool_get_release_threshold (pool), ==, 64 << 20);
  atomr_memory_pool_set_release_threshold (pool, G_MAXUINT64);
  atomr_memory_pool_reset_high_water (pool);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), <=, atomr_memory_pool_get_reserved (pool));
}

static void
count_release (gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

/* Foreign memory written on a foreign stream, handed to atomr by an event;
 * then atomr's writes handed back to the foreign stream. */
static void
test_external_body (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  const AtomrCudaDriver *cu = ATOMR_CU;
  AtomrActor *actor = ATOMR_ACTOR (f->copy);
  CUdeviceptr mem = 0;
  CUstream foreign = NULL;
  CUevent event = NULL;
  AtomrBuffer *buffer;
  g_autoptr(GBytes) bytes = NULL;
  gfloat seven = 7.0f, host[1024];
  guint32 bits;
  gint released = 0;
  gpointer not_device = g_malloc (64);

  g_assert_true (atomr_device_enter (f->device, &error));
  g_assert_cmpint (cu->cuMemAlloc (&mem, sizeof host), ==, CUDA_SUCCESS);
  g_assert_cmpint (cu->cuStreamCreate (&foreign, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  g_assert_cmpint (cu->cuEventCreate (&event, CU_EVENT_DISABLE_TIMING), ==, CUDA_SUCCESS);
  memcpy (&bits, &seven, 4);
  g_assert_cmpint (cu->cuMemsetD32Async (mem, bits, 1024, foreign), ==, CUDA_SUCCESS);
  g_assert_cmpint (cu->cuEventRecord (event, foreign), ==, CUDA_SUCCESS);
  atomr_device_leave (f->device);

  buffer = atomr_buffer_new_for_device_pointer (f->device, ATOMR_DTYPE_F32, 1024, mem,
                                                count_release, &released, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_buffer_get_device_pointer (buffer), ==, mem);
  g_assert_true (atomr_actor_wait_event_sync (actor, (guint64) (guintptr) event, &buffer, 1, NULL, &error));
  g_assert_no_error (error);
  bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 1024; i++)
    g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (bytes, NULL))[i], ==, 7.0f);

  /* atomr writes (no reply awaited), the foreign stream reads after it */
  atomr_actor_fill_async (actor, buffer, 3.0, NULL, NULL, NULL);
  g_assert_true (atomr_actor_signal_stream_sync (actor, (guint64) (guintptr) foreign, &buffer, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_device_enter (f->device, &error));
  g_assert_cmpint (cu->cuMemcpyDtoHAsync (host, mem, sizeof host, foreign), ==, CUDA_SUCCESS);
  g_assert_cmpint (cu->cuStreamSynchronize (foreign), ==, CUDA_SUCCESS);
  atomr_device_leave (f->device);
  for (guint i = 0; i < 1024; i++)
    g_assert_cmpfloat (host[i], ==, 3.0f);

  /* the driver vouches for wrapped pointers */
  g_assert_null (atomr_buffer_new_for_device_pointer (f->device, ATOMR_DTYPE_F32, 1 << 20, mem,
                                                      NULL, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "run past the end"));
  g_clear_error (&error);
  g_assert_null (atomr_buffer_new_for_device_pointer (f->device, ATOMR_DTYPE_F32, 16,
                                                      (guint64) (guintptr) not_device, NULL, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_free (not_device);

  /* the owner gets the memory back once, after the last work, on the
   * device's thread */
  g_object_unref (buffer);
  for (guint i = 0; i < 10000 && g_atomic_int_get (&released) == 0; i++)
    g_usleep (1000);
  g_assert_cmpint (g_atomic_int_get (&released), ==, 1);

  g_assert_true (atomr_device_enter (f->device, &error));
  cu->cuEventDestroy (event);
  cu->cuStreamDestroy (foreign);
  cu->cuMemFree (mem);
  atomr_device_leave (f->device);
}

static void
test_external (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  test_external_body (f);
}

/* cuRAND into one row of a matrix: the row is drawn, the rest untouched */
static void
test_rng_row_body (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (f->device, ATOMR_RNG_PHILOX, &error);
  g_autofree gdouble *v = random_ints (f, 8 * 16);
  g_autoptr(AtomrBuffer) buffer = upload_values (f, ATOMR_DTYPE_F32, v, 8 * 16);
  g_autoptr(AtomrTensor) row = view (buffer, 3 * 16, 1, (const gint64[]) { 16 }, (const gint64[]) { 1 });
  g_autofree gdouble *got = NULL;
  GAsyncResult *result = NULL;

  g_assert_no_error (error);
  atomr_rng_actor_fill_tensor_async (rng, row, ATOMR_RNG_UNIFORM, 0, 0, NULL, store_result, &result);
  g_assert_true (atomr_rng_actor_fill_tensor_finish (rng, await (&result), &error));
  g_assert_no_error (error);
  g_object_unref (result);
  got = download_values (buffer);
  for (guint i = 0; i < 8 * 16; i++)
    {
      if (i / 16 == 3)
        g_assert_true (got[i] > 0.0 && got[i] <= 1.0);
      else
        g_assert_cmpfloat (got[i], ==, v[i]);
    }
  g_assert_finalize_object (g_steal_pointer (&rng));
}

static void
test_rng_row (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  test_rng_row_body (f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/gpu-tensor/copy", Fixture, NULL, fixture_setup, test_copy, fixture_teardown);
  g_test_add ("/gpu-tensor/upload-download", Fixture, NULL, fixture_setup, test_upload_download, fixture_teardown);
  g_test_add ("/gpu-tensor/gemm", Fixture, NULL, fixture_setup, test_gemm, fixture_teardown);
  g_test_add ("/gpu-tensor/gemv-axpy", Fixture, NULL, fixture_setup, test_gemv_axpy, fixture_teardown);
  g_test_add ("/gpu-tensor/memory-pool", Fixture, NULL, fixture_setup, test_memory_pool, fixture_teardown);
  g_test_add ("/gpu-tensor/external", Fixture, NULL, fixture_setup, test_external, fixture_teardown);
  g_test_add ("/gpu-tensor/rng-row", Fixture, NULL, fixture_setup, test_rng_row, fixture_teardown);
  g_test_add ("/gpu-tensor/errors", Fixture, NULL, fixture_setup, test_errors, fixture_teardown);

  return g_test_run ();
}
