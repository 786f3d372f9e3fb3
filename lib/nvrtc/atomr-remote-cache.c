/* atomr-remote-cache.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>
#include <libsoup/soup.h>

#include "core/atomr-error.h"
#include "atomr-kernel-cache-private.h"
#include "atomr-remote-cache-private.h"

/**
 * AtomrRemoteCache:
 *
 * The third layer of the kernel cache, after memory and the local
 * directory: a plain HTTP server holding entry files as `URL/KEY.akc`.
 * Reads are `GET` (and `HEAD` for atomr_remote_cache_contains()), so a
 * read-only static mirror works; writes are `PUT` (nginx with
 * `dav_methods PUT`, any WebDAV server).
 *
 * atomr_remote_cache_attach() makes a #AtomrKernelCache consult it after
 * a disk miss — the fetched entry is verified (format, checksums, that it
 * holds the key asked for), written to the local directory (backfill) and
 * served as a disk hit — and upload every fresh compile in the background
 * (unless #AtomrRemoteCache:read-only).  `ATOMR_CACHE_REMOTE=URL` attaches
 * one to atomr_kernel_cache_get_default(), and `atomr cache push/pull`
 * copies entries explicitly.
 *
 * Nothing fetched is trusted: an entry that does not verify is a miss,
 * counted as rejected and logged (domain Atomr, info level).  Failure
 * policy: a compile never fails because of the remote: fetch errors
 * (server down, HTTP errors, #AtomrRemoteCache:timeout) are misses, upload
 * errors are counted; both are kept in atomr_remote_cache_dup_last_error().
 * At most #AtomrRemoteCache:max-connections requests run at once (callers
 * beyond wait), and entries over 1 GiB are refused.
 *
 * Threads: every method may be called from any thread; the network calls
 * are synchronous and block the caller (the background uploads run on the
 * object's own worker threads).
 *
 * Since: 0.2
 */

#define MAX_ENTRY_BYTES       (G_GUINT64_CONSTANT (1) << 30)
#define DEFAULT_TIMEOUT       10
#define DEFAULT_CONNECTIONS   4
#define INDEX_NAME            "index.txt"

struct _AtomrRemoteCache
{
  GObject      parent_instance;

  gchar       *url;            /* ends in '/' */
  gboolean     read_only;      /* atomic */
  guint        timeout;        /* atomic */
  guint        max_connections;/* under lock */

  GMutex       lock;
  GCond        cond;
  guint        in_use;         /* requests running, under lock */
  guint        pending;        /* background uploads queued or running */
  guint64      hits, misses, rejected, errors, uploaded;   /* under lock */
  gchar       *last_error;     /* under lock */
  GThreadPool *uploads;
};

G_DEFINE_FINAL_TYPE (AtomrRemoteCache, atomr_remote_cache, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_URL,
  PROP_READ_ONLY,
  PROP_TIMEOUT,
  PROP_MAX_CONNECTIONS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

typedef struct
{
  gchar *key;
  gchar *path;
} Upload;

static void
upload_free (Upload *u)
{
  g_free (u->key);
  g_free (u->path);
  g_free (u);
}

static void
note_error (AtomrRemoteCache *self,
            const GError     *error,
            gboolean          rejected)
{
  g_mutex_lock (&self->lock);
  if (rejected)
    self->rejected++;
  else
    self->errors++;
  g_free (self->last_error);
  self->last_error = g_strdup (error->message);
  g_mutex_unlock (&self->lock);
  g_info ("remote kernel cache %s: %s", self->url, error->message);
}

static gboolean
key_is_valid (const gchar *key)
{
  if (key == NULL || strlen (key) != 64)
    return FALSE;
  for (guint i = 0; i < 64; i++)
    if (!g_ascii_isdigit (key[i]) && !(key[i] >= 'a' && key[i] <= 'f'))
      return FALSE;
  return TRUE;
}

static gboolean
check_key (const gchar  *key,
           GError      **error)
{
  if (key_is_valid (key))
    return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "key “%s” is not a cache key (64 lower-case hex digits)", key ? key : "(null)");
  return FALSE;
}

