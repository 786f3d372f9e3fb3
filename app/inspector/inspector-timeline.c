/* inspector-timeline.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "inspector-timeline.h"

/* Draws an InspectorTraceModel with GtkSnapshot: a label gutter on the
 * left, a time ruler on top, and per lane its slices: GPU execution per
 * CUDA stream (full rows), host lifecycles of the actors (thin rows under
 * them, packed since operations in flight overlap), nested spans of plain
 * Chrome traces, and counters as step plots.  Box, tooltip, details and
 * statistics all use the slice's own duration (GPU time on GPU lanes).
 *
 * The view is `offset` (µs after the trace start at the left edge of the
 * plot) and `scale` (pixels per µs); ctrl+scroll and pinch zoom around the
 * pointer, dragging and horizontal scrolling pan, a click selects the box
 * under the pointer.  A frame visits only what it shows: per lane a binary
 * search finds the first slice reaching into the view, and a run of boxes
 * narrower than a pixel is skipped with another binary search to the next
 * pixel (n_visited counts the slices a frame looked at). */

/* the label gutter: 200 px, less on a narrow window (a phone) */
#define GUTTER_WIDTH (gutter_width (self))
#define RULER_HEIGHT 28.0
#define ROW_HEIGHT   24.0
#define HOST_ROW     9.0
#define HOST_ROWS    4
#define COUNTER_ROW  36.0
#define LANE_GAP     4.0
#define BOX_PAD      2.0
#define MIN_SCALE    1e-7
#define MAX_SCALE    2000.0

struct _InspectorTimeline
{
  GtkWidget            parent_instance;
  InspectorTraceModel *model;
  gulong               changed_id;
  gdouble              offset;
  gdouble              scale;
  gboolean             fitted;
  gint                 selected;
  guint                n_drawn;
  guint                n_visited;
  gboolean             user_zoomed;   /* keep the view when the model changes (live) */
  gboolean             show_flows;
  GArray              *lane_y;        /* gdouble per lane, then the total */
  gdouble              drag_offset;
  gdouble              zoom_scale;
  gdouble              pointer_x;
  gchar               *filter_actor;   /* NULL: every actor */
  guint                filter_kinds;   /* 1 << InspectorSliceKind */
  gboolean             filter_errors;  /* failed operations only */
};

