/* atomr-tensor-plan-private.h — the Tensor actor's planner (pure CPU code)
 *
 * An operation is described einsum-style: one mode letter (a–z, A–Z) per
 * dimension of each operand, "ab,b->ba".  The planner
 *
 *   1. parses the description (atomr_mode_spec_parse),
 *   2. binds it to the operands' shapes and strides: one loop per mode,
 *      each with its extent and its stride in every operand (0 where the
 *      operand lacks the mode or has extent 1 there: broadcasting),
 *   3. drops loops of extent 1, orders the output loops by decreasing
 *      output stride (the innermost loop writes consecutive elements) and
 *      the reduced loops by decreasing input stride, and
 *   4. folds each pair of neighbouring loops that every operand walks as
 *      one (outer stride = inner stride × inner extent in each operand) —
 *      a contiguous permutation of "abcd->abdc" becomes a 2-D transpose of
 *      (a·b·d) × c, for example.
 *
 * Plans are keyed by everything that determines them and cached in a
 * bounded LRU (AtomrPlanCache) with hit/miss/eviction counters.
 *
 * Everything here is pure and thread-safe (the cache has its own lock).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define ATOMR_PLAN_MAX_DIMS     8
#define ATOMR_PLAN_MAX_INPUTS   3
/* operand 0 is the output, 1.. the inputs */
#define ATOMR_PLAN_MAX_OPERANDS (ATOMR_PLAN_MAX_INPUTS + 1)
/* loops: output modes plus reduced modes, each at most 8 per operand */
#define ATOMR_PLAN_MAX_LOOPS    (ATOMR_PLAN_MAX_DIMS * (ATOMR_PLAN_MAX_INPUTS + 1))

typedef struct {
  guint n_inputs;
  gchar modes[ATOMR_PLAN_MAX_OPERANDS][ATOMR_PLAN_MAX_DIMS + 1]; /* [0]: output */
} AtomrModeSpec;

/* Parses "<in>{,<in>}->out" with exactly @n_inputs inputs.  Spaces are
 * ignored.  Fails with INVALID_ARGUMENT naming @op and the offending
 * character or operand: a character that is no mode letter, a missing
 * "->", the wrong number of inputs, more than 8 modes in an operand, a
 * mode repeated within one operand (diagonals are not supported). */
gboolean atomr_mode_spec_parse (const gchar   *op,
                                const gchar   *spec,
                                guint          n_inputs,
                                AtomrModeSpec *out,
                                GError       **error);

/* One operand as the planner sees it. */
typedef struct {
  guint         n_dims;
  const gint64 *shape;
  const gint64 *strides;  /* elements */
} AtomrPlanOperand;

typedef struct {
  guint   n_operands;                 /* output + inputs */
  guint   n_free;                     /* loops [0, n_free) are output loops */
  guint   n_loops;                    /* n_free + reduced loops */
  gint64  extent[ATOMR_PLAN_MAX_LOOPS];
  gint64  stride[ATOMR_PLAN_MAX_OPERANDS][ATOMR_PLAN_MAX_LOOPS];
  guint64 n_out;                      /* product of the output extents */
  guint64 n_reduce;                   /* product of the reduced extents */
  /* The output loop in which input 1 (A) is densest (smallest non-zero
   * |stride|), or -1: when it is not the innermost loop, a permutation
   * is a transpose of that loop with the innermost one. */
  gint    a_inner;
} AtomrLoopPlan;

/* Binds @spec to the operands (@operands[0] the output).  With @reduce,
 * input modes missing from the output are reduced (they must have one
 * extent in every input that has them); without it they are an error.
 * Every output mode must appear in some input with the output's extent or
 * extent 1 (broadcast); the output may not have a zero stride on a loop of
 * extent > 1 (two results would land on one element).  Fails with
 * INVALID_ARGUMENT naming @op, the operand (@names[i]), the mode and the
 * values. */
gboolean atomr_loop_plan_build (const gchar            *op,
                                const AtomrModeSpec    *spec,
                                const AtomrPlanOperand *operands,
                                const gchar * const    *names,
                                gboolean                reduce,
                                AtomrLoopPlan          *plan,
                                GError                **error);

/* Offsets (elements) of every operand at linear output index @index and
 * reduced index @rindex (the innermost loop varies fastest). */
void     atomr_loop_plan_offsets (const AtomrLoopPlan *plan,
                                  guint64              index,
                                  guint64              rindex,
                                  gint64              *offsets);