static void
slot_acquire (AtomrRemoteCache *self)
{
  g_mutex_lock (&self->lock);
  while (self->in_use >= self->max_connections)
    g_cond_wait (&self->cond, &self->lock);
  self->in_use++;
  g_mutex_unlock (&self->lock);
}

static void
slot_release (AtomrRemoteCache *self)
{
  g_mutex_lock (&self->lock);
  self->in_use--;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

/* One request, on a session of its own (any thread may call).  Returns
 * the HTTP status (0 with @error set when there was no answer); the body
 * in *@body for GET, at most MAX_ENTRY_BYTES, checked against the
 * announced length. */
static guint
http_request (AtomrRemoteCache  *self,
              const gchar       *method,
              const gchar       *name,
              GBytes            *upload,
              GBytes           **body,
              GCancellable      *cancellable,
              GError           **error)
{
  g_autofree gchar *uri = NULL;
  guint timeout = g_atomic_int_get (&self->timeout);
  g_autoptr(SoupSession) session = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GByteArray) data = NULL;
  goffset announced;
  guint status;

  if (self->url == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s %s: this AtomrRemoteCache was constructed without a URL (g_object_new() or a "
                   "binding's constructor); make it with atomr_remote_cache_new()", method, name);
      return 0;
    }
  uri = g_strconcat (self->url, name, NULL);
  session = soup_session_new_with_options ("timeout", timeout, "idle-timeout", timeout, "max-conns", 1,
                                           "user-agent", "atomr-accel", NULL);
  msg = soup_message_new (method, uri);
  if (msg == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s: not a valid URL", uri);
      return 0;
    }
  if (upload)
    soup_message_set_request_body_from_bytes (msg, "application/octet-stream", upload);
  slot_acquire (self);
  stream = soup_session_send (session, msg, cancellable, error);
  if (stream == NULL)
    {
      slot_release (self);
      g_prefix_error (error, "%s %s: ", method, uri);
      return 0;
    }
  status = soup_message_get_status (msg);
  announced = soup_message_headers_get_content_length (soup_message_get_response_headers (msg));
  data = g_byte_array_new ();
  if (body && SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      guint8 buf[65536];

      if (announced > (goffset) MAX_ENTRY_BYTES)
        {
          slot_release (self);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s %s: %" G_GOFFSET_FORMAT " bytes announced, over the 1 GiB limit", method, uri, announced);
          return 0;
        }
      for (;;)
        {
          gssize n = g_input_stream_read (stream, buf, sizeof buf, cancellable, error);
          if (n < 0)
            {
              slot_release (self);
              g_prefix_error (error, "%s %s: reading the body: ", method, uri);
              return 0;
            }
          if (n == 0)
            break;
          if (data->len + (guint64) n > MAX_ENTRY_BYTES)
            {
              slot_release (self);
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s %s: body over the 1 GiB limit", method, uri);
              return 0;
            }
          g_byte_array_append (data, buf, n);
        }
      if (announced > 0 && (goffset) data->len != announced)
        {
          slot_release (self);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s %s: truncated body: %u of %" G_GOFFSET_FORMAT " bytes", method, uri, data->len, announced);
          return 0;
        }
      *body = g_byte_array_free_to_bytes (g_steal_pointer (&data));
    }
  else
    g_input_stream_close (stream, NULL, NULL);
  slot_release (self);
  return status;
}

static void
set_http_error (GError     **error,
                const gchar *method,
                AtomrRemoteCache *self,
                const gchar *name,
                guint        status)
{
  g_set_error (error, G_IO_ERROR, status == SOUP_STATUS_NOT_FOUND ? G_IO_ERROR_NOT_FOUND : G_IO_ERROR_FAILED,
               "%s %s%s: HTTP %u %s", method, self->url, name, status, soup_status_get_phrase (status));
}

