/* test-sparse-validation.c — sparse matrices, vectors and the cuSPARSE
 * actor on the host test device (no GPU)
 *
 * Every constructor check, the host structure check of uploads (COO
 * sorting and duplicates included), the check operation (which runs on the
 * CPU on the host device), the validation of the actor's operations, plan
 * invalidation, and objects made bare by g_object_new().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "actors/sparse/atomr-sparse-private.h"

typedef struct {
  AtomrDevice      *device;
  AtomrSparseActor *actor;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_new_host ();
  atomr_device_set_host_autocomplete (f->device, TRUE);
  f->actor = atomr_sparse_actor_new (f->device, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_assert_finalize_object (f->actor);
  g_object_unref (f->device);
}

static AtomrBuffer *
buffer (Fixture *f, AtomrDtype dtype, guint64 n)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *b = atomr_buffer_new (f->device, dtype, n, &error);
  g_assert_no_error (error);
  return b;
}

static AtomrBuffer *
i32_buffer (Fixture *f, const gint32 *data, guint n)
{
  AtomrBuffer *b = buffer (f, ATOMR_DTYPE_I32, MAX (n, 1));
  if (n)
    memcpy (atomr_buffer_get_host_data (b), data, n * sizeof (gint32));
  return b;
}

static GBytes *
bytes_i32 (const gint32 *data, gsize n)
{
  return g_bytes_new (data, n * sizeof (gint32));
}

static GBytes *
bytes_f32 (const gfloat *data, gsize n)
{
  return g_bytes_new (data, n * sizeof (gfloat));
}

static void
assert_error_contains (GError *error, gint code, const gchar *needle)
{
  g_assert_nonnull (error);
  g_assert_error (error, ATOMR_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("message “%s” does not contain “%s”", error->message, needle);
}

/* ------------------------------------------------------------------ */
/* Constructors from device buffers                                     */

static void
test_new_csr_checks (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrBuffer) off = buffer (f, ATOMR_DTYPE_I32, 5);
  g_autoptr(AtomrBuffer) idx = buffer (f, ATOMR_DTYPE_I32, 6);
  g_autoptr(AtomrBuffer) idx64 = buffer (f, ATOMR_DTYPE_I64, 6);
  g_autoptr(AtomrBuffer) fidx = buffer (f, ATOMR_DTYPE_F32, 6);
  g_autoptr(AtomrBuffer) val = buffer (f, ATOMR_DTYPE_F32, 6);
  g_autoptr(AtomrBuffer) ival = buffer (f, ATOMR_DTYPE_I32, 6);
  g_autoptr(AtomrDevice) other = atomr_device_new_host ();
  g_autoptr(AtomrBuffer) other_val = atomr_buffer_new (other, ATOMR_DTYPE_F32, 6, NULL);
  struct {
    gint64 rows, cols, nnz;
    AtomrBuffer *off, *idx, *val;
    const gchar *needle;
  } cases[] = {
    { -1, 4, 6, off, idx, val, "negative dimension" },
    { 4, 4, -2, off, idx, val, "nnz -2" },
    { 2, 2, 6, off, idx, val, "cannot store nnz 6" },
    { 5, 4, 6, off, idx, val, "offsets of a CSR matrix need 6 elements; the buffer has 5" },
    { 4, 4, 7, off, idx, val, "indices of a CSR matrix need 7" },
    { 4, 4, 6, off, idx64, val, "all index arrays must have one dtype" },
    { 4, 4, 6, off, fidx, val, "indices of a CSR matrix are f32" },
    { 4, 4, 6, off, idx, ival, "values of a CSR matrix are i32" },
    { 4, 4, 6, off, idx, NULL, "needs a buffer of values (got NULL)" },
    { 4, 4, 6, off, idx, other_val, "on another device" },
    { 4, G_GINT64_CONSTANT (1) << 32, 6, off, idx, val, "i32 indices cannot have 4294967296" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrSparseMatrix) m =
        atomr_sparse_matrix_new_csr (cases[i].rows, cases[i].cols, cases[i].nnz,
                                     cases[i].off, cases[i].idx, cases[i].val, &error);
      g_test_message ("case %u: %s", i, error ? error->message : "(no error)");
      g_assert_null (m);
      assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, cases[i].needle);
    }

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrSparseMatrix) m = atomr_sparse_matrix_new_csr (4, 4, 6, off, idx, val, &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_format (m), ==, ATOMR_SPARSE_FORMAT_CSR);
    g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, 6);
    g_assert_true (atomr_sparse_matrix_get_offsets (m) == off);
    g_assert_null (atomr_sparse_matrix_get_row_indices (m));
    g_assert_cmpint (atomr_sparse_matrix_get_index_dtype (m), ==, ATOMR_DTYPE_I32);
    g_assert_cmpint (atomr_sparse_matrix_get_value_dtype (m), ==, ATOMR_DTYPE_F32);
    g_assert_true (atomr_sparse_matrix_get_device (m) == f->device);
  }
}

static void
test_new_other_formats (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrBuffer) off = buffer (f, ATOMR_DTYPE_I64, 9);
  g_autoptr(AtomrBuffer) idx = buffer (f, ATOMR_DTYPE_I64, 16);
  g_autoptr(AtomrBuffer) val = buffer (f, ATOMR_DTYPE_C64, 64);
  g_autoptr(GError) error = NULL;
  AtomrSparseMatrix *m;

  /* CSC: offsets count columns. */
  m = atomr_sparse_matrix_new_csc (100, 8, 16, off, idx, val, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_index_dtype (m), ==, ATOMR_DTYPE_I64);
  g_object_unref (m);
  m = atomr_sparse_matrix_new_csc (8, 9, 16, off, idx, val, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "offsets of a CSC matrix need 10");
  g_clear_error (&error);

  /* COO: row indices instead of offsets. */
  m = atomr_sparse_matrix_new_coo (8, 8, 16, idx, idx, val, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_sparse_matrix_get_row_indices (m) == idx);
  g_assert_null (atomr_sparse_matrix_get_offsets (m));
  g_object_unref (m);
  m = atomr_sparse_matrix_new_coo (8, 8, 17, idx, idx, val, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "row indices of a COO matrix need 17");
  g_clear_error (&error);

  /* BSR: 16 × 16 in 2 × 2 blocks, 16 blocks of 4 values. */
  m = atomr_sparse_matrix_new_bsr (16, 16, 2, 16, off, idx, val, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_block_size (m), ==, 2);
  g_object_unref (m);
  m = atomr_sparse_matrix_new_bsr (16, 15, 2, 16, off, idx, val, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "is not made of 2 × 2 blocks");
  g_clear_error (&error);
  m = atomr_sparse_matrix_new_bsr (16, 16, 0, 16, off, idx, val, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "block size 0");
  g_clear_error (&error);
  m = atomr_sparse_matrix_new_bsr (16, 16, 4, 16, off, idx, val, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "values of a BSR matrix need 256");
  g_clear_error (&error);

  /* Blocked-ELL: 16 × 16, blocks of 4, 8 stored columns: 4 × 2 block
   * indices, 16 × 8 values. */
  {
    g_autoptr(AtomrBuffer) ell_val = buffer (f, ATOMR_DTYPE_F16, 128);
    m = atomr_sparse_matrix_new_blocked_ell (16, 16, 4, 8, idx, ell_val, &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, 128);
    g_assert_cmpint (atomr_sparse_matrix_get_ell_cols (m), ==, 8);
    g_object_unref (m);
    m = atomr_sparse_matrix_new_blocked_ell (16, 16, 4, 6, idx, ell_val, &error);
    g_assert_null (m);
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "ell-cols 6");
    g_clear_error (&error);
    m = atomr_sparse_matrix_new_blocked_ell (16, 16, 4, 12, idx, ell_val, &error);
    g_assert_null (m);
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "values of a Blocked-ELL matrix need 192");
    g_clear_error (&error);
  }
}