G_DEFINE_FINAL_TYPE (InspectorTimeline, inspector_timeline, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_MODEL,
  PROP_SELECTED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const struct {
  const gchar *library;
  const gchar *color;
} library_colors[] = {
  { "nvrtc",    "#3584e4" },
  { "kernel",   "#33d17a" },
  { "copy",     "#f6d32d" },
  { "cuda",     "#f6d32d" },
  { "cublas",   "#e66100" },
  { "cublaslt", "#ff7800" },
  { "cufft",    "#9141ac" },
  { "curand",   "#2ec27e" },
  { "cusolver", "#c01c28" },
  { "cusparse", "#865e3c" },
  { "cudnn",    "#1c71d8" },
  { "nccl",     "#a51d2d" },
};

static const gchar *fallback_colors[] = { "#62a0ea", "#8ff0a4", "#f9f06b", "#ffbe6f", "#dc8add", "#cdab8f" };

/**
 * inspector_library_color:
 * @library: a library name, as in #AtomrLaunchInfo
 * @color: (out): its colour
 *
 * The colour boxes of @library are drawn in: fixed for the CUDA libraries,
 * a stable pick from a palette for others.
 */
void
inspector_library_color (const gchar *library,
                         GdkRGBA     *color)
{
  for (guint i = 0; i < G_N_ELEMENTS (library_colors); i++)
    if (g_ascii_strcasecmp (library ? library : "", library_colors[i].library) == 0)
      {
        gdk_rgba_parse (color, library_colors[i].color);
        return;
      }
  gdk_rgba_parse (color, fallback_colors[g_str_hash (library ? library : "") % G_N_ELEMENTS (fallback_colors)]);
}

static gdouble
gutter_width (InspectorTimeline *self)
{
  gdouble w = gtk_widget_get_width (GTK_WIDGET (self));

  return w > 0 ? CLAMP (w * 0.3, 110.0, 200.0) : 200.0;
}

static gdouble
plot_width (InspectorTimeline *self)
{
  return MAX (1.0, gtk_widget_get_width (GTK_WIDGET (self)) - GUTTER_WIDTH);
}

static gdouble
duration (InspectorTimeline *self)
{
  if (self->model == NULL)
    return 1;
  return MAX (1e-3, inspector_trace_model_get_duration (self->model));
}

static gdouble
lane_height (InspectorTimeline *self,
             guint              lane)
{
  guint depth = inspector_trace_model_get_lane_depth (self->model, lane);

  switch (inspector_trace_model_get_lane_kind (self->model, lane))
    {
    case INSPECTOR_LANE_HOST: return MIN (depth, HOST_ROWS) * HOST_ROW + LANE_GAP;
    case INSPECTOR_LANE_COUNTER: return COUNTER_ROW + LANE_GAP;
    default: return MAX (depth, 1) * ROW_HEIGHT + LANE_GAP;
    }
}

/* y of each lane's top, then the bottom of the last */
static void
layout_lanes (InspectorTimeline *self)
{
  guint n = self->model ? inspector_trace_model_get_n_lanes (self->model) : 0;
  gdouble y = RULER_HEIGHT;

  g_array_set_size (self->lane_y, 0);
  for (guint i = 0; i < n; i++)
    {
      g_array_append_val (self->lane_y, y);
      y += lane_height (self, i);
    }
  g_array_append_val (self->lane_y, y);
}

static gdouble
slice_y (InspectorTimeline    *self,
         const InspectorSlice *s,
         gdouble              *height)
{
  gdouble top = g_array_index (self->lane_y, gdouble, s->lane);

  if (inspector_trace_model_get_lane_kind (self->model, s->lane) == INSPECTOR_LANE_HOST)
    {
      *height = HOST_ROW - 2;
      return top + MIN (s->depth, HOST_ROWS - 1) * HOST_ROW + 1;
    }
  *height = ROW_HEIGHT - 2 * BOX_PAD;
  return top + s->depth * ROW_HEIGHT + BOX_PAD;
}

static void
clamp_view (InspectorTimeline *self)
{
  gdouble visible;

  self->scale = CLAMP (self->scale, MIN_SCALE, MAX_SCALE);
  visible = plot_width (self) / self->scale;
  self->offset = CLAMP (self->offset, -visible * 0.5, MAX (0.0, duration (self) - visible * 0.5));
}

void
inspector_timeline_zoom_to_fit (InspectorTimeline *self)
{
  g_return_if_fail (INSPECTOR_IS_TIMELINE (self));

  /* 2% margin on both sides */
  self->scale = plot_width (self) / (duration (self) * 1.04);
  self->offset = -duration (self) * 0.02;
  self->fitted = gtk_widget_get_width (GTK_WIDGET (self)) > 0;
  self->user_zoomed = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/**
 * inspector_timeline_zoom:
 * @self: a timeline
 * @factor: > 1 zooms in
 * @anchor_x: the widget x coordinate that keeps its time
 */
void
inspector_timeline_zoom (InspectorTimeline *self,
                         gdouble            factor,
                         gdouble            anchor_x)
{
  gdouble px = CLAMP (anchor_x - GUTTER_WIDTH, 0, plot_width (self));
  gdouble t = self->offset + px / self->scale;

  self->scale *= factor;
  self->scale = CLAMP (self->scale, MIN_SCALE, MAX_SCALE);
  self->user_zoomed = TRUE;
  self->offset = t - px / self->scale;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_model_changed (InspectorTimeline *self)
{
  if (self->selected >= (gint) inspector_trace_model_get_n_slices (self->model))
    inspector_timeline_set_selected (self, -1);
  layout_lanes (self);
  /* a live recording grows: keep the user's zoom, else show it all */
  if (self->user_zoomed && inspector_trace_model_get_n_slices (self->model) > 0)
    clamp_view (self);
  else
    inspector_timeline_zoom_to_fit (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

void
inspector_timeline_set_model (InspectorTimeline   *self,
                              InspectorTraceModel *model)
{
  g_return_if_fail (INSPECTOR_IS_TIMELINE (self));

  if (self->model == model)
    return;
  if (self->model)
    g_clear_signal_handler (&self->changed_id, self->model);
  g_set_object (&self->model, model);
  if (model)
    self->changed_id = g_signal_connect_swapped (model, "changed", G_CALLBACK (on_model_changed), self);
  inspector_timeline_set_selected (self, -1);
  self->fitted = FALSE;
  self->user_zoomed = FALSE;
  layout_lanes (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODEL]);
}

InspectorTraceModel *
inspector_timeline_get_model (InspectorTimeline *self)
{
  return self->model;
}

gint
inspector_timeline_get_selected (InspectorTimeline *self)
{
  return self->selected;
}

void
inspector_timeline_set_selected (InspectorTimeline *self,
                                 gint               index)
{
  g_return_if_fail (INSPECTOR_IS_TIMELINE (self));

  if (self->model == NULL || index >= (gint) inspector_trace_model_get_n_slices (self->model))
    index = -1;
  if (index < -1)
    index = -1;
  if (self->selected == index)
    return;
  self->selected = index;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
}

guint
inspector_timeline_get_n_drawn_boxes (InspectorTimeline *self)
{
  return self->n_drawn;
}

/**
 * inspector_timeline_get_n_visited:
 * @self: a timeline
 *
 * Returns: how many slices the last frame looked at (drawn or skipped)
 */
guint
inspector_timeline_get_n_visited (InspectorTimeline *self)
{
  return self->n_visited;
}

/**
 * inspector_timeline_set_show_flows:
 * @self: a timeline
 * @show: whether to draw every dependency arrow (the selection's are
 *   always drawn)
 */
void
inspector_timeline_set_show_flows (InspectorTimeline *self,
                                   gboolean           show)
{
  self->show_flows = show;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/**
 * inspector_timeline_reveal:
 * @self: a timeline
 * @index: a slice
 *
 * Selects @index and pans (zooming in when it is tiny) so it shows.
 */
void
inspector_timeline_reveal (InspectorTimeline *self,
                           gint               index)
{
  const InspectorSlice *s;
  gdouble pw = plot_width (self);

  inspector_timeline_set_selected (self, index);
  if (self->selected < 0)
    return;
  s = inspector_trace_model_get_slice (self->model, (guint) self->selected);
  if (s->dur * self->scale < 4)
    self->scale = MAX (self->scale, 40.0 / MAX (s->dur, 1e-3));
  self->scale = MIN (self->scale, MAX_SCALE);
  self->offset = s->start + s->dur / 2 - pw / 2 / self->scale;
  self->user_zoomed = TRUE;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gdouble
nice_step (gdouble approx)
{
  gdouble p = pow (10, floor (log10 (approx)));
  gdouble m = approx / p;

  if (m <= 1) return p;
  if (m <= 2) return 2 * p;
  if (m <= 5) return 5 * p;
  return 10 * p;
}

static gchar *
format_time (gdouble us,
             gdouble step)
{
  if (step >= 1e6)
    return g_strdup_printf ("%.*f s", step >= 1e7 ? 0 : 1, us / 1e6);
  if (step >= 1e3)
    return g_strdup_printf ("%.*f ms", step >= 1e4 ? 0 : 1, us / 1e3);
  if (step >= 1)
    return g_strdup_printf ("%.0f µs", us);
  return g_strdup_printf ("%.0f ns", us * 1e3);
}

static void
get_fg (GtkWidget *widget,
        GdkRGBA   *fg)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static gboolean
slice_shown (InspectorTimeline    *self,
             const InspectorSlice *sl)
{
  if (!(self->filter_kinds & (1u << sl->kind)))
    return FALSE;
  if (self->filter_errors && !sl->failed)
    return FALSE;
  if (self->filter_actor && g_strcmp0 (sl->actor, self->filter_actor) != 0)
    return FALSE;
  return TRUE;
}

/**
 * inspector_timeline_set_filter:
 * @self: the timeline
 * @actor: (nullable): show this actor's operations only, %NULL for all
 * @kinds: the kinds of slice shown, a mask of `1 << InspectorSliceKind`
 * @errors_only: show failed operations only
 *
 * Hides what does not match (it is neither drawn nor clickable; counter
 * lanes stay).  Filtered frames look at every slice in view instead of
 * skipping runs thinner than a pixel.
 */
void
inspector_timeline_set_filter (InspectorTimeline *self,
                               const gchar       *actor,
                               guint              kinds,
                               gboolean           errors_only)
{
  g_return_if_fail (INSPECTOR_IS_TIMELINE (self));
  g_free (self->filter_actor);
  self->filter_actor = g_strdup (actor);
  self->filter_kinds = kinds;
  self->filter_errors = errors_only;
  if (self->selected >= 0 && self->model &&
      !slice_shown (self, inspector_trace_model_get_slice (self->model, (guint) self->selected)))
    inspector_timeline_set_selected (self, -1);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/**
 * inspector_timeline_is_shown:
 * @self: the timeline
 * @index: a slice of the model
 *
 * Returns: whether the filter lets slice @index show
 */
gboolean
inspector_timeline_is_shown (InspectorTimeline *self,
                             guint              index)
{
  g_return_val_if_fail (self->model && index < inspector_trace_model_get_n_slices (self->model), FALSE);
  return slice_shown (self, inspector_trace_model_get_slice (self->model, index));
}

static void
draw_text (GtkSnapshot   *snapshot,
           PangoLayout   *layout,
           const gchar   *text,
           gdouble        x,
           gdouble        y,
           gdouble        max_width,
           const GdkRGBA *color)
{
  pango_layout_set_text (layout, text, -1);
  pango_layout_set_width (layout, max_width > 0 ? (int) (max_width * PANGO_SCALE) : -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x, y));
  gtk_snapshot_append_layout (snapshot, layout, color);
  gtk_snapshot_restore (snapshot);
}

/* Thin boxes merged into one rectangle while they touch. */
typedef struct {
  gdouble x, y, w, h;
  GdkRGBA c;
} Run;

static void
flush_run (GtkSnapshot *snapshot,
           Run         *run)
{
  if (run->w > 0)
    gtk_snapshot_append_color (snapshot, &run->c, &GRAPHENE_RECT_INIT (run->x, run->y, run->w, run->h));
  run->w = 0;
}

/* A straight arrow from producer to consumer, drawn with thin rectangles
 * along the line (no cairo: the snapshot stays renderer-neutral). */
static void
draw_arrow (GtkSnapshot   *snapshot,
            gdouble        ax,
            gdouble        ay,
            gdouble        bx,
            gdouble        by,
            const GdkRGBA *color)
{
  gdouble dx = bx - ax, dy = by - ay, len = sqrt (dx * dx + dy * dy);
  gdouble angle = atan2 (dy, dx) * 180 / G_PI;

  if (len < 1)
    return;
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (ax, ay));
  gtk_snapshot_rotate (snapshot, (float) angle);
  gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (0, -0.75, len, 1.5));
  /* the head: two short strokes */
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (len, 0));
  gtk_snapshot_rotate (snapshot, 150);
  gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (0, -0.75, 7, 1.5));
  gtk_snapshot_rotate (snapshot, 60);
  gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (0, -0.75, 7, 1.5));
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_restore (snapshot);
}

static void
inspector_timeline_snapshot (GtkWidget   *widget,
                             GtkSnapshot *snapshot)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (widget);
  gdouble w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  gdouble pw = plot_width (self);
  g_autoptr(PangoLayout) layout = gtk_widget_create_pango_layout (widget, NULL);
  GdkRGBA fg, dim, band, line, sel;
  gdouble step, first;
  guint n_tracks;
  gint64 t0;

  self->n_drawn = 0;
  get_fg (widget, &fg);
  dim = fg; dim.alpha = 0.6;
  band = fg; band.alpha = 0.04;
  line = fg; line.alpha = 0.15;
  sel = fg;

  if (self->model == NULL || inspector_trace_model_get_n_slices (self->model) +
                             inspector_trace_model_get_n_lanes (self->model) == 0)
    return;
  if (!self->fitted)
    inspector_timeline_zoom_to_fit (self);
  if (self->lane_y->len != inspector_trace_model_get_n_lanes (self->model) + 1)
    layout_lanes (self);
  self->n_visited = 0;

  n_tracks = inspector_trace_model_get_n_lanes (self->model);
  t0 = 0;

  /* lane bands */
  for (guint t = 0; t < n_tracks; t++)
    if (t % 2 == 0)
      gtk_snapshot_append_color (snapshot, &band,
                                 &GRAPHENE_RECT_INIT (0, g_array_index (self->lane_y, gdouble, t), w,
                                                      g_array_index (self->lane_y, gdouble, t + 1) -
                                                      g_array_index (self->lane_y, gdouble, t)));

  /* grid lines and ruler */
  step = nice_step (100.0 / self->scale);
  first = floor (self->offset / step) * step;
  for (gdouble tt = first; (tt - self->offset) * self->scale <= pw; tt += step)
    {
      gdouble x = GUTTER_WIDTH + (tt - self->offset) * self->scale;
      g_autofree gchar *label = NULL;

      if (x < GUTTER_WIDTH)
        continue;
      gtk_snapshot_append_color (snapshot, &line, &GRAPHENE_RECT_INIT (x, RULER_HEIGHT - 6, 1, h));
      label = format_time (tt, step);
      draw_text (snapshot, layout, label, x + 3, 4, -1, &dim);
    }
  gtk_snapshot_append_color (snapshot, &line, &GRAPHENE_RECT_INIT (0, RULER_HEIGHT - 1, w, 1));

  /* boxes, clipped to the plot */
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (GUTTER_WIDTH, RULER_HEIGHT, pw, MAX (0, h - RULER_HEIGHT)));
  for (guint t = 0; t < n_tracks; t++)
    {
      gdouble view_start = self->offset, view_end = self->offset + pw / self->scale;
      gdouble px = 1.0 / self->scale;   /* a pixel, in µs */
      Run run;
      guint first_i, n, end_i, j;
      InspectorLaneKind kind = inspector_trace_model_get_lane_kind (self->model, t);
      gdouble ly = g_array_index (self->lane_y, gdouble, t);

      if (kind == INSPECTOR_LANE_COUNTER)
        {
          const gdouble *times, *values;
          guint np = inspector_trace_model_get_counter_points (self->model, t, &times, &values);
          gdouble vmax = 0;
          GdkRGBA c;

          inspector_library_color (inspector_trace_model_get_lane_label (self->model, t), &c);
          c.alpha = 0.7;
          /* the scale's maximum: over all points once per frame is cheap
           * next to drawing, but the drawing itself is culled like boxes */
          for (guint k = 0; k < np; k++)
            vmax = MAX (vmax, values[k]);
          {
            guint lo = 0, hi = np, k;

            /* the last point at or before the view's start */
            while (lo < hi)
              {
                guint mid = lo + (hi - lo) / 2;
                if (times[mid] <= view_start)
                  lo = mid + 1;
                else
                  hi = mid;
              }
            k = lo > 0 ? lo - 1 : 0;
            while (k < np && vmax > 0)
              {
                gdouble x0 = GUTTER_WIDTH + (times[k] - self->offset) * self->scale;
                gdouble x1 = k + 1 < np ? GUTTER_WIDTH + (times[k + 1] - self->offset) * self->scale : w;
                gdouble bh = (COUNTER_ROW - 4) * values[k] / vmax;
                guint next = k + 1;

                self->n_visited++;
                if (times[k] > view_end)
                  break;
                /* several points within a pixel: draw their largest, once */
                if (x1 - x0 < 1.0)
                  {
                    gdouble peak = values[k];
                    while (next < np && times[next] < times[k] + px)
                      {
                        peak = MAX (peak, values[next]);
                        next++;
                        self->n_visited++;
                      }
                    bh = (COUNTER_ROW - 4) * peak / vmax;
                    x1 = x0 + 1;
                  }
                gtk_snapshot_append_color (snapshot, &c, &GRAPHENE_RECT_INIT (x0, ly + COUNTER_ROW - bh, MAX (x1 - x0, 1), bh));
                k = next;
              }
          }
          continue;
        }

      inspector_trace_model_get_lane_range (self->model, t, &first_i, &n);
      end_i = first_i + n;
      j = inspector_trace_model_find_visible (self->model, t, view_start);
      memset (&run, 0, sizeof run);
      while (j < end_i)
        {
          const InspectorSlice *sl = inspector_trace_model_get_slice (self->model, j);
          gdouble x0, x1, bw, y, bh, label_end;
          GdkRGBA c;

          self->n_visited++;
          if (sl->start > view_end)
            break;
          if (sl->start + sl->dur < view_start || !slice_shown (self, sl))
            {
              j++;
              continue;
            }
          x0 = GUTTER_WIDTH + (sl->start - self->offset) * self->scale;
          x1 = GUTTER_WIDTH + (sl->start + sl->dur - self->offset) * self->scale;
          bw = MAX (x1 - x0, 1.0);
          y = slice_y (self, sl, &bh);
          inspector_library_color (sl->library, &c);
          if (sl->failed)
            gdk_rgba_parse (&c, "#e01b24");
          if (kind == INSPECTOR_LANE_HOST && !sl->failed)
            c.alpha = 0.55;   /* secondary: the host's view of the operation; failures stand out */
          if (bw > 3 && bw <= 10)   /* corners too small to see: a plain rectangle is far cheaper */
            {
              flush_run (snapshot, &run);
              gtk_snapshot_append_color (snapshot, &c, &GRAPHENE_RECT_INIT (x0, y, bw - 1, bh));
            }
          else if (bw > 10)
            {
              GskRoundedRect rr;
              flush_run (snapshot, &run);
              gsk_rounded_rect_init_from_rect (&rr, &GRAPHENE_RECT_INIT (x0, y, bw - 1, bh), kind == INSPECTOR_LANE_HOST ? 1 : 3);
              gtk_snapshot_push_rounded_clip (snapshot, &rr);
              gtk_snapshot_append_color (snapshot, &c, &rr.bounds);
              gtk_snapshot_pop (snapshot);
            }
          else if (run.w > 0 && gdk_rgba_equal (&run.c, &c) && run.y == y && run.h == bh &&
                   x0 <= run.x + run.w + 1.0 && (gint) j != self->selected)
            /* thin boxes side by side in one colour: one rectangle (a
             * zoomed-out lane would otherwise be thousands of nodes) */
            run.w = MAX (run.w, x0 + bw - run.x);
          else
            {
              flush_run (snapshot, &run);
              run.x = x0;
              run.y = y;
              run.w = bw;
              run.h = bh;
              run.c = c;
            }
          self->n_drawn++;
          if ((gint) j == self->selected)
            {
              GskRoundedRect rr;
              const float widths[4] = { 2, 2, 2, 2 };
              const GdkRGBA colors[4] = { sel, sel, sel, sel };
              gsk_rounded_rect_init_from_rect (&rr, &GRAPHENE_RECT_INIT (x0 - 2, y - 2, bw + 3, bh + 4), 4);
              gtk_snapshot_append_border (snapshot, &rr, widths, colors);
            }
          if (kind != INSPECTOR_LANE_HOST && bw > 48)
            {
              GdkRGBA black = { 0, 0, 0, 0.85 };
              g_autofree gchar *label = inspector_slice_get_label (sl);
              label_end = MIN (x1, w);
              draw_text (snapshot, layout, label, MAX (x0, GUTTER_WIDTH) + 4, y + 2,
                         label_end - MAX (x0, GUTTER_WIDTH) - 8, &black);
            }
          /* narrower than a pixel: what starts within this pixel would
           * be drawn on top of it; skip to the next pixel */
          if (x1 - x0 < 1.0)
            {
              guint next = inspector_trace_model_find_start (self->model, t, sl->start + px);
              j = MAX (next, j + 1);
            }
          else
            j++;
        }
      flush_run (snapshot, &run);
    }

  /* dependency arrows: the selection's, or all on demand */
  {
    guint nf = inspector_trace_model_get_n_flows (self->model);
    GdkRGBA arrow = fg;

    arrow.alpha = 0.75;
    for (guint f = 0; f < nf; f++)
      {
        guint a, b;
        const InspectorSlice *sa, *sb;
        gdouble ax, ay, bx, by, ah, bh2;
      
        inspector_trace_model_get_flow (self->model, f, &a, &b);
        if (!self->show_flows && (gint) a != self->selected && (gint) b != self->selected)
          continue;
        sa = inspector_trace_model_get_slice (self->model, a);
        sb = inspector_trace_model_get_slice (self->model, b);
        ax = GUTTER_WIDTH + (sa->start + sa->dur - self->offset) * self->scale;
        bx = GUTTER_WIDTH + (sb->start - self->offset) * self->scale;
        ay = slice_y (self, sa, &ah) + ah / 2;
        by = slice_y (self, sb, &bh2) + bh2 / 2;
        draw_arrow (snapshot, ax, ay, bx, by, &arrow);
      }
  }
  gtk_snapshot_pop (snapshot);

  /* gutter labels */
  for (guint t = 0; t < n_tracks; t++)
    {
      gboolean thin = inspector_trace_model_get_lane_kind (self->model, t) == INSPECTOR_LANE_HOST;
      GdkRGBA c = thin ? dim : fg;

      gtk_snapshot_save (snapshot);
      if (thin)
        gtk_snapshot_scale (snapshot, 0.85f, 0.85f);
      draw_text (snapshot, layout, inspector_trace_model_get_lane_label (self->model, t),
                 thin ? 24 / 0.85 : 12, (g_array_index (self->lane_y, gdouble, t) + (thin ? -1 : 3)) / (thin ? 0.85 : 1),
                 (GUTTER_WIDTH - 20) / (thin ? 0.85 : 1), &c);
      gtk_snapshot_restore (snapshot);
    }
  gtk_snapshot_append_color (snapshot, &line, &GRAPHENE_RECT_INIT (GUTTER_WIDTH - 1, 0, 1, h));
  (void) t0;
}

