/* atomr-cudnn-params.c — parameter objects of the cuDNN actor
 *
 * AtomrConvolution and AtomrPooling hold what a convolution or a pooling
 * window is (padding, stride, dilation, groups, math; window, mode).  An
 * operation copies them when it is requested (in its _async call), so a
 * parameter object may be changed or dropped right after the call; it must
 * not be changed from two threads at once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "core/atomr-error.h"
#include "actors/cudnn/atomr-cudnn-actor.h"
#include "actors/cudnn/atomr-cudnn-private.h"
#include "core/atomr-tensor-private.h"

G_DEFINE_ENUM_TYPE (AtomrCudnnMath, atomr_cudnn_math,
  G_DEFINE_ENUM_VALUE (ATOMR_CUDNN_MATH_DEFAULT, "default"),
  G_DEFINE_ENUM_VALUE (ATOMR_CUDNN_MATH_FMA, "fma"))
G_DEFINE_ENUM_TYPE (AtomrActivationMode, atomr_activation_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_SIGMOID, "sigmoid"),
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_RELU, "relu"),
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_TANH, "tanh"),
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_CLIPPED_RELU, "clipped-relu"),
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_ELU, "elu"),
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_SWISH, "swish"),
  G_DEFINE_ENUM_VALUE (ATOMR_ACTIVATION_IDENTITY, "identity"))
G_DEFINE_ENUM_TYPE (AtomrSoftmaxMode, atomr_softmax_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_SOFTMAX_INSTANCE, "instance"),
  G_DEFINE_ENUM_VALUE (ATOMR_SOFTMAX_CHANNEL, "channel"))
G_DEFINE_ENUM_TYPE (AtomrBatchNormMode, atomr_batch_norm_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_BATCH_NORM_SPATIAL, "spatial"),
  G_DEFINE_ENUM_VALUE (ATOMR_BATCH_NORM_PER_ACTIVATION, "per-activation"))
G_DEFINE_ENUM_TYPE (AtomrPoolingMode, atomr_pooling_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_POOLING_MAX, "max"),
  G_DEFINE_ENUM_VALUE (ATOMR_POOLING_AVERAGE_INCLUDE_PADDING, "average-include-padding"),
  G_DEFINE_ENUM_VALUE (ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING, "average-exclude-padding"))

/* ------------------------------------------------------------------ */

/**
 * AtomrConvolution:
 *
 * What a convolution is, apart from its operands: zero padding, stride and
 * dilation per spatial dimension, the number of groups and the math
 * allowed.  A 2-D convolution (the default) takes N × C × H × W views, a
 * 3-D one N × C × D × H × W.  The operation is a cross-correlation, as in
 * every deep-learning framework.
 *
 * A bare g_object_new() gives a 2-D convolution with no padding, stride 1,
 * dilation 1 and one group.
 *
 * Since: 0.2
 */