/* ------------------------------------------------------------------ */
/* Uploads: the host structure check                                    */

static AtomrSparseMatrix *
csr_from_host (Fixture *f, gint64 rows, gint64 cols, const gint32 *off, gsize n_off,
               const gint32 *idx, gsize nnz, GError **error)
{
  g_autofree gfloat *val = g_new0 (gfloat, MAX (nnz, 1));
  g_autoptr(GBytes) o = bytes_i32 (off, n_off), i = bytes_i32 (idx, nnz), v = bytes_f32 (val, nnz);

  return atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_CSR, rows, cols, 1,
                                             ATOMR_DTYPE_I32, o, i, ATOMR_DTYPE_F32, v, NULL, error);
}

static void
test_upload_csr (Fixture *f, gconstpointer data)
{
  /* 4 × 5 with an empty row (row 1) */
  static const gint32 good_off[] = { 0, 2, 2, 4, 5 };
  static const gint32 good_idx[] = { 0, 3, 1, 4, 2 };
  struct {
    gint32 off[5];
    gint32 idx[5];
    const gchar *needle;
  } cases[] = {
    { { 1, 2, 2, 4, 5 }, { 0, 3, 1, 4, 2 }, "Offset 0 of a CSR matrix is 1" },
    { { 0, 2, 2, 4, 4 }, { 0, 3, 1, 4, 2 }, "(the last) of a CSR matrix is 4; it must be nnz, 5" },
    { { 0, 3, 2, 4, 5 }, { 0, 3, 1, 4, 2 }, "Offset 2 of a CSR matrix is 2 after 3" },
    { { 0, 2, 2, 4, 5 }, { 0, 5, 1, 4, 2 }, "Entry 1 of a CSR matrix (row 0) has index 5, outside [0, 5)" },
    { { 0, 2, 2, 4, 5 }, { 0, -1, 1, 4, 2 }, "has index -1" },
    { { 0, 2, 2, 4, 5 }, { 3, 0, 1, 4, 2 }, "has index 0 after 3: indices within a row must be sorted and distinct" },
    { { 0, 2, 2, 4, 5 }, { 3, 3, 1, 4, 2 }, "has index 3 after 3" },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrSparseMatrix) m = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) e = NULL;
      g_autoptr(AtomrSparseMatrix) bad = csr_from_host (f, 4, 5, cases[i].off, 5, cases[i].idx, 5, &e);
      g_test_message ("case %u: %s", i, e ? e->message : "(no error)");
      g_assert_null (bad);
      assert_error_contains (e, ATOMR_ERROR_INVALID_ARGUMENT, cases[i].needle);
    }

  /* wrong lengths */
  m = csr_from_host (f, 5, 5, good_off, 5, good_idx, 5, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "needs 6 offsets, got 5");
  g_clear_error (&error);

  m = csr_from_host (f, 4, 5, good_off, 5, good_idx, 5, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, 5);
  g_assert_cmpmem (atomr_buffer_get_host_data (atomr_sparse_matrix_get_offsets (m)), sizeof good_off,
                   good_off, sizeof good_off);
  g_assert_cmpmem (atomr_buffer_get_host_data (atomr_sparse_matrix_get_indices (m)), sizeof good_idx,
                   good_idx, sizeof good_idx);
}

static void
test_upload_empty (Fixture *f, gconstpointer data)
{
  static const gint32 off[] = { 0, 0, 0, 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrSparseMatrix) m = csr_from_host (f, 3, 7, off, 4, NULL, 0, &error);

  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, 0);
  /* buffers always hold at least one element */
  g_assert_cmpuint (atomr_buffer_get_n_elements (atomr_sparse_matrix_get_values (m)), ==, 1);
}

static void
test_upload_i64 (Fixture *f, gconstpointer data)
{
  static const gint64 off[] = { 0, 1, 3 };
  static const gint64 idx[] = { 2, 0, 1 };
  static const gdouble val[] = { 1, 2, 3 };
  static const gint64 bad_idx[] = { 2, 0, 3 };
  g_autoptr(GBytes) o = g_bytes_new_static (off, sizeof off);
  g_autoptr(GBytes) i = g_bytes_new_static (idx, sizeof idx);
  g_autoptr(GBytes) bi = g_bytes_new_static (bad_idx, sizeof bad_idx);
  g_autoptr(GBytes) v = g_bytes_new_static (val, sizeof val);
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrSparseMatrix) m = NULL;

  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_CSR, 2, 3, 1, ATOMR_DTYPE_I64,
                                          o, i, ATOMR_DTYPE_F64, v, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_index_dtype (m), ==, ATOMR_DTYPE_I64);
  g_clear_object (&m);
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_CSR, 2, 3, 1, ATOMR_DTYPE_I64,
                                          o, bi, ATOMR_DTYPE_F64, v, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "Entry 2 of a CSR matrix (row 1) has index 3");
  g_clear_error (&error);
  /* bytes that are not whole indices */
  {
    g_autoptr(GBytes) odd = g_bytes_new_static (off, 10);
    m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_CSR, 2, 3, 1, ATOMR_DTYPE_I64,
                                            odd, i, ATOMR_DTYPE_F64, v, NULL, &error);
    g_assert_null (m);
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "not a whole number of i64");
    g_clear_error (&error);
  }
  /* an index dtype that is not one */
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_CSR, 2, 3, 1, ATOMR_DTYPE_U8,
                                          o, i, ATOMR_DTYPE_F64, v, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "must be i32 or i64, not u8");
}

static void
test_upload_coo_sorts (Fixture *f, gconstpointer data)
{
  /* unsorted input: (2,1)=1 (0,3)=2 (2,0)=3 (0,0)=4 */
  static const gint32 rows[] = { 2, 0, 2, 0 };
  static const gint32 cols[] = { 1, 3, 0, 0 };
  static const gfloat vals[] = { 1, 2, 3, 4 };
  static const gint32 want_rows[] = { 0, 0, 2, 2 };
  static const gint32 want_cols[] = { 0, 3, 0, 1 };
  static const gfloat want_vals[] = { 4, 2, 3, 1 };
  g_autoptr(GBytes) r = bytes_i32 (rows, 4), c = bytes_i32 (cols, 4), v = bytes_f32 (vals, 4);
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrSparseMatrix) m =
    atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_COO, 3, 4, 1, ATOMR_DTYPE_I32,
                                        r, c, ATOMR_DTYPE_F32, v, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpmem (atomr_buffer_get_host_data (atomr_sparse_matrix_get_row_indices (m)), 16, want_rows, 16);
  g_assert_cmpmem (atomr_buffer_get_host_data (atomr_sparse_matrix_get_indices (m)), 16, want_cols, 16);
  g_assert_cmpmem (atomr_buffer_get_host_data (atomr_sparse_matrix_get_values (m)), 16, want_vals, 16);
}