static void
inspector_timeline_measure (GtkWidget      *widget,
                            GtkOrientation  orientation,
                            int             for_size,
                            int            *minimum,
                            int            *natural,
                            int            *minimum_baseline,
                            int            *natural_baseline)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 110 + 100;
      *natural = 200 + 800;
    }
  else
    {
      if (self->model && self->lane_y->len != inspector_trace_model_get_n_lanes (self->model) + 1)
        layout_lanes (self);
      *minimum = *natural = (int) (MAX (self->lane_y->len > 0 ? g_array_index (self->lane_y, gdouble, self->lane_y->len - 1)
                                                              : RULER_HEIGHT, RULER_HEIGHT + ROW_HEIGHT) + 8);
    }
}

static void
inspector_timeline_size_allocate (GtkWidget *widget,
                                  int        width,
                                  int        height,
                                  int        baseline)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (widget);

  if (!self->fitted)
    inspector_timeline_zoom_to_fit (self);
  else
    clamp_view (self);
}

static gint
hit_test (InspectorTimeline *self,
          gdouble            x,
          gdouble            y)
{
  gdouble tt, slack;
  guint lane, first, n, j;
  gint best = -1;
  gdouble best_d = G_MAXDOUBLE;

  if (self->model == NULL || x < GUTTER_WIDTH || y < RULER_HEIGHT || self->lane_y->len < 2)
    return -1;
  for (lane = 0; lane + 1 < self->lane_y->len; lane++)
    if (y < g_array_index (self->lane_y, gdouble, lane + 1))
      break;
  if (lane + 1 >= self->lane_y->len || inspector_trace_model_get_lane_kind (self->model, lane) == INSPECTOR_LANE_COUNTER)
    return -1;
  tt = self->offset + (x - GUTTER_WIDTH) / self->scale;
  slack = 3.0 / self->scale;   /* tiny boxes are still clickable */
  inspector_trace_model_get_lane_range (self->model, lane, &first, &n);
  for (j = inspector_trace_model_find_visible (self->model, lane, tt - slack); j < first + n; j++)
    {
      const InspectorSlice *s = inspector_trace_model_get_slice (self->model, j);
      gdouble top, bh, d;

      if (s->start > tt + slack)
        break;
      top = slice_y (self, s, &bh);
      if (y < top - 1 || y > top + bh + 1 || tt > s->start + s->dur + slack || !slice_shown (self, s))
        continue;
      d = tt < s->start ? s->start - tt : tt > s->start + s->dur ? tt - s->start - s->dur : 0;
      if (d < best_d)
        {
          best_d = d;
          best = (gint) j;
        }
    }
  return best;
}