/**
 * atomr_remote_cache_new:
 * @url: the base URL, `http://` or `https://`, entries lying at
 *   `URL/KEY.akc`
 * @error: return location for a #GError
 *
 * Returns a remote layer, or %NULL with @error set
 * (%ATOMR_ERROR_INVALID_ARGUMENT) when @url is not an HTTP URL.
 *
 * Returns: (transfer full) (nullable): a remote layer, or %NULL with
 *   @error set (%ATOMR_ERROR_INVALID_ARGUMENT) when @url is not an HTTP URL
 *
 * Since: 0.2
 */
AtomrRemoteCache *
atomr_remote_cache_new (const gchar  *url,
                        GError      **error)
{
  g_autoptr(GUri) uri = NULL;
  g_autoptr(GError) local = NULL;
  const gchar *scheme;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (url == NULL || *url == '\0')
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "remote cache URL: empty");
      return NULL;
    }
  uri = g_uri_parse (url, G_URI_FLAGS_NONE, &local);
  if (uri == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "remote cache URL “%s”: %s", url, local->message);
      return NULL;
    }
  scheme = g_uri_get_scheme (uri);
  if ((g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0)
      || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "remote cache URL “%s”: not an http:// or https:// URL with a host", url);
      return NULL;
    }
  if (g_uri_get_query (uri) || g_uri_get_fragment (uri))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "remote cache URL “%s”: a query or fragment is not allowed", url);
      return NULL;
    }
  return g_object_new (ATOMR_TYPE_REMOTE_CACHE, "url", url, NULL);
}

/**
 * atomr_remote_cache_get_url:
 * @self: a remote layer
 *
 * Returns the base URL, ending in `/`.
 *
 * Returns: (nullable): the base URL, ending in `/`
 *
 * Since: 0.2
 */
const gchar *
atomr_remote_cache_get_url (AtomrRemoteCache *self)
{
  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), NULL);
  return self->url;
}

/**
 * atomr_remote_cache_get_read_only:
 * @self: a remote layer
 *
 * Returns whether uploads are refused.
 *
 * Returns: whether uploads are refused
 *
 * Since: 0.2
 */
gboolean
atomr_remote_cache_get_read_only (AtomrRemoteCache *self)
{
  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), FALSE);
  return g_atomic_int_get (&self->read_only);
}

/**
 * atomr_remote_cache_set_read_only:
 * @self: a remote layer
 * @read_only: whether to refuse uploads (a mirror)
 *
 * Sets #AtomrRemoteCache:read-only.
 *
 * Since: 0.2
 */
void
atomr_remote_cache_set_read_only (AtomrRemoteCache *self,
                                  gboolean          read_only)
{
  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  read_only = !!read_only;
  if (g_atomic_int_exchange (&self->read_only, read_only) != read_only)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READ_ONLY]);
}

/**
 * atomr_remote_cache_get_timeout:
 * @self: a remote layer
 *
 * Returns the I/O timeout of each request, in seconds.
 *
 * Returns: the I/O timeout of each request, in seconds
 *
 * Since: 0.2
 */
guint
atomr_remote_cache_get_timeout (AtomrRemoteCache *self)
{
  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), 0);
  return g_atomic_int_get (&self->timeout);
}

/**
 * atomr_remote_cache_set_timeout:
 * @self: a remote layer
 * @seconds: the I/O timeout of each request (connecting, each read or
 *   write), at least 1; 0 is taken as 1
 *
 * Sets #AtomrRemoteCache:timeout.
 *
 * Since: 0.2
 */
void
atomr_remote_cache_set_timeout (AtomrRemoteCache *self,
                                guint             seconds)
{
  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  seconds = MAX (seconds, 1);
  if ((guint) g_atomic_int_exchange (&self->timeout, seconds) != seconds)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT]);
}

/**
 * atomr_remote_cache_get_max_connections:
 * @self: a remote layer
 *
 * Returns the most requests that run at once.
 *
 * Returns: the most requests that run at once
 *
 * Since: 0.2
 */
guint
atomr_remote_cache_get_max_connections (AtomrRemoteCache *self)
{
  guint n;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), 0);
  g_mutex_lock (&self->lock);
  n = self->max_connections;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * atomr_remote_cache_set_max_connections:
 * @self: a remote layer
 * @max_connections: the most requests at once, at least 1; 0 is taken as 1
 *
 * Sets #AtomrRemoteCache:max-connections.
 *
 * Since: 0.2
 */