static void
test_upload_coo_rejects (Fixture *f, gconstpointer data)
{
  static const gint32 rows[] = { 2, 0, 2, 0 };
  static const gint32 dup_cols[] = { 1, 3, 1, 0 };
  static const gint32 far_cols[] = { 1, 4, 0, 0 };
  static const gint32 far_rows[] = { 3, 0, 2, 0 };
  static const gint32 cols[] = { 1, 3, 0, 0 };
  static const gfloat vals[] = { 1, 2, 3, 4 };
  g_autoptr(GBytes) r = bytes_i32 (rows, 4), dc = bytes_i32 (dup_cols, 4), v = bytes_f32 (vals, 4);
  g_autoptr(GBytes) fc = bytes_i32 (far_cols, 4), fr = bytes_i32 (far_rows, 4), c = bytes_i32 (cols, 4);
  g_autoptr(GBytes) v3 = bytes_f32 (vals, 3);
  g_autoptr(GError) error = NULL;
  AtomrSparseMatrix *m;

  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_COO, 3, 4, 1, ATOMR_DTYPE_I32,
                                          r, dc, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT,
                         "Entries 0 and 2 of a COO matrix are both (2, 1): duplicated entries are not allowed");
  g_clear_error (&error);
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_COO, 3, 4, 1, ATOMR_DTYPE_I32,
                                          r, fc, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "has column 4, outside [0, 4)");
  g_clear_error (&error);
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_COO, 3, 4, 1, ATOMR_DTYPE_I32,
                                          fr, c, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "has row 3, outside [0, 3)");
  g_clear_error (&error);
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_COO, 3, 4, 1, ATOMR_DTYPE_I32,
                                          r, c, ATOMR_DTYPE_F32, v3, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "needs 3 row indices, got 4");
}

static void
test_upload_blocked (Fixture *f, gconstpointer data)
{
  /* BSR 4 × 4 in 2 × 2 blocks: block row 0 has block col 1, block row 1
   * has block cols 0 and 1. */
  static const gint32 off[] = { 0, 1, 3 };
  static const gint32 idx[] = { 1, 0, 1 };
  static const gint32 bad_idx[] = { 1, 1, 0 };
  gfloat vals[12] = { 0 };
  g_autoptr(GBytes) o = bytes_i32 (off, 3), i = bytes_i32 (idx, 3), bi = bytes_i32 (bad_idx, 3);
  g_autoptr(GBytes) v = bytes_f32 (vals, 12), v11 = bytes_f32 (vals, 11);
  g_autoptr(GError) error = NULL;
  AtomrSparseMatrix *m;

  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_BSR, 4, 4, 2, ATOMR_DTYPE_I32,
                                          o, i, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, 3);
  g_object_unref (m);
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_BSR, 4, 4, 2, ATOMR_DTYPE_I32,
                                          o, bi, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "(block row 1) has index 0 after 1");
  g_clear_error (&error);
  m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_BSR, 4, 4, 2, ATOMR_DTYPE_I32,
                                          o, i, ATOMR_DTYPE_F32, v11, NULL, &error);
  g_assert_null (m);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "11 values, not a whole number of blocks");
  g_clear_error (&error);

  /* Blocked-ELL 4 × 4, blocks of 2, one block per block row: 2 block
   * indices (-1 pads), 4 × 2 values. */
  {
    static const gint32 ell_idx[] = { 1, -1 };
    static const gint32 ell_bad[] = { 2, -1 };
    g_autoptr(GBytes) ei = bytes_i32 (ell_idx, 2), eb = bytes_i32 (ell_bad, 2);
    g_autoptr(GBytes) ev = bytes_f32 (vals, 8);

    m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_BLOCKED_ELL, 4, 4, 2,
                                            ATOMR_DTYPE_I32, NULL, ei, ATOMR_DTYPE_F32, ev, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_ell_cols (m), ==, 2);
    g_object_unref (m);
    m = atomr_sparse_matrix_new_from_bytes (f->device, ATOMR_SPARSE_FORMAT_BLOCKED_ELL, 4, 4, 2,
                                            ATOMR_DTYPE_I32, NULL, eb, ATOMR_DTYPE_F32, ev, NULL, &error);
    g_assert_null (m);
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT,
                           "Block column index 0 of a Blocked-ELL matrix is 2, outside [-1, 2)");
  }
}

/* ------------------------------------------------------------------ */
/* The actor                                                            */

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static void
wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static gboolean
check_matrix (Fixture *f, AtomrSparseMatrix *m, GError **error)
{
  GAsyncResult *result = NULL;
  gboolean ok;

  atomr_sparse_actor_check_async (f->actor, m, NULL, store_result, &result);
  wait_for (&result);
  ok = atomr_sparse_actor_check_finish (f->actor, result, error);
  g_object_unref (result);
  return ok;
}

static void
test_check_operation (Fixture *f, gconstpointer data)
{
  /* A matrix over device buffers is not read at construction; check reads
   * the structure in stream order. */
  static const gint32 off[] = { 0, 2, 2, 3 };
  static const gint32 idx[] = { 0, 2, 1 };
  g_autoptr(AtomrBuffer) o = i32_buffer (f, off, 4);
  g_autoptr(AtomrBuffer) i = i32_buffer (f, idx, 3);
  g_autoptr(AtomrBuffer) v = buffer (f, ATOMR_DTYPE_F32, 3);
  g_autoptr(AtomrSparseMatrix) m = atomr_sparse_matrix_new_csr (3, 3, 3, o, i, v, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (m);
  g_assert_true (check_matrix (f, m, &error));
  g_assert_no_error (error);

  /* Corrupt the indices behind the matrix's back. */
  ((gint32 *) atomr_buffer_get_host_data (i))[2] = 3;
  g_assert_false (check_matrix (f, m, &error));
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT,
                         "Entry 2 of a CSR matrix (row 2) has index 3, outside [0, 3)");
  g_clear_error (&error);
  ((gint32 *) atomr_buffer_get_host_data (i))[2] = 1;
  ((gint32 *) atomr_buffer_get_host_data (o))[1] = 4;
  g_assert_false (check_matrix (f, m, &error));
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "Offset 1 of a CSR matrix is 4 after 0");
  g_clear_error (&error);

  /* Unsorted COO over device buffers is found by check. */
  {
    static const gint32 rows[] = { 1, 0 };
    static const gint32 cols[] = { 0, 0 };
    g_autoptr(AtomrBuffer) r = i32_buffer (f, rows, 2);
    g_autoptr(AtomrBuffer) c = i32_buffer (f, cols, 2);
    g_autoptr(AtomrSparseMatrix) coo = atomr_sparse_matrix_new_coo (2, 2, 2, r, c, v, NULL);
    g_assert_false (check_matrix (f, coo, &error));
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT,
                           "Entry 1 of a COO matrix, (0, 0), comes after (1, 0)");
  }
}

