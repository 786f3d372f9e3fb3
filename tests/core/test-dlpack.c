/* test-dlpack.c — DLPack export and import on the host test device
 * (kDLCPU stands in for kDLCUDA), and NumPy type strings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "core/atomr-dlpack-private.h"
#include "core/atomr-tensor-private.h"

typedef struct {
  AtomrDLManagedTensorVersioned m;
  int64_t shape[2];
  guint   deleted;
} Foreign;

static void
foreign_deleter (AtomrDLManagedTensorVersioned *self)
{
  Foreign *f = (Foreign *) self;
  f->deleted++;
}

static void
test_export (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  const gint64 shape[] = { 4, 6 };
  g_autoptr(AtomrTensor) t = atomr_tensor_empty (device, ATOMR_DTYPE_F64, shape, 2, &error);
  g_autoptr(AtomrTensor) sub = NULL;
  AtomrDLManagedTensorVersioned *v;
  AtomrDLManagedTensor *legacy;
  guint64 addr;

  g_assert_no_error (error);
  {
    g_autoptr(AtomrTensor) rows = atomr_tensor_slice (t, 0, 1, 3, 1, &error);
    sub = atomr_tensor_slice (rows, 1, 5, 0, -2, &error);     /* rows 1..2, columns 5, 3, 1 */
    g_assert_no_error (error);
  }
  addr = atomr_tensor_export_dlpack (sub, TRUE, &error);
  g_assert_no_error (error);
  v = (AtomrDLManagedTensorVersioned *) (guintptr) addr;
  g_assert_cmpuint (v->version.major, ==, 1);
  g_assert_cmpuint (v->flags, ==, 0);
  g_assert_cmpint (v->dl_tensor.device.device_type, ==, ATOMR_DL_CPU);
  g_assert_true (v->dl_tensor.data == atomr_buffer_get_host_data (atomr_tensor_get_buffer (t)));
  g_assert_cmpint (v->dl_tensor.ndim, ==, 2);
  g_assert_cmpuint (v->dl_tensor.dtype.code, ==, ATOMR_DL_FLOAT);
  g_assert_cmpuint (v->dl_tensor.dtype.bits, ==, 64);
  g_assert_cmpuint (v->dl_tensor.dtype.lanes, ==, 1);
  g_assert_cmpint (v->dl_tensor.shape[0], ==, 2);
  g_assert_cmpint (v->dl_tensor.shape[1], ==, 3);
  g_assert_cmpint (v->dl_tensor.strides[0], ==, 6);
  g_assert_cmpint (v->dl_tensor.strides[1], ==, -2);
  g_assert_cmpuint (v->dl_tensor.byte_offset, ==, (6 + 5) * 8);

  /* round trip: the import views the same memory, and releases the
   * export (and with it the reference on the tensor) when done */
  {
    g_autoptr(AtomrTensor) back = atomr_tensor_import_dlpack (addr, TRUE, device, &error);
    g_assert_no_error (error);
    g_assert_true (atomr_tensor_get_host_data (back) == atomr_tensor_get_host_data (sub));
    g_assert_cmpint (atomr_tensor_get_stride (back, 1), ==, -2);
    g_assert_cmpint (atomr_tensor_get_dim (back, 1), ==, 3);
    g_assert_cmpuint (atomr_buffer_get_byte_size (atomr_tensor_get_buffer (back)), ==, (6 + 4 + 1) * 8);
  }
  g_assert_finalize_object (g_steal_pointer (&sub));

  addr = atomr_tensor_export_dlpack (t, FALSE, &error);
  g_assert_no_error (error);
  legacy = (AtomrDLManagedTensor *) (guintptr) addr;
  g_assert_null (legacy->dl_tensor.strides == NULL ? legacy : NULL);
  g_assert_cmpint (legacy->dl_tensor.strides[0], ==, 6);
  legacy->deleter (legacy);

  {
    g_autoptr(AtomrTensor) bare = g_object_new (ATOMR_TYPE_TENSOR, NULL);
    g_assert_cmpuint (atomr_tensor_export_dlpack (bare, TRUE, &error), ==, 0);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  }
}