static void
on_click (GtkGestureClick   *gesture,
          int                n_press,
          double             x,
          double             y,
          InspectorTimeline *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  inspector_timeline_set_selected (self, hit_test (self, x, y));
}

static gboolean
on_scroll (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           InspectorTimeline        *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));

  if (mods & GDK_CONTROL_MASK)
    {
      inspector_timeline_zoom (self, pow (1.15, -dy), self->pointer_x);
      return TRUE;
    }
  if (mods & GDK_SHIFT_MASK && dx == 0)
    dx = dy;
  if (dx != 0)
    {
      self->offset += dx * 40 / self->scale;
      self->user_zoomed = TRUE;
      clamp_view (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return TRUE;
    }
  return FALSE;   /* vertical: the scrolled window scrolls the rows */
}

/**
 * inspector_timeline_describe:
 * @self: a timeline
 * @index: a slice
 *
 * Returns: (transfer full): the tooltip of @index: its name, library and
 *   the duration its box shows
 */
gchar *
inspector_timeline_describe (InspectorTimeline *self,
                             gint               index)
{
  const InspectorSlice *s = inspector_trace_model_get_slice (self->model, (guint) index);
  g_autofree gchar *label = inspector_slice_get_label (s);
  g_autofree gchar *d = inspector_format_duration (s->dur);

  switch (s->kind)
    {
    case INSPECTOR_SLICE_GPU:
      /* Translators: a tooltip: library · operation — GPU time */
      return g_strdup_printf (_("%s · %s — %s on the GPU"), s->library, label, d);
    case INSPECTOR_SLICE_HOST:
      /* Translators: a tooltip: operation — submit to reply on the host */
      return g_strdup_printf (_("%s — %s from submit to reply (host)"), label, d);
    default:
      return g_strdup_printf ("%s · %s — %s", s->library, label, d);
    }
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           InspectorTimeline        *self)
{
  gint hit = hit_test (self, x, y);

  self->pointer_x = x;
  if (hit >= 0)
    {
      g_autofree gchar *tip = inspector_timeline_describe (self, hit);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self), tip);
    }
  else
    gtk_widget_set_tooltip_text (GTK_WIDGET (self), NULL);
}