static void
test_operation_validation (Fixture *f, gconstpointer data)
{
  static const gint32 off[] = { 0, 1, 2 };
  static const gint32 idx[] = { 1, 0 };
  g_autoptr(AtomrBuffer) o = i32_buffer (f, off, 3);
  g_autoptr(AtomrBuffer) i = i32_buffer (f, idx, 2);
  g_autoptr(AtomrBuffer) i64 = buffer (f, ATOMR_DTYPE_I64, 3);
  g_autoptr(AtomrBuffer) v = buffer (f, ATOMR_DTYPE_F32, 2);
  g_autoptr(AtomrSparseMatrix) csr = atomr_sparse_matrix_new_csr (2, 2, 2, o, i, v, NULL);
  g_autoptr(AtomrSparseMatrix) coo = atomr_sparse_matrix_new_coo (2, 2, 2, i, i, v, NULL);
  g_autoptr(AtomrSparseMatrix) csr64 = atomr_sparse_matrix_new_csr (2, 2, 2, i64, i64, v, NULL);
  g_autoptr(AtomrSparseMatrix) bare = g_object_new (ATOMR_TYPE_SPARSE_MATRIX, NULL);
  g_autoptr(AtomrDevice) other = atomr_device_new_host ();
  g_autoptr(AtomrSparseMatrix) elsewhere = NULL;
  struct {
    AtomrSparseMatrix *m;
    gint format;     /* -1: transpose */
    gint code;
    const gchar *needle;
  } cases[] = {
    { NULL, ATOMR_SPARSE_FORMAT_CSC, ATOMR_ERROR_INVALID_ARGUMENT, "convert: matrix must be an AtomrSparseMatrix (got NULL)" },
    { bare, ATOMR_SPARSE_FORMAT_CSC, ATOMR_ERROR_INVALID_ARGUMENT, "was not made by an atomr_sparse_matrix_new_*() constructor" },
    { csr, 9, ATOMR_ERROR_INVALID_ARGUMENT, "format" },
    { csr, ATOMR_SPARSE_FORMAT_CSR, ATOMR_ERROR_NOT_SUPPORTED, "csr to csr is not supported" },
    { coo, ATOMR_SPARSE_FORMAT_CSC, ATOMR_ERROR_NOT_SUPPORTED, "coo to csc is not supported" },
    { coo, -1, ATOMR_ERROR_NOT_SUPPORTED, "transpose: the matrix is coo" },
    { csr64, -1, ATOMR_ERROR_NOT_SUPPORTED, "has i64 indices" },
    { NULL, -2, ATOMR_ERROR_INVALID_ARGUMENT, "is on another device than the actor" },
    /* valid, but the host device has no cuSPARSE */
    { csr, ATOMR_SPARSE_FORMAT_CSC, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: convert needs a CUDA device" },
    { csr, -1, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: transpose needs a CUDA device" },
    /* COO ↔ CSR: accepted (the host device then has no cuSPARSE) */
    { coo, ATOMR_SPARSE_FORMAT_CSR, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: convert needs a CUDA device" },
    { csr, ATOMR_SPARSE_FORMAT_COO, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: convert needs a CUDA device" },
    { csr, ATOMR_SPARSE_FORMAT_BSR, ATOMR_ERROR_NOT_SUPPORTED, "convert_to_bsr_async, which takes the block size" },
    { csr64, ATOMR_SPARSE_FORMAT_COO, ATOMR_ERROR_NOT_SUPPORTED, "format conversions take i32 indices only" },
  };

  {
    g_autoptr(AtomrBuffer) oo = atomr_buffer_new (other, ATOMR_DTYPE_I32, 3, NULL);
    g_autoptr(AtomrBuffer) oi = atomr_buffer_new (other, ATOMR_DTYPE_I32, 2, NULL);
    g_autoptr(AtomrBuffer) ov = atomr_buffer_new (other, ATOMR_DTYPE_F32, 2, NULL);
    elsewhere = atomr_sparse_matrix_new_csr (2, 2, 2, oo, oi, ov, NULL);
    cases[7].m = elsewhere;
  }

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      GAsyncResult *result = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrSparseMatrix) out = NULL;

      if (cases[k].format >= 0)
        {
          atomr_sparse_actor_convert_async (f->actor, cases[k].m, cases[k].format, NULL, store_result, &result);
          wait_for (&result);
          out = atomr_sparse_actor_convert_finish (f->actor, result, &error);
        }
      else
        {
          atomr_sparse_actor_transpose_async (f->actor, cases[k].m, NULL, store_result, &result);
          wait_for (&result);
          out = atomr_sparse_actor_transpose_finish (f->actor, result, &error);
        }
      g_object_unref (result);
      g_test_message ("case %u: %s", k, error ? error->message : "(no error)");
      g_assert_null (out);
      assert_error_contains (error, cases[k].code, cases[k].needle);
    }
}

/* CSR → BSR and BSR → CSR: what is refused before the GPU, with the
 * value named; valid requests reach the (absent) cuSPARSE. */
static void
test_convert_blocks_validation (Fixture *f, gconstpointer data)
{
  static const gint32 off[] = { 0, 1, 2, 2, 3 };
  static const gint32 idx[] = { 1, 0, 3 };
  static const gint32 boff[] = { 0, 1, 1 };
  static const gint32 bidx[] = { 0 };
  g_autoptr(AtomrBuffer) o = i32_buffer (f, off, 5);
  g_autoptr(AtomrBuffer) i = i32_buffer (f, idx, 3);
  g_autoptr(AtomrBuffer) bo = i32_buffer (f, boff, 3);
  g_autoptr(AtomrBuffer) bi = i32_buffer (f, bidx, 1);
  g_autoptr(AtomrBuffer) v = buffer (f, ATOMR_DTYPE_F32, 3);
  g_autoptr(AtomrBuffer) vh = buffer (f, ATOMR_DTYPE_F16, 3);
  g_autoptr(AtomrBuffer) bv = buffer (f, ATOMR_DTYPE_F64, 4);
  g_autoptr(AtomrBuffer) i64o = buffer (f, ATOMR_DTYPE_I64, 5);
  g_autoptr(AtomrBuffer) i64i = buffer (f, ATOMR_DTYPE_I64, 3);
  g_autoptr(AtomrSparseMatrix) csr = atomr_sparse_matrix_new_csr (4, 6, 3, o, i, v, NULL);
  g_autoptr(AtomrSparseMatrix) csr_half = atomr_sparse_matrix_new_csr (4, 6, 3, o, i, vh, NULL);
  g_autoptr(AtomrSparseMatrix) csr64 = atomr_sparse_matrix_new_csr (4, 6, 3, i64o, i64i, v, NULL);
  g_autoptr(AtomrSparseMatrix) coo = atomr_sparse_matrix_new_coo (3, 6, 3, i, i, v, NULL);
  g_autoptr(AtomrSparseMatrix) bsr = atomr_sparse_matrix_new_bsr (4, 4, 2, 1, bo, bi, bv, NULL);
  struct {
    AtomrSparseMatrix *m;
    gint64 block;      /* 0: convert_async to CSR instead */
    gint code;
    const gchar *needle;
  } cases[] = {
    { csr, -1, ATOMR_ERROR_INVALID_ARGUMENT, "block_size -1 must be positive and divide the 4 × 6 matrix" },
    { csr, 4, ATOMR_ERROR_INVALID_ARGUMENT, "block_size 4 must be positive" },
    { coo, 3, ATOMR_ERROR_NOT_SUPPORTED, "the matrix is coo; only CSR converts to BSR" },
    { csr64, 2, ATOMR_ERROR_NOT_SUPPORTED, "convert-to-bsr: the matrix has i64 indices" },
    { csr_half, 2, ATOMR_ERROR_NOT_SUPPORTED, "convert-to-bsr: the matrix has f16 values" },
    { NULL, 2, ATOMR_ERROR_INVALID_ARGUMENT, "convert-to-bsr: matrix must be an AtomrSparseMatrix (got NULL)" },
    { csr, 2, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: convert-to-bsr needs a CUDA device" },
    { bsr, 0, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: convert needs a CUDA device" },
  };

  g_assert_nonnull (csr);
  g_assert_nonnull (csr_half);
  g_assert_nonnull (csr64);
  g_assert_nonnull (coo);
  g_assert_nonnull (bsr);
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      GAsyncResult *result = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrSparseMatrix) out = NULL;

      if (cases[k].block != 0)
        {
          atomr_sparse_actor_convert_to_bsr_async (f->actor, cases[k].m, cases[k].block, NULL, store_result,
                                                   &result);
          wait_for (&result);
          out = atomr_sparse_actor_convert_to_bsr_finish (f->actor, result, &error);
        }
      else
        {
          atomr_sparse_actor_convert_async (f->actor, cases[k].m, ATOMR_SPARSE_FORMAT_CSR, NULL, store_result,
                                            &result);
          wait_for (&result);
          out = atomr_sparse_actor_convert_finish (f->actor, result, &error);
        }
      g_object_unref (result);
      g_test_message ("case %u: %s", k, error ? error->message : "(no error)");
      g_assert_null (out);
      assert_error_contains (error, cases[k].code, cases[k].needle);
    }
}

/* ------------------------------------------------------------------ */
/* Plans, values, bare objects, vectors                                 */

static void
notify_count (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_plans_and_values (Fixture *f, gconstpointer data)
{
  static const gint32 off[] = { 0, 1, 2 };
  static const gint32 idx[] = { 1, 0 };
  g_autoptr(AtomrBuffer) o = i32_buffer (f, off, 3);
  g_autoptr(AtomrBuffer) i = i32_buffer (f, idx, 2);
  g_autoptr(AtomrBuffer) v = buffer (f, ATOMR_DTYPE_F32, 2);
  g_autoptr(AtomrBuffer) v2 = buffer (f, ATOMR_DTYPE_F32, 2);
  g_autoptr(AtomrBuffer) v_small = buffer (f, ATOMR_DTYPE_F32, 1);
  g_autoptr(AtomrBuffer) v_f64 = buffer (f, ATOMR_DTYPE_F64, 2);
  g_autoptr(AtomrSparseMatrix) m = atomr_sparse_matrix_new_csr (2, 2, 2, o, i, v, NULL);
  g_autoptr(GError) error = NULL;
  AtomrSparsePlan *plan;
  guint values_notified = 0, serial_notified = 0;

  g_signal_connect (m, "notify::values", G_CALLBACK (notify_count), &values_notified);
  g_signal_connect (m, "notify::structure-serial", G_CALLBACK (notify_count), &serial_notified);

  plan = atomr_sparse_matrix_get_plan (m, 7, 1, 42);
  plan->buffer_size = 1234;
  g_assert_true (atomr_sparse_matrix_get_plan (m, 7, 1, 42) == plan);
  g_assert_cmpuint (plan->buffer_size, ==, 1234);
  g_assert_true (atomr_sparse_matrix_get_plan (m, 8, 1, 42) != plan);
  g_assert_cmpuint (atomr_sparse_matrix_count_plans (m), ==, 2);

  /* New values keep the plan (the solve updates its analysis)... */
  g_assert_true (atomr_sparse_matrix_set_values (m, v2, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (values_notified, ==, 1);
  g_assert_true (atomr_sparse_matrix_get_values (m) == v2);
  g_assert_true (atomr_sparse_matrix_set_values (m, v2, &error));
  g_assert_cmpuint (values_notified, ==, 1);
  plan = atomr_sparse_matrix_get_plan (m, 7, 1, 42);
  g_assert_cmpuint (plan->buffer_size, ==, 1234);

  /* ...a new structure empties it. */
  atomr_sparse_matrix_structure_changed (m);
  g_assert_cmpuint (serial_notified, ==, 1);
  g_assert_cmpuint (atomr_sparse_matrix_get_structure_serial (m), ==, 1);
  plan = atomr_sparse_matrix_get_plan (m, 7, 1, 42);
  g_assert_cmpuint (plan->buffer_size, ==, 0);

  atomr_sparse_matrix_drop_plans (m, 8);
  g_assert_cmpuint (atomr_sparse_matrix_count_plans (m), ==, 1);

  g_assert_false (atomr_sparse_matrix_set_values (m, v_small, &error));
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "New values need 2 elements; the buffer has 1");
  g_clear_error (&error);
  g_assert_false (atomr_sparse_matrix_set_values (m, v_f64, &error));
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "New values are f64; the matrix holds f32");
}

static void
test_bare_objects (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrSparseMatrix) m = g_object_new (ATOMR_TYPE_SPARSE_MATRIX, NULL);
  g_autoptr(AtomrSparseVector) vec = g_object_new (ATOMR_TYPE_SPARSE_VECTOR, NULL);
  g_autoptr(AtomrBuffer) v = buffer (f, ATOMR_DTYPE_F32, 2);
  g_autoptr(GError) error = NULL;
  gint64 rows = -1;

  g_object_get (m, "rows", &rows, NULL);
  g_assert_cmpint (rows, ==, 0);
  g_assert_null (atomr_sparse_matrix_get_values (m));
  g_assert_null (atomr_sparse_matrix_get_device (m));
  g_assert_false (atomr_sparse_matrix_set_values (m, v, &error));
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "has no values");
  g_clear_error (&error);
  g_assert_false (check_matrix (f, m, &error));
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "was not made by");

  g_assert_cmpint (atomr_sparse_vector_get_nnz (vec), ==, 0);
  g_assert_null (atomr_sparse_vector_get_indices (vec));
  g_assert_null (atomr_sparse_vector_get_device (vec));

  {
    g_autoptr(AtomrSparseActor) actor = g_object_new (ATOMR_TYPE_SPARSE_ACTOR, NULL);
    g_assert_cmpuint (atomr_sparse_actor_get_workspace_size (actor), ==, 0);
  }
}