void
atomr_remote_cache_set_max_connections (AtomrRemoteCache *self,
                                        guint             max_connections)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  max_connections = CLAMP (max_connections, 1, 64);
  g_mutex_lock (&self->lock);
  changed = self->max_connections != max_connections;
  self->max_connections = max_connections;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  if (changed)
    {
      g_thread_pool_set_max_threads (self->uploads, (gint) max_connections, NULL);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_CONNECTIONS]);
    }
}

/**
 * atomr_remote_cache_fetch:
 * @self: a remote layer
 * @key: an entry's key (64 lower-case hex digits)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Downloads entry @key and verifies it (format version, checksums, that
 * it holds @key).  Blocks.  A missing entry is %G_IO_ERROR_NOT_FOUND; an
 * entry that does not verify is %ATOMR_ERROR_INVALID_ARGUMENT and counted
 * as rejected; HTTP errors are %G_IO_ERROR_FAILED.
 *
 * Returns: (transfer full) (nullable): the verified entry file
 *
 * Since: 0.2
 */
GBytes *
atomr_remote_cache_fetch (AtomrRemoteCache *self,
                          const gchar      *key,
                          GCancellable     *cancellable,
                          GError          **error)
{
  g_autofree gchar *name = NULL;
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) local = NULL;
  guint status;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (!check_key (key, error))
    return NULL;
  name = g_strconcat (key, ".akc", NULL);
  status = http_request (self, "GET", name, NULL, &body, cancellable, &local);
  if (status == 0)
    {
      /* A truncated or oversized body is bad content, not a dead server. */
      note_error (self, local, g_error_matches (local, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT));
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      set_http_error (&local, "GET", self, name, status);
      if (status == SOUP_STATUS_NOT_FOUND)
        {
          g_mutex_lock (&self->lock);
          self->misses++;
          g_mutex_unlock (&self->lock);
        }
      else
        note_error (self, local, FALSE);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (!atomr_kernel_cache_verify_entry_data (key, body, &local))
    {
      g_prefix_error (&local, "GET %s%s: rejected: ", self->url, name);
      note_error (self, local, TRUE);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  g_mutex_lock (&self->lock);
  self->hits++;
  g_mutex_unlock (&self->lock);
  return g_steal_pointer (&body);
}

/**
 * atomr_remote_cache_contains:
 * @self: a remote layer
 * @key: an entry's key
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Asks (`HEAD`) whether the server has entry @key; not verified.  Blocks.
 *
 * Returns: %TRUE when present; %FALSE when absent (@error unset) or on
 *   error
 *
 * Since: 0.2
 */
gboolean
atomr_remote_cache_contains (AtomrRemoteCache *self,
                             const gchar      *key,
                             GCancellable     *cancellable,
                             GError          **error)
{
  g_autofree gchar *name = NULL;
  guint status;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), FALSE);
  if (!check_key (key, error))
    return FALSE;
  name = g_strconcat (key, ".akc", NULL);
  status = http_request (self, "HEAD", name, NULL, NULL, cancellable, error);
  if (status == 0)
    return FALSE;
  if (status == SOUP_STATUS_NOT_FOUND)
    return FALSE;
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      set_http_error (error, "HEAD", self, name, status);
      return FALSE;
    }
  return TRUE;
}

static gboolean
put_name (AtomrRemoteCache *self,
          const gchar      *name,
          GBytes           *data,
          GCancellable     *cancellable,
          GError          **error)
{
  guint status;

  if (g_atomic_int_get (&self->read_only))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "remote cache %s is read-only: not uploading %s", self->url, name);
      return FALSE;
    }
  status = http_request (self, "PUT", name, data, NULL, cancellable, error);
  if (status == 0)
    return FALSE;
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      set_http_error (error, "PUT", self, name, status);
      return FALSE;
    }
  return TRUE;
}

