/* atomr-loader-private.h — one loader for every CUDA library
 *
 * Nothing in libatomr links a CUDA library: each one is dlopen()ed on
 * first use, its entry points resolved into a function table, and the
 * outcome (table or error) remembered for the life of the process.  A
 * missing library fails only the actor that needs it, with
 * ATOMR_ERROR_NOT_SUPPORTED naming every file that was tried.
 *
 * Where a library is looked for, in order:
 *   1. the file named by its override variable (ATOMR_<LIB>_LIBRARY, e.g.
 *      ATOMR_CUBLAS_LIBRARY=/opt/cublas/lib/libcublas.so.13) — when set,
 *      it is the only candidate;
 *   2. $CUDA_PATH/lib64, the toolkit the library was built against, and
 *      /usr/local/cuda/lib64;
 *   3. the bare soname, for the dynamic linker's own search (distribution
 *      packages: cuDNN and NCCL live in /usr/lib/<triplet>).
 *
 * Tables for the math libraries are generated at build time from a list
 * of entry points (lib/actors/<lib>/<lib>.symbols, build-aux/gen-cuda-table.py):
 * the generated header redirects each name to the table, so actor code
 * calls cublasSgemm() as usual.  A name missing from the list is an
 * undefined symbol at link time, never a silent direct link.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const gchar *name;      /* exported symbol */
  gsize        offset;    /* of its slot in the table */
  gboolean     optional;  /* NULL when absent instead of failing the load */
} AtomrLoaderSymbol;

typedef struct {
  const gchar             *library;   /* as in messages: "cuBLAS" */
  const gchar             *env;       /* override variable */
  const gchar             *soname;    /* "libcublas.so.13" */
  const AtomrLoaderSymbol *symbols;
  guint                    n_symbols;
  gpointer                 table;     /* filled on success */
  gsize                    table_size;
} AtomrLoaderSpec;

/* One per library, zero-initialised (static storage). */
typedef struct {
  gsize    once;
  gboolean loaded;
  GError  *error;
  gchar   *path;
  gpointer handle;
} AtomrLoaderState;

/* Opens the library once (thread-safe) and fills spec->table.  Later
 * calls return the remembered outcome.  On failure: NOT_SUPPORTED with
 * the files tried and their dlerror(), or the missing entry point. */
gboolean     atomr_loader_load      (const AtomrLoaderSpec *spec,
                                     AtomrLoaderState      *state,
                                     GError               **error);
/* TRUE once atomr_loader_load() succeeded (no loading attempt). */
gboolean     atomr_loader_is_loaded (AtomrLoaderState      *state);
/* The file that was opened, or NULL. */
const gchar *atomr_loader_get_path  (AtomrLoaderState      *state);

/* The files atomr_loader_open() tries, in order (owned strings): for code
 * that must name the file a load would open without loading it (the kernel
 * cache keys NVRTC's identity). */
GPtrArray   *atomr_loader_candidate_paths (const gchar          *env,
                                           const gchar          *soname);

/* The search alone, for loaders with their own resolution step (the
 * driver through cuGetProcAddress, NVRTC's versioned entry points).
 * Returns the dlopen() handle and the path that worked. */
gpointer     atomr_loader_open      (const gchar           *library,
                                     const gchar           *env,
                                     const gchar           *soname,
                                     gchar                **opened_path,
                                     GError               **error);

G_END_DECLS