static void
on_drag_begin (GtkGestureDrag    *gesture,
               double             x,
               double             y,
               InspectorTimeline *self)
{
  if (x < GUTTER_WIDTH)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  self->drag_offset = self->offset;
}

static void
on_drag_update (GtkGestureDrag    *gesture,
                double             dx,
                double             dy,
                InspectorTimeline *self)
{
  if (fabs (dx) < 3)
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  self->offset = self->drag_offset - dx / self->scale;
  self->user_zoomed = TRUE;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_zoom_begin (GtkGesture        *gesture,
               GdkEventSequence  *sequence,
               InspectorTimeline *self)
{
  self->zoom_scale = self->scale;
}

static void
on_zoom_changed (GtkGestureZoom    *gesture,
                 double             scale,
                 InspectorTimeline *self)
{
  double cx = 0, cy = 0;
  gdouble factor;

  gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &cx, &cy);
  factor = self->zoom_scale * scale / self->scale;
  inspector_timeline_zoom (self, factor, cx);
}

/**
 * inspector_timeline_get_scale:
 * @self: the timeline
 *
 * Returns: the zoom, in pixels per microsecond
 */
gdouble
inspector_timeline_get_scale (InspectorTimeline *self)
{
  return self->scale;
}

static void
zoom_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (widget);

  if (g_str_equal (action_name, "timeline.zoom-in"))
    inspector_timeline_zoom (self, 1.5, GUTTER_WIDTH + plot_width (self) / 2);
  else if (g_str_equal (action_name, "timeline.zoom-out"))
    inspector_timeline_zoom (self, 1 / 1.5, GUTTER_WIDTH + plot_width (self) / 2);
  else
    inspector_timeline_zoom_to_fit (self);
}

