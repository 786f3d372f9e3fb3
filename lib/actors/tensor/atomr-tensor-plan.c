/* atomr-tensor-plan.c — mode parsing, loop planning and the plan cache
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "core/atomr-error.h"
#include "actors/tensor/atomr-tensor-plan-private.h"

static gboolean
is_mode (gchar c)
{
  return g_ascii_isalpha (c);
}

static const gchar *
operand_label (guint i, gchar *buf, gsize len)
{
  if (i == 0)
    return "output";
  g_snprintf (buf, len, "input %u", i);
  return buf;
}

gboolean
atomr_mode_spec_parse (const gchar   *op,
                       const gchar   *spec,
                       guint          n_inputs,
                       AtomrModeSpec *out,
                       GError       **error)
{
  guint operand = 1;
  guint len = 0;
  gboolean seen_arrow = FALSE;
  gchar label[32];

  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (n_inputs >= 1 && n_inputs <= ATOMR_PLAN_MAX_INPUTS, FALSE);
  memset (out, 0, sizeof *out);
  out->n_inputs = n_inputs;

  if (spec == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: modes is NULL (expected e.g. \"ab->ba\")", op);
      return FALSE;
    }

  for (const gchar *p = spec; ; p++)
    {
      gchar c = *p;

      if (c == ' ')
        continue;
      if (c == ',' || (c == '-' && p[1] == '>') || c == '\0')
        {
          out->modes[operand][len] = '\0';
          if (c == ',' && (seen_arrow || operand == n_inputs))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s: modes \"%s\" has more than %u input%s", op, spec, n_inputs,
                           n_inputs == 1 ? "" : "s");
              return FALSE;
            }
          if (c == ',')
            {
              operand++;
              len = 0;
              continue;
            }
          if (c == '-')
            {
              if (seen_arrow)
                {
                  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                               "%s: modes \"%s\" has two \"->\"", op, spec);
                  return FALSE;
                }
              if (operand != n_inputs)
                {
                  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                               "%s: modes \"%s\" has %u input%s, expected %u", op, spec,
                               operand, operand == 1 ? "" : "s", n_inputs);
                  return FALSE;
                }
              seen_arrow = TRUE;
              operand = 0;
              len = 0;
              p++;
              continue;
            }
          /* end of string */
          if (!seen_arrow)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s: modes \"%s\" lacks \"->\" and the output modes", op, spec);
              return FALSE;
            }
          return TRUE;
        }
      if (!is_mode (c))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: modes \"%s\": character '%c' at %u is not a mode (a-z, A-Z)",
                       op, spec, g_ascii_isprint (c) ? c : '?', (guint) (p - spec));
          return FALSE;
        }
      if (len == ATOMR_PLAN_MAX_DIMS)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: modes \"%s\": the %s has more than %d modes", op, spec,
                       operand_label (operand, label, sizeof label), ATOMR_PLAN_MAX_DIMS);
          return FALSE;
        }
      if (memchr (out->modes[operand], c, len) != NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: modes \"%s\": the %s repeats mode '%c' (diagonals are not supported)",
                       op, spec, operand_label (operand, label, sizeof label), c);
          return FALSE;
        }
      out->modes[operand][len++] = c;
    }
}

static gint
find_mode (const gchar *modes, gchar m)
{
  const gchar *p = strchr (modes, m);
  return p ? (gint) (p - modes) : -1;
}

static gint64
abs64 (gint64 v)
{
  return v < 0 ? -v : v;
}

/* Sorts loops [begin, end) by decreasing |stride| of operand @key
 * (insertion sort: stable, at most 24 entries). */
static void
sort_loops (AtomrLoopPlan *plan, guint begin, guint end, guint key)
{
  for (guint i = begin + 1; i < end; i++)
    for (guint j = i; j > begin && abs64 (plan->stride[key][j - 1]) < abs64 (plan->stride[key][j]); j--)
      {
        gint64 t = plan->extent[j];
        plan->extent[j] = plan->extent[j - 1];
        plan->extent[j - 1] = t;
        for (guint o = 0; o < plan->n_operands; o++)
          {
            t = plan->stride[o][j];
            plan->stride[o][j] = plan->stride[o][j - 1];
            plan->stride[o][j - 1] = t;
          }
      }
}