struct _AtomrConvolution
{
  GObject         parent_instance;
  guint           n_spatial;
  gint64          padding[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64          stride[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64          dilation[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  guint           groups;
  AtomrCudnnMath  math;
};

G_DEFINE_FINAL_TYPE (AtomrConvolution, atomr_convolution, G_TYPE_OBJECT)

enum {
  CONV_PROP_0,
  CONV_PROP_N_SPATIAL_DIMS,
  CONV_PROP_GROUPS,
  CONV_PROP_MATH,
  CONV_N_PROPS
};

static GParamSpec *conv_properties[CONV_N_PROPS];

static void
atomr_convolution_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  AtomrConvolution *self = ATOMR_CONVOLUTION (object);

  switch (prop_id)
    {
    case CONV_PROP_N_SPATIAL_DIMS:
      g_value_set_uint (value, self->n_spatial);
      break;
    case CONV_PROP_GROUPS:
      g_value_set_uint (value, self->groups);
      break;
    case CONV_PROP_MATH:
      g_value_set_enum (value, self->math);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_convolution_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  AtomrConvolution *self = ATOMR_CONVOLUTION (object);

  switch (prop_id)
    {
    case CONV_PROP_N_SPATIAL_DIMS:
      self->n_spatial = g_value_get_uint (value);
      break;
    case CONV_PROP_GROUPS:
      atomr_convolution_set_groups (self, g_value_get_uint (value));
      break;
    case CONV_PROP_MATH:
      atomr_convolution_set_math (self, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_convolution_class_init (AtomrConvolutionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = atomr_convolution_get_property;
  object_class->set_property = atomr_convolution_set_property;

  /**
   * AtomrConvolution:n-spatial-dims:
   *
   * 2 for a 2-D convolution (4-D views), 3 for a 3-D one (5-D views).
   *
   * Since: 0.2
   */
  conv_properties[CONV_PROP_N_SPATIAL_DIMS] =
    g_param_spec_uint ("n-spatial-dims", NULL, NULL, 2, ATOMR_CUDNN_MAX_SPATIAL_DIMS, 2,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrConvolution:groups:
   *
   * The number of groups: C and K are split into this many groups, group
   * g of the output seeing only group g of the input (C for a depthwise
   * convolution).
   *
   * Since: 0.2
   */
  conv_properties[CONV_PROP_GROUPS] =
    g_param_spec_uint ("groups", NULL, NULL, 1, G_MAXINT32, 1,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrConvolution:math:
   *
   * The arithmetic the convolution may use.
   *
   * Since: 0.2
   */
  conv_properties[CONV_PROP_MATH] =
    g_param_spec_enum ("math", NULL, NULL, ATOMR_TYPE_CUDNN_MATH, ATOMR_CUDNN_MATH_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, CONV_N_PROPS, conv_properties);
}

static void
atomr_convolution_init (AtomrConvolution *self)
{
  self->n_spatial = 2;
  self->groups = 1;
  self->math = ATOMR_CUDNN_MATH_DEFAULT;
  for (guint i = 0; i < ATOMR_CUDNN_MAX_SPATIAL_DIMS; i++)
    {
      self->padding[i] = 0;
      self->stride[i] = 1;
      self->dilation[i] = 1;
    }
}

/**
 * atomr_convolution_new:
 * @n_spatial_dims: 2 or 3
 *
 * A convolution with no padding, stride 1, dilation 1 and one group.
 *
 * Returns: (transfer full): a new [class@Atomr.Convolution]
 *
 * Since: 0.2
 */
AtomrConvolution *
atomr_convolution_new (guint n_spatial_dims)
{
  g_return_val_if_fail (n_spatial_dims >= 2 && n_spatial_dims <= ATOMR_CUDNN_MAX_SPATIAL_DIMS, NULL);
  return g_object_new (ATOMR_TYPE_CONVOLUTION, "n-spatial-dims", n_spatial_dims, NULL);
}

/**
 * atomr_convolution_new_2d:
 * @pad_h: zero padding above and below (≥ 0)
 * @pad_w: zero padding left and right (≥ 0)
 * @stride_h: vertical stride (≥ 1)
 * @stride_w: horizontal stride (≥ 1)
 * @dilation_h: vertical dilation (≥ 1)
 * @dilation_w: horizontal dilation (≥ 1)
 *
 * A 2-D convolution with one group.  Values out of range are critical
 * warnings (programmer errors); use the setters for values that come from
 * outside the program.
 *
 * Returns: (transfer full) (nullable): a new [class@Atomr.Convolution], or %NULL
 *   when a value is out of range
 *
 * Since: 0.2
 */
AtomrConvolution *
atomr_convolution_new_2d (gint64 pad_h,
                          gint64 pad_w,
                          gint64 stride_h,
                          gint64 stride_w,
                          gint64 dilation_h,
                          gint64 dilation_w)
{
  g_autoptr(AtomrConvolution) self = atomr_convolution_new (2);
  g_autoptr(GError) error = NULL;
  const gint64 pad[2] = { pad_h, pad_w };
  const gint64 stride[2] = { stride_h, stride_w };
  const gint64 dilation[2] = { dilation_h, dilation_w };

  if (!atomr_convolution_set_padding (self, pad, 2, &error) ||
      !atomr_convolution_set_stride (self, stride, 2, &error) ||
      !atomr_convolution_set_dilation (self, dilation, 2, &error))
    {
      g_critical ("atomr_convolution_new_2d: %s", error->message);
      return NULL;
    }
  return g_steal_pointer (&self);
}

/**
 * atomr_convolution_get_n_spatial_dims:
 * @self: an [class@Atomr.Convolution]
 *
 * Gets the number of spatial dimensions: 2 or 3.
 *
 * This is the value of the [property@Atomr.Convolution:n-spatial-dims] property.
 *
 * Returns: 2 or 3
 *
 * Since: 0.2
 */
guint
atomr_convolution_get_n_spatial_dims (AtomrConvolution *self)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), 0);
  return self->n_spatial;
}

static gboolean
set_values (AtomrConvolution *self,
            const gchar      *what,
            gint64           *dest,
            const gint64     *values,
            guint             n,
            gint64            min,
            GError          **error)
{
  if (n != self->n_spatial)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "convolution: %u %s values for a %u-D convolution", n, what, self->n_spatial);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    if (values[i] < min || values[i] > G_MAXINT32)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "convolution: %s[%u] is %" G_GINT64_FORMAT " (must be %" G_GINT64_FORMAT
                     " to %d)", what, i, values[i], min, G_MAXINT32);
        return FALSE;
      }
  for (guint i = 0; i < n; i++)
    dest[i] = values[i];
  return TRUE;
}

/**
 * atomr_convolution_set_padding:
 * @self: an [class@Atomr.Convolution]
 * @padding: (array length=n): zero padding per spatial dimension (≥ 0)
 * @n: the number of values: [property@Atomr.Convolution:n-spatial-dims]
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets the zero padding of every spatial dimension.
 *
 * Returns: %TRUE when the values were taken; %FALSE, with
 *   %ATOMR_ERROR_INVALID_ARGUMENT, leaves the convolution unchanged
 *
 * Since: 0.2
 */
gboolean
atomr_convolution_set_padding (AtomrConvolution  *self,
                               const gint64      *padding,
                               guint              n,
                               GError           **error)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), FALSE);
  g_return_val_if_fail (padding != NULL || n == 0, FALSE);
  return set_values (self, "padding", self->padding, padding, n, 0, error);
}

