/* atomr-kernel-cache-manifest.c — key manifests: building them, explain and diff
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-impl-private.h"
#include "atomr-compile-options-private.h"
#include "atomr-nvrtc-loader-private.h"

static gchar *
sha256_of (gconstpointer data,
           gsize         len)
{
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, len);
}

/* What the key of @request was computed from, readable: stored in the
 * entry and compared by explain/diff.  Header digests are taken here (at
 * store time); a header edited between the key and the store shows a
 * digest of the newer contents. */
JsonNode *
atomr_cache_manifest_build (AtomrCacheRequest *request,
                            const gchar       *source)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autofree gchar *source_sum = sha256_of (source, strlen (source));

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "manifest_version");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "source_sha256");
  json_builder_add_string_value (b, source_sum);
  json_builder_set_member_name (b, "source_bytes");
  json_builder_add_int_value (b, strlen (source));
  json_builder_set_member_name (b, "program_name");
  if (request->program_name)
    json_builder_add_string_value (b, request->program_name);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "name_expressions");
  json_builder_begin_array (b);
  for (guint i = 0; request->kernel_names && request->kernel_names[i]; i++)
    json_builder_add_string_value (b, request->kernel_names[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "flags");
  json_builder_begin_array (b);
  for (guint i = 0; request->flags && request->flags[i]; i++)
    json_builder_add_string_value (b, request->flags[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "arch");
  if (request->arch)
    json_builder_add_string_value (b, request->arch);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "nvrtc");
  json_builder_add_string_value (b, atomr_nvrtc_get_identity () ? atomr_nvrtc_get_identity () : "");
  json_builder_set_member_name (b, "nvjitlink");
  if (atomr_cache_flags_use_lto ((const gchar * const *) request->flags))
    json_builder_add_string_value (b, atomr_jitlink_get_identity () ? atomr_jitlink_get_identity () : "");
  else
    json_builder_add_null_value (b);
  /* The versions the libraries report (the key holds them when only the
   * dynamic linker finds a library; otherwise the file identity above,
   * which is finer).  The manifest is written after a compile, so NVRTC
   * (and with LTO nvJitLink) is loaded already. */
  json_builder_set_member_name (b, "nvrtc_version");
  {
    const AtomrNvrtcLib *lib = atomr_nvrtc_load (NULL);
    g_autofree gchar *v = lib ? g_strdup_printf ("%d.%d", lib->major, lib->minor) : NULL;
    if (v)
      json_builder_add_string_value (b, v);
    else
      json_builder_add_null_value (b);
  }
  json_builder_set_member_name (b, "nvjitlink_version");
  {
    const AtomrJitLinkLib *lib = atomr_cache_flags_use_lto ((const gchar * const *) request->flags)
                                 ? atomr_jitlink_load (NULL) : NULL;
    g_autofree gchar *v = lib ? g_strdup_printf ("%u.%u", lib->major, lib->minor) : NULL;
    if (v)
      json_builder_add_string_value (b, v);
    else
      json_builder_add_null_value (b);
  }
  json_builder_set_member_name (b, "headers");
  json_builder_begin_object (b);
  for (guint i = 0; request->headers && i < request->headers->len; i++)
    {
      AtomrCacheHeaderStamp *stamp = g_ptr_array_index (request->headers, i);
      g_autofree gchar *text = NULL;
      gsize len = 0;

      json_builder_set_member_name (b, stamp->path);
      if (stamp->exists && g_file_get_contents (stamp->path, &text, &len, NULL))
        {
          g_autofree gchar *sum = sha256_of (text, len);
          json_builder_add_string_value (b, sum);
        }
      else
        json_builder_add_null_value (b);   /* absent: could appear */
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "link_objects");
  json_builder_begin_array (b);
  for (guint i = 0; request->link_objects && i < request->link_objects->len; i++)
    {
      gsize len;
      gconstpointer data = g_bytes_get_data (g_ptr_array_index (request->link_objects, i), &len);
      g_autofree gchar *sum = sha256_of (data, len);
      json_builder_add_string_value (b, sum);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/**
 * atomr_kernel_cache_entry_get_manifest:
 * @self: an entry
 *
 * What the entry's key was computed from, as a JSON object:
 * `manifest_version`, `source_sha256`, `source_bytes`, `name_expressions`,
 * `flags`, `arch`, `nvrtc` (the library's identity), `nvrtc_version`
 * (what nvrtcVersion() reports), `nvjitlink` and `nvjitlink_version`
 * (LTO entries; null otherwise), `headers` (path →
 * SHA-256 of every header read, null where an absent header could
 * appear), `link_objects` (SHA-256 of each), and whatever the key gains
 * later.
 *
 * Since 0.2 it also holds `resources`, which is not an input of the key
 * (explain and diff ignore it): what ptxas (or nvJitLink, for LTO)
 * reported for each kernel when the entry was compiled — an object with
 * `tool` ("ptxas" or "nvjitlink"), `kernels` (each with `name`, `arch`,
 * `registers`, `barriers`, `shared_bytes`, `stack_bytes`, `spill_stores`,
 * `spill_loads`, `const_bytes` or null) and `functions` (device functions
 * with their `stack_bytes` and spills).  It is absent for entries compiled
 * for a virtual architecture and for entries written before it existed;
 * [method@Atomr.KernelCacheEntry.analyse_resources] computes it for them.
 *
 * Returns: (nullable): the manifest, %NULL for entries written without one
 *
 * Since: 0.2
 */
const gchar *
atomr_kernel_cache_entry_get_manifest (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  if (self->meta.manifest == NULL && self->h.manifest_size > 0 && self->path)
    {
      /* Read on first use (not when listing: it can be large), checksum
       * verified with the rest of the file. */
      g_autoptr(GBytes) bytes = atomr_cache_entry_load_section (self, SECTION_MANIFEST, NULL);
      gchar *text = bytes ? atomr_cache_bytes_to_string (bytes) : NULL;
      if (text && !g_atomic_pointer_compare_and_exchange (&self->meta.manifest, NULL, text))
        g_free (text);
    }
  return self->meta.manifest;
}

static JsonObject *
parse_object (const gchar *json,
              JsonParser  *parser)
{
  if (json == NULL || !json_parser_load_from_data (parser, json, -1, NULL)
      || json_parser_get_root (parser) == NULL   /* empty text */
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  return json_node_get_object (json_parser_get_root (parser));
}

static gchar *
short_value (JsonNode *n)
{
  if (n == NULL)
    return g_strdup ("(none)");
  if (JSON_NODE_HOLDS_NULL (n))
    return g_strdup ("null");
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (n));
  return json_to_string (n, FALSE);
}

static void
diff_string_lists (GPtrArray   *out,
                   const gchar *what,
                   JsonNode    *a,
                   JsonNode    *b)
{
  g_autoptr(GPtrArray) va = g_ptr_array_new ();
  g_autoptr(GPtrArray) vb = g_ptr_array_new ();
  gboolean same_set = TRUE;

  for (guint k = 0; k < 2; k++)
    {
      JsonNode *n = k ? b : a;
      GPtrArray *v = k ? vb : va;
      if (n && JSON_NODE_HOLDS_ARRAY (n))
        for (guint i = 0; i < json_array_get_length (json_node_get_array (n)); i++)
          {
            JsonNode *e = json_array_get_element (json_node_get_array (n), i);
            if (JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_STRING)
              g_ptr_array_add (v, (gpointer) json_node_get_string (e));
          }
    }
  for (guint i = 0; i < va->len; i++)
    if (!g_ptr_array_find_with_equal_func (vb, va->pdata[i], g_str_equal, NULL))
      {
        g_ptr_array_add (out, g_strdup_printf ("%s removed: %s", what, (gchar *) va->pdata[i]));
        same_set = FALSE;
      }
  for (guint i = 0; i < vb->len; i++)
    if (!g_ptr_array_find_with_equal_func (va, vb->pdata[i], g_str_equal, NULL))
      {
        g_ptr_array_add (out, g_strdup_printf ("%s added: %s", what, (gchar *) vb->pdata[i]));
        same_set = FALSE;
      }
  if (same_set && va->len == vb->len)
    for (guint i = 0; i < va->len; i++)
      if (!g_str_equal (va->pdata[i], vb->pdata[i]))
        {
          g_ptr_array_add (out, g_strdup_printf ("%s reordered", what));
          break;
        }
}

static void
diff_headers (GPtrArray *out,
              JsonNode  *a,
              JsonNode  *b)
{
  JsonObject *oa = a && JSON_NODE_HOLDS_OBJECT (a) ? json_node_get_object (a) : NULL;
  JsonObject *ob = b && JSON_NODE_HOLDS_OBJECT (b) ? json_node_get_object (b) : NULL;
  g_autoptr(GList) ma = oa ? json_object_get_members (oa) : NULL;
  g_autoptr(GList) mb = ob ? json_object_get_members (ob) : NULL;

  for (GList *l = ma; l; l = l->next)
    {
      JsonNode *na = json_object_get_member (oa, l->data);
      JsonNode *nb = ob && json_object_has_member (ob, l->data) ? json_object_get_member (ob, l->data) : NULL;
      gboolean had = !JSON_NODE_HOLDS_NULL (na);

      if (nb == NULL)
        {
          if (had)
            g_ptr_array_add (out, g_strdup_printf ("header no longer read: %s", (gchar *) l->data));
        }
      else if (had && JSON_NODE_HOLDS_NULL (nb))
        g_ptr_array_add (out, g_strdup_printf ("header disappeared: %s", (gchar *) l->data));
      else if (!had && !JSON_NODE_HOLDS_NULL (nb))
        g_ptr_array_add (out, g_strdup_printf ("header appeared (shadows or adds one): %s", (gchar *) l->data));
      else if (had && g_strcmp0 (json_node_get_string (na), json_node_get_string (nb)) != 0)
        g_ptr_array_add (out, g_strdup_printf ("header changed: %s", (gchar *) l->data));
    }
  for (GList *l = mb; l; l = l->next)
    if ((oa == NULL || !json_object_has_member (oa, l->data))
        && !JSON_NODE_HOLDS_NULL (json_object_get_member (ob, l->data)))
      g_ptr_array_add (out, g_strdup_printf ("header newly read: %s", (gchar *) l->data));
}

/* The differences from manifest @a to manifest @b, one line each. */
static gchar **
manifest_diff (const gchar *a,
               const gchar *b)
{
  g_autoptr(JsonParser) pa = json_parser_new ();
  g_autoptr(JsonParser) pb = json_parser_new ();
  JsonObject *oa = parse_object (a, pa);
  JsonObject *ob = parse_object (b, pb);
  GPtrArray *out = g_ptr_array_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  if (oa == NULL || ob == NULL)
    {
      g_ptr_array_add (out, g_strdup ("no manifest to compare (an entry written without one)"));
      g_ptr_array_add (out, NULL);
      return (gchar **) g_ptr_array_free (out, FALSE);
    }
  for (guint k = 0; k < 2; k++)
    {
      g_autoptr(GList) members = json_object_get_members (k ? ob : oa);
      for (GList *l = members; l; l = l->next)
        {
          const gchar *m = l->data;
          JsonNode *na = json_object_has_member (oa, m) ? json_object_get_member (oa, m) : NULL;
          JsonNode *nb = json_object_has_member (ob, m) ? json_object_get_member (ob, m) : NULL;

          if (!g_hash_table_add (seen, (gpointer) m))
            continue;
          if (g_str_equal (m, "headers"))
            diff_headers (out, na, nb);
          else if (g_str_equal (m, "flags") || g_str_equal (m, "name_expressions"))
            diff_string_lists (out, g_str_equal (m, "flags") ? "flag" : "name expression", na, nb);
          else if (g_str_equal (m, "source_bytes") || g_str_equal (m, "manifest_version")
                   || g_str_equal (m, "resources"))
            continue;   /* not inputs of the key */
          else if (na == NULL || nb == NULL || !json_node_equal (na, nb))
            {
              g_autofree gchar *va = short_value (na);
              g_autofree gchar *vb = short_value (nb);
              if (g_str_equal (m, "source_sha256"))
                g_ptr_array_add (out, g_strdup_printf ("source changed (sha256 %.12s… → %.12s…)", va, vb));
              else
                g_ptr_array_add (out, g_strdup_printf ("%s: %s → %s", m, va, vb));
            }
        }
    }
  g_ptr_array_add (out, NULL);
  return (gchar **) g_ptr_array_free (out, FALSE);
}

/**
 * atomr_kernel_cache_entry_diff:
 * @self: an entry
 * @other: another entry
 *
 * What differs between the inputs of two entries (from their manifests):
 * source, flags, name expressions, architecture, NVRTC, each header read
 * (changed, appeared, disappeared, newly or no longer read), link objects.
 *
 * Returns: (transfer full) (array zero-terminated=1): one line per
 *   difference, from @self to @other; empty when the inputs are the same
 *
 * Since: 0.2
 */
gchar **
atomr_kernel_cache_entry_diff (AtomrKernelCacheEntry *self,
                               AtomrKernelCacheEntry *other)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (other), NULL);
  return manifest_diff (atomr_kernel_cache_entry_get_manifest (self),
                        atomr_kernel_cache_entry_get_manifest (other));
}