/* Folds neighbours within [begin, end); returns the new end. */
static guint
fold_loops (AtomrLoopPlan *plan, guint begin, guint end)
{
  guint w = begin;

  for (guint r = begin; r < end; r++)
    {
      if (w > begin)
        {
          gboolean foldable = TRUE;

          for (guint o = 0; o < plan->n_operands && foldable; o++)
            foldable = plan->stride[o][w - 1] == plan->stride[o][r] * plan->extent[r];
          if (foldable)
            {
              plan->extent[w - 1] *= plan->extent[r];
              for (guint o = 0; o < plan->n_operands; o++)
                plan->stride[o][w - 1] = plan->stride[o][r];
              continue;
            }
        }
      plan->extent[w] = plan->extent[r];
      for (guint o = 0; o < plan->n_operands; o++)
        plan->stride[o][w] = plan->stride[o][r];
      w++;
    }
  return w;
}

gboolean
atomr_loop_plan_build (const gchar            *op,
                       const AtomrModeSpec    *spec,
                       const AtomrPlanOperand *operands,
                       const gchar * const    *names,
                       gboolean                reduce,
                       AtomrLoopPlan          *plan,
                       GError                **error)
{
  guint n_operands = spec->n_inputs + 1;
  AtomrLoopPlan p;
  gchar loop_modes[ATOMR_PLAN_MAX_LOOPS];
  guint n = 0, n_free;

  memset (&p, 0, sizeof p);
  p.n_operands = n_operands;

  for (guint o = 0; o < n_operands; o++)
    if (strlen (spec->modes[o]) != operands[o].n_dims)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%s: %s has %u dimension%s but its modes \"%s\" name %u", op, names[o],
                     operands[o].n_dims, operands[o].n_dims == 1 ? "" : "s",
                     spec->modes[o], (guint) strlen (spec->modes[o]));
        return FALSE;
      }

  /* output loops */
  for (guint d = 0; d < operands[0].n_dims; d++)
    {
      gchar m = spec->modes[0][d];
      gint64 extent = operands[0].shape[d];
      gboolean found = FALSE;

      if (operands[0].strides[d] == 0 && extent > 1)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: %s has stride 0 in mode '%c' of extent %" G_GINT64_FORMAT
                       " (a broadcast view cannot be written)", op, names[0], m, extent);
          return FALSE;
        }
      loop_modes[n] = m;
      p.extent[n] = extent;
      p.stride[0][n] = operands[0].strides[d];
      for (guint o = 1; o < n_operands; o++)
        {
          gint i = find_mode (spec->modes[o], m);
          gint64 e;

          if (i < 0)
            continue;
          found = TRUE;
          e = operands[o].shape[i];
          if (e != extent && e != 1)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s: mode '%c' has extent %" G_GINT64_FORMAT " in %s but %"
                           G_GINT64_FORMAT " in %s (only extent 1 broadcasts)", op, m, e,
                           names[o], extent, names[0]);
              return FALSE;
            }
          p.stride[o][n] = e == 1 ? 0 : operands[o].strides[i];
        }
      if (!found)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: output mode '%c' appears in no input", op, m);
          return FALSE;
        }
      n++;
    }
  n_free = n;

  /* reduced loops: input modes missing from the output */
  for (guint o = 1; o < n_operands; o++)
    for (guint d = 0; d < operands[o].n_dims; d++)
      {
        gchar m = spec->modes[o][d];
        gint64 extent = operands[o].shape[d];

        if (find_mode (spec->modes[0], m) >= 0 || memchr (loop_modes + n_free, m, n - n_free) != NULL)
          continue;
        if (!reduce)
          {
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "%s: mode '%c' of %s is not in the output \"%s\" (only reductions drop modes)",
                         op, m, names[o], spec->modes[0]);
            return FALSE;
          }
        loop_modes[n] = m;
        p.extent[n] = extent;
        for (guint q = 1; q < n_operands; q++)
          {
            gint i = find_mode (spec->modes[q], m);

            if (i < 0)
              continue;
            if (operands[q].shape[i] != extent)
              {
                g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                             "%s: reduced mode '%c' has extent %" G_GINT64_FORMAT " in %s but %"
                             G_GINT64_FORMAT " in %s", op, m, extent, names[o],
                             operands[q].shape[i], names[q]);
                return FALSE;
              }
            p.stride[q][n] = operands[q].strides[i];
          }
        n++;
      }

  p.n_out = 1;
  p.n_reduce = 1;
  for (guint i = 0; i < n; i++)
    {
      guint64 *count = i < n_free ? &p.n_out : &p.n_reduce;

      if (!g_uint64_checked_mul (count, *count, (guint64) p.extent[i]))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: the %s modes span more than 2^64 elements", op,
                       i < n_free ? "output" : "reduced");
          return FALSE;
        }
    }
  {
    guint64 total;

    /* the work, n_out × n_reduce, and every index fit 63 bits */
    if (!g_uint64_checked_mul (&total, p.n_out, p.n_reduce) || total > (guint64) G_MAXINT64)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%s: %" G_GUINT64_FORMAT " outputs × %" G_GUINT64_FORMAT
                     " reduced elements exceed 2^63", op, p.n_out, p.n_reduce);
        return FALSE;
      }
  }

  /* drop extent-1 loops (an empty operand keeps its zero extent) */
  {
    guint w = 0, w_free = 0;

    for (guint i = 0; i < n; i++)
      {
        if (p.extent[i] == 1)
          continue;
        p.extent[w] = p.extent[i];
        for (guint o = 0; o < n_operands; o++)
          p.stride[o][w] = p.stride[o][i];
        if (i < n_free)
          w_free++;
        w++;
      }
    n = w;
    n_free = w_free;
  }

  sort_loops (&p, 0, n_free, 0);
  sort_loops (&p, n_free, n, 1);
  {
    guint end_free = fold_loops (&p, 0, n_free);
    guint end_red;

    /* move the reduced loops down after folding the free ones */
    for (guint i = n_free; i < n; i++)
      {
        guint to = end_free + (i - n_free);
        p.extent[to] = p.extent[i];
        for (guint o = 0; o < n_operands; o++)
          p.stride[o][to] = p.stride[o][i];
      }
    n = end_free + (n - n_free);
    n_free = end_free;
    end_red = fold_loops (&p, n_free, n);
    n = end_red;
  }

  /* at least one output loop, so kernels always have one */
  if (n_free == 0)
    {
      for (guint i = n; i > 0; i--)
        {
          p.extent[i] = p.extent[i - 1];
          for (guint o = 0; o < n_operands; o++)
            p.stride[o][i] = p.stride[o][i - 1];
        }
      p.extent[0] = 1;
      for (guint o = 0; o < n_operands; o++)
        p.stride[o][0] = 0;
      n_free = 1;
      n++;
    }
  p.n_free = n_free;
  p.n_loops = n;

  p.a_inner = -1;
  {
    gint64 best = G_MAXINT64;
    for (guint i = 0; i < n_free; i++)
      if (p.stride[1][i] != 0 && abs64 (p.stride[1][i]) < best)
        {
          best = abs64 (p.stride[1][i]);
          p.a_inner = (gint) i;
        }
  }

  *plan = p;
  return TRUE;
}

