/* atomr-kernel-params-private.h — what a kernel's parameters are, as far as
 * it can be known without the source
 *
 * Two sources, best first:
 *  - the lowered (mangled) name of a C++ kernel: the Itanium mangling names
 *    every parameter type (template parameters included);
 *  - the .entry of the PTX: .f32/.f64 are floating point, .u32/.s32 and
 *    narrower are integers, .u64 is a pointer *or* a 64-bit integer (an
 *    extern "C" kernel says no more), .b8 arrays are structs.
 * What neither says (an extern "C" kernel loaded from a CUBIN only, an
 * LTO module) stays UNKNOWN and only the size is checked.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  ATOMR_PARAM_UNKNOWN,          /* nothing known beyond the size */
  ATOMR_PARAM_POINTER,          /* T * */
  ATOMR_PARAM_FLOAT,            /* float, double, half as a builtin */
  ATOMR_PARAM_INT,              /* integers, bool, char */
  ATOMR_PARAM_INT_OR_POINTER,   /* PTX .u64 / .b64 / .s64 */
  ATOMR_PARAM_STRUCT,           /* passed by value: a class, union, array */
} AtomrParamKind;

typedef struct {
  AtomrParamKind kind;
  gchar         *type;   /* readable: "float *", "int", "__half", ".u64" */
} AtomrParamType;

/* The argument kinds AtomrKernelArgs records. */
typedef enum {
  ATOMR_ARG_BYTES,    /* raw bytes, complex, half types: size only */
  ATOMR_ARG_BUFFER,
  ATOMR_ARG_FLOAT,
  ATOMR_ARG_INT,
} AtomrArgKind;

/* Parameter types of @lowered_name from its mangling, else from the
 * .entry in @ptx (nullable), else UNKNOWN.  Always returns @n_params
 * entries (an AtomrParamType array, cleared with
 * atomr_param_type_clear()). */
GArray      *atomr_kernel_param_types (const gchar *lowered_name,
                                       const gchar *ptx,
                                       gsize        ptx_len,
                                       guint        n_params);
void         atomr_param_type_clear   (gpointer     data);

/* Parameter types from an Itanium mangled function name, NULL when the
 * name is not mangled or uses what the parser does not follow. */
GPtrArray   *atomr_demangle_param_types (const gchar *mangled);

/* The parameter space a launch may use (CUDA 12.1 and later on sm_70 and
 * later; older drivers have 4 KiB and refuse larger kernels at load). */
#define ATOMR_PARAM_MAX_BYTES 32764

/* The parameter layout of ".entry @name" in @ptx as the driver lays the
 * parameters out (each at the next multiple of its alignment: .align N if
 * declared, else the scalar's size): "OFFSET:SIZE:CLASS" per parameter,
 * joined by ',', "" for none.  CLASS: 'i' integer of 1, 2 or 4 bytes, 'q'
 * a 64-bit word (pointer or integer), 'f' f32/f64, 's' a byte array (a
 * struct by value).  NULL when the entry is absent or declares what this
 * parser does not follow (then the driver is asked at load). */
gchar       *atomr_ptx_param_layout   (const gchar *ptx,
                                       gsize        len,
                                       const gchar *name);
/* Checks a layout string strictly (syntax, classes and sizes, natural
 * alignment of scalars, no overlap, the parameter space) and appends its
 * offsets and sizes (gsize, both nullable) and types (AtomrParamType,
 * nullable).  FALSE for anything wrong: a layout that fails is never
 * used. */
gboolean     atomr_param_layout_parse (const gchar *layout,
                                       GArray      *offsets,
                                       GArray      *sizes,
                                       GArray      *types);
/* NULL if @arg fits @param, else why not ("a float for int"). */
gchar       *atomr_param_check        (const AtomrParamType *param,
                                       AtomrArgKind          arg);

G_END_DECLS