static void
test_vectors (Fixture *f, gconstpointer data)
{
  static const gint32 idx[] = { 4, 0, 2 };
  static const gint32 dup[] = { 4, 0, 4 };
  static const gint32 far[] = { 4, 0, 5 };
  static const gfloat val[] = { 1, 2, 3 };
  g_autoptr(GBytes) i = bytes_i32 (idx, 3), d = bytes_i32 (dup, 3), fa = bytes_i32 (far, 3);
  g_autoptr(GBytes) v = bytes_f32 (val, 3), v2 = bytes_f32 (val, 2);
  g_autoptr(GError) error = NULL;
  AtomrSparseVector *vec;

  vec = atomr_sparse_vector_new_from_bytes (f->device, 5, ATOMR_DTYPE_I32, i, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_vector_get_nnz (vec), ==, 3);
  g_assert_cmpint (atomr_sparse_vector_get_size (vec), ==, 5);
  g_object_unref (vec);
  vec = atomr_sparse_vector_new_from_bytes (f->device, 5, ATOMR_DTYPE_I32, d, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_null (vec);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "Index 2 of a sparse vector repeats 4");
  g_clear_error (&error);
  vec = atomr_sparse_vector_new_from_bytes (f->device, 5, ATOMR_DTYPE_I32, fa, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_null (vec);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "Index 2 of a sparse vector is 5, outside [0, 5)");
  g_clear_error (&error);
  vec = atomr_sparse_vector_new_from_bytes (f->device, 5, ATOMR_DTYPE_I32, i, ATOMR_DTYPE_F32, v2, NULL, &error);
  g_assert_null (vec);
  assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "not one value per index");
  g_clear_error (&error);
  {
    g_autoptr(AtomrBuffer) ib = buffer (f, ATOMR_DTYPE_I32, 3);
    g_autoptr(AtomrBuffer) vb = buffer (f, ATOMR_DTYPE_F32, 3);
    vec = atomr_sparse_vector_new (2, 3, ib, vb, &error);
    g_assert_null (vec);
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "size 2 cannot store nnz 3");
    g_clear_error (&error);
    vec = atomr_sparse_vector_new (8, 3, vb, vb, &error);
    g_assert_null (vec);
    assert_error_contains (error, ATOMR_ERROR_INVALID_ARGUMENT, "indices of a sparse vector are f32");
  }
}