/**
 * atomr_convolution_set_stride:
 * @self: an [class@Atomr.Convolution]
 * @stride: (array length=n): stride per spatial dimension (≥ 1)
 * @n: the number of values: [property@Atomr.Convolution:n-spatial-dims]
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets the stride of every spatial dimension.
 *
 * Returns: %TRUE when the values were taken
 *
 * Since: 0.2
 */
gboolean
atomr_convolution_set_stride (AtomrConvolution  *self,
                              const gint64      *stride,
                              guint              n,
                              GError           **error)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), FALSE);
  g_return_val_if_fail (stride != NULL || n == 0, FALSE);
  return set_values (self, "stride", self->stride, stride, n, 1, error);
}

/**
 * atomr_convolution_set_dilation:
 * @self: an [class@Atomr.Convolution]
 * @dilation: (array length=n): dilation per spatial dimension (≥ 1)
 * @n: the number of values: [property@Atomr.Convolution:n-spatial-dims]
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets the dilation of every spatial dimension.
 *
 * Returns: %TRUE when the values were taken
 *
 * Since: 0.2
 */
gboolean
atomr_convolution_set_dilation (AtomrConvolution  *self,
                                const gint64      *dilation,
                                guint              n,
                                GError           **error)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), FALSE);
  g_return_val_if_fail (dilation != NULL || n == 0, FALSE);
  return set_values (self, "dilation", self->dilation, dilation, n, 1, error);
}