static gint
manifest_score (JsonObject *entry,
                JsonObject *request)
{
  gint score = 0;
  const gchar *keys[] = { "source_sha256", "name_expressions", "arch", "flags" };
  const gint weights[] = { 8, 2, 1, 1 };

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    if (json_object_has_member (entry, keys[i]) && json_object_has_member (request, keys[i])
        && json_node_equal (json_object_get_member (entry, keys[i]), json_object_get_member (request, keys[i])))
      score += weights[i];
  return score;
}

/**
 * atomr_kernel_cache_explain:
 * @self: a cache
 * @source: CUDA C++ source
 * @options: (nullable): compile options, as for [func@Atomr.nvrtc_compile]
 *   (the architecture cannot be %ATOMR_ARCH_NATIVE here)
 * @key: (out) (optional) (transfer full): the key of this compile
 * @nearest: (out) (optional) (transfer full) (nullable): on a miss, the
 *   entry whose inputs are closest (same source first), or %NULL
 * @reasons: (out) (optional) (transfer full) (array zero-terminated=1): on
 *   a miss, what differs from @nearest (or why there is none); empty on a
 *   hit
 * @error: return location for a [struct@GLib.Error]
 *
 * Says whether compiling @source with @options would hit the cache, and
 * if not, why: it computes the key as a compile would (reading the
 * headers) and compares what went into it with the manifest of the
 * closest entry.  Compiles nothing, records nothing, removes nothing.
 * The program name is [func@Atomr.nvrtc_compile]'s default; see
 * [method@Atomr.KernelCache.explain_program].
 *
 * Returns: %ATOMR_CACHE_STATUS_MEMORY_HIT, %ATOMR_CACHE_STATUS_DISK_HIT or
 *   %ATOMR_CACHE_STATUS_MISS; %ATOMR_CACHE_STATUS_NONE when the compile
 *   would not be cached (@reasons says why, @error is not set) or on error
 *   (@error set)
 *
 * Since: 0.2
 */