void
atomr_loop_plan_offsets (const AtomrLoopPlan *plan,
                         guint64              index,
                         guint64              rindex,
                         gint64              *offsets)
{
  for (guint o = 0; o < plan->n_operands; o++)
    offsets[o] = 0;
  for (guint i = plan->n_free; i-- > 0; )
    {
      guint64 e = (guint64) plan->extent[i];
      guint64 c = e ? index % e : 0;
      index = e ? index / e : 0;
      for (guint o = 0; o < plan->n_operands; o++)
        offsets[o] += (gint64) c * plan->stride[o][i];
    }
  for (guint i = plan->n_loops; i-- > plan->n_free; )
    {
      guint64 e = (guint64) plan->extent[i];
      guint64 c = e ? rindex % e : 0;
      rindex = e ? rindex / e : 0;
      for (guint o = 0; o < plan->n_operands; o++)
        offsets[o] += (gint64) c * plan->stride[o][i];
    }
}

/* ------------------------------------------------------------------ */
/* Contractions as GEMMs                                                */

enum { G_BATCH, G_M, G_N, G_K, N_GROUPS };

typedef struct {
  guint  n;
  gchar  mode[ATOMR_PLAN_MAX_DIMS * 3];
  gint64 ext[ATOMR_PLAN_MAX_DIMS * 3];
  gint64 s[3][ATOMR_PLAN_MAX_DIMS * 3];   /* D, A, B */
} Group;