/**
 * atomr_convolution_get_padding:
 * @self: an [class@Atomr.Convolution]
 * @dim: a spatial dimension, 0 for the outermost (D or H)
 *
 * Gets the zero padding of @dim.
 *
 * Returns: the zero padding of @dim
 *
 * Since: 0.2
 */
gint64
atomr_convolution_get_padding (AtomrConvolution *self,
                               guint             dim)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), 0);
  g_return_val_if_fail (dim < self->n_spatial, 0);
  return self->padding[dim];
}

/**
 * atomr_convolution_get_stride:
 * @self: an [class@Atomr.Convolution]
 * @dim: a spatial dimension
 *
 * Gets the stride of @dim.
 *
 * Returns: the stride of @dim
 *
 * Since: 0.2
 */
gint64
atomr_convolution_get_stride (AtomrConvolution *self,
                              guint             dim)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), 0);
  g_return_val_if_fail (dim < self->n_spatial, 0);
  return self->stride[dim];
}

/**
 * atomr_convolution_get_dilation:
 * @self: an [class@Atomr.Convolution]
 * @dim: a spatial dimension
 *
 * Gets the dilation of @dim.
 *
 * Returns: the dilation of @dim
 *
 * Since: 0.2
 */
gint64
atomr_convolution_get_dilation (AtomrConvolution *self,
                                guint             dim)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), 0);
  g_return_val_if_fail (dim < self->n_spatial, 0);
  return self->dilation[dim];
}

/**
 * atomr_convolution_get_groups:
 * @self: an [class@Atomr.Convolution]
 *
 * Gets the number of groups.
 *
 * This is the value of the [property@Atomr.Convolution:groups] property.
 *
 * Returns: the number of groups
 *
 * Since: 0.2
 */
guint
atomr_convolution_get_groups (AtomrConvolution *self)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), 1);
  return self->groups;
}

/**
 * atomr_convolution_set_groups:
 * @self: an [class@Atomr.Convolution]
 * @groups: the number of groups (≥ 1)
 *
 * Sets [property@Atomr.Convolution:groups].
 *
 * Since: 0.2
 */
void
atomr_convolution_set_groups (AtomrConvolution *self,
                              guint             groups)
{
  g_return_if_fail (ATOMR_IS_CONVOLUTION (self));
  g_return_if_fail (groups >= 1 && groups <= G_MAXINT32);
  if (self->groups == groups)
    return;
  self->groups = groups;
  g_object_notify_by_pspec (G_OBJECT (self), conv_properties[CONV_PROP_GROUPS]);
}

/**
 * atomr_convolution_get_math:
 * @self: an [class@Atomr.Convolution]
 *
 * Gets the math the convolution may use.
 *
 * This is the value of the [property@Atomr.Convolution:math] property.
 *
 * Returns: the math the convolution may use
 *
 * Since: 0.2
 */
AtomrCudnnMath
atomr_convolution_get_math (AtomrConvolution *self)
{
  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), ATOMR_CUDNN_MATH_DEFAULT);
  return self->math;
}

/**
 * atomr_convolution_set_math:
 * @self: an [class@Atomr.Convolution]
 * @math: the math the convolution may use
 *
 * Sets [property@Atomr.Convolution:math].
 *
 * Since: 0.2
 */
void
atomr_convolution_set_math (AtomrConvolution *self,
                            AtomrCudnnMath    math)
{
  g_return_if_fail (ATOMR_IS_CONVOLUTION (self));
  g_return_if_fail (math <= ATOMR_CUDNN_MATH_FMA);
  if (self->math == math)
    return;
  self->math = math;
  g_object_notify_by_pspec (G_OBJECT (self), conv_properties[CONV_PROP_MATH]);
}