AtomrCacheStatus
atomr_kernel_cache_explain (AtomrKernelCache     *self,
                            const gchar          *source,
                            AtomrCompileOptions  *options,
                            gchar               **key,
                            gchar               **nearest,
                            gchar              ***reasons,
                            GError              **error)
{
  return atomr_kernel_cache_explain_program (self, source, NULL, options, key, nearest, reasons, error);
}

/**
 * atomr_kernel_cache_explain_program:
 * @self: a cache
 * @source: CUDA C++ source
 * @program_name: (nullable): the program name the compile gives NVRTC (it
 *   is part of the key, and quoted includes are looked up next to it);
 *   %NULL for [func@Atomr.nvrtc_compile]'s default
 * @options: (nullable): compile options, as for [func@Atomr.nvrtc_compile]
 * @key: (out) (optional) (transfer full): the key of this compile
 * @nearest: (out) (optional) (transfer full) (nullable): on a miss, the
 *   closest entry, or %NULL
 * @reasons: (out) (optional) (transfer full) (array zero-terminated=1): on
 *   a miss, what differs from @nearest
 * @error: return location for a [struct@GLib.Error]
 *
 * [method@Atomr.KernelCache.explain] for a compile with a program name.  A
 * compile the cache refuses to key (see the design notes) is
 * %ATOMR_CACHE_STATUS_NONE without an error, @reasons saying why
 * ("not cacheable: ...").
 *
 * Returns: as for [method@Atomr.KernelCache.explain]
 *
 * Since: 0.2
 */