/* Sorts @g's modes by decreasing stride in operand @key (insertion sort). */
static void
group_sort (Group *g, guint key)
{
  for (guint i = 1; i < g->n; i++)
    for (guint j = i; j > 0 && g->s[key][j - 1] < g->s[key][j]; j--)
      {
        gchar m = g->mode[j];
        gint64 t = g->ext[j];

        g->mode[j] = g->mode[j - 1];
        g->mode[j - 1] = m;
        g->ext[j] = g->ext[j - 1];
        g->ext[j - 1] = t;
        for (guint o = 0; o < 3; o++)
          {
            t = g->s[o][j];
            g->s[o][j] = g->s[o][j - 1];
            g->s[o][j - 1] = t;
          }
      }
}

/* Whether @g walks operand @o as one loop in its current order; the
 * folded stride goes to @stride (0 for an empty group). */
static gboolean
group_folds (const Group *g, guint o, gint64 *stride)
{
  for (guint i = 0; i + 1 < g->n; i++)
    if (g->s[o][i] != g->s[o][i + 1] * g->ext[i + 1])
      return FALSE;
  *stride = g->n ? g->s[o][g->n - 1] : 0;
  return TRUE;
}

static gint64
group_extent (const Group *g)
{
  gint64 e = 1;

  for (guint i = 0; i < g->n; i++)
    e *= g->ext[i];
  return e;
}

/* One matrix operand (rows × cols with strides s_rows, s_cols) as
 * cuBLASLt takes it: column-major with op N (unit row stride) or stored
 * transposed with op T (unit column stride). */
static gboolean
matrix_layout (gint64 rows, gint64 cols, gint64 s_rows, gint64 s_cols, gboolean *trans, gint64 *ld)
{
  if (rows == 1 || s_rows == 1)
    {
      *trans = FALSE;
      *ld = cols > 1 ? s_cols : MAX (rows, 1);
      if (*ld >= MAX (rows, 1))
        return TRUE;
    }
  if (cols == 1 || s_cols == 1)
    {
      *trans = TRUE;
      *ld = rows > 1 ? s_rows : MAX (cols, 1);
      if (*ld >= MAX (cols, 1))
        return TRUE;
    }
  return FALSE;
}