/**
 * atomr_remote_cache_upload:
 * @self: a remote layer
 * @key: the entry's key
 * @data: the entry file (verified before it is sent)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Uploads (`PUT`) one entry.  Blocks.  A read-only layer refuses
 * (%ATOMR_ERROR_NOT_SUPPORTED); an entry that does not verify is not sent
 * (%ATOMR_ERROR_INVALID_ARGUMENT).
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_remote_cache_upload (AtomrRemoteCache *self,
                           const gchar      *key,
                           GBytes           *data,
                           GCancellable     *cancellable,
                           GError          **error)
{
  g_autofree gchar *name = NULL;
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  if (!check_key (key, error) || !atomr_kernel_cache_verify_entry_data (key, data, error))
    return FALSE;
  name = g_strconcat (key, ".akc", NULL);
  if (!put_name (self, name, data, cancellable, &local))
    {
      if (!g_error_matches (local, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED))
        note_error (self, local, FALSE);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  self->uploaded++;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static GBytes *
read_file_bytes (const gchar  *path,
                 GError      **error)
{
  gchar *contents = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, error))
    return NULL;
  return g_bytes_new_take (contents, len);
}

/* The keys listed in the remote's index.txt (none when it has none). */
static GPtrArray *
index_read (AtomrRemoteCache *self,
            GCancellable     *cancellable,
            GError          **error)
{
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  guint status = http_request (self, "GET", INDEX_NAME, NULL, &body, cancellable, error);

  if (status == 0)
    return NULL;
  if (status == SOUP_STATUS_NOT_FOUND)
    return g_steal_pointer (&keys);
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      set_http_error (error, "GET", self, INDEX_NAME, status);
      return NULL;
    }
  {
    gsize len = 0;
    const gchar *data = g_bytes_get_data (body, &len);
    g_autofree gchar *text = g_strndup (data, len);
    g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
    for (guint i = 0; lines[i]; i++)
      {
        g_strstrip (lines[i]);
        if (key_is_valid (lines[i]))
          g_ptr_array_add (keys, g_strdup (lines[i]));
      }
  }
  return g_steal_pointer (&keys);
}

