/* inspector-timeline.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>

#include "inspector-timeline.h"

/* Draws an InspectorTraceModel with GtkSnapshot: a label gutter on the
 * left, a time ruler on top, and per track a row of boxes from enqueue to
 * completion.  The view is `offset` (µs after the trace start at the left
 * edge of the plot) and `scale` (pixels per µs); ctrl+scroll and pinch zoom
 * around the pointer, dragging and horizontal scrolling pan, a click
 * selects the box under the pointer. */

#define GUTTER_WIDTH 200.0
#define RULER_HEIGHT 28.0
#define ROW_HEIGHT   30.0
#define BOX_PAD      4.0
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
  gdouble              drag_offset;
  gdouble              zoom_scale;
  gdouble              pointer_x;
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
plot_width (InspectorTimeline *self)
{
  return MAX (1.0, gtk_widget_get_width (GTK_WIDGET (self)) - GUTTER_WIDTH);
}

static gdouble
duration (InspectorTimeline *self)
{
  if (self->model == NULL)
    return 1;
  return MAX (1.0, (gdouble) (inspector_trace_model_get_end_time (self->model) -
                              inspector_trace_model_get_start_time (self->model)));
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
  self->offset = t - px / self->scale;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_model_changed (InspectorTimeline *self)
{
  if (self->selected >= (gint) inspector_trace_model_get_n_records (self->model))
    inspector_timeline_set_selected (self, -1);
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

  if (self->model == NULL || index >= (gint) inspector_trace_model_get_n_records (self->model))
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

  if (self->model == NULL || inspector_trace_model_get_n_records (self->model) == 0)
    return;
  if (!self->fitted)
    inspector_timeline_zoom_to_fit (self);

  n_tracks = inspector_trace_model_get_n_tracks (self->model);
  t0 = inspector_trace_model_get_start_time (self->model);

  /* row bands */
  for (guint t = 0; t < n_tracks; t++)
    if (t % 2 == 0)
      gtk_snapshot_append_color (snapshot, &band,
                                 &GRAPHENE_RECT_INIT (0, RULER_HEIGHT + t * ROW_HEIGHT, w, ROW_HEIGHT));

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
      guint n;
      const guint *idx = inspector_trace_model_get_track_records (self->model, t, &n);
      gdouble y = RULER_HEIGHT + t * ROW_HEIGHT + BOX_PAD;
      gdouble last_x = -1;

      for (guint j = 0; j < n; j++)
        {
          AtomrLaunchInfo *info = inspector_trace_model_get_record (self->model, idx[j]);
          gdouble s = inspector_launch_info_get_start (info) - t0;
          gdouble e = MAX (atomr_launch_info_get_complete_time (info) - t0, s);
          gdouble x0 = GUTTER_WIDTH + (s - self->offset) * self->scale;
          gdouble x1 = GUTTER_WIDTH + (e - self->offset) * self->scale;
          gdouble bw = MAX (x1 - x0, 2.0);
          gdouble label_end;
          GdkRGBA c;

          if (x0 + bw < GUTTER_WIDTH || x0 > w)
            continue;
          /* at low zoom, many boxes fall on one pixel: draw one */
          if (bw <= 2.0 && floor (x0) == last_x && (gint) idx[j] != self->selected)
            continue;
          last_x = floor (x0);
          inspector_library_color (atomr_launch_info_get_library (info), &c);
          if (atomr_launch_info_get_error (info))
            gdk_rgba_parse (&c, "#e01b24");
          if (bw > 3)
            {
              GskRoundedRect rr;
              gsk_rounded_rect_init_from_rect (&rr, &GRAPHENE_RECT_INIT (x0, y, bw - 1, ROW_HEIGHT - 2 * BOX_PAD), 3);
              gtk_snapshot_push_rounded_clip (snapshot, &rr);
              gtk_snapshot_append_color (snapshot, &c, &rr.bounds);
              gtk_snapshot_pop (snapshot);
            }
          else
            gtk_snapshot_append_color (snapshot, &c, &GRAPHENE_RECT_INIT (x0, y, bw, ROW_HEIGHT - 2 * BOX_PAD));
          if (bw > 3)
            {
              GdkRGBA edge = { 0, 0, 0, 0.35 };
              gdouble gpu = atomr_launch_info_get_gpu_duration_ms (info) * 1000.0;

              /* where each operation starts, even under the next one */
              gtk_snapshot_append_color (snapshot, &edge, &GRAPHENE_RECT_INIT (x0, y, 1, ROW_HEIGHT - 2 * BOX_PAD));
              /* the GPU's own time, measured with events, ends at completion */
              if (gpu > 0)
                {
                  gdouble gx = MAX (x0, x1 - gpu * self->scale);
                  gtk_snapshot_append_color (snapshot, &edge,
                                             &GRAPHENE_RECT_INIT (gx, y + ROW_HEIGHT - 2 * BOX_PAD - 4,
                                                                  MAX (x1 - gx, 1.0), 4));
                }
            }
          self->n_drawn++;
          /* the label stops where the next box of the row begins: queued
           * operations overlap from enqueue to completion */
          label_end = MIN (x1, w);
          if (j + 1 < n)
            {
              AtomrLaunchInfo *next = inspector_trace_model_get_record (self->model, idx[j + 1]);
              label_end = MIN (label_end, GUTTER_WIDTH + (inspector_launch_info_get_start (next) - t0 - self->offset) * self->scale);
            }
          if (label_end - MAX (x0, GUTTER_WIDTH) > 48)
            {
              GdkRGBA black = { 0, 0, 0, 0.85 };
              g_autofree gchar *label = inspector_launch_info_get_label (info);
              draw_text (snapshot, layout, label,
                         MAX (x0, GUTTER_WIDTH) + 4, y + 3, label_end - MAX (x0, GUTTER_WIDTH) - 8, &black);
            }
          if ((gint) idx[j] == self->selected)
            {
              GskRoundedRect rr;
              const float widths[4] = { 2, 2, 2, 2 };
              const GdkRGBA colors[4] = { sel, sel, sel, sel };
              gsk_rounded_rect_init_from_rect (&rr, &GRAPHENE_RECT_INIT (x0 - 2, y - 2, bw + 3, ROW_HEIGHT - 2 * BOX_PAD + 4), 4);
              gtk_snapshot_append_border (snapshot, &rr, widths, colors);
            }
        }
    }
  gtk_snapshot_pop (snapshot);

  /* gutter labels */
  for (guint t = 0; t < n_tracks; t++)
    draw_text (snapshot, layout, inspector_trace_model_get_track_label (self->model, t),
               12, RULER_HEIGHT + t * ROW_HEIGHT + 6, GUTTER_WIDTH - 20, &fg);
  gtk_snapshot_append_color (snapshot, &line, &GRAPHENE_RECT_INIT (GUTTER_WIDTH - 1, 0, 1, h));
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
      *minimum = (int) GUTTER_WIDTH + 100;
      *natural = (int) GUTTER_WIDTH + 800;
    }
  else
    {
      guint n = self->model ? inspector_trace_model_get_n_tracks (self->model) : 0;
      *minimum = *natural = (int) (RULER_HEIGHT + MAX (n, 1) * ROW_HEIGHT + 8);
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
  gint64 t0;
  gdouble tt, slack;
  guint track, n;
  const guint *idx;
  gint best = -1;
  gdouble best_d = G_MAXDOUBLE;

  if (self->model == NULL || x < GUTTER_WIDTH || y < RULER_HEIGHT)
    return -1;
  track = (guint) ((y - RULER_HEIGHT) / ROW_HEIGHT);
  if (track >= inspector_trace_model_get_n_tracks (self->model))
    return -1;
  t0 = inspector_trace_model_get_start_time (self->model);
  tt = self->offset + (x - GUTTER_WIDTH) / self->scale;
  slack = 3.0 / self->scale;   /* tiny boxes are still clickable */
  idx = inspector_trace_model_get_track_records (self->model, track, &n);
  for (guint j = 0; j < n; j++)
    {
      AtomrLaunchInfo *info = inspector_trace_model_get_record (self->model, idx[j]);
      gdouble s = inspector_launch_info_get_start (info) - t0;
      gdouble e = MAX (atomr_launch_info_get_complete_time (info) - t0, s);
      gdouble d;

      if (tt < s - slack || tt > e + slack)
        continue;
      d = tt < s ? s - tt : tt > e ? tt - e : 0;
      if (d < best_d)
        {
          best_d = d;
          best = (gint) idx[j];
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
      clamp_view (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return TRUE;
    }
  return FALSE;   /* vertical: the scrolled window scrolls the rows */
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
      AtomrLaunchInfo *info = inspector_trace_model_get_record (self->model, hit);
      g_autofree gchar *label = inspector_launch_info_get_label (info);
      g_autofree gchar *tip = g_strdup_printf ("%s · %s — %.1f µs", atomr_launch_info_get_library (info), label,
                                               inspector_launch_info_get_duration_us (info));
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