gboolean
atomr_gemm_plan_build (const AtomrModeSpec    *spec,
                       const AtomrPlanOperand *operands,
                       AtomrGemmPlan          *plan,
                       gchar                  *why_buf,
                       gsize                   why_len)
{
  Group groups[N_GROUPS];
  gchar seen[ATOMR_PLAN_MAX_DIMS * 3 + 1] = { 0 };
  guint n_seen = 0;
  gint64 st[N_GROUPS][3], ext[N_GROUPS];
  static const gchar *group_names[N_GROUPS] = { "batch", "M", "N", "K" };

  g_return_val_if_fail (spec->n_inputs == 2, FALSE);
  memset (groups, 0, sizeof groups);
  memset (plan, 0, sizeof *plan);

  for (guint o = 0; o < 3; o++)
    for (guint d = 0; d < operands[o].n_dims; d++)
      {
        gchar m = spec->modes[o][d];
        gboolean in[3];
        gint64 e = 1, s[3] = { 0, 0, 0 };
        Group *g;

        if (operands[o].shape[d] == 0)
          {
            g_snprintf (why_buf, why_len, "mode '%c' is empty", m);
            return FALSE;
          }
        if (memchr (seen, m, n_seen) != NULL)
          continue;
        seen[n_seen++] = m;
        /* present in an operand: the mode with extent > 1 there */
        for (guint q = 0; q < 3; q++)
          {
            gint i = find_mode (spec->modes[q], m);

            in[q] = i >= 0 && operands[q].shape[i] > 1;
            if (in[q])
              {
                e = operands[q].shape[i];
                s[q] = operands[q].strides[i];
                if (s[q] < 0)
                  {
                    g_snprintf (why_buf, why_len, "mode '%c' has a negative stride in %s", m,
                                q == 0 ? "d" : q == 1 ? "a" : "b");
                    return FALSE;
                  }
              }
          }
        if (!in[0] && !in[1] && !in[2])
          continue;   /* extent 1 (or 0) everywhere */
        if (in[0] && in[1] && in[2])
          g = &groups[G_BATCH];
        else if (in[0] && in[1] && !in[2])
          g = &groups[G_M];
        else if (in[0] && !in[1] && in[2])
          g = &groups[G_N];
        else if (!in[0] && in[1] && in[2])
          g = &groups[G_K];
        else
          {
            g_snprintf (why_buf, why_len, "mode '%c' is in %s alone (%s)", m,
                        in[0] ? "d" : in[1] ? "a" : "b", in[0] ? "a broadcast" : "a reduction of one input");
            return FALSE;
          }
        g->mode[g->n] = m;
        g->ext[g->n] = e;
        for (guint q = 0; q < 3; q++)
          g->s[q][g->n] = s[q];
        g->n++;
      }

  /* D fixes the order of its groups; K follows A, else B */
  for (guint gi = 0; gi < N_GROUPS; gi++)
    {
      Group *g = &groups[gi];
      gboolean uses[3] = { gi != G_K, gi != G_N, gi != G_M };
      gboolean ok = TRUE;

      group_sort (g, gi == G_K ? 1 : 0);
      for (guint q = 0; q < 3 && ok; q++)
        ok = !uses[q] || group_folds (g, q, &st[gi][q]);
      if (!ok && gi == G_K)
        {
          group_sort (g, 2);
          ok = group_folds (g, 1, &st[gi][1]) && group_folds (g, 2, &st[gi][2]);
        }
      if (!ok)
        {
          g_snprintf (why_buf, why_len, "the %s modes \"%.*s\" do not fold into one stride",
                      group_names[gi], (gint) g->n, g->mode);
          return FALSE;
        }
      for (guint q = 0; q < 3; q++)
        if (!uses[q])
          st[gi][q] = 0;
      ext[gi] = group_extent (g);
    }

  {
    gint64 m = ext[G_M], n = ext[G_N];
    gint64 sxm, sxk, syk, syn, sxl, syl;

    if (m == 1 || st[G_M][0] == 1)
      plan->swap = FALSE;
    else if (n == 1 || st[G_N][0] == 1)
      plan->swap = TRUE;
    else
      {
        g_snprintf (why_buf, why_len, "d has no unit stride in its M or N modes");
        return FALSE;
      }
    if (!plan->swap)
      {
        plan->m = m;
        plan->n = n;
        plan->ldc = n > 1 ? st[G_N][0] : MAX (m, 1);
        sxm = st[G_M][1]; sxk = st[G_K][1]; sxl = st[G_BATCH][1];
        syk = st[G_K][2]; syn = st[G_N][2]; syl = st[G_BATCH][2];
      }
    else
      {
        plan->m = n;
        plan->n = m;
        plan->ldc = m > 1 ? st[G_M][0] : MAX (n, 1);
        sxm = st[G_N][2]; sxk = st[G_K][2]; sxl = st[G_BATCH][2];
        syk = st[G_K][1]; syn = st[G_M][1]; syl = st[G_BATCH][1];
      }
    if (plan->ldc < MAX (plan->m, 1))
      {
        g_snprintf (why_buf, why_len, "d's leading dimension %" G_GINT64_FORMAT " is below its %"
                    G_GINT64_FORMAT " rows", plan->ldc, plan->m);
        return FALSE;
      }
    plan->k = ext[G_K];
    plan->batch = ext[G_BATCH];
    /* shapes the generated kernels serve as well: no GEMM */
    if (plan->k == 1)
      {
        g_snprintf (why_buf, why_len, "no contracted mode (an outer product)");
        return FALSE;
      }
    if (plan->m == 1 && plan->n == 1)
      {
        g_snprintf (why_buf, why_len, "dot products (m = n = 1)");
        return FALSE;
      }
    if (!matrix_layout (plan->m, plan->k, sxm, sxk, &plan->trans_x, &plan->ldx) ||
        !matrix_layout (plan->k, plan->n, syk, syn, &plan->trans_y, &plan->ldy))
      {
        gboolean x_ok = matrix_layout (plan->m, plan->k, sxm, sxk, &plan->trans_x, &plan->ldx);

        g_snprintf (why_buf, why_len, "%s has no unit stride in its matrix modes",
                    x_ok == plan->swap ? "a" : "b");
        return FALSE;
      }
    if (plan->batch > G_MAXINT32)
      {
        g_snprintf (why_buf, why_len, "%" G_GINT64_FORMAT " batch matrices exceed 2^31", plan->batch);
        return FALSE;
      }
    plan->stride_x = plan->batch > 1 ? sxl : 0;
    plan->stride_y = plan->batch > 1 ? syl : 0;
    plan->stride_c = plan->batch > 1 ? st[G_BATCH][0] : 0;
  }
  return TRUE;
}