/**
 * atomr_remote_cache_push:
 * @self: a remote layer, not read-only
 * @cache: a local cache
 * @n_pushed: (out) (optional): entries uploaded
 * @n_present: (out) (optional): entries the server had already
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Uploads every valid entry of @cache's directory the server lacks, and
 * adds their keys to the server's `index.txt` (which
 * atomr_remote_cache_pull() reads; concurrent pushes may lose each
 * other's index lines, never entries).  Damaged local entries are skipped.
 * Stops at the first network error.  Blocks.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_remote_cache_push (AtomrRemoteCache *self,
                         AtomrKernelCache *cache,
                         guint            *n_pushed,
                         guint            *n_present,
                         GCancellable     *cancellable,
                         GError          **error)
{
  const gchar *dirname;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(GPtrArray) index = NULL;
  g_autoptr(GHashTable) listed = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GString) text = g_string_new (NULL);
  const gchar *name;
  guint pushed = 0, present = 0, before;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), FALSE);
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (cache), FALSE);

  if (n_pushed)
    *n_pushed = 0;
  if (n_present)
    *n_present = 0;
  if (g_atomic_int_get (&self->read_only))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED, "remote cache %s is read-only", self->url);
      return FALSE;
    }
  index = index_read (self, cancellable, error);
  if (index == NULL)
    return FALSE;
  for (guint i = 0; i < index->len; i++)
    g_hash_table_add (listed, g_ptr_array_index (index, i));
  before = g_hash_table_size (listed);

  dirname = atomr_kernel_cache_get_directory (cache);
  dir = g_dir_open (dirname, 0, &local);
  if (dir == NULL && !g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "push: ");
      return FALSE;
    }
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *key = NULL;
      g_autofree gchar *path = NULL;
      g_autoptr(GBytes) data = NULL;
      g_autoptr(GError) skip = NULL;

      if (!g_str_has_suffix (name, ".akc") || strlen (name) != 68)
        continue;
      key = g_strndup (name, 64);
      if (!key_is_valid (key))
        continue;
      path = g_build_filename (dirname, name, NULL);
      data = read_file_bytes (path, &skip);
      if (data == NULL || !atomr_kernel_cache_verify_entry_data (key, data, &skip))
        {
          g_debug ("push: skipping %s: %s", path, skip ? skip->message : "unreadable");
          continue;
        }
      if (atomr_remote_cache_contains (self, key, cancellable, &local))
        present++;
      else if (local)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      else if (atomr_remote_cache_upload (self, key, data, cancellable, error))
        pushed++;
      else
        return FALSE;
      if (!g_hash_table_contains (listed, key))
        {
          g_ptr_array_add (index, g_strdup (key));
          g_hash_table_add (listed, g_ptr_array_index (index, index->len - 1));
        }
      if (n_pushed)
        *n_pushed = pushed;
      if (n_present)
        *n_present = present;
    }
  if (g_hash_table_size (listed) != before)
    {
      g_autoptr(GBytes) body = NULL;
      for (guint i = 0; i < index->len; i++)
        g_string_append_printf (text, "%s\n", (const gchar *) g_ptr_array_index (index, i));
      body = g_bytes_new (text->str, text->len);
      if (!put_name (self, INDEX_NAME, body, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/**
 * atomr_remote_cache_pull:
 * @self: a remote layer
 * @cache: a local cache
 * @keys: (nullable) (array zero-terminated=1): the keys to fetch, %NULL
 *   for every key of the server's `index.txt`
 * @n_pulled: (out) (optional): entries verified and written to @cache
 * @n_rejected: (out) (optional): keys missing on the server or whose
 *   entry did not verify
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Downloads entries into @cache's directory, each verified before it is
 * written.  Stops at the first network error (entries pulled before stay).
 * Blocks.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_remote_cache_pull (AtomrRemoteCache    *self,
                         AtomrKernelCache    *cache,
                         const gchar * const *keys,
                         guint               *n_pulled,
                         guint               *n_rejected,
                         GCancellable        *cancellable,
                         GError             **error)
{
  g_autoptr(GPtrArray) list = NULL;
  guint pulled = 0, rejected = 0;
  gboolean ok = TRUE;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), FALSE);
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (cache), FALSE);

  if (keys == NULL)
    {
      list = index_read (self, cancellable, error);
      if (list == NULL)
        return FALSE;
    }
  else
    {
      list = g_ptr_array_new_with_free_func (g_free);
      for (guint i = 0; keys[i]; i++)
        {
          if (!check_key (keys[i], error))
            return FALSE;
          g_ptr_array_add (list, g_strdup (keys[i]));
        }
    }
  for (guint i = 0; ok && i < list->len; i++)
    {
      const gchar *key = g_ptr_array_index (list, i);
      g_autoptr(GError) local = NULL;
      g_autoptr(GBytes) data = atomr_remote_cache_fetch (self, key, cancellable, &local);

      if (data == NULL)
        {
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
              || g_error_matches (local, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT))
            rejected++;
          else
            {
              g_propagate_error (error, g_steal_pointer (&local));
              ok = FALSE;
            }
          continue;
        }
      if (!atomr_kernel_cache_adopt_entry (cache, key, data, error))
        ok = FALSE;
      else
        pulled++;
    }
  if (n_pulled)
    *n_pulled = pulled;
  if (n_rejected)
    *n_rejected = rejected;
  return ok;
}

static GBytes *
hook_fetch (GObject     *remote,
            const gchar *key)
{
  g_autoptr(GError) error = NULL;
  GBytes *data = atomr_remote_cache_fetch (ATOMR_REMOTE_CACHE (remote), key, NULL, &error);

  if (data == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    g_debug ("remote kernel cache: %s: a miss: %s", key, error->message);
  return data;
}

static void
upload_worker (gpointer data,
               gpointer user_data)
{
  Upload *u = data;
  AtomrRemoteCache *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = read_file_bytes (u->path, &error);

  if (bytes == NULL || !atomr_remote_cache_upload (self, u->key, bytes, NULL, &error))
    {
      if (bytes == NULL)
        note_error (self, error, FALSE);
      g_debug ("remote kernel cache: upload of %s failed: %s", u->key, error->message);
    }
  upload_free (u);
  g_mutex_lock (&self->lock);
  self->pending--;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

static void
hook_stored (GObject     *remote,
             const gchar *key,
             const gchar *path)
{
  AtomrRemoteCache *self = ATOMR_REMOTE_CACHE (remote);
  Upload *u;

  if (g_atomic_int_get (&self->read_only))
    return;
  u = g_new0 (Upload, 1);
  u->key = g_strdup (key);
  u->path = g_strdup (path);
  g_mutex_lock (&self->lock);
  self->pending++;
  g_mutex_unlock (&self->lock);
  g_thread_pool_push (self->uploads, u, NULL);
}

/**
 * atomr_remote_cache_attach:
 * @self: a remote layer
 * @cache: a local cache
 *
 * Makes @cache consult @self after a disk miss (verify, backfill the
 * disk) and upload fresh compiles to it in the background (unless
 * read-only).  Replaces any remote layer @cache had.  @cache holds a
 * reference on @self until atomr_remote_cache_detach().
 *
 * Since: 0.2
 */
