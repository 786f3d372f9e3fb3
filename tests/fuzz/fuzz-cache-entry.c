/* fuzz-cache-entry.c — the kernel cache file reader
 *
 * The first byte chooses whether the checksum is rewritten to match (odd)
 * so that the fuzzer also reaches what lies behind it (the section table,
 * the metadata JSON, the manifest); the rest is an entry file.  It goes
 * through atomr_kernel_cache_verify_entry_data(), then as a file of a
 * cache directory through atomr_kernel_cache_list() and every entry
 * accessor.  Invariant: no crash, and failures come with a GError.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "atomr.h"
#include "nvrtc/atomr-kernel-cache-private.h"
#include "fuzz-common.h"

static gchar *
entry_key (const guint8 *data,
           gsize         size)
{
  if (size >= 80)
    {
      gboolean hex = TRUE;
      for (guint i = 16; i < 80 && hex; i++)
        hex = g_ascii_isdigit (data[i]) || (data[i] >= 'a' && data[i] <= 'f');
      if (hex)
        return g_strndup ((const gchar *) data + 16, 64);
    }
  return g_strnfill (64, 'a');
}

int
FUZZ_ENTRY (const uint8_t *data,
            size_t         size)
{
  static gchar *dir;
  g_autofree guint8 *copy = NULL;
  g_autofree gchar *key = NULL;
  g_autofree gchar *name = NULL;
  g_autofree gchar *path = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(GListModel) list = NULL;

  fuzz_isolate ();
  if (dir == NULL)
    dir = g_dir_make_tmp ("atomr-fuzz-cache-XXXXXX", NULL);
  if (size < 1)
    return 0;
  copy = g_memdup2 (data + 1, size - 1);
  size--;
  if (data[0] & 1)
    atomr_kernel_cache_seal_entry_data (copy, size);
  key = entry_key (copy, size);
  bytes = g_bytes_new_static (copy, size);

  if (!atomr_kernel_cache_verify_entry_data (key, bytes, &error) && error == NULL)
    g_error ("verify_entry_data failed without a GError");
  g_clear_error (&error);

  name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  path = g_build_filename (dir, name, NULL);
  if (!g_file_set_contents (path, (const gchar *) copy, (gssize) size, &error))
    g_error ("%s", error->message);
  cache = atomr_kernel_cache_new (dir);
  list = atomr_kernel_cache_list (cache, &error);
  if (list == NULL && error == NULL)
    g_error ("list failed without a GError");
  g_clear_error (&error);
  for (guint i = 0; list && i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
      const gchar * const *names = atomr_kernel_cache_entry_get_kernel_names (e);
      g_autofree gchar *source = NULL;
      g_autofree gchar *log = NULL;
      g_autoptr(GBytes) ptx = NULL;
      g_autoptr(GBytes) cubin = NULL;
      g_autoptr(GBytes) ltoir = NULL;
      GDateTime *created = atomr_kernel_cache_entry_get_created (e);
      g_auto(GStrv) diff = NULL;

      (void) created;

      for (guint k = 0; names && names[k]; k++)
        (void) atomr_kernel_cache_entry_lookup_lowered_name (e, names[k]);
      (void) atomr_kernel_cache_entry_get_flags (e);
      (void) atomr_kernel_cache_entry_get_arch (e);
      (void) atomr_kernel_cache_entry_get_nvrtc_version (e);
      (void) atomr_kernel_cache_entry_get_manifest (e);
      source = atomr_kernel_cache_entry_load_source (e, NULL);
      log = atomr_kernel_cache_entry_load_log (e, NULL);
      ptx = atomr_kernel_cache_entry_load_ptx (e, NULL);
      cubin = atomr_kernel_cache_entry_load_cubin (e, NULL);
      ltoir = atomr_kernel_cache_entry_load_ltoir (e, NULL);
      diff = atomr_kernel_cache_entry_diff (e, e);
    }
  g_unlink (path);
  return 0;
}