/* The operand @o (1: A, 2: B) laid out contiguously with its modes in the
 * order GEMM wants: batch, then M (A) or K (B), then K (A) or N (B);
 * batch, M and N in D's stride order, K in A's; extent-1 modes last. */
static void
packed_layout (const AtomrModeSpec    *spec,
               const AtomrPlanOperand *operands,
               guint                   o,
               gchar                  *modes,
               gint64                 *shape,
               gint64                 *strides)
{
  const gchar *own = spec->modes[o];
  guint n = (guint) strlen (own), w = 0;
  gint key[ATOMR_PLAN_MAX_DIMS];
  gint64 order[ATOMR_PLAN_MAX_DIMS];
  guint idx[ATOMR_PLAN_MAX_DIMS];

  for (guint d = 0; d < n; d++)
    {
      gchar m = own[d];
      gint id = find_mode (spec->modes[0], m), ia = find_mode (spec->modes[1], m),
           ib = find_mode (spec->modes[2], m);
      gboolean in_d = id >= 0 && operands[0].shape[id] > 1;
      gboolean in_a = ia >= 0 && operands[1].shape[ia] > 1;
      gboolean in_b = ib >= 0 && operands[2].shape[ib] > 1;

      idx[d] = d;
      if (operands[o].shape[d] <= 1)
        {
          key[d] = 3;            /* extent 1: anywhere, last */
          order[d] = 0;
        }
      else if (in_d && in_a && in_b)
        {
          key[d] = 0;            /* batch, D's order */
          order[d] = operands[0].strides[id];
        }
      else if (in_d)
        {
          key[d] = o == 1 ? 1 : 2;   /* M (in A) or N (in B), D's order */
          order[d] = operands[0].strides[id];
        }
      else
        {
          key[d] = o == 1 ? 2 : 1;   /* K: after M in A, before N in B; A's order */
          order[d] = in_a ? ABS (operands[1].strides[ia]) : 0;
        }
    }
  /* stable insertion sort: group, then decreasing order value */
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0; j--)
      {
        guint p = idx[j - 1], q = idx[j];
        if (key[p] < key[q] || (key[p] == key[q] && order[p] >= order[q]))
          break;
        idx[j - 1] = q;
        idx[j] = p;
      }
  for (guint i = 0; i < n; i++)
    {
      modes[w] = own[idx[i]];
      shape[w] = operands[o].shape[idx[i]];
      w++;
    }
  modes[w] = '\0';
  {
    gint64 pitch = 1;
    for (guint i = n; i-- > 0; )
      {
        strides[i] = pitch;
        pitch *= MAX (shape[i], 1);
      }
  }
}

gboolean
atomr_gemm_plan_build_packed (const AtomrModeSpec    *spec,
                              const AtomrPlanOperand *operands,
                              AtomrGemmPlan          *plan,
                              AtomrGemmPack          *pack,
                              gchar                  *why_buf,
                              gsize                   why_len)
{
  gchar scratch[128];
  gint64 size[3] = { 1, 1, 1 };
  gint best = -1;
  gint64 best_size = G_MAXINT64;
  AtomrGemmPlan best_plan;

  memset (pack, 0, sizeof *pack);
  if (atomr_gemm_plan_build (spec, operands, plan, why_buf, why_len))
    return TRUE;

  packed_layout (spec, operands, 1, pack->modes_a, pack->shape_a, pack->strides_a);
  packed_layout (spec, operands, 2, pack->modes_b, pack->shape_b, pack->strides_b);
  for (guint o = 1; o < 3; o++)
    for (guint d = 0; d < operands[o].n_dims; d++)
      size[o] *= operands[o].shape[d];

  /* pack A, pack B, pack both: the fewest packed elements that work */
  for (gint choice = 1; choice <= 3; choice++)
    {
      AtomrModeSpec s = *spec;
      AtomrPlanOperand ops[3] = { operands[0], operands[1], operands[2] };
      AtomrGemmPlan p;
      gint64 cost = ((choice & 1) ? size[1] : 0) + ((choice & 2) ? size[2] : 0);

      if (choice & 1)
        {
          memcpy (s.modes[1], pack->modes_a, sizeof s.modes[1]);
          ops[1].shape = pack->shape_a;
          ops[1].strides = pack->strides_a;
        }
      if (choice & 2)
        {
          memcpy (s.modes[2], pack->modes_b, sizeof s.modes[2]);
          ops[2].shape = pack->shape_b;
          ops[2].strides = pack->strides_b;
        }
      if (cost < best_size && atomr_gemm_plan_build (&s, ops, &p, scratch, sizeof scratch))
        {
          best = choice;
          best_size = cost;
          best_plan = p;
        }
    }
  if (best < 0)
    return FALSE;      /* @why_buf keeps the reason of the unpacked attempt */
  pack->pack_a = (best & 1) != 0;
  pack->pack_b = (best & 2) != 0;
  pack->n_a = operands[1].n_dims;
  pack->n_b = operands[2].n_dims;
  *plan = best_plan;
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* The plan cache                                                       */

struct _AtomrPlanCache
{
  GMutex      lock;
  guint       capacity;
  gsize       value_size;
  GHashTable *entries;   /* key → GList link in order (data: Entry) */
  GQueue      order;     /* most recent first */
  guint64     hits, misses, evictions;
};

typedef struct {
  gchar   *key;
  gpointer value;
} Entry;

static void
entry_free (Entry *e)
{
  g_free (e->key);
  g_free (e->value);
  g_free (e);
}

AtomrPlanCache *
atomr_plan_cache_new (guint capacity,
                      gsize value_size)
{
  AtomrPlanCache *self = g_new0 (AtomrPlanCache, 1);

  g_mutex_init (&self->lock);
  self->capacity = MAX (capacity, 1);
  self->value_size = value_size;
  self->entries = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&self->order);
  return self;
}

