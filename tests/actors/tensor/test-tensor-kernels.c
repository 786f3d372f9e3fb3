/* test-tensor-kernels.c — every kernel source the Tensor actor generates
 * compiles with NVRTC for sm_90 (no GPU needed), and names the kernels
 * the actor loads
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "actors/tensor/atomr-tensor-kernels-private.h"

static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };

static gboolean
have_nvrtc (void)
{
  g_autofree gchar *version = atomr_nvrtc_get_version (NULL);
  return version != NULL;
}

/* The PTX (sm_90) of @source, "" when NVRTC gave a cubin only; compiled
 * once per distinct source (the checks below read the same PTX). */
static GHashTable *ptx_cache;

static const gchar *
ptx_for (const gchar *source)
{
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;
  GBytes *ptx;
  gchar *text;

  if (ptx_cache == NULL)
    ptx_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  text = g_hash_table_lookup (ptx_cache, source);
  if (text != NULL)
    return text;
  options = atomr_compile_options_new ();
  atomr_compile_options_set_arch (options, "sm_90");
  module = atomr_nvrtc_compile (source, "atomr-tensor.cu", options, NULL, &error);
  if (module == NULL)
    g_error ("%s\n---\n%s", error->message, source);
  ptx = atomr_module_get_ptx (module);
  if (ptx != NULL)
    text = g_strndup (g_bytes_get_data (ptx, NULL), g_bytes_get_size (ptx));
  else
    {
      g_assert_nonnull (atomr_module_get_cubin (module));
      text = g_strdup ("");
    }
  g_hash_table_insert (ptx_cache, g_strdup (source), text);
  return text;
}

/* The PTX of @kernel's body in @source (NULL for a cubin only). */
static gchar *
kernel_ptx (const gchar *source, const gchar *kernel)
{
  const gchar *text = ptx_for (source);
  g_autofree gchar *entry = g_strdup_printf (".entry %s(", kernel);
  const gchar *body, *next;

  if (*text == '\0')
    return NULL;
  body = strstr (text, entry);
  if (body == NULL)
    g_error ("PTX lacks %s", entry);
  next = strstr (body + 1, ".entry ");
  return next ? g_strndup (body, next - body) : g_strdup (body);
}

static void
compile (const gchar *source, const gchar *kernel, const gchar *kernel2)
{
  g_free (kernel_ptx (source, kernel));
  if (kernel2 != NULL)
    g_free (kernel_ptx (source, kernel2));
}

/* Whether @line is a 16-byte global load or store (@op "ld" or "st"):
 * four 4-byte lanes or two 8-byte ones. */
static gboolean
is_vec16 (const gchar *line, const gchar *op)
{
  g_autofree gchar *prefix = g_strdup_printf ("%s.global.", op);
  const gchar *p = strstr (line, prefix);

  if (p == NULL)
    return FALSE;
  return strstr (p, ".v4.u32") || strstr (p, ".v4.f32") || strstr (p, ".v4.b32") || strstr (p, ".v4.s32") ||
         strstr (p, ".v2.u64") || strstr (p, ".v2.f64") || strstr (p, ".v2.b64") || strstr (p, ".v2.s64");
}

/* The PTX (sm_90) of @kernel in @source moves A with 16-byte loads and,
 * with @store, writes with 16-byte stores: the vector kernels stay
 * vector kernels. */
static void
assert_vec16 (const gchar *source, const gchar *kernel, gboolean store)
{
  g_autofree gchar *chunk = kernel_ptx (source, kernel);
  g_auto(GStrv) lines = NULL;
  gboolean ld = FALSE, st = FALSE;

  if (chunk == NULL)
    return;   /* a cubin only: nothing to read */
  lines = g_strsplit (chunk, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      ld = ld || is_vec16 (lines[i], "ld");
      st = st || is_vec16 (lines[i], "st");
    }
  if (!ld || (store && !st))
    {
      for (guint i = 0; lines[i] != NULL; i++)
        if (strstr (lines[i], ".global") != NULL)
          g_printerr ("%s\n", lines[i]);   /* what it has instead */
      g_error ("%s: no 16-byte global %s in its PTX", kernel, !ld ? "load" : "store");
    }
}

/* @kernel's PTX in @source contains @needle. */
static void
assert_ptx_has (const gchar *source, const gchar *kernel, const gchar *needle)
{
  g_autofree gchar *chunk = kernel_ptx (source, kernel);

  if (chunk != NULL && strstr (chunk, needle) == NULL)
    g_error ("%s: no %s in its PTX", kernel, needle);
}

/* Each unary expression once, in float or double math alternately; each
 * dtype's loads and stores once with a binary and a trinary operation. */