/* Sparse actors on the host device, uploads and checks never map cuSPARSE
 * (nor nvJitLink, which it depends on). */
static void
test_nothing_mapped (Fixture *f, gconstpointer data)
{
  g_autofree gchar *maps = NULL;

  test_check_operation (f, data);
  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  g_assert_null (strstr (maps, "libcusparse"));
  g_assert_null (strstr (maps, "libnvJitLink"));
}

/* ------------------------------------------------------------------ */
/* Operations with dense operands: validation on the host device        */

static AtomrTensor *
view (AtomrBuffer *b, gint64 d0, gint64 d1)
{
  gint64 shape[2] = { d0, d1 };
  g_autoptr(GError) error = NULL;
  AtomrTensor *t = atomr_tensor_new (b, shape, d1 < 0 ? 1 : 2, &error);
  g_assert_no_error (error);
  return t;
}

typedef struct {
  AtomrSparseMatrix *csr, *coo, *bsr, *ell, *rect, *f64;
  AtomrSparseVector *vec, *vec16;
  AtomrTensor *v4, *v4b, *v3, *v4_f64, *v8_strided, *v4_of_values;
  AtomrTensor *m4x3_values, *m4x4, *m4x2, *m4x2b, *m3x2, *m2x4, *b3x4x2, *c3x4x2, *c2x4x2, *m4x2_f16;
  AtomrBuffer *buffers[24];
  guint n_buffers;
} Operands;

static AtomrBuffer *
keep (Operands *o, AtomrBuffer *b)
{
  o->buffers[o->n_buffers++] = b;
  return b;
}

static void
operands_init (Fixture *f, Operands *o)
{
  static const gint32 off[] = { 0, 1, 2, 3, 4 };
  static const gint32 idx[] = { 0, 1, 2, 3 };
  g_autoptr(GError) error = NULL;
  AtomrBuffer *i = keep (o, i32_buffer (f, off, 5));
  AtomrBuffer *j = keep (o, i32_buffer (f, idx, 4));
  AtomrBuffer *v = keep (o, buffer (f, ATOMR_DTYPE_F32, 16));
  AtomrBuffer *v64 = keep (o, buffer (f, ATOMR_DTYPE_F64, 4));
  AtomrBuffer *v16 = keep (o, buffer (f, ATOMR_DTYPE_F16, 4));
  AtomrBuffer *d = keep (o, buffer (f, ATOMR_DTYPE_F32, 64));
  AtomrBuffer *d2 = keep (o, buffer (f, ATOMR_DTYPE_F32, 64));
  AtomrBuffer *d3 = keep (o, buffer (f, ATOMR_DTYPE_F32, 64));
  AtomrBuffer *d64 = keep (o, buffer (f, ATOMR_DTYPE_F64, 4));
  AtomrBuffer *d16 = keep (o, buffer (f, ATOMR_DTYPE_F16, 8));

  o->csr = atomr_sparse_matrix_new_csr (4, 4, 4, i, j, v, &error);
  g_assert_no_error (error);
  o->coo = atomr_sparse_matrix_new_coo (4, 4, 4, j, j, v, &error);
  g_assert_no_error (error);
  o->bsr = atomr_sparse_matrix_new_bsr (4, 4, 2, 2, i, j, v, &error);
  g_assert_no_error (error);
  o->ell = atomr_sparse_matrix_new_blocked_ell (4, 4, 2, 2, j, v, &error);
  g_assert_no_error (error);
  o->rect = atomr_sparse_matrix_new_csr (4, 3, 3, i, j, v, &error);
  g_assert_no_error (error);
  o->f64 = atomr_sparse_matrix_new_csr (4, 4, 4, i, j, v64, &error);
  g_assert_no_error (error);
  o->vec = atomr_sparse_vector_new (4, 4, j, v, &error);
  g_assert_no_error (error);
  o->vec16 = atomr_sparse_vector_new (4, 4, j, v16, &error);
  g_assert_no_error (error);
  o->v4 = view (d, 4, -1);
  o->v4b = view (d2, 4, -1);
  o->v3 = view (d3, 3, -1);
  o->v4_f64 = view (d64, 4, -1);
  o->v4_of_values = view (v, 4, -1);
  {
    gint64 shape[1] = { 4 }, strides[1] = { 2 };
    o->v8_strided = atomr_tensor_new_strided (d3, ATOMR_DTYPE_F32, 0, shape, 1, strides, 1, &error);
    g_assert_no_error (error);
  }
  o->m4x2 = view (d, 4, 2);
  o->m4x3_values = view (v, 4, 3);
  o->m4x4 = view (d2, 4, 4);
  o->m4x2b = view (d2, 4, 2);
  o->m3x2 = view (d3, 3, 2);
  o->m2x4 = view (d3, 2, 4);
  o->m4x2_f16 = view (d16, 4, 2);
  {
    gint64 s3[3] = { 3, 4, 2 }, s2[3] = { 2, 4, 2 };
    o->b3x4x2 = atomr_tensor_new (d2, s3, 3, &error);
    g_assert_no_error (error);
    o->c3x4x2 = atomr_tensor_new (d3, s3, 3, &error);
    g_assert_no_error (error);
    o->c2x4x2 = atomr_tensor_new (d, s2, 3, &error);
    g_assert_no_error (error);
  }
}

static void
operands_clear (Operands *o)
{
  GObject **all[] = {
    (GObject **) &o->csr, (GObject **) &o->coo, (GObject **) &o->bsr, (GObject **) &o->ell,
    (GObject **) &o->rect, (GObject **) &o->f64, (GObject **) &o->vec, (GObject **) &o->vec16,
    (GObject **) &o->v4, (GObject **) &o->v4b, (GObject **) &o->v3, (GObject **) &o->v4_f64,
    (GObject **) &o->v8_strided, (GObject **) &o->v4_of_values, (GObject **) &o->m4x2,
    (GObject **) &o->m4x2b, (GObject **) &o->m3x2, (GObject **) &o->m2x4, (GObject **) &o->b3x4x2,
    (GObject **) &o->c3x4x2, (GObject **) &o->c2x4x2, (GObject **) &o->m4x2_f16,
    (GObject **) &o->m4x3_values, (GObject **) &o->m4x4,
  };
  for (guint k = 0; k < G_N_ELEMENTS (all); k++)
    g_clear_object (all[k]);
  for (guint k = 0; k < o->n_buffers; k++)
    g_assert_finalize_object (o->buffers[k]);
}

#define NN ATOMR_TRANSPOSE_N
#define TT ATOMR_TRANSPOSE_T
#define LOWER ATOMR_FILL_MODE_LOWER
#define NONUNIT ATOMR_DIAG_NON_UNIT

typedef void (*DenseCase) (Fixture *f, Operands *o, GAsyncReadyCallback cb, gpointer ud);
#define DCASE(name, body) \
  static void name (Fixture *f, Operands *o, GAsyncReadyCallback cb, gpointer ud) { body; }