void
atomr_plan_cache_free (AtomrPlanCache *self)
{
  if (self == NULL)
    return;
  g_hash_table_destroy (self->entries);
  g_queue_clear_full (&self->order, (GDestroyNotify) entry_free);
  g_mutex_clear (&self->lock);
  g_free (self);
}

gboolean
atomr_plan_cache_lookup (AtomrPlanCache *self,
                         const gchar    *key,
                         gpointer        value)
{
  GList *link;

  g_mutex_lock (&self->lock);
  link = g_hash_table_lookup (self->entries, key);
  if (link != NULL)
    {
      g_queue_unlink (&self->order, link);
      g_queue_push_head_link (&self->order, link);
      memcpy (value, ((Entry *) link->data)->value, self->value_size);
      self->hits++;
    }
  else
    self->misses++;
  g_mutex_unlock (&self->lock);
  return link != NULL;
}

static void
evict_locked (AtomrPlanCache *self)
{
  while (self->order.length > self->capacity)
    {
      Entry *e = g_queue_pop_tail (&self->order);
      g_hash_table_remove (self->entries, e->key);
      entry_free (e);
      self->evictions++;
    }
}

void
atomr_plan_cache_insert (AtomrPlanCache *self,
                         const gchar    *key,
                         gconstpointer   value)
{
  GList *link;
  Entry *e;

  g_mutex_lock (&self->lock);
  link = g_hash_table_lookup (self->entries, key);
  if (link != NULL)
    {
      memcpy (((Entry *) link->data)->value, value, self->value_size);
      g_queue_unlink (&self->order, link);
      g_queue_push_head_link (&self->order, link);
    }
  else
    {
      e = g_new0 (Entry, 1);
      e->key = g_strdup (key);
      e->value = g_memdup2 (value, self->value_size);
      g_queue_push_head (&self->order, e);
      g_hash_table_insert (self->entries, e->key, self->order.head);
      evict_locked (self);
    }
  g_mutex_unlock (&self->lock);
}

void
atomr_plan_cache_set_capacity (AtomrPlanCache *self,
                               guint           capacity)
{
  g_mutex_lock (&self->lock);
  self->capacity = MAX (capacity, 1);
  evict_locked (self);
  g_mutex_unlock (&self->lock);
}

guint
atomr_plan_cache_get_capacity (AtomrPlanCache *self)
{
  guint c;

  g_mutex_lock (&self->lock);
  c = self->capacity;
  g_mutex_unlock (&self->lock);
  return c;
}

void
atomr_plan_cache_get_stats (AtomrPlanCache *self,
                            guint64        *hits,
                            guint64        *misses,
                            guint64        *evictions,
                            guint          *size)
{
  g_mutex_lock (&self->lock);
  if (hits) *hits = self->hits;
  if (misses) *misses = self->misses;
  if (evictions) *evictions = self->evictions;
  if (size) *size = self->order.length;
  g_mutex_unlock (&self->lock);
}