void
atomr_remote_cache_attach (AtomrRemoteCache *self,
                           AtomrKernelCache *cache)
{
  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (cache));
  atomr_kernel_cache_set_remote (cache, G_OBJECT (self), hook_fetch, hook_stored);
}

/**
 * atomr_remote_cache_detach:
 * @self: a remote layer
 * @cache: a cache @self is attached to
 *
 * Detaches the remote layer of @cache.
 *
 * Since: 0.2
 */
void
atomr_remote_cache_detach (AtomrRemoteCache *self,
                           AtomrKernelCache *cache)
{
  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (cache));
  atomr_kernel_cache_set_remote (cache, NULL, NULL, NULL);
}

/**
 * atomr_remote_cache_wait_uploads:
 * @self: a remote layer
 *
 * Blocks until the background uploads queued so far have finished
 * (succeeded or failed).
 *
 * Since: 0.2
 */
void
atomr_remote_cache_wait_uploads (AtomrRemoteCache *self)
{
  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  g_mutex_lock (&self->lock);
  while (self->pending > 0)
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);
}

/**
 * atomr_remote_cache_get_counters:
 * @self: a remote layer
 * @hits: (out) (optional): entries fetched and verified
 * @misses: (out) (optional): entries the server did not have (404)
 * @rejected: (out) (optional): entries fetched that did not verify
 *   (damaged, truncated, another key, oversized)
 * @errors: (out) (optional): failed requests (no answer, timeout, HTTP
 *   errors other than 404, failed uploads)
 * @uploaded: (out) (optional): entries uploaded
 *
 * Reads the counters.
 *
 * Since: 0.2
 */
void
atomr_remote_cache_get_counters (AtomrRemoteCache *self,
                                 guint64          *hits,
                                 guint64          *misses,
                                 guint64          *rejected,
                                 guint64          *errors,
                                 guint64          *uploaded)
{
  g_return_if_fail (ATOMR_IS_REMOTE_CACHE (self));
  g_mutex_lock (&self->lock);
  if (hits)
    *hits = self->hits;
  if (misses)
    *misses = self->misses;
  if (rejected)
    *rejected = self->rejected;
  if (errors)
    *errors = self->errors;
  if (uploaded)
    *uploaded = self->uploaded;
  g_mutex_unlock (&self->lock);
}

/**
 * atomr_remote_cache_dup_last_error:
 * @self: a remote layer
 *
 * Returns the message of the last failed or rejected request, %NULL when
 * none failed.
 *
 * Returns: (transfer full) (nullable): the message of the last failed or
 *   rejected request, %NULL when none failed
 *
 * Since: 0.2
 */
gchar *
atomr_remote_cache_dup_last_error (AtomrRemoteCache *self)
{
  gchar *s;

  g_return_val_if_fail (ATOMR_IS_REMOTE_CACHE (self), NULL);
  g_mutex_lock (&self->lock);
  s = g_strdup (self->last_error);
  g_mutex_unlock (&self->lock);
  return s;
}