static void
test_import (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  gfloat memory[12];
  Foreign f = { { { 1, 0 }, NULL, foreign_deleter, 0,
                  { memory, { ATOMR_DL_CPU, 0 }, 2, { ATOMR_DL_FLOAT, 32, 1 }, NULL, NULL, 0 } },
                { 3, 4 }, 0 };
  AtomrTensor *t;

  for (guint i = 0; i < 12; i++)
    memory[i] = (gfloat) i;
  f.m.dl_tensor.shape = f.shape;
  /* compact row-major (strides NULL) */
  t = atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_tensor_is_contiguous (t));
  g_assert_true (atomr_tensor_get_host_data (t) == (gpointer) memory);
  g_assert_cmpuint (f.deleted, ==, 0);
  g_object_unref (t);
  g_assert_cmpuint (f.deleted, ==, 1);

  /* every failure calls the deleter once */
  f.m.dl_tensor.dtype.code = ATOMR_DL_BOOL;
  g_assert_null (atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "code 6, 32 bits"));
  g_clear_error (&error);
  g_assert_cmpuint (f.deleted, ==, 2);
  f.m.dl_tensor.dtype.code = ATOMR_DL_FLOAT;

  f.m.version.major = 2;
  g_assert_null (atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  g_assert_cmpuint (f.deleted, ==, 3);
  f.m.version.major = 1;

  f.m.dl_tensor.device.device_type = ATOMR_DL_CUDA;
  g_assert_null (atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (f.deleted, ==, 4);
  f.m.dl_tensor.device.device_type = ATOMR_DL_CPU;

  f.m.dl_tensor.ndim = 9;
  g_assert_null (atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (f.deleted, ==, 5);
  f.m.dl_tensor.ndim = 2;

  g_assert_null (atomr_tensor_import_dlpack (0, TRUE, device, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* reversed strides: the buffer covers what the layout reaches */
  {
    gint64 strides[] = { -4, -1 };
    f.m.dl_tensor.strides = strides;
    f.m.dl_tensor.byte_offset = 11 * 4;
    t = atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (*(gfloat *) atomr_tensor_get_host_data (t), ==, 11.0f);
    g_assert_true (atomr_buffer_get_host_data (atomr_tensor_get_buffer (t)) == (gpointer) memory);
    g_assert_cmpuint (atomr_tensor_get_byte_offset (t), ==, 44);
    g_object_unref (t);
    g_assert_cmpuint (f.deleted, ==, 6);
  }
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* A read-only capsule (DLPACK_FLAG_BITMASK_READ_ONLY) must never be
 * written: every operation with it as an output is refused at submit.
 * The old import ignored the flag: the fill below wrote the producer's
 * memory. */
static void
test_import_read_only (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  gfloat memory[12];
  Foreign f = { { { 1, 0 }, NULL, foreign_deleter, ATOMR_DLPACK_FLAG_READ_ONLY,
                  { memory, { ATOMR_DL_CPU, 0 }, 2, { ATOMR_DL_FLOAT, 32, 1 }, NULL, NULL, 0 } },
                { 3, 4 }, 0 };
  g_autoptr(AtomrTensor) t = NULL;
  g_autoptr(AtomrBuffer) other = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) got = NULL;
  gfloat zeros[12] = { 0 };
  gboolean read_only = FALSE;
  AtomrBuffer *buf;
  AtomrDLManagedTensorVersioned *v;
  guint64 addr;

  atomr_device_set_host_autocomplete (device, TRUE);
  for (guint i = 0; i < 12; i++)
    memory[i] = (gfloat) i;
  f.m.dl_tensor.shape = f.shape;
  t = atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error);
  g_assert_no_error (error);
  buf = atomr_tensor_get_buffer (t);
  g_assert_true (atomr_buffer_get_read_only (buf));
  g_object_get (buf, "read-only", &read_only, NULL);
  g_assert_true (read_only);

  /* Writes are refused, naming why; the memory is untouched. */
  g_assert_false (atomr_buffer_fill_sync (buf, 7.0, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "read-only memory"));
  g_clear_error (&error);
  bytes = g_bytes_new (zeros, sizeof zeros);
  g_assert_false (atomr_buffer_upload_sync (buf, bytes, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  {
    g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (device, &error);
    g_autoptr(AtomrBuffer) c = atomr_buffer_new (device, ATOMR_DTYPE_C64, 9, &error);
    g_autoptr(AtomrTensor) ct = NULL;
    const gint64 spec_shape[2] = { 3, 3 };
    GAsyncResult *res = NULL;

    g_assert_no_error (error);
    ct = atomr_tensor_new_strided (c, ATOMR_DTYPE_C64, 0, spec_shape, 2, NULL, 0, &error);
    g_assert_no_error (error);
    /* C2R into the read-only view: refused before the missing GPU. */
    atomr_fft_actor_execute_tensor_async (fft, 1, ATOMR_FFT_INVERSE, ATOMR_FFT_NORM_NONE, ct, t, NULL,
                                          store_result, &res);
    while (res == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_false (atomr_fft_actor_execute_tensor_finish (fft, res, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "read-only"));
    g_clear_error (&error);
    g_object_unref (res);
  }
  for (guint i = 0; i < 12; i++)
    g_assert_cmpfloat (memory[i], ==, (gfloat) i);

  /* Ordering against foreign work is no write by atomr: the handshakes of
   * from_dlpack / __dlpack__ (wait-stream, signal-stream, wait-event) take
   * read-only buffers. */
  {
    g_autoptr(AtomrActor) actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
    g_assert_no_error (error);
    g_assert_true (atomr_actor_wait_stream_sync (actor, 1, &buf, 1, NULL, &error));
    g_assert_no_error (error);
    g_assert_true (atomr_actor_signal_stream_sync (actor, 1, &buf, 1, NULL, &error));
    g_assert_no_error (error);
  }

  /* Reading is fine. */
  got = atomr_buffer_download_sync (buf, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), memory, sizeof memory);

  /* Exported again, the flag goes with it. */
  addr = atomr_tensor_export_dlpack (t, TRUE, &error);
  g_assert_no_error (error);
  v = (AtomrDLManagedTensorVersioned *) (guintptr) addr;
  g_assert_cmpuint (v->flags & ATOMR_DLPACK_FLAG_READ_ONLY, ==, ATOMR_DLPACK_FLAG_READ_ONLY);
  v->deleter (v);

  /* Without the flag the same memory is writable. */
  g_clear_object (&t);
  f.m.flags = 0;
  t = atomr_tensor_import_dlpack ((guint64) (guintptr) &f.m, TRUE, device, &error);
  g_assert_no_error (error);
  g_assert_false (atomr_buffer_get_read_only (atomr_tensor_get_buffer (t)));
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (t), 7.0, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (memory[5], ==, 7.0f);

  /* A buffer of our own, marked by hand (a read-only array interface). */
  other = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (other, 1.0, NULL, &error));
  atomr_buffer_mark_read_only (other);
  g_assert_false (atomr_buffer_fill_sync (other, 2.0, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

static void
test_typestr (void)
{
  AtomrDtype d = ATOMR_DTYPE_U8;

  g_assert_cmpstr (atomr_dtype_get_typestr (ATOMR_DTYPE_F32), ==, "<f4");
  g_assert_cmpstr (atomr_dtype_get_typestr (ATOMR_DTYPE_C128), ==, "<c16");
  g_assert_null (atomr_dtype_get_typestr (ATOMR_DTYPE_BF16));
  g_assert_true (atomr_dtype_from_typestr ("<c8", &d));
  g_assert_cmpint (d, ==, ATOMR_DTYPE_C64);
  g_assert_true (atomr_dtype_from_typestr ("|u1", &d));
  g_assert_cmpint (d, ==, ATOMR_DTYPE_U8);
  g_assert_false (atomr_dtype_from_typestr (">f4", &d));
  g_assert_false (atomr_dtype_from_typestr ("<i2", &d));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/dlpack/export", test_export);
  g_test_add_func ("/dlpack/import", test_import);
  g_test_add_func ("/dlpack/import-read-only", test_import_read_only);
  g_test_add_func ("/dlpack/typestr", test_typestr);

  return g_test_run ();
}