AtomrCacheStatus
atomr_kernel_cache_explain_program (AtomrKernelCache     *self,
                                    const gchar          *source,
                                    const gchar          *program_name,
                                    AtomrCompileOptions  *options,
                                    gchar               **key,
                                    gchar               **nearest,
                                    gchar              ***reasons,
                                    GError              **error)
{
  g_autoptr(AtomrCompileOptions) opts = NULL;
  g_autoptr(AtomrKernelCache) probe = NULL;
  g_autoptr(AtomrCacheRequest) request = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(JsonNode) manifest = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(GStrv) flags = NULL;
  g_autofree gchar *manifest_text = NULL;
  AtomrKernelCacheEntry *best = NULL;
  JsonObject *mine;
  gint best_score = -1;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), ATOMR_CACHE_STATUS_NONE);
  if (key)
    *key = NULL;
  if (nearest)
    *nearest = NULL;
  if (reasons)
    *reasons = NULL;
  if (source == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "source: NULL");
      return ATOMR_CACHE_STATUS_NONE;
    }
  opts = options ? g_object_ref (options) : atomr_compile_options_new ();
  if (!atomr_compile_options_check (opts, error))
    return ATOMR_CACHE_STATUS_NONE;
  if (g_strcmp0 (atomr_compile_options_get_arch (opts), ATOMR_ARCH_NATIVE) == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "arch: explain needs a named architecture (sm_NN), not \"%s\"", ATOMR_ARCH_NATIVE);
      return ATOMR_CACHE_STATUS_NONE;
    }
  flags = atomr_compile_options_get_flags (opts);

  /* Memory first, as a compile would (a hit there records a hit). */
  probe = atomr_kernel_cache_new (self->directory);
  probe->probe = TRUE;
  {
    AtomrCacheKeyInput input = {
      .source = source,
      .program_name = program_name,
      .kernel_names = atomr_compile_options_get_name_expressions (opts),
      .flags = (const gchar * const *) flags,
      .arch = atomr_compile_options_get_arch (opts),
      .link_objects = atomr_compile_options_get_link_objects (opts),
    };
    module = atomr_kernel_cache_lookup_request (probe, &input, &request);
    if (module == NULL && request == NULL)
      {
        /* What the key cannot cover is never cached: say why. */
        g_autoptr(GBytes) blob = atomr_cache_request_blob (&input);
        g_autoptr(GPtrArray) headers = NULL;
        g_autoptr(GError) key_error = NULL;
        g_autofree gchar *k = atomr_cache_key_compute (blob, &input, &headers, &key_error);

        if (reasons)
          {
            *reasons = g_new0 (gchar *, 2);
            (*reasons)[0] = g_strdup_printf ("not cacheable: %s",
                                             key_error ? key_error->message : "the key cannot be computed");
          }
        return ATOMR_CACHE_STATUS_NONE;
      }
  }
  if (module)
    {
      g_autoptr(AtomrModule) mem = atomr_cache_memory_lookup_key (self, atomr_module_get_key (module));
      if (key)
        *key = g_strdup (atomr_module_get_key (module));
      if (reasons)
        *reasons = g_new0 (gchar *, 1);
      return mem ? ATOMR_CACHE_STATUS_MEMORY_HIT : ATOMR_CACHE_STATUS_DISK_HIT;
    }
  if (key)
    *key = g_strdup (request->key);
  {
    g_autoptr(AtomrModule) mem = atomr_cache_memory_lookup_key (self, request->key);
    if (mem)
      {
        if (reasons)
          *reasons = g_new0 (gchar *, 1);
        return ATOMR_CACHE_STATUS_MEMORY_HIT;
      }
  }

  manifest = atomr_cache_manifest_build (request, source);
  manifest_text = json_to_string (manifest, FALSE);
  mine = json_node_get_object (manifest);
  entries = atomr_cache_scan_directory (self, FALSE, FALSE, NULL, NULL);
  for (guint i = 0; entries && i < entries->len; i++)
    {
      AtomrKernelCacheEntry *e = g_ptr_array_index (entries, i);
      JsonObject *theirs = parse_object (atomr_kernel_cache_entry_get_manifest (e), parser);
      gint score = theirs ? manifest_score (theirs, mine) : -1;

      if (score >= best_score && theirs)   /* ties: the most recently used */
        {
          best_score = score;
          best = e;
        }
    }
  if (best && nearest)
    *nearest = g_strdup (best->h.key);
  if (reasons)
    {
      if (best == NULL)
        {
          *reasons = g_new0 (gchar *, 2);
          (*reasons)[0] = g_strdup (entries && entries->len ? "no entry has a manifest to compare with"
                                                           : "the cache holds no entry");
        }
      else
        {
          *reasons = manifest_diff (atomr_kernel_cache_entry_get_manifest (best), manifest_text);
          if ((*reasons)[0] == NULL)
            {
              g_strfreev (*reasons);
              *reasons = g_new0 (gchar *, 2);
              (*reasons)[0] = g_strdup_printf ("same inputs as %s, another key (cache format or key "
                                               "derivation changed)", best->h.key);
            }
        }
    }
  return ATOMR_CACHE_STATUS_MISS;
}