/* A contraction D = Σ A·B as one (strided-batched) column-major GEMM,
 * cuBLASLt's problem: C (m × n, ld ldc) = op(X) (m × k) · op(Y) (k × n),
 * batch matrices apart by the batch strides.
 *
 * Each mode of extent > 1 falls in one group: batch (in A, B and D), M
 * (A and D), N (B and D), K (A and B).  Within a group the modes are
 * ordered by D's strides (K: A's, or B's when A's order does not fold)
 * and must fold in every operand of the group into one extent and one
 * stride; a mode in one operand alone, a negative stride or a group that
 * does not fold leaves the contraction to the generated kernels.  D must
 * have a unit stride in M (column-major C) or in N (then the roles of A
 * and B swap: Dᵀ = Bᵀ·Aᵀ); each input needs a unit stride in one of its
 * two matrix groups (the other is the leading dimension, op N or T).
 * Outer products (k = 1) and dot products (m = n = 1) are left to the
 * generated kernels, which serve them as well. */
typedef struct {
  gboolean swap;        /* X is B and Y is A (m and n are D's N and M) */
  gboolean trans_x;     /* op(X) = Xᵀ: X is stored k × m */
  gboolean trans_y;     /* op(Y) = Yᵀ: Y is stored n × k */
  gint64   m, n, k, batch;
  gint64   ldx, ldy, ldc;
  gint64   stride_x, stride_y, stride_c;   /* between batch matrices (0: batch 1) */
} AtomrGemmPlan;

/* Maps @spec (2 inputs) over @operands (D, A, B; shapes already checked by
 * atomr_loop_plan_build) to @plan.  Returns FALSE and sets @why (static
 * text plus the mode, in @why_buf of @why_len bytes) when the contraction
 * is no GEMM without copies. */
gboolean atomr_gemm_plan_build (const AtomrModeSpec    *spec,
                                const AtomrPlanOperand *operands,
                                AtomrGemmPlan          *plan,
                                gchar                  *why_buf,
                                gsize                   why_len);

/* Inputs copied into contiguous scratch operands so that the contraction
 * becomes one GEMM: each packed input holds its modes in GEMM order
 * (batch, then M and K for A, K and N for B; batch, M and N in D's
 * stride order, K in A's), row-major. */
typedef struct {
  gboolean pack_a, pack_b;
  guint    n_a, n_b;                           /* dimensions of A and B */
  gchar    modes_a[ATOMR_PLAN_MAX_DIMS + 1];   /* the packed operands' modes */
  gchar    modes_b[ATOMR_PLAN_MAX_DIMS + 1];
  gint64   shape_a[ATOMR_PLAN_MAX_DIMS], strides_a[ATOMR_PLAN_MAX_DIMS];
  gint64   shape_b[ATOMR_PLAN_MAX_DIMS], strides_b[ATOMR_PLAN_MAX_DIMS];
} AtomrGemmPack;

/* atomr_gemm_plan_build(), and when that fails, the same with A, B or
 * both packed (the fewest packed elements that work); @plan is then the
 * GEMM of the packed operands.  What packing cannot fix (D's layout, a
 * mode in one operand alone, outer and dot products) keeps the first
 * reason in @why_buf. */
gboolean atomr_gemm_plan_build_packed (const AtomrModeSpec    *spec,
                                       const AtomrPlanOperand *operands,
                                       AtomrGemmPlan          *plan,
                                       AtomrGemmPack          *pack,
                                       gchar                  *why_buf,
                                       gsize                   why_len);

/* A bounded LRU of plans (any fixed-size value), keyed by strings. */
typedef struct _AtomrPlanCache AtomrPlanCache;

AtomrPlanCache *atomr_plan_cache_new          (guint           capacity,
                                               gsize           value_size);
void            atomr_plan_cache_free         (AtomrPlanCache *self);
/* Copies the value of @key into @value and counts a hit; or counts a miss
 * and returns FALSE. */
gboolean        atomr_plan_cache_lookup       (AtomrPlanCache *self,
                                               const gchar    *key,
                                               gpointer        value);
/* Inserts (or refreshes) @key, evicting the least recently used entry
 * beyond the capacity. */
void            atomr_plan_cache_insert       (AtomrPlanCache *self,
                                               const gchar    *key,
                                               gconstpointer   value);
void            atomr_plan_cache_set_capacity (AtomrPlanCache *self,
                                               guint           capacity);
guint           atomr_plan_cache_get_capacity (AtomrPlanCache *self);
void            atomr_plan_cache_get_stats    (AtomrPlanCache *self,
                                               guint64        *hits,
                                               guint64        *misses,
                                               guint64        *evictions,
                                               guint          *size);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrPlanCache, atomr_plan_cache_free)

G_END_DECLS