void
atomr_remote_cache_attach_from_env (AtomrKernelCache *cache)
{
  const gchar *url = g_getenv ("ATOMR_CACHE_REMOTE");
  const gchar *ro = g_getenv ("ATOMR_CACHE_REMOTE_READ_ONLY");
  g_autoptr(AtomrRemoteCache) remote = NULL;
  g_autoptr(GError) error = NULL;

  if (url == NULL || *url == '\0')
    return;
  remote = atomr_remote_cache_new (url, &error);
  if (remote == NULL)
    {
      g_warning ("ATOMR_CACHE_REMOTE ignored: %s", error->message);
      return;
    }
  atomr_remote_cache_set_read_only (remote, ro && *ro && !g_str_equal (ro, "0"));
  atomr_remote_cache_attach (remote, cache);
}

static void
atomr_remote_cache_finalize (GObject *object)
{
  AtomrRemoteCache *self = ATOMR_REMOTE_CACHE (object);

  /* Uploads hold no reference: let the queued ones finish first. */
  g_thread_pool_free (self->uploads, FALSE, TRUE);
  g_free (self->url);
  g_free (self->last_error);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  G_OBJECT_CLASS (atomr_remote_cache_parent_class)->finalize (object);
}

static void
atomr_remote_cache_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  AtomrRemoteCache *self = ATOMR_REMOTE_CACHE (object);

  switch (prop_id)
    {
    case PROP_URL:
      g_value_set_string (value, self->url);
      break;
    case PROP_READ_ONLY:
      g_value_set_boolean (value, atomr_remote_cache_get_read_only (self));
      break;
    case PROP_TIMEOUT:
      g_value_set_uint (value, atomr_remote_cache_get_timeout (self));
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, atomr_remote_cache_get_max_connections (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_remote_cache_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  AtomrRemoteCache *self = ATOMR_REMOTE_CACHE (object);

  switch (prop_id)
    {
    case PROP_URL:
      {
        const gchar *url = g_value_get_string (value);
        /* A bare g_object_new() leaves no URL: requests then fail with a
         * clear error rather than crash. */
        if (url)
          self->url = g_str_has_suffix (url, "/") ? g_strdup (url) : g_strconcat (url, "/", NULL);
      }
      break;
    case PROP_READ_ONLY:
      atomr_remote_cache_set_read_only (self, g_value_get_boolean (value));
      break;
    case PROP_TIMEOUT:
      atomr_remote_cache_set_timeout (self, g_value_get_uint (value));
      break;
    case PROP_MAX_CONNECTIONS:
      atomr_remote_cache_set_max_connections (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_remote_cache_class_init (AtomrRemoteCacheClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_remote_cache_finalize;
  object_class->get_property = atomr_remote_cache_get_property;
  object_class->set_property = atomr_remote_cache_set_property;

  /**
   * AtomrRemoteCache:url:
   *
   * The base URL; entries lie at `URL/KEY.akc`.
   *
 * Since: 0.2
 */
  properties[PROP_URL] =
    g_param_spec_string ("url", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRemoteCache:read-only:
   *
   * Fetch only: no uploads (a static mirror).
   *
 * Since: 0.2
 */
  properties[PROP_READ_ONLY] =
    g_param_spec_boolean ("read-only", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRemoteCache:timeout:
   *
   * The I/O timeout of each request, in seconds.
   *
 * Since: 0.2
 */
  properties[PROP_TIMEOUT] =
    g_param_spec_uint ("timeout", NULL, NULL, 1, 3600, DEFAULT_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRemoteCache:max-connections:
   *
   * The most requests that run at once.
   *
 * Since: 0.2
 */
  properties[PROP_MAX_CONNECTIONS] =
    g_param_spec_uint ("max-connections", NULL, NULL, 1, 64, DEFAULT_CONNECTIONS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_remote_cache_init (AtomrRemoteCache *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->timeout = DEFAULT_TIMEOUT;
  self->max_connections = DEFAULT_CONNECTIONS;
  self->url = NULL;
  self->uploads = g_thread_pool_new (upload_worker, self, DEFAULT_CONNECTIONS, FALSE, NULL);
}