static void
test_elementwise (void)
{
  if (!have_nvrtc ())
    {
      g_test_skip ("NVRTC is not available");
      return;
    }
  for (gint op = 0; op <= ATOMR_TENSOR_UNARY_SIGMOID; op++)
    {
      g_autofree gchar *perm = atomr_tensor_kernel_source (FALSE, op % 2 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32,
                                                           3, 3, op % 3 != 0, op, 0, -1, 0, -1, 0);
      compile (perm, "atomr_tensor_elementwise", "atomr_tensor_transpose");
      compile (perm, "atomr_tensor_transpose2", NULL);
    }
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      /* both transposes in every dtype (the paired one loads 2-element vectors) */
      g_autofree gchar *perm = atomr_tensor_kernel_source (FALSE, dtypes[d], 3, 3, TRUE,
                                                           ATOMR_TENSOR_UNARY_IDENTITY, 0, -1, 0, -1, 0);
      compile (perm, "atomr_tensor_transpose", "atomr_tensor_transpose2");
      /* the paired one stores whole pairs (16 bytes for f64) */
      if (dtypes[d] == ATOMR_DTYPE_F64)
        assert_vec16 (perm, "atomr_tensor_transpose2", TRUE);
      /* the 16-byte one for 2- and 4-byte real dtypes only */
      if (dtypes[d] == ATOMR_DTYPE_F32 || dtypes[d] == ATOMR_DTYPE_F16 || dtypes[d] == ATOMR_DTYPE_BF16)
        {
          compile (perm, "atomr_tensor_transpose4", NULL);
          assert_vec16 (perm, "atomr_tensor_transpose4", TRUE);
        }
      else
        g_assert_null (strstr (perm, "atomr_tensor_transpose4"));
    }
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autofree gchar *bin = atomr_tensor_kernel_source (FALSE, dtypes[d], 1 + d, 1 + d, d % 2,
                                                          ATOMR_TENSOR_UNARY_TANH, ATOMR_TENSOR_UNARY_RELU,
                                                          d % (ATOMR_TENSOR_BINARY_MIN + 1), 0, -1, 0);
      g_autofree gchar *tri = atomr_tensor_kernel_source (FALSE, dtypes[d], 6 - d, 6 - d, TRUE,
                                                          ATOMR_TENSOR_UNARY_EXP, ATOMR_TENSOR_UNARY_ABS,
                                                          (d + 1) % (ATOMR_TENSOR_BINARY_MIN + 1),
                                                          ATOMR_TENSOR_UNARY_SIGMOID,
                                                          (d + 2) % (ATOMR_TENSOR_BINARY_MIN + 1), 0);
      compile (bin, "atomr_tensor_elementwise", NULL);
      compile (tri, "atomr_tensor_elementwise", NULL);
    }
}

/* Each reduction operator once (f32 or f64 alternately), every dtype's
 * sum and contraction. */
static void
test_reduce (void)
{
  if (!have_nvrtc ())
    {
      g_test_skip ("NVRTC is not available");
      return;
    }
  for (gint op = 0; op <= ATOMR_TENSOR_REDUCE_NORM_INF; op++)
    {
      g_autofree gchar *src = atomr_tensor_kernel_source (TRUE, op % 2 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32,
                                                          1 + op % 3, 2 + op % 3 * 2, op % 2, 0, 0, -1, 0, -1, op);
      compile (src, "atomr_tensor_reduce_cols", "atomr_tensor_reduce_rows");
      /* the 16-byte kernels with every operator */
      compile (src, "atomr_tensor_reduce_rows_vec", "atomr_tensor_reduce_rows_blk");
      compile (src, "atomr_tensor_reduce_cols_vec", "atomr_tensor_reduce_cols_vec_part");
    }
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autofree gchar *contract = atomr_tensor_kernel_source (TRUE, dtypes[d], 2, 3, d % 2, 0, 0, 0, 0, -1,
                                                               ATOMR_TENSOR_REDUCE_SUM);
      compile (contract, "atomr_tensor_reduce_cols", "atomr_tensor_reduce_rows");
      /* the two passes of tall column reductions */
      compile (contract, "atomr_tensor_reduce_cols_part", "atomr_tensor_reduce_cols_fin");
      {
        /* every dtype's 16-byte reduction kernels (VW = 16 / element size) */
        g_autofree gchar *sum = atomr_tensor_kernel_source (TRUE, dtypes[d], 1 + d % 2, 2 + d % 3, d % 2, 0, 0, -1,
                                                            0, -1, d % 2 ? ATOMR_TENSOR_REDUCE_MEAN
                                                                         : ATOMR_TENSOR_REDUCE_SUM);
        compile (sum, "atomr_tensor_reduce_rows_vec", "atomr_tensor_reduce_rows_blk");
        compile (sum, "atomr_tensor_reduce_cols_vec", "atomr_tensor_reduce_cols_vec_part");
        assert_vec16 (sum, "atomr_tensor_reduce_rows_blk", FALSE);
        assert_vec16 (sum, "atomr_tensor_reduce_rows_vec", FALSE);
        assert_vec16 (sum, "atomr_tensor_reduce_cols_vec_part", FALSE);
        /* the column variants a and b: 16-byte loads; a counts finished
         * blocks with an atomic and reads the partials from L2 */
        compile (sum, "atomr_tensor_reduce_cols_split", "atomr_tensor_reduce_cols_wide_part");
        assert_vec16 (sum, "atomr_tensor_reduce_cols_split", FALSE);
        assert_vec16 (sum, "atomr_tensor_reduce_cols_wide_part", FALSE);
        assert_ptx_has (sum, "atomr_tensor_reduce_cols_split", "atom.global.add.u32");
        assert_ptx_has (sum, "atomr_tensor_reduce_cols_split", "ld.global.cg.");
        assert_ptx_has (sum, "atomr_tensor_reduce_cols_split", "membar.gl");
      }
      if (dtypes[d] == ATOMR_DTYPE_F16 || dtypes[d] == ATOMR_DTYPE_BF16)
        {
          g_autofree gchar *norm = atomr_tensor_kernel_source (TRUE, dtypes[d], 1, 2, TRUE, 0, 0, -1, 0, -1,
                                                               ATOMR_TENSOR_REDUCE_NORM2);
          compile (norm, "atomr_tensor_reduce_cols", "atomr_tensor_reduce_rows");
        }
    }
}