gboolean
atomr_cudnn_conv_output_shape (const AtomrCudnnConvParams *p,
                               const gchar                *op,
                               const gchar                *x_name,
                               const gint64               *x_shape,
                               guint                       x_n_dims,
                               const gchar                *w_name,
                               const gint64               *w_shape,
                               guint                       w_n_dims,
                               gint64                     *y_shape,
                               GError                    **error)
{
  guint n = p->n_spatial + 2;

  if (x_n_dims != n || w_n_dims != n)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: a %u-D convolution takes %u-D views; %s has %u dimensions, %s %u",
                   op, p->n_spatial, n, x_name, x_n_dims, w_name, w_n_dims);
      return FALSE;
    }
  if (x_shape[1] % p->groups != 0 || w_shape[0] % p->groups != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %" G_GINT64_FORMAT " input channels and %" G_GINT64_FORMAT
                   " output channels do not split into %u groups", op, x_shape[1], w_shape[0],
                   p->groups);
      return FALSE;
    }
  if (w_shape[1] * p->groups != x_shape[1])
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s has %" G_GINT64_FORMAT " channels per group but %s has %"
                   G_GINT64_FORMAT " channels in %u groups (need C / groups = %" G_GINT64_FORMAT ")",
                   op, w_name, w_shape[1], x_name, x_shape[1], p->groups, x_shape[1] / p->groups);
      return FALSE;
    }
  y_shape[0] = x_shape[0];
  y_shape[1] = w_shape[0];
  for (guint i = 0; i < p->n_spatial; i++)
    {
      gint64 in = x_shape[i + 2] + 2 * p->padding[i];
      gint64 extent = p->dilation[i] * (w_shape[i + 2] - 1) + 1;

      if (extent > in)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: the dilated filter (%" G_GINT64_FORMAT ") is larger than the padded "
                       "input (%" G_GINT64_FORMAT ") in spatial dimension %u", op, extent, in, i);
          return FALSE;
        }
      y_shape[i + 2] = (in - extent) / p->stride[i] + 1;
    }
  return TRUE;
}

/**
 * atomr_convolution_get_output_shape:
 * @self: an [class@Atomr.Convolution]
 * @x_shape: (array length=x_n_dims): the input's shape, N × C × spatial
 * @x_n_dims: its length
 * @w_shape: (array length=w_n_dims): the filter's shape, K × C/groups × spatial
 * @w_n_dims: its length
 * @y_shape: (out) (array length=y_n_dims) (transfer full): the output's shape
 * @y_n_dims: (out): its length
 * @error: return location for a [struct@GLib.Error]
 *
 * The shape a forward convolution of @x_shape by @w_shape produces.
 *
 * Returns: %TRUE, or %FALSE with %ATOMR_ERROR_INVALID_ARGUMENT when the
 *   shapes do not fit the convolution
 *
 * Since: 0.2
 */
gboolean
atomr_convolution_get_output_shape (AtomrConvolution  *self,
                                    const gint64      *x_shape,
                                    guint              x_n_dims,
                                    const gint64      *w_shape,
                                    guint              w_n_dims,
                                    gint64           **y_shape,
                                    guint             *y_n_dims,
                                    GError           **error)
{
  AtomrCudnnConvParams p;
  gint64 out[ATOMR_CUDNN_MAX_SPATIAL_DIMS + 2];

  g_return_val_if_fail (ATOMR_IS_CONVOLUTION (self), FALSE);
  g_return_val_if_fail (y_shape != NULL && y_n_dims != NULL, FALSE);
  *y_shape = NULL;
  *y_n_dims = 0;
  atomr_cudnn_conv_params_get (self, &p);
  for (guint i = 0; i < x_n_dims; i++)
    if (x_shape[i] < 1)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "convolution: x_shape[%u] is %" G_GINT64_FORMAT " (must be ≥ 1)", i, x_shape[i]);
        return FALSE;
      }
  for (guint i = 0; i < w_n_dims; i++)
    if (w_shape[i] < 1)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "convolution: w_shape[%u] is %" G_GINT64_FORMAT " (must be ≥ 1)", i, w_shape[i]);
        return FALSE;
      }
  if (!atomr_cudnn_conv_output_shape (&p, "convolution", "x", x_shape, x_n_dims, "w", w_shape,
                                      w_n_dims, out, error))
    return FALSE;
  *y_n_dims = p.n_spatial + 2;
  *y_shape = g_memdup2 (out, sizeof (gint64) * *y_n_dims);
  return TRUE;
}