DCASE (spmv_x_length, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->rect, o->v4, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_y_length, atomr_sparse_actor_spmv_async (f->actor, TT, 1, o->rect, o->v4, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_strided, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, o->v8_strided, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_dtype, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, o->v4_f64, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_rank, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, o->m4x2, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_alias, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, o->v4, 0, o->v4, NULL, cb, ud))
DCASE (spmv_alias_a, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, o->v4, 0, o->v4_of_values, NULL, cb, ud))
DCASE (spmv_ell, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->ell, o->v4, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_op, atomr_sparse_actor_spmv_async (f->actor, 5, 1, o->csr, o->v4, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_null_x, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, NULL, 0, o->v4b, NULL, cb, ud))
DCASE (spmv_ok, atomr_sparse_actor_spmv_async (f->actor, NN, 1, o->csr, o->v4, 0, o->v4b, NULL, cb, ud))
DCASE (spmm_b_shape, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->csr, o->m3x2, 0, o->m4x2b, NULL, cb, ud))
DCASE (spmm_c_shape, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->csr, o->m4x2, 0, o->m3x2, NULL, cb, ud))
DCASE (spmm_batch_mismatch, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->csr, o->b3x4x2, 0, o->c2x4x2, NULL, cb, ud))
DCASE (spmm_batch_bsr, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->bsr, o->b3x4x2, 0, o->c3x4x2, NULL, cb, ud))
DCASE (spmm_alias, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->csr, o->m4x2, 0, o->m4x2, NULL, cb, ud))
DCASE (spmm_dtype, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->csr, o->m4x2_f16, 0, o->m4x2b, NULL, cb, ud))
DCASE (spmm_ok, atomr_sparse_actor_spmm_async (f->actor, NN, TT, 1, o->csr, o->m2x4, 0, o->m4x2b, NULL, cb, ud))
DCASE (spmm_batch_ok, atomr_sparse_actor_spmm_async (f->actor, NN, NN, 1, o->csr, o->b3x4x2, 0, o->c3x4x2, NULL, cb, ud))
DCASE (spsv_square, atomr_sparse_actor_spsv_async (f->actor, NN, LOWER, NONUNIT, 1, o->rect, o->v4, o->v4b, NULL, cb, ud))
DCASE (spsv_fill, atomr_sparse_actor_spsv_async (f->actor, NN, 7, NONUNIT, 1, o->csr, o->v4, o->v4b, NULL, cb, ud))
DCASE (spsv_diag, atomr_sparse_actor_spsv_async (f->actor, NN, LOWER, 9, 1, o->csr, o->v4, o->v4b, NULL, cb, ud))
DCASE (spsv_bsr, atomr_sparse_actor_spsv_async (f->actor, NN, LOWER, NONUNIT, 1, o->bsr, o->v4, o->v4b, NULL, cb, ud))
DCASE (spsv_ok, atomr_sparse_actor_spsv_async (f->actor, NN, LOWER, NONUNIT, 1, o->coo, o->v4, o->v4b, NULL, cb, ud))
DCASE (spsm_b_shape, atomr_sparse_actor_spsm_async (f->actor, NN, NN, LOWER, NONUNIT, 1, o->csr, o->m3x2, o->m4x2b, NULL, cb, ud))
DCASE (spsm_ok, atomr_sparse_actor_spsm_async (f->actor, NN, NN, LOWER, NONUNIT, 1, o->csr, o->m4x2, o->m4x2b, NULL, cb, ud))
DCASE (sddmm_coo, atomr_sparse_actor_sddmm_async (f->actor, NN, NN, 1, o->m4x2, o->m2x4, 0, o->coo, NULL, cb, ud))
DCASE (sddmm_b_shape, atomr_sparse_actor_sddmm_async (f->actor, NN, NN, 1, o->m4x2, o->m3x2, 0, o->csr, NULL, cb, ud))
DCASE (sddmm_ok, atomr_sparse_actor_sddmm_async (f->actor, NN, NN, 1, o->m4x2, o->m2x4, 0, o->csr, NULL, cb, ud))
DCASE (spgemm_coo, atomr_sparse_actor_spgemm_async (f->actor, 1, o->coo, o->csr, NULL, cb, ud))
DCASE (spgemm_shape, atomr_sparse_actor_spgemm_async (f->actor, 1, o->rect, o->csr, NULL, cb, ud))
DCASE (spgemm_dtype, atomr_sparse_actor_spgemm_async (f->actor, 1, o->csr, o->f64, NULL, cb, ud))
DCASE (spgemm_ok, atomr_sparse_actor_spgemm_async (f->actor, 1, o->csr, o->csr, NULL, cb, ud))
DCASE (to_dense_shape, atomr_sparse_actor_sparse_to_dense_async (f->actor, o->csr, o->m4x2, NULL, cb, ud))
DCASE (to_dense_alias, atomr_sparse_actor_sparse_to_dense_async (f->actor, o->rect, o->m4x3_values, NULL, cb, ud))
DCASE (to_dense_ell, atomr_sparse_actor_sparse_to_dense_async (f->actor, o->ell, o->m4x4, NULL, cb, ud))
DCASE (to_dense_ok, atomr_sparse_actor_sparse_to_dense_async (f->actor, o->coo, o->m4x4, NULL, cb, ud))
DCASE (to_sparse_format, atomr_sparse_actor_dense_to_sparse_async (f->actor, o->m4x2, ATOMR_SPARSE_FORMAT_BSR, ATOMR_DTYPE_I32, NULL, cb, ud))
DCASE (to_sparse_index, atomr_sparse_actor_dense_to_sparse_async (f->actor, o->m4x2, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_U32, NULL, cb, ud))
DCASE (to_sparse_ok, atomr_sparse_actor_dense_to_sparse_async (f->actor, o->m4x2, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_I64, NULL, cb, ud))
DCASE (gather_length, atomr_sparse_actor_gather_async (f->actor, o->v3, o->vec, NULL, cb, ud))
DCASE (scatter_alias, atomr_sparse_actor_scatter_async (f->actor, o->vec, o->v4_of_values, NULL, cb, ud))
DCASE (axpby_f16, atomr_sparse_actor_axpby_async (f->actor, 1, o->vec16, 1, o->v4, NULL, cb, ud))
DCASE (axpby_bare, atomr_sparse_actor_axpby_async (f->actor, 1, NULL, 1, o->v4, NULL, cb, ud))
DCASE (scale_null, atomr_sparse_actor_scale_async (f->actor, 2, NULL, NULL, cb, ud))
DCASE (scale_ok, atomr_sparse_actor_scale_async (f->actor, 2, o->csr, NULL, cb, ud))
DCASE (axpby_ok, atomr_sparse_actor_axpby_async (f->actor, 2, o->vec, 1, o->v4, NULL, cb, ud))