/* Complex dtypes: the struct and its operators, every unary op with a
 * complex meaning, add and mul, the orderless reductions, contractions,
 * both reduction passes, and the transposes (c128 has no paired one). */
static void
test_complex (void)
{
  static const AtomrDtype cdt[] = { ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };
  static const gint unary[] = {
    ATOMR_TENSOR_UNARY_IDENTITY, ATOMR_TENSOR_UNARY_NEG, ATOMR_TENSOR_UNARY_CONJ, ATOMR_TENSOR_UNARY_ABS,
    ATOMR_TENSOR_UNARY_SQRT, ATOMR_TENSOR_UNARY_EXP, ATOMR_TENSOR_UNARY_LOG, ATOMR_TENSOR_UNARY_SIN,
    ATOMR_TENSOR_UNARY_COS,
  };
  static const gint reduce[] = {
    ATOMR_TENSOR_REDUCE_SUM, ATOMR_TENSOR_REDUCE_PROD, ATOMR_TENSOR_REDUCE_MEAN, ATOMR_TENSOR_REDUCE_NORM1,
    ATOMR_TENSOR_REDUCE_NORM2, ATOMR_TENSOR_REDUCE_NORM_INF,
  };

  if (!have_nvrtc ())
    {
      g_test_skip ("NVRTC is not available");
      return;
    }
  for (guint d = 0; d < G_N_ELEMENTS (cdt); d++)
    {
      g_autofree gchar *perm = atomr_tensor_kernel_source (FALSE, cdt[d], 3, 3, TRUE, ATOMR_TENSOR_UNARY_CONJ,
                                                           0, -1, 0, -1, 0);
      g_autofree gchar *contract = atomr_tensor_kernel_source (TRUE, cdt[d], 2, 3, TRUE, 0, 0, 0, 0, -1,
                                                               ATOMR_TENSOR_REDUCE_SUM);

      compile (perm, "atomr_tensor_elementwise", "atomr_tensor_transpose");
      if (cdt[d] == ATOMR_DTYPE_C64)
        compile (perm, "atomr_tensor_transpose2", NULL);
      else
        g_assert_null (strstr (perm, "atomr_tensor_transpose2"));
      compile (contract, "atomr_tensor_reduce_cols", "atomr_tensor_reduce_rows");
      compile (contract, "atomr_tensor_reduce_cols_part", "atomr_tensor_reduce_cols_fin");
      for (guint u = 0; u < G_N_ELEMENTS (unary); u++)
        {
          g_autofree gchar *tri = atomr_tensor_kernel_source (FALSE, cdt[d], 2, 2, u % 2, unary[u],
                                                              unary[(u + 1) % G_N_ELEMENTS (unary)],
                                                              u % 2 ? ATOMR_TENSOR_BINARY_MUL : ATOMR_TENSOR_BINARY_ADD,
                                                              unary[(u + 2) % G_N_ELEMENTS (unary)],
                                                              u % 2 ? ATOMR_TENSOR_BINARY_ADD : ATOMR_TENSOR_BINARY_MUL, 0);
          compile (tri, "atomr_tensor_elementwise", NULL);
        }
      for (guint k = 0; k < G_N_ELEMENTS (reduce); k++)
        {
          g_autofree gchar *src = atomr_tensor_kernel_source (TRUE, cdt[d], 1 + k % 2, 2 + k % 2, k % 2, 0, 0, -1,
                                                              0, -1, reduce[k]);
          compile (src, "atomr_tensor_reduce_cols", "atomr_tensor_reduce_rows");
          compile (src, "atomr_tensor_reduce_rows_vec", "atomr_tensor_reduce_cols_vec");
          compile (src, "atomr_tensor_reduce_cols_split", "atomr_tensor_reduce_cols_wide_part");
        }
      g_assert_null (strstr (perm, "atomr_tensor_transpose4"));
    }
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor-kernels/elementwise", test_elementwise);
  g_test_add_func ("/tensor-kernels/reduce", test_reduce);
  g_test_add_func ("/tensor-kernels/complex", test_complex);
  ret = g_test_run ();
  g_clear_pointer (&ptx_cache, g_hash_table_unref);
  return ret;
}
