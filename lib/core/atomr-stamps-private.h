/* atomr-stamps-private.h — where an operation's host time goes (not installed)
 *
 * ATOMR_ENVELOPE_STAMPS=1 in the environment makes the envelope read a
 * cycle counter at its steps (op_new, submit, the mailbox, op_run, the
 * device entered, the enqueue, the end of op_run and of submit; on the
 * completion side the pump seeing an operation done, its reply, its
 * free) and add each step's distance from the previous step *on the same
 * thread* to a table of (previous, this) pairs.  At exit the table goes
 * to standard error: mean nanoseconds and count per pair.  Off (the
 * default) a step costs one predictable branch on a global.  For the
 * device, where no profiler runs (see DESIGN-NOTES, fourth session of
 * 2026-11-29).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdio.h>

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  ATOMR_STAMP_NEW,          /* op_new() entered */
  ATOMR_STAMP_SUBMIT,       /* atomr_op_submit() entered */
  ATOMR_STAMP_MAILBOX,      /* hazards registered, queued or about to run inline */
  ATOMR_STAMP_RUN,          /* op_run() entered */
  ATOMR_STAMP_ENTERED,      /* validated, the device entered, ordered after deps */
  ATOMR_STAMP_ENQUEUED,     /* the enqueue function returned, the device left */
  ATOMR_STAMP_RUN_END,      /* op_run() returns (its fence recorded when lone) */
  ATOMR_STAMP_SUBMIT_END,   /* atomr_op_submit() returns */
  ATOMR_STAMP_DONE,         /* the pump saw the operation done */
  ATOMR_STAMP_COMPLETED,    /* op_complete() returns (replied, freed) */
  ATOMR_N_STAMPS
} AtomrStamp;

/* -1: not read yet, 0: off, 1: on */
extern gint atomr_stamps_state;

G_GNUC_INTERNAL
void     atomr_stamp_slow           (AtomrStamp stamp);

static inline void
atomr_stamp (AtomrStamp stamp)
{
  if (G_UNLIKELY (__atomic_load_n (&atomr_stamps_state, __ATOMIC_RELAXED) != 0))
    atomr_stamp_slow (stamp);
}

/* Tests: turn stamping on or off whatever the environment says, and read
 * the table: how many times @to followed @from on one thread, and their
 * mean distance in nanoseconds (0 when never). */
G_GNUC_INTERNAL
void     atomr_stamps_set_enabled   (gboolean   enabled);
G_GNUC_INTERNAL
guint64  atomr_stamps_get_count     (AtomrStamp from,
                                     AtomrStamp to);
G_GNUC_INTERNAL
gdouble  atomr_stamps_get_mean_ns   (AtomrStamp from,
                                     AtomrStamp to);
G_GNUC_INTERNAL
void     atomr_stamps_reset         (void);
/* Writes the table (every pair seen) to @out, under a @title (nullable). */
G_GNUC_INTERNAL
void     atomr_stamps_print         (FILE        *out,
                                     const gchar *title);

G_END_DECLS