static void
test_dense_validation (Fixture *f, gconstpointer data)
{
  struct {
    const gchar *name;
    DenseCase    func;
    gint         code;
    const gchar *needle;
  } cases[] = {
    { "spmv_x_length", spmv_x_length, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: x has 4 elements; the operation needs 3" },
    { "spmv_y_length", spmv_y_length, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: y has 4 elements; the operation needs 3" },
    { "spmv_strided", spmv_strided, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: x has stride 2; cuSPARSE dense vectors must be contiguous" },
    { "spmv_dtype", spmv_dtype, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: x is f64; the operation needs f32" },
    { "spmv_rank", spmv_rank, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: x must be a vector (1 dimension), not of rank 2" },
    { "spmv_alias", spmv_alias, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: y shares memory with x" },
    { "spmv_alias_a", spmv_alias_a, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: y shares memory with a" },
    { "spmv_ell", spmv_ell, ATOMR_ERROR_NOT_SUPPORTED, "spmv: the matrix is blocked-ell" },
    { "spmv_op", spmv_op, ATOMR_ERROR_INVALID_ARGUMENT, "op_a" },
    { "spmv_null_x", spmv_null_x, ATOMR_ERROR_INVALID_ARGUMENT, "spmv: x is not a tensor" },
    { "spmv_ok", spmv_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: spmv needs a CUDA device" },
    { "spmm_b_shape", spmm_b_shape, ATOMR_ERROR_INVALID_ARGUMENT, "spmm: b is 3 × 2; the operation needs 4 × 2" },
    { "spmm_c_shape", spmm_c_shape, ATOMR_ERROR_INVALID_ARGUMENT, "spmm: c is 3 × 2; the operation needs 4 × 2" },
    { "spmm_batch_mismatch", spmm_batch_mismatch, ATOMR_ERROR_INVALID_ARGUMENT, "spmm: b is a batch of 3 and c of 2" },
    { "spmm_batch_bsr", spmm_batch_bsr, ATOMR_ERROR_NOT_SUPPORTED, "takes CSR or COO for a batch" },
    { "spmm_alias", spmm_alias, ATOMR_ERROR_INVALID_ARGUMENT, "spmm: c shares memory with b" },
    { "spmm_dtype", spmm_dtype, ATOMR_ERROR_INVALID_ARGUMENT, "spmm: b is f16; the operation needs f32" },
    { "spmm_ok", spmm_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: spmm needs a CUDA device" },
    { "spmm_batch_ok", spmm_batch_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: spmm needs a CUDA device" },
    { "spsv_square", spsv_square, ATOMR_ERROR_INVALID_ARGUMENT, "spsv: a is 4 × 3; a triangular solve needs a square matrix" },
    { "spsv_fill", spsv_fill, ATOMR_ERROR_INVALID_ARGUMENT, "fill" },
    { "spsv_diag", spsv_diag, ATOMR_ERROR_INVALID_ARGUMENT, "diag" },
    { "spsv_bsr", spsv_bsr, ATOMR_ERROR_NOT_SUPPORTED, "spsv: the matrix is bsr" },
    { "spsv_ok", spsv_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: spsv needs a CUDA device" },
    { "spsm_b_shape", spsm_b_shape, ATOMR_ERROR_INVALID_ARGUMENT, "spsm: b is 3 × 2; the operation needs 4 × 2" },
    { "spsm_ok", spsm_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: spsm needs a CUDA device" },
    { "sddmm_coo", sddmm_coo, ATOMR_ERROR_NOT_SUPPORTED, "sddmm: the matrix is coo" },
    { "sddmm_b_shape", sddmm_b_shape, ATOMR_ERROR_INVALID_ARGUMENT, "sddmm: b is 3 × 2; the operation needs 2 × 4" },
    { "sddmm_ok", sddmm_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: sddmm needs a CUDA device" },
    { "spgemm_coo", spgemm_coo, ATOMR_ERROR_NOT_SUPPORTED, "spgemm: the matrix is coo" },
    { "spgemm_shape", spgemm_shape, ATOMR_ERROR_INVALID_ARGUMENT, "spgemm: a has 3 columns but b has 4 rows" },
    { "spgemm_dtype", spgemm_dtype, ATOMR_ERROR_INVALID_ARGUMENT, "spgemm: a is f32/i32 but b is f64/i32" },
    { "spgemm_ok", spgemm_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: spgemm needs a CUDA device" },
    { "to_dense_shape", to_dense_shape, ATOMR_ERROR_INVALID_ARGUMENT, "sparse-to-dense: dense is 4 × 2; the operation needs 4 × 4" },
    { "to_dense_alias", to_dense_alias, ATOMR_ERROR_INVALID_ARGUMENT, "sparse-to-dense: dense shares memory with a" },
    { "to_dense_ell", to_dense_ell, ATOMR_ERROR_NOT_SUPPORTED, "sparse-to-dense: the matrix is blocked-ell" },
    { "to_dense_ok", to_dense_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: sparse-to-dense needs a CUDA device" },
    { "to_sparse_format", to_sparse_format, ATOMR_ERROR_NOT_SUPPORTED, "the output can be CSR, CSC or COO" },
    { "to_sparse_index", to_sparse_index, ATOMR_ERROR_INVALID_ARGUMENT, "index dtype u32; it must be i32 or i64" },
    { "to_sparse_ok", to_sparse_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: dense-to-sparse needs a CUDA device" },
    { "gather_length", gather_length, ATOMR_ERROR_INVALID_ARGUMENT, "gather: y has 3 elements; the operation needs 4" },
    { "scatter_alias", scatter_alias, ATOMR_ERROR_INVALID_ARGUMENT, "scatter: y shares memory with x" },
    { "axpby_f16", axpby_f16, ATOMR_ERROR_NOT_SUPPORTED, "axpby: x is f16" },
    { "axpby_bare", axpby_bare, ATOMR_ERROR_INVALID_ARGUMENT, "axpby: x must be an AtomrSparseVector (got NULL)" },
    { "scale_null", scale_null, ATOMR_ERROR_INVALID_ARGUMENT, "scale: matrix must be an AtomrSparseMatrix (got NULL)" },
    { "scale_ok", scale_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: scale needs a CUDA device" },
    { "axpby_ok", axpby_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuSPARSE: axpby needs a CUDA device" },
  };
  /* Fresh operands for every case: a request that fails on the host
   * device at enqueue would fail the later readers of its outputs with a
   * dependency error (errors travel along dependencies). */
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      Operands o = { 0 };
      GAsyncResult *result = NULL;
      GError *error = NULL;

      operands_init (f, &o);
      cases[k].func (f, &o, store_result, &result);
      wait_for (&result);
      g_assert_false (atomr_reply_propagate_boolean (result, &error));
      g_test_message ("%s: %s", cases[k].name, error ? error->message : "(no error)");
      assert_error_contains (error, cases[k].code, cases[k].needle);
      g_error_free (error);
      g_object_unref (result);
      operands_clear (&o);
    }

  /* scale and SDDMM rewrite values in place: later solves must know */
  {
    Operands o = { 0 };
    GAsyncResult *r1 = NULL, *r2 = NULL;
    guint serial;

    operands_init (f, &o);
    serial = atomr_sparse_matrix_get_values_serial (o.csr);
    sddmm_ok (f, &o, store_result, &r1);
    scale_ok (f, &o, store_result, &r2);
    wait_for (&r1);
    wait_for (&r2);
    g_assert_cmpuint (atomr_sparse_matrix_get_values_serial (o.csr), ==, serial + 2);
    g_object_unref (r1);
    g_object_unref (r2);
    operands_clear (&o);
  }
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/sparse/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("new/csr-checks", test_new_csr_checks);
  ADD ("new/other-formats", test_new_other_formats);
  ADD ("upload/csr", test_upload_csr);
  ADD ("upload/empty", test_upload_empty);
  ADD ("upload/i64", test_upload_i64);
  ADD ("upload/coo-sorts", test_upload_coo_sorts);
  ADD ("upload/coo-rejects", test_upload_coo_rejects);
  ADD ("upload/blocked", test_upload_blocked);
  ADD ("actor/check", test_check_operation);
  ADD ("actor/validation", test_operation_validation);
  ADD ("actor/convert-blocks-validation", test_convert_blocks_validation);
  ADD ("plans-and-values", test_plans_and_values);
  ADD ("bare-objects", test_bare_objects);
  ADD ("vectors", test_vectors);
  ADD ("nothing-mapped", test_nothing_mapped);
  ADD ("actor/dense-validation", test_dense_validation);
#undef ADD
  return g_test_run ();
}