static void
inspector_timeline_dispose (GObject *object)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (object);

  if (self->model)
    g_clear_signal_handler (&self->changed_id, self->model);
  g_clear_object (&self->model);
  g_clear_pointer (&self->lane_y, g_array_unref);
  g_clear_pointer (&self->filter_actor, g_free);
  G_OBJECT_CLASS (inspector_timeline_parent_class)->dispose (object);
}

static void
inspector_timeline_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (object);

  switch (prop_id)
    {
    case PROP_MODEL: g_value_set_object (value, self->model); break;
    case PROP_SELECTED: g_value_set_int (value, self->selected); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
inspector_timeline_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  InspectorTimeline *self = INSPECTOR_TIMELINE (object);

  switch (prop_id)
    {
    case PROP_MODEL: inspector_timeline_set_model (self, g_value_get_object (value)); break;
    case PROP_SELECTED: inspector_timeline_set_selected (self, g_value_get_int (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
inspector_timeline_class_init (InspectorTimelineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_timeline_dispose;
  object_class->get_property = inspector_timeline_get_property;
  object_class->set_property = inspector_timeline_set_property;
  widget_class->snapshot = inspector_timeline_snapshot;
  widget_class->measure = inspector_timeline_measure;
  widget_class->size_allocate = inspector_timeline_size_allocate;

  properties[PROP_MODEL] = g_param_spec_object ("model", NULL, NULL, INSPECTOR_TYPE_TRACE_MODEL,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTED] = g_param_spec_int ("selected", NULL, NULL, -1, G_MAXINT, -1,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_install_action (widget_class, "timeline.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "timeline.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "timeline.zoom-fit", NULL, zoom_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "timeline.zoom-fit", NULL);
  gtk_widget_class_set_css_name (widget_class, "timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
inspector_timeline_init (InspectorTimeline *self)
{
  GtkGesture *click, *drag, *zoom;
  GtkEventController *scroll, *motion;

  self->selected = -1;
  self->scale = 1;
  self->filter_kinds = INSPECTOR_TIMELINE_ALL_KINDS;
  self->lane_y = g_array_new (FALSE, FALSE, sizeof (gdouble));
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);

  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (on_click), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));

  drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));

  zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_zoom_changed), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (zoom));

  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Timeline of operations"), -1);
}

GtkWidget *
inspector_timeline_new (void)
{
  return g_object_new (INSPECTOR_TYPE_TIMELINE, NULL);
}