void
atomr_cudnn_conv_params_get (AtomrConvolution     *self,
                             AtomrCudnnConvParams *p)
{
  memset (p, 0, sizeof *p);
  p->n_spatial = self->n_spatial;
  p->groups = self->groups;
  p->math = self->math;
  for (guint i = 0; i < ATOMR_CUDNN_MAX_SPATIAL_DIMS; i++)
    {
      p->padding[i] = self->padding[i];
      p->stride[i] = self->stride[i];
      p->dilation[i] = self->dilation[i];
    }
}

/* ------------------------------------------------------------------ */

/**
 * AtomrPooling:
 *
 * A 2-D pooling window: its mode, size, zero padding and stride.  The
 * output of an H × W input has 1 + (H + 2·pad_h − window_h) / stride_h
 * rows (rounded down), and as many columns by the same rule.
 *
 * A bare g_object_new() gives a 1 × 1 max pooling with stride 1.
 *
 * Since: 0.2
 */
struct _AtomrPooling
{
  GObject           parent_instance;
  AtomrPoolingMode  mode;
  guint             n_spatial;
  gint64            window[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64            padding[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64            stride[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
};

G_DEFINE_FINAL_TYPE (AtomrPooling, atomr_pooling, G_TYPE_OBJECT)

enum {
  POOL_PROP_0,
  POOL_PROP_MODE,
  POOL_PROP_N_SPATIAL_DIMS,
  POOL_N_PROPS
};

static GParamSpec *pool_properties[POOL_N_PROPS];

static void
atomr_pooling_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  AtomrPooling *self = ATOMR_POOLING (object);

  switch (prop_id)
    {
    case POOL_PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case POOL_PROP_N_SPATIAL_DIMS:
      g_value_set_uint (value, self->n_spatial);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_pooling_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  AtomrPooling *self = ATOMR_POOLING (object);

  switch (prop_id)
    {
    case POOL_PROP_MODE:
      self->mode = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_pooling_class_init (AtomrPoolingClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = atomr_pooling_get_property;
  object_class->set_property = atomr_pooling_set_property;

  /**
   * AtomrPooling:mode:
   *
   * What each window computes.
   *
   * Since: 0.2
   */
  pool_properties[POOL_PROP_MODE] =
    g_param_spec_enum ("mode", NULL, NULL, ATOMR_TYPE_POOLING_MODE, ATOMR_POOLING_MAX,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrPooling:n-spatial-dims:
   *
   * 2 for a 2-D window (4-D views), 3 for a 3-D one (5-D views).
   *
   * Since: 0.2
   */
  pool_properties[POOL_PROP_N_SPATIAL_DIMS] =
    g_param_spec_uint ("n-spatial-dims", NULL, NULL, 2, ATOMR_CUDNN_MAX_SPATIAL_DIMS, 2,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, POOL_N_PROPS, pool_properties);
}

static void
atomr_pooling_init (AtomrPooling *self)
{
  self->n_spatial = 2;
  for (guint i = 0; i < ATOMR_CUDNN_MAX_SPATIAL_DIMS; i++)
    {
      self->window[i] = 1;
      self->padding[i] = 0;
      self->stride[i] = 1;
    }
}

/**
 * atomr_pooling_new:
 * @mode: what each window computes
 * @window: (array length=n): the window's extent per spatial dimension (≥ 1)
 * @padding: (array length=n): zero padding per spatial dimension
 *   (0 ≤ padding < window)
 * @stride: (array length=n): stride per spatial dimension (≥ 1)
 * @n: the number of spatial dimensions: 2 (N × C × H × W views) or 3
 *   (N × C × D × H × W)
 * @error: return location for a [struct@GLib.Error]
 *
 * A pooling window from values that may come from outside the program:
 * out-of-range values are %ATOMR_ERROR_INVALID_ARGUMENT naming the value.
 *
 * Returns: (transfer full) (nullable): a new [class@Atomr.Pooling], or %NULL with
 *   @error set
 *
 * Since: 0.2
 */
AtomrPooling *
atomr_pooling_new (AtomrPoolingMode   mode,
                   const gint64      *window,
                   const gint64      *padding,
                   const gint64      *stride,
                   guint              n,
                   GError           **error)
{
  AtomrPooling *self;

  if (n != 2 && n != 3)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "pooling: %u spatial dimensions (takes 2 or 3)", n);
      return NULL;
    }
  if ((guint) mode > ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "pooling: mode %d is not an AtomrPoolingMode", (gint) mode);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      const gchar *bad = NULL;
      gint64 value = 0;

      if (window[i] < 1 || window[i] > G_MAXINT32)
        bad = "window", value = window[i];
      else if (stride[i] < 1 || stride[i] > G_MAXINT32)
        bad = "stride", value = stride[i];
      else if (padding[i] < 0 || padding[i] >= window[i])
        bad = "padding", value = padding[i];
      if (bad)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "pooling: %s[%u] is %" G_GINT64_FORMAT " (window 1 to %d, stride 1 to %d, "
                       "0 ≤ padding < window)", bad, i, value, G_MAXINT32, G_MAXINT32);
          return NULL;
        }
    }
  self = g_object_new (ATOMR_TYPE_POOLING, "mode", mode, NULL);
  self->n_spatial = n;
  for (guint i = 0; i < n; i++)
    {
      self->window[i] = window[i];
      self->padding[i] = padding[i];
      self->stride[i] = stride[i];
    }
  return self;
}

/**
 * atomr_pooling_new_2d:
 * @mode: what each window computes
 * @window_h: window height (≥ 1)
 * @window_w: window width (≥ 1)
 * @pad_h: zero padding above and below (0 ≤ pad_h < window_h)
 * @pad_w: zero padding left and right (0 ≤ pad_w < window_w)
 * @stride_h: vertical stride (≥ 1)
 * @stride_w: horizontal stride (≥ 1)
 *
 * A 2-D pooling window.  Out-of-range values are critical warnings.
 *
 * Returns: (transfer full) (nullable): a new [class@Atomr.Pooling], or %NULL when
 *   a value is out of range
 *
 * Since: 0.2
 */
AtomrPooling *
atomr_pooling_new_2d (AtomrPoolingMode mode,
                      gint64           window_h,
                      gint64           window_w,
                      gint64           pad_h,
                      gint64           pad_w,
                      gint64           stride_h,
                      gint64           stride_w)
{
  AtomrPooling *self;

  g_return_val_if_fail (mode <= ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING, NULL);
  g_return_val_if_fail (window_h >= 1 && window_h <= G_MAXINT32, NULL);
  g_return_val_if_fail (window_w >= 1 && window_w <= G_MAXINT32, NULL);
  g_return_val_if_fail (pad_h >= 0 && pad_h < window_h, NULL);
  g_return_val_if_fail (pad_w >= 0 && pad_w < window_w, NULL);
  g_return_val_if_fail (stride_h >= 1 && stride_h <= G_MAXINT32, NULL);
  g_return_val_if_fail (stride_w >= 1 && stride_w <= G_MAXINT32, NULL);

  self = g_object_new (ATOMR_TYPE_POOLING, "mode", mode, NULL);
  self->window[0] = window_h;
  self->window[1] = window_w;
  self->padding[0] = pad_h;
  self->padding[1] = pad_w;
  self->stride[0] = stride_h;
  self->stride[1] = stride_w;
  return self;
}

/**
 * atomr_pooling_get_mode:
 * @self: an [class@Atomr.Pooling]
 *
 * Gets what each window computes.
 *
 * This is the value of the [property@Atomr.Pooling:mode] property.
 *
 * Returns: what each window computes
 *
 * Since: 0.2
 */
AtomrPoolingMode
atomr_pooling_get_mode (AtomrPooling *self)
{
  g_return_val_if_fail (ATOMR_IS_POOLING (self), ATOMR_POOLING_MAX);
  return self->mode;
}

/**
 * atomr_pooling_get_window:
 * @self: an [class@Atomr.Pooling]
 * @dim: a spatial dimension: 0 (height) or 1 (width); for 3-D windows
 *   0 (depth), 1 (height) or 2 (width)
 *
 * Gets the window's extent in @dim.
 *
 * Returns: the window's extent in @dim
 *
 * Since: 0.2
 */
gint64
atomr_pooling_get_window (AtomrPooling *self,
                          guint         dim)
{
  g_return_val_if_fail (ATOMR_IS_POOLING (self) && dim < self->n_spatial, 0);
  return self->window[dim];
}

/**
 * atomr_pooling_get_padding:
 * @self: an [class@Atomr.Pooling]
 * @dim: a spatial dimension: 0 (height) or 1 (width); for 3-D windows
 *   0 (depth), 1 (height) or 2 (width)
 *
 * Gets the zero padding in @dim.
 *
 * Returns: the zero padding in @dim
 *
 * Since: 0.2
 */
gint64
atomr_pooling_get_padding (AtomrPooling *self,
                           guint         dim)
{
  g_return_val_if_fail (ATOMR_IS_POOLING (self) && dim < self->n_spatial, 0);
  return self->padding[dim];
}

/**
 * atomr_pooling_get_stride:
 * @self: an [class@Atomr.Pooling]
 * @dim: a spatial dimension: 0 (height) or 1 (width); for 3-D windows
 *   0 (depth), 1 (height) or 2 (width)
 *
 * Gets the stride in @dim.
 *
 * Returns: the stride in @dim
 *
 * Since: 0.2
 */
gint64
atomr_pooling_get_stride (AtomrPooling *self,
                          guint         dim)
{
  g_return_val_if_fail (ATOMR_IS_POOLING (self) && dim < self->n_spatial, 0);
  return self->stride[dim];
}

void
atomr_cudnn_pooling_params_get (AtomrPooling          *self,
                                AtomrCudnnPoolParams  *p)
{
  memset (p, 0, sizeof *p);
  p->mode = self->mode;
  p->n_spatial = self->n_spatial;
  for (guint i = 0; i < self->n_spatial; i++)
    {
      p->window[i] = self->window[i];
      p->padding[i] = self->padding[i];
      p->stride[i] = self->stride[i];
    }
}

/**
 * atomr_pooling_get_n_spatial_dims:
 * @self: an [class@Atomr.Pooling]
 *
 * Gets how many spatial dimensions the window has.
 *
 * This is the value of the [property@Atomr.Pooling:n-spatial-dims] property.
 *
 * Returns: 2 or 3
 *
 * Since: 0.2
 */
guint
atomr_pooling_get_n_spatial_dims (AtomrPooling *self)
{
  g_return_val_if_fail (ATOMR_IS_POOLING (self), 2);
  return self->n_spatial;
}

gint32
atomr_cudnn_view_alignment (AtomrTensor *view)
{
  guint64 addr = atomr_tensor_get_ptr (view);
  gint32 a = 16;

  if (addr == 0)
    addr = atomr_tensor_get_byte_offset (view);
  while (a > 1 && addr % (guint64) a != 0)
    a /= 2;
  return a;
}
