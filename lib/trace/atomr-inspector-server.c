/* atomr-inspector-server.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "core/atomr-actor-private.h"
#include "core/atomr-device.h"
#include "core/atomr-error.h"
#include "nvrtc/atomr-kernel-cache-private.h"
#include "trace/atomr-inspector-server.h"
#include "trace/atomr-inspector-server-private.h"
#include "trace/atomr-record-ring-private.h"
#include "atomr-version.h"

/**
 * AtomrInspectorServer:
 *
 * An opt-in HTTP + WebSocket endpoint (libsoup 3) through which a desktop
 * tool attaches to a running process: atomr_inspector_enable() (or
 * `ATOMR_INSPECT=1` in the environment, which also registers every actor
 * created afterwards) starts one for the process.
 *
 * Security: it listens on 127.0.0.1 unless
 * [property@Atomr.InspectorServer:address] says otherwise (another than a
 * loopback address only with a
 * [property@Atomr.InspectorServer:tls-certificate]; with one, it speaks
 * only `https://` and `wss://`), on a port the kernel picks, and
 * every request must carry `Authorization: Bearer TOKEN` where TOKEN is a
 * random 256-bit value made per server; anything else is answered 401.
 * The port and token are written to the discovery file
 * `$XDG_RUNTIME_DIR/atomr/inspect-PID.json` (directory 0700, file 0600),
 * removed by atomr_inspector_server_stop(), on dispose and at exit for the
 * process server; atomr_inspector_list_local() skips (and removes) files
 * whose process is gone.
 *
 * API (version %ATOMR_INSPECTOR_API_VERSION, every answer a JSON object
 * with `api_version`): `GET /v1` (index), `/v1/process`, `/v1/devices`,
 * `/v1/actors`, `/v1/cache`, `/v1/trace` (the recorder's Chrome JSON),
 * and the WebSocket `/v1/stream`: one text message per completed
 * operation (`{"type":"record",...}`) and, after records were dropped for
 * this client, `{"type":"dropped","count":N}`.  A client that connects to
 * `/v1/stream?batch=1` gets the records in batches instead,
 * `{"type":"records","records":[RECORD,...]}` with up to 64 record
 * messages each (one frame per batch: less work for both sides at high
 * rates), and the same drop notices.
 *
 * Cost to the application: while no WebSocket client streams (and
 * #AtomrInspectorServer:always-record is off) the server connects no
 * handler to the actors, so they build no launch records and emit nothing
 * for it; `/v1/actors` then reads the actors' own counters.  The first
 * streaming client sets a light observer on each actor (no launch record,
 * no signal), which copies the operation's values into a slot of a
 * bounded lock-free queue; the server thread drains the queue every
 * 16 ms (one batch of frames) while a client streams or always-record is
 * on, making launch records and JSON there only.  The application's
 * threads never wake the server thread.  `/v1/trace` holds the
 * operations completed while a client streamed or always-record was
 * on.
 *
 * Limits: a request announcing a body is cut off (its connection shut
 * down) as soon as its headers are read, and bodies are never buffered;
 * only GET and HEAD are served (others 405); at most
 * #AtomrInspectorServer:max-clients connections at once (the others are
 * closed as accepted); a connection that sends nothing for
 * #AtomrInspectorServer:idle-timeout seconds is closed (slow or stalled
 * request headers; WebSocket clients are exempt once upgraded); records
 * wait in a queue of at most 16384 and a client whose socket has more than
 * 128 KiB unsent is skipped (its records dropped and counted) until it
 * reads again.
 *
 * Threads: the server runs on its own thread and #GMainContext.  The
 * application's threads only ever fill a slot of a bounded lock-free
 * queue (nothing while nobody looks); no lock, wake-up, network I/O or
 * JSON work happens on them.
 *
 * Since: 0.2
 */

#define QUEUE_CAPACITY        16384
#define FLUSH_MS              16
#define SLOW_CLIENT_BYTES     (128 * 1024)
#define UNSENT_CHECK_EVERY    32
#define BATCH_RECORDS         64    /* records per frame for `/v1/stream?batch=1` (~20 KiB) */
#define BATCH_BYTES           (64 * 1024)  /* and bytes: libsoup's clients refuse frames over
                                            * 128 KiB (max-incoming-payload-size) */
#define CLIENT_SNDBUF         (256 * 1024)
#define DEFAULT_MAX_CLIENTS   16
#define DEFAULT_IDLE_TIMEOUT  10
#define HOUSEKEEPING_MS       200

typedef struct _Core Core;

typedef struct
{
  AtomrInspectorServer    *server;    /* outlives the server thread's clients */
  SoupWebsocketConnection *ws;
  GSocket                 *socket;    /* under ws, for SIOCOUTQ */
  guint64                  dropped;   /* not yet reported to the client */
  gboolean                 gone;      /* closed during a flush: removed after it */
  gboolean                 batched;   /* `?batch=1`: many records per frame */
} Client;

typedef struct
{
  gatomicrefcount ref;
  Core           *core;
  GWeakRef        actor;
  gboolean        hooked;        /* under the server's actors_lock: observer set */
  const gchar    *name;          /* interned when hooked */
  const gchar    *library;       /* interned when hooked */
} ActorWatch;

struct _Core
{
  gatomicrefcount     ref;
  GMutex              lock;
  gint                running;       /* set under lock, atomically: the observers read it */
  GMainContext       *context;       /* set while running */
  GQueue              queue;         /* AtomrLaunchInfo*, under lock: published ones */
  AtomrRecordRing    *ring;          /* the actors' records: lock-free, many
                                      * producers, the server thread consumes */
  guint64             queue_dropped; /* under lock: dropped from queue, not yet counted per client */
  guint64             n_dropped;     /* under lock: dropped from queue or per client
                                      * (the ring counts its own) */
  gint                n_clients;     /* atomic */
  GPtrArray          *clients;       /* Client*, server thread only */
  GSource            *flush_timer;   /* server thread only: while clients stream or always-record */
  GString            *texts;         /* server thread only: a flush's JSON texts, NUL after each */
  GArray             *offsets;       /* gsize, server thread only: where each text starts */
  GString            *frames;        /* server thread only: a flush's batched frames, NUL after each */
  GArray             *frame_offsets; /* gsize, server thread only: where each frame starts */
  GArray             *frame_ends;    /* guint, server thread only: the record after each frame */
  gint                flush_timer_on; /* atomic copy of flush_timer != NULL, for tests */
  gboolean            flushing;      /* server thread only: clients must stay put */
  AtomrTraceRecorder *recorder;      /* strong; thread-safe */
  /* Debug counters (atomic), for tests that check what an idle server
   * costs: records queued for clients, turned into JSON, and flushes of
   * the queue (records taken from the actors are the ring's own count). */
  gint64              n_published;
  gint64              n_serialized;
  gint64              n_flushes;
};

struct _AtomrInspectorServer
{
  GObject             parent_instance;

  Core               *core;
  AtomrTraceRecorder *recorder;
  gchar              *token;
  gchar              *discovery_path;
  guint               port;
  guint               max_clients;
  guint               idle_timeout;
  gint64              started_us;
  gboolean            always_record;  /* under actors_lock */
  gchar              *address;        /* to bind; read by the server thread while it starts */
  GTlsCertificate    *tls_certificate; /* NULL: plain HTTP */

  GMutex              actors_lock;
  GHashTable         *actors;   /* AtomrActor* -> ActorWatch* */
  gboolean            hooked;   /* under actors_lock: handlers connected */

  /* The server thread's own state. */
  GThread            *thread;
  GMainLoop          *loop;
  gint                quit;         /* atomic: the server thread is to stop */
  SoupServer         *server;
  GSocketService     *service;
  GPtrArray          *connections;  /* GSocketConnection*, server thread */
  GMutex              start_lock;
  GCond               start_cond;
  gboolean            start_done;
  GError             *start_error;
};

G_DEFINE_FINAL_TYPE (AtomrInspectorServer, atomr_inspector_server, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PORT,
  PROP_TOKEN,
  PROP_RECORDER,
  PROP_MAX_CLIENTS,
  PROP_IDLE_TIMEOUT,
  PROP_RUNNING,
  PROP_ALWAYS_RECORD,
  PROP_ADDRESS,
  PROP_TLS_CERTIFICATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static Core *
core_ref (Core *core)
{
  g_atomic_ref_count_inc (&core->ref);
  return core;
}

static void
core_unref (Core *core)
{
  if (!g_atomic_ref_count_dec (&core->ref))
    return;
  g_queue_clear_full (&core->queue, (GDestroyNotify) atomr_launch_info_unref);
  atomr_record_ring_free (core->ring);
  g_ptr_array_unref (core->clients);
  g_string_free (core->texts, TRUE);
  g_array_unref (core->offsets);
  g_string_free (core->frames, TRUE);
  g_array_unref (core->frame_offsets);
  g_array_unref (core->frame_ends);
  g_clear_object (&core->recorder);
  g_mutex_clear (&core->lock);
  g_free (core);
}

static ActorWatch *
watch_ref (ActorWatch *w)
{
  g_atomic_ref_count_inc (&w->ref);
  return w;
}

static void
watch_unref (ActorWatch *w)
{
  if (!g_atomic_ref_count_dec (&w->ref))
    return;
  g_weak_ref_clear (&w->actor);
  core_unref (w->core);
  g_free (w);
}


/* ------------------------------------------------------------------ */
/* The application's side: append and wake                             */

/* Queues a reference for the server thread's next flush: no wake-up,
 * no JSON.  Nothing at all while nobody streams. */
static void
core_publish (Core            *core,
              AtomrLaunchInfo *info)
{
  if (g_atomic_int_get (&core->n_clients) == 0)
    return;   /* nobody streams: nothing to do on the application's thread */
  g_mutex_lock (&core->lock);
  if (!g_atomic_int_get (&core->running))
    ;
  else if (core->queue.length >= QUEUE_CAPACITY)
    {
      core->queue_dropped++;
      core->n_dropped++;
    }
  else
    {
      g_queue_push_tail (&core->queue, atomr_launch_info_ref (info));
      g_atomic_pointer_add (&core->n_published, 1);
    }
  g_mutex_unlock (&core->lock);
}

/* The actor's observer, set only while observed (see update_hooks()): on
 * the thread that runs the actor's context, with no lock held (see
 * atomr_actor_set_observer()).  Copies plain values into a
 * slot of the ring: no lock, no allocation but the error text of a
 * failure, and no write to a cache line the server thread writes but the
 * slot itself (which it hands back one lap earlier).  It used to append
 * to an array under the server's mutex and bump a shared atomic counter
 * beside it. */
static void
on_observe (AtomrActor          *actor,
            const AtomrOpRecord *r,
            gpointer             user_data)
{
  ActorWatch *w = user_data;
  Core *core = w->core;
  AtomrRingRecord *p;

  (void) actor;
  if (!g_atomic_int_get (&core->running) || (p = atomr_record_ring_push_begin (core->ring)) == NULL)
    return;   /* stopped, or full: the ring counted the drop */
  p->actor = w->name;
  p->library = w->library;
  /* By hand: g_strlcpy() (a strlen() of the whole source, then a copy,
   * through the PLT) was 53 of the observer's ~210 instructions for a
   * name like "fill" (callgrind, bench-inspector-host record). */
  {
    const gchar *op = r->operation ? r->operation : "";
    gsize i = 0;

    for (; i < sizeof p->operation - 1 && op[i] != '\0'; i++)
      p->operation[i] = op[i];
    p->operation[i] = '\0';
  }
  p->sequence = r->sequence;
  p->t_submit = r->t_submit;
  p->t_enqueue = r->t_enqueue;
  p->t_complete = r->t_complete;
  p->gpu_ms = r->gpu_ms;
  p->stream_id = r->stream_id;
  p->device = r->device;
  p->mailbox_depth = r->mailbox_depth;
  p->error = r->error ? g_strdup (r->error->message) : NULL;
  atomr_record_ring_push_end (core->ring, p);
}

/* Server thread: a pending record as a launch record. */
static AtomrLaunchInfo *
pending_to_info (const AtomrRingRecord *p)
{
  AtomrLaunchInfo *info = atomr_launch_info_new (p->actor, p->library, p->operation);

  atomr_launch_info_set_sequence (info, p->sequence);
  atomr_launch_info_set_device_ordinal (info, p->device);
  atomr_launch_info_set_stream_id (info, p->stream_id);
  atomr_launch_info_set_mailbox_depth (info, p->mailbox_depth);
  if (p->t_submit > 0)
    atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, p->t_submit);
  if (p->t_enqueue > 0)
    atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, p->t_enqueue);
  if (p->t_complete > 0)
    {
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, p->t_complete);
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_REPLIED, p->t_complete);
    }
  if (p->gpu_ms >= 0)
    atomr_launch_info_set_gpu_duration_ms (info, p->gpu_ms);
  if (p->error)
    {
      g_autoptr(GError) e = g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_LIBRARY, p->error);
      atomr_launch_info_set_error (info, e);
    }
  return info;
}

static void
watch_hook (ActorWatch *w,
            AtomrActor *actor)
{
  if (w->hooked)
    return;
  w->name = g_intern_string (atomr_actor_get_name (actor));
  w->library = g_intern_string (atomr_actor_get_library (actor));
  atomr_actor_set_observer (actor, on_observe, watch_ref (w), (GDestroyNotify) watch_unref);
  w->hooked = TRUE;
}

static void
watch_unhook (ActorWatch *w)
{
  g_autoptr(AtomrActor) actor = g_weak_ref_get (&w->actor);

  if (actor && w->hooked)
    atomr_actor_set_observer (actor, NULL, NULL, NULL);
  w->hooked = FALSE;
}

/* Connects the actors' handlers while someone looks (a streaming client,
 * or always-record) and disconnects them otherwise, so that an idle server
 * costs the actors nothing.  Any thread. */
static void
update_hooks_for (AtomrInspectorServer *self,
                  gint                  n_clients)
{
  GHashTableIter iter;
  ActorWatch *w;
  gboolean want;

  g_mutex_lock (&self->actors_lock);
  want = self->always_record || n_clients > 0;
  if (want != self->hooked)
    {
      self->hooked = want;
      g_hash_table_iter_init (&iter, self->actors);
      while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &w))
        {
          if (want)
            {
              g_autoptr(AtomrActor) actor = g_weak_ref_get (&w->actor);
              if (actor)
                watch_hook (w, actor);
            }
          else
            watch_unhook (w);
        }
    }
  g_mutex_unlock (&self->actors_lock);
}

static void
update_hooks (AtomrInspectorServer *self)
{
  update_hooks_for (self, g_atomic_int_get (&self->core->n_clients));
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/* The stream's records are written by hand, not through JsonBuilder:
 * that built a GObject, a tree of hash tables and a generator per record,
 * about 10 µs of the server thread each (perf on bench-inspector-host),
 * so one client streaming 400 000 operations a second kept the server
 * thread and the allocator busy for several cores' worth and dropped a
 * third of the records.  These append to one reused GString. */

/* A JSON string: quotes, escapes, and invalid UTF-8 made valid (JSON text
 * is UTF-8; an error message may come from anywhere). */
static void
json_append_string (GString     *out,
                    const gchar *value)
{
  g_autofree gchar *valid = NULL;
  const gchar *p, *run;

  if (value == NULL)
    value = "";
  if (!g_utf8_validate (value, -1, NULL))
    value = valid = g_utf8_make_valid (value, -1);
  g_string_append_c (out, '"');
  for (p = run = value; *p; p++)
    {
      guchar ch = (guchar) *p;
      if (ch >= 0x20 && ch != '"' && ch != '\\')
        continue;
      g_string_append_len (out, run, p - run);
      switch (ch)
        {
        case '"':  g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        default:   g_string_append_printf (out, "\\u%04x", ch); break;
        }
      run = p + 1;
    }
  g_string_append_len (out, run, p - run);
  g_string_append_c (out, '"');
}

static void
json_append_int (GString *out,
                 gint64   value)
{
  gchar buf[24], *end = buf + sizeof buf, *p = end;
  guint64 v = value < 0 ? (guint64) 0 - (guint64) value : (guint64) value;

  do
    {
      *--p = (gchar) ('0' + v % 10);
      v /= 10;
    }
  while (v > 0);
  if (value < 0)
    *--p = '-';
  g_string_append_len (out, p, end - p);
}

/* A JSON number that reads back as a double (a decimal point or an
 * exponent always), null for what JSON cannot say (NaN, infinities). */
static void
json_append_double (GString *out,
                    gdouble  value)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (value))
    {
      g_string_append (out, "null");
      return;
    }
  g_ascii_dtostr (buf, sizeof buf, value);
  g_string_append (out, buf);
  if (strpbrk (buf, ".eE") == NULL)
    g_string_append (out, ".0");
}

static void
json_append_member (GString     *out,
                    const gchar *name)
{
  /* Member names are literals here: no escaping needed. */
  g_string_append_c (out, ',');
  g_string_append_c (out, '"');
  g_string_append (out, name);
  g_string_append (out, "\":");
}

/* Appends @info as one stream message (a JSON object) to @out.  Any
 * thread (the server thread for the stream). */
void
atomr_inspector_record_append_json (AtomrLaunchInfo *info,
                                    GString         *out)
{
  const GError *err = atomr_launch_info_get_error (info);

  g_string_append (out, "{\"type\":\"record\"");
  json_append_member (out, "actor");
  json_append_string (out, atomr_launch_info_get_actor_name (info));
  json_append_member (out, "library");
  json_append_string (out, atomr_launch_info_get_library (info));
  json_append_member (out, "operation");
  json_append_string (out, atomr_launch_info_get_operation (info));
  json_append_member (out, "sequence");
  json_append_int (out, (gint64) atomr_launch_info_get_sequence (info));
  json_append_member (out, "device");
  json_append_int (out, atomr_launch_info_get_device_ordinal (info));
  json_append_member (out, "stream");
  json_append_int (out, atomr_launch_info_get_stream_id (info));
  json_append_member (out, "submit_us");
  json_append_int (out, atomr_launch_info_get_submit_time (info));
  json_append_member (out, "enqueue_us");
  json_append_int (out, atomr_launch_info_get_enqueue_time (info));
  json_append_member (out, "complete_us");
  json_append_int (out, atomr_launch_info_get_complete_time (info));
  json_append_member (out, "gpu_ms");
  json_append_double (out, atomr_launch_info_get_gpu_duration_ms (info));
  if (atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_GPU_END) > 0)
    {
      /* GPU times on the host clock (timing on): the live timeline draws
       * the GPU slice from them. */
      json_append_member (out, "gpu_start_ns");
      json_append_int (out, atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_GPU_START));
      json_append_member (out, "gpu_end_ns");
      json_append_int (out, atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_GPU_END));
    }
  json_append_member (out, "mailbox_depth");
  json_append_int (out, atomr_launch_info_get_mailbox_depth (info));
  json_append_member (out, "error");
  if (err)
    json_append_string (out, err->message);
  else
    g_string_append (out, "null");
  g_string_append_c (out, '}');
}

static JsonBuilder *
answer_begin (void)
{
  JsonBuilder *b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "api_version");
  json_builder_add_int_value (b, ATOMR_INSPECTOR_API_VERSION);
  return b;
}

static void
answer_json (SoupServerMessage *msg,
             guint              status,
             JsonBuilder       *b)
{
  g_autoptr(JsonNode) root = NULL;
  gsize len = 0;
  gchar *text;

  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = json_to_string (root, FALSE);
  len = strlen (text);
  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_TAKE, text, len);
}

static void
answer_error (SoupServerMessage *msg,
              guint              status,
              const gchar       *message)
{
  g_autoptr(JsonBuilder) b = answer_begin ();

  json_builder_set_member_name (b, "error");
  json_builder_add_string_value (b, message);
  answer_json (msg, status, b);
}

static void
add_process (AtomrInspectorServer *self,
             JsonBuilder          *b)
{
  const gchar *prg = g_get_prgname ();

  json_builder_set_member_name (b, "pid");
  json_builder_add_int_value (b, getpid ());
  json_builder_set_member_name (b, "program");
  json_builder_add_string_value (b, prg ? prg : "");
  json_builder_set_member_name (b, "atomr_version");
  json_builder_add_string_value (b, ATOMR_VERSION_STRING);
  json_builder_set_member_name (b, "started_us");
  json_builder_add_int_value (b, self->started_us);
  json_builder_set_member_name (b, "now_us");
  json_builder_add_int_value (b, g_get_real_time ());
}

static void
add_devices (JsonBuilder *b)
{
  gint n = atomr_device_get_count ();

  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (gint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      AtomrDevice *dev = atomr_device_get (i, &error);
      guint64 free_b = 0, total_b = 0;

      if (dev == NULL)
        continue;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "ordinal");
      json_builder_add_int_value (b, i);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, atomr_device_get_name (dev));
      json_builder_set_member_name (b, "generation");
      json_builder_add_int_value (b, atomr_device_get_generation (dev));
      json_builder_set_member_name (b, "state");
      json_builder_add_string_value (b, atomr_device_get_state (dev) == ATOMR_DEVICE_STATE_READY ? "ready"
                                        : atomr_device_get_state (dev) == ATOMR_DEVICE_STATE_POISONED ? "poisoned"
                                        : "stopped");
      json_builder_set_member_name (b, "total_memory");
      json_builder_add_int_value (b, (gint64) atomr_device_get_total_memory (dev));
      if (atomr_device_get_memory_info (dev, &free_b, &total_b, NULL))
        {
          json_builder_set_member_name (b, "free_memory");
          json_builder_add_int_value (b, (gint64) free_b);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
add_actors (AtomrInspectorServer *self,
            JsonBuilder          *b)
{
  GHashTableIter iter;
  ActorWatch *w;

  json_builder_set_member_name (b, "actors");
  json_builder_begin_array (b);
  g_mutex_lock (&self->actors_lock);
  g_hash_table_iter_init (&iter, self->actors);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &w))
    {
      g_autoptr(AtomrActor) actor = g_weak_ref_get (&w->actor);
      guint64 done = 0, in_flight = 0, failed = 0;
      guint mailbox = 0;

      if (actor == NULL)
        continue;
      atomr_actor_get_counters (actor, NULL, &done, &in_flight, &failed, &mailbox);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, atomr_actor_get_name (actor));
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, G_OBJECT_TYPE_NAME (actor));
      json_builder_set_member_name (b, "library");
      json_builder_add_string_value (b, atomr_actor_get_library (actor));
      json_builder_set_member_name (b, "mailbox_depth");
      json_builder_add_int_value (b, mailbox);
      json_builder_set_member_name (b, "in_flight");
      json_builder_add_int_value (b, (gint64) in_flight);
      json_builder_set_member_name (b, "completed");
      json_builder_add_int_value (b, (gint64) done);
      json_builder_set_member_name (b, "errors");
      json_builder_add_int_value (b, (gint64) failed);
      json_builder_end_object (b);
    }
  g_mutex_unlock (&self->actors_lock);
  json_builder_end_array (b);
}

static void
add_cache (JsonBuilder *b)
{
  AtomrKernelCache *cache = atomr_kernel_cache_get_default ();
  guint64 memory_hits = 0, disk_hits = 0, misses = 0;

  atomr_kernel_cache_get_counters (cache, &memory_hits, &disk_hits, &misses);
  json_builder_set_member_name (b, "directory");
  json_builder_add_string_value (b, atomr_kernel_cache_get_directory (cache));
  json_builder_set_member_name (b, "memory_hits");
  json_builder_add_int_value (b, (gint64) memory_hits);
  json_builder_set_member_name (b, "disk_hits");
  json_builder_add_int_value (b, (gint64) disk_hits);
  json_builder_set_member_name (b, "misses");
  json_builder_add_int_value (b, (gint64) misses);
  json_builder_set_member_name (b, "rejected");
  json_builder_add_int_value (b, atomr_kernel_cache_get_n_rejected (cache));
  json_builder_set_member_name (b, "max_size");
  json_builder_add_int_value (b, (gint64) atomr_kernel_cache_get_max_size (cache));
}

/* ------------------------------------------------------------------ */
/* The server thread                                                   */

/* The bearer check as an auth domain: libsoup runs it after the headers,
 * before any handler (the WebSocket upgrade included), and answers 401. */
typedef struct
{
  SoupAuthDomain parent_instance;
  const gchar   *token;   /* the server's; it outlives the domain */
} BearerDomain;

typedef struct
{
  SoupAuthDomainClass parent_class;
} BearerDomainClass;

static GType bearer_domain_get_type (void);
G_DEFINE_TYPE (BearerDomain, bearer_domain, SOUP_TYPE_AUTH_DOMAIN)

static gboolean
bearer_matches (const gchar *header,
                const gchar *token)
{
  gsize n = strlen (token);
  guint diff = 0;

  if (header == NULL || g_ascii_strncasecmp (header, "Bearer ", 7) != 0 || strlen (header + 7) != n)
    return FALSE;
  for (gsize i = 0; i < n; i++)   /* constant time */
    diff |= (guint) (header[7 + i] ^ token[i]);
  return diff == 0;
}

static char *
bearer_accepts (SoupAuthDomain    *domain,
                SoupServerMessage *msg,
                const char        *header)
{
  return bearer_matches (header, ((BearerDomain *) domain)->token) ? g_strdup ("inspector") : NULL;
}

static char *
bearer_challenge (SoupAuthDomain    *domain,
                  SoupServerMessage *msg)
{
  return g_strdup ("Bearer realm=\"atomr\"");
}

static void
bearer_domain_class_init (BearerDomainClass *klass)
{
  SoupAuthDomainClass *domain_class = SOUP_AUTH_DOMAIN_CLASS (klass);

  domain_class->accepts = bearer_accepts;
  domain_class->challenge = bearer_challenge;
}

static void
bearer_domain_init (BearerDomain *self)
{
}

/* Answers (401, 413) and returns TRUE when @msg is not to be served. */
static gboolean
refuse (AtomrInspectorServer *self,
        SoupServerMessage    *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  if (!bearer_matches (soup_message_headers_get_one (headers, "Authorization"), self->token))
    {
      soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                    "WWW-Authenticate", "Bearer realm=\"atomr\"");
      answer_error (msg, SOUP_STATUS_UNAUTHORIZED, "missing or wrong bearer token");
      return TRUE;
    }
  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED
      || soup_message_headers_get_content_length (headers) > 0)
    {
      answer_error (msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE, "the inspector API takes no request body");
      return TRUE;
    }
  return FALSE;
}

/* A request read whole, before its handler: a stream request's socket
 * loses the idle limit now, before libsoup creates the WebSocket's
 * sources (they keep the timeout they are created with; streaming
 * clients may stay silent), and is kept for SIOCOUTQ (the upgraded
 * message no longer knows it). */
static GSocket *message_socket (AtomrInspectorServer *self, SoupServerMessage *msg);

/* The request's headers are in: a request announcing a body is cut off
 * before the body is read (libsoup would buffer all of it). */
static void
on_got_headers (SoupServerMessage *msg,
                gpointer           user_data)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED
      || soup_message_headers_get_content_length (headers) > 0)
    {
      GSocket *socket = message_socket (user_data, msg);

      g_debug ("inspector: refusing a request body: closing the connection");
      /* libsoup reads the whole body before any handler can answer:
       * end the connection instead (shutdown, so that libsoup's next read
       * fails cleanly on a still valid descriptor). */
      if (socket)
        g_socket_shutdown (socket, TRUE, TRUE, NULL);
    }
}

static void
on_request_started (SoupServer        *server,
                    SoupServerMessage *msg,
                    gpointer           user_data)
{
  g_signal_connect (msg, "got-headers", G_CALLBACK (on_got_headers), user_data);
}

/* The socket of @msg's connection (connections are handed to libsoup as
 * streams, so the message does not know it): by the peer's port. */
static GSocket *
message_socket (AtomrInspectorServer *self,
                SoupServerMessage    *msg)
{
  GSocketAddress *peer = soup_server_message_get_remote_address (msg);
  guint16 port;

  if (peer == NULL || !G_IS_INET_SOCKET_ADDRESS (peer))
    return NULL;
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (peer));
  for (guint i = 0; i < self->connections->len; i++)
    {
      GSocketConnection *conn = g_ptr_array_index (self->connections, i);
      g_autoptr(GSocketAddress) remote = g_socket_connection_get_remote_address (conn, NULL);
      if (remote && G_IS_INET_SOCKET_ADDRESS (remote)
          && g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (remote)) == port)
        return g_socket_connection_get_socket (conn);
    }
  return NULL;
}

static void
on_request_read (SoupServer        *server,
                 SoupServerMessage *msg,
                 gpointer           user_data)
{
  AtomrInspectorServer *self = user_data;
  GUri *uri = soup_server_message_get_uri (msg);
  GSocket *socket;

  if (uri == NULL || !g_str_equal (g_uri_get_path (uri), "/v1/stream"))
    return;
  socket = message_socket (self, msg);
  if (socket)
    {
      g_socket_set_timeout (socket, 0);
      g_object_set_data_full (G_OBJECT (msg), "atomr-socket", g_object_ref (socket), g_object_unref);
    }
}

static void
api_handler (SoupServer        *server,
             SoupServerMessage *msg,
             const char        *path,
             GHashTable        *query,
             gpointer           user_data)
{
  AtomrInspectorServer *self = user_data;
  g_autoptr(JsonBuilder) b = NULL;

  if (refuse (self, msg))
    return;
  if (soup_server_message_get_method (msg) != SOUP_METHOD_GET
      && soup_server_message_get_method (msg) != SOUP_METHOD_HEAD)
    {
      answer_error (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "only GET is served");
      return;
    }
  if (g_str_equal (path, "/v1/trace"))
    {
      gchar *json = atomr_trace_recorder_to_json (self->recorder);
      soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
      soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_TAKE, json, strlen (json));
      return;
    }
  b = answer_begin ();
  if (g_str_equal (path, "/v1") || g_str_equal (path, "/v1/"))
    {
      static const gchar *endpoints[] = { "/v1/process", "/v1/devices", "/v1/actors", "/v1/cache",
                                          "/v1/trace", "/v1/stream" };
      json_builder_set_member_name (b, "endpoints");
      json_builder_begin_array (b);
      for (guint i = 0; i < G_N_ELEMENTS (endpoints); i++)
        json_builder_add_string_value (b, endpoints[i]);
      json_builder_end_array (b);
    }
  else if (g_str_equal (path, "/v1/process"))
    add_process (self, b);
  else if (g_str_equal (path, "/v1/devices"))
    add_devices (b);
  else if (g_str_equal (path, "/v1/actors"))
    add_actors (self, b);
  else if (g_str_equal (path, "/v1/cache"))
    add_cache (b);
  else
    {
      g_autofree gchar *what = g_strdup_printf ("no endpoint %s (see /v1)", path);
      g_clear_object (&b);
      answer_error (msg, SOUP_STATUS_NOT_FOUND, what);
      return;
    }
  answer_json (msg, SOUP_STATUS_OK, b);
}

/* Bytes the kernel holds unsent or unacknowledged for @c. */
static guint64
socket_unsent (Client *c)
{
  int outq = 0;

  if (c->socket == NULL || ioctl (g_socket_get_fd (c->socket), SIOCOUTQ, &outq) != 0)
    return 0;
  return (guint64) MAX (outq, 0);
}

static void
client_send_dropped (Client *c)
{
  g_autofree gchar *text = NULL;

  if (c->dropped == 0 || socket_unsent (c) > SLOW_CLIENT_BYTES)
    return;
  text = g_strdup_printf ("{\"type\":\"dropped\",\"count\":%" G_GUINT64_FORMAT "}", c->dropped);
  soup_websocket_connection_send_text (c->ws, text);
  c->dropped = 0;
}

static void
client_free (gpointer data)
{
  Client *c = data;

  g_signal_handlers_disconnect_by_data (c->ws, c);
  g_object_unref (c->ws);
  g_clear_object (&c->socket);
  g_free (c);
}

static void client_gone (Client *c);

typedef struct
{
  Core   *core;
  GQueue *queue;
} RingTake;

static void
ring_record_take (AtomrRingRecord *record,
                  gpointer         user_data)
{
  RingTake *take = user_data;
  AtomrLaunchInfo *info = pending_to_info (record);

  atomr_trace_recorder_add_record (take->core->recorder, info);
  g_queue_push_tail (take->queue, info);
}

static void
ring_record_ignore (AtomrRingRecord *record,
                    gpointer         user_data)
{
  (void) record;
  (void) user_data;
}

/* Server thread: the JSON texts of infos[0 .. n) exist in core->texts
 * (each serialized once per flush, when a client is first sent it). */
static void
serialize_upto (Core      *core,
                GPtrArray *infos,
                guint      n)
{
  while (core->offsets->len < n)
    {
      gsize at = core->texts->len;
      g_array_append_val (core->offsets, at);
      atomr_inspector_record_append_json (g_ptr_array_index (infos, core->offsets->len - 1), core->texts);
      g_string_append_c (core->texts, '\0');
    }
}

/* Server thread: batched frame @j ({"type":"records","records":[...]}:
 * the record messages that follow frame j - 1's, at most BATCH_RECORDS
 * of them and BATCH_BYTES unless a single one is longer) exists in
 * core->frames; returns its text and sets *end to the index of the record
 * after it.  Frames are made in order, once per flush, for every batched
 * client. */
static const gchar *
batched_frame (Core      *core,
               GPtrArray *infos,
               guint      j,
               guint     *end)
{
  while (core->frame_offsets->len <= j)
    {
      guint f = core->frame_offsets->len;
      guint k = f == 0 ? 0 : g_array_index (core->frame_ends, guint, f - 1);
      gsize at = core->frames->len;

      g_array_append_val (core->frame_offsets, at);
      g_string_append (core->frames, "{\"type\":\"records\",\"records\":[");
      for (guint n = 0; k < infos->len && n < BATCH_RECORDS; k++, n++)
        {
          gsize from, to;

          serialize_upto (core, infos, k + 1);
          /* Up to record k's NUL (a plain client may have serialized
           * records past it already). */
          from = g_array_index (core->offsets, gsize, k);
          to = (k + 1 < core->offsets->len ? g_array_index (core->offsets, gsize, k + 1) : core->texts->len) - 1;
          if (n > 0 && core->frames->len - at + (to - from) + 3 > BATCH_BYTES)
            break;
          if (n > 0)
            g_string_append_c (core->frames, ',');
          g_string_append_len (core->frames, core->texts->str + from, (gssize) (to - from));
        }
      g_string_append (core->frames, "]}");
      g_string_append_c (core->frames, '\0');
      g_array_append_val (core->frame_ends, k);
    }
  *end = g_array_index (core->frame_ends, guint, j);
  return core->frames->str + g_array_index (core->frame_offsets, gsize, j);
}

/* Server thread: a slow client misses the rest of this flush, from @k on;
 * counted, and reported once it reads again. */
static void
client_skip_rest (Core      *core,
                  Client    *c,
                  GPtrArray *infos,
                  guint      k)
{
  guint64 rest = infos->len - k;

  c->dropped += rest;
  g_mutex_lock (&core->lock);
  core->n_dropped += rest;
  g_mutex_unlock (&core->lock);
}

/* Server thread, every FLUSH_MS while clients stream: hands the queued
 * records to every client, one batch of frames. */
static gboolean
flush_cb (gpointer data)
{
  Core *core = data;
  GQueue queue;
  guint64 dropped;
  guint popped;
  g_autoptr(GPtrArray) infos = NULL;

  g_mutex_lock (&core->lock);
  queue = core->queue;
  g_queue_init (&core->queue);
  dropped = core->queue_dropped;
  core->queue_dropped = 0;
  g_mutex_unlock (&core->lock);
  dropped += atomr_record_ring_take_dropped (core->ring);

  /* The actors' records become launch records here, on this thread:
   * into the recorder always, to JSON only for clients.  At most one
   * ring's worth per flush, so that actors producing faster than this
   * loop cannot keep it here. */
  popped = atomr_record_ring_pop (core->ring, ring_record_take, &(RingTake) { core, &queue },
                                  atomr_record_ring_get_capacity (core->ring));
  if (core->clients->len > 0)
    g_atomic_pointer_add (&core->n_published, popped);
  if (core->clients->len == 0)
    {
      g_queue_clear_full (&queue, (GDestroyNotify) atomr_launch_info_unref);
      return G_SOURCE_CONTINUE;
    }
  if (queue.length == 0 && dropped == 0)
    return G_SOURCE_CONTINUE;
  g_atomic_pointer_add (&core->n_flushes, 1);
  /* Every text back to back in one buffer kept from flush to flush, each
   * ended by its NUL; offsets, not pointers, while it grows.  A record is
   * serialized when the first client is sent it, not before: records
   * every client drops (all of them slow) cost no JSON, so an overloaded
   * server does less work, not more. */
  infos = g_ptr_array_new_full (queue.length, (GDestroyNotify) atomr_launch_info_unref);
  for (GList *l = queue.head; l; l = l->next)
    g_ptr_array_add (infos, l->data);
  g_queue_clear (&queue);   /* the references moved to infos */
  g_string_truncate (core->texts, 0);
  g_array_set_size (core->offsets, 0);
  g_string_truncate (core->frames, 0);
  g_array_set_size (core->frame_offsets, 0);
  g_array_set_size (core->frame_ends, 0);
  core->flushing = TRUE;

  for (guint i = 0; i < core->clients->len; i++)
    {
      Client *c = g_ptr_array_index (core->clients, i);

      c->dropped += dropped;
      if (soup_websocket_connection_get_state (c->ws) != SOUP_WEBSOCKET_STATE_OPEN)
        continue;
      client_send_dropped (c);
      if (c->batched)
        {
          /* BATCH_RECORDS records a frame: one message, one frame header
           * and one signal on the client instead of 64; the backlog is
           * asked before each frame (about as often, in bytes, as every
           * UNSENT_CHECK_EVERY single records). */
          guint k = 0;

          for (guint j = 0; k < infos->len; j++)
            {
              const gchar *frame;

              if (soup_websocket_connection_get_state (c->ws) != SOUP_WEBSOCKET_STATE_OPEN)
                break;
              if (c->dropped > 0 || socket_unsent (c) > SLOW_CLIENT_BYTES)
                {
                  client_skip_rest (core, c, infos, k);
                  break;
                }
              frame = batched_frame (core, infos, j, &k);
              soup_websocket_connection_send_text (c->ws, frame);
            }
          continue;
        }
      for (guint k = 0; k < infos->len; k++)
        {
          /* A failed write closes the connection on the spot (the
           * client went away mid-batch): the rest is not sent. */
          if (soup_websocket_connection_get_state (c->ws) != SOUP_WEBSOCKET_STATE_OPEN)
            break;
          /* The socket's backlog is asked every UNSENT_CHECK_EVERY
           * messages (an ioctl each: it was one system call per record
           * per client), so a slow client gets at most that many more
           * messages queued than the limit. */
          if (c->dropped > 0 || (k % UNSENT_CHECK_EVERY == 0 && socket_unsent (c) > SLOW_CLIENT_BYTES))
            {
              /* Slow client: the rest of this batch is dropped for it,
               * counted and reported once it reads again. */
              client_skip_rest (core, c, infos, k);
              break;
            }
          serialize_upto (core, infos, k + 1);
          soup_websocket_connection_send_text (c->ws, core->texts->str + g_array_index (core->offsets, gsize, k));
        }
    }
  g_atomic_pointer_add (&core->n_serialized, (gssize) core->offsets->len);
  core->flushing = FALSE;
  for (guint i = core->clients->len; i > 0; i--)
    {
      Client *c = g_ptr_array_index (core->clients, i - 1);
      if (c->gone)
        client_gone (c);
    }
  return G_SOURCE_CONTINUE;
}

/* Server thread: the flush timer runs only while clients stream or
 * always-record is on (see flush_timer_update()). */
static void
flush_timer_start (Core *core)
{
  if (core->flush_timer)
    return;
  core->flush_timer = g_timeout_source_new (FLUSH_MS);
  g_source_set_callback (core->flush_timer, flush_cb, core, NULL);
  g_source_set_static_name (core->flush_timer, "[atomr] inspector flush");
  g_source_attach (core->flush_timer, core->context);
  g_atomic_int_set (&core->flush_timer_on, 1);
}

static void
flush_timer_stop (Core *core)
{
  if (core->flush_timer == NULL)
    return;
  g_source_destroy (core->flush_timer);
  g_clear_pointer (&core->flush_timer, g_source_unref);
  g_atomic_int_set (&core->flush_timer_on, 0);
}

/* Server thread: the flush timer runs while somebody looks.  With
 * always-record and no client it used not to run: the actors' records
 * waited for the 200 ms housekeeping tick in a queue of QUEUE_CAPACITY,
 * so above about 80 000 operations a second most of them were dropped
 * (and a row of bench-inspector measured the cheap dropping path). */
static void
flush_timer_update (AtomrInspectorServer *self)
{
  gboolean want;

  g_mutex_lock (&self->actors_lock);
  want = self->always_record;
  g_mutex_unlock (&self->actors_lock);
  if ((want || self->core->clients->len > 0) && !g_atomic_int_get (&self->quit))
    flush_timer_start (self->core);
  else
    flush_timer_stop (self->core);
}

static gboolean
flush_timer_update_cb (gpointer data)
{
  flush_timer_update (data);
  return G_SOURCE_REMOVE;
}

static void
on_ws_closed (SoupWebsocketConnection *ws,
              gpointer                 user_data)
{
  Client *c = user_data;

  if (c->server->core->flushing)
    c->gone = TRUE;   /* flush_cb() is walking the clients: later */
  else
    client_gone (c);
}

static void
client_gone (Client *c)
{
  AtomrInspectorServer *self = c->server;
  Core *core = self->core;

  g_ptr_array_remove (core->clients, c);   /* frees c */
  if (g_atomic_int_dec_and_test (&core->n_clients))
    {
      flush_timer_update (self);
      update_hooks (self);
      /* What the last client left unread goes with it. */
      g_mutex_lock (&core->lock);
      g_queue_clear_full (&core->queue, (GDestroyNotify) atomr_launch_info_unref);
      core->queue_dropped = 0;
      g_mutex_unlock (&core->lock);
      atomr_record_ring_take_dropped (core->ring);
      flush_cb (core);   /* what the actors left goes to the recorder */
    }
}

static void
websocket_handler (SoupServer              *server,
                   SoupServerMessage       *msg,
                   const char              *path,
                   SoupWebsocketConnection *ws,
                   gpointer                 user_data)
{
  AtomrInspectorServer *self = user_data;
  Client *c = g_new0 (Client, 1);
  GSocket *socket = g_object_get_data (G_OBJECT (msg), "atomr-socket");

  if (socket)
    {
      int sndbuf = CLIENT_SNDBUF;
      /* A bounded send buffer, so that SIOCOUTQ tells a slow reader
       * early. */
      if (setsockopt (g_socket_get_fd (socket), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) != 0)
        g_debug ("inspector: SO_SNDBUF: %s", g_strerror (errno));
      c->socket = g_object_ref (socket);
    }
  c->server = self;
  c->ws = g_object_ref (ws);
  {
    const gchar *query = g_uri_get_query (soup_server_message_get_uri (msg));
    g_autoptr(GHashTable) params = query ? g_uri_parse_params (query, -1, "&", G_URI_PARAMS_NONE, NULL) : NULL;
    const gchar *batch = params ? g_hash_table_lookup (params, "batch") : NULL;

    c->batched = batch != NULL && !g_str_equal (batch, "0");
  }
  g_signal_connect (ws, "closed", G_CALLBACK (on_ws_closed), c);
  g_ptr_array_add (self->core->clients, c);
  flush_timer_start (self->core);
  /* Hooked before counted: whoever sees the client counted (a test, a
   * tool) may rely on every operation from then on being streamed. */
  update_hooks_for (self, g_atomic_int_get (&self->core->n_clients) + 1);
  g_atomic_int_inc (&self->core->n_clients);
}

static gboolean
housekeeping_cb (gpointer user_data)
{
  AtomrInspectorServer *self = user_data;

  /* What the actors left after the flush timer stopped (always-record
   * turned off with records pending) reaches the recorder here. */
  if (self->core->flush_timer == NULL)
    flush_cb (self->core);

  /* Forget closed connections (the connection limit counts open ones). */
  for (guint i = self->connections->len; i > 0; i--)
    {
      GSocketConnection *conn = g_ptr_array_index (self->connections, i - 1);
      if (g_socket_is_closed (g_socket_connection_get_socket (conn)))
        g_ptr_array_remove_index_fast (self->connections, i - 1);
    }
  /* Tell clients that caught up how much they missed. */
  for (guint i = 0; i < self->core->clients->len; i++)
    {
      Client *c = g_ptr_array_index (self->core->clients, i);
      if (soup_websocket_connection_get_state (c->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        client_send_dropped (c);
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_incoming (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             gpointer           user_data)
{
  AtomrInspectorServer *self = user_data;
  GSocket *socket = g_socket_connection_get_socket (connection);
  g_autoptr(GSocketAddress) local = g_socket_connection_get_local_address (connection, NULL);
  g_autoptr(GSocketAddress) remote = g_socket_connection_get_remote_address (connection, NULL);
  g_autoptr(GIOStream) stream = NULL;
  g_autoptr(GError) error = NULL;

  housekeeping_cb (self);
  if (self->connections->len >= self->max_clients)
    {
      g_debug ("inspector: %u connections open: refusing another", self->connections->len);
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }
  /* Idle (slowloris) limit: a read or write that waits longer fails and
   * the connection closes. */
  g_socket_set_timeout (socket, self->idle_timeout);
  /* Listed first: libsoup may read the request (and emit request-read)
   * before accept returns. */
  g_ptr_array_add (self->connections, g_object_ref (connection));
  if (self->tls_certificate)
    {
      /* libsoup does TLS only for the connections of its own listeners:
       * wrap this one (the handshake runs on the first read). */
      stream = g_tls_server_connection_new (G_IO_STREAM (connection), self->tls_certificate, &error);
      if (stream == NULL)
        {
          g_debug ("inspector: cannot start TLS on a connection: %s", error->message);
          g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
          g_ptr_array_remove (self->connections, connection);
          return TRUE;
        }
    }
  else
    stream = g_object_ref (G_IO_STREAM (connection));
  if (!soup_server_accept_iostream (self->server, stream, local, remote, &error))
    {
      g_debug ("inspector: cannot serve a connection: %s", error->message);
      g_ptr_array_remove (self->connections, connection);
    }
  return TRUE;
}

/* Server thread (or the fuzzing entry point's): the libsoup server with
 * its auth domain, handlers and limits, on the thread-default context. */
static void
server_setup (AtomrInspectorServer *self)
{
  self->server = soup_server_new ("server-header", "atomr-inspector", NULL);
  {
    BearerDomain *domain = g_object_new (bearer_domain_get_type (), "realm", "atomr", NULL);
    domain->token = self->token;
    soup_auth_domain_add_path (SOUP_AUTH_DOMAIN (domain), "/");
    soup_server_add_auth_domain (self->server, SOUP_AUTH_DOMAIN (domain));
    g_object_unref (domain);
  }
  g_signal_connect (self->server, "request-read", G_CALLBACK (on_request_read), self);
  g_signal_connect (self->server, "request-started", G_CALLBACK (on_request_started), self);
  soup_server_add_websocket_handler (self->server, "/v1/stream", NULL, NULL, websocket_handler, self, NULL);
  soup_server_add_handler (self->server, "/v1", api_handler, self, NULL);
  self->connections = g_ptr_array_new_with_free_func (g_object_unref);
}

/* Closes the clients and connections and drops the libsoup server. */
static void
server_teardown (AtomrInspectorServer *self)
{
  for (guint i = 0; i < self->core->clients->len; i++)
    {
      Client *c = g_ptr_array_index (self->core->clients, i);
      g_signal_handlers_disconnect_by_data (c->ws, c);
      if (soup_websocket_connection_get_state (c->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close (c->ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
    }
  g_ptr_array_set_size (self->core->clients, 0);
  g_atomic_int_set (&self->core->n_clients, 0);
  flush_timer_stop (self->core);
  update_hooks (self);
  soup_server_disconnect (self->server);
  for (guint i = 0; i < self->connections->len; i++)
    g_io_stream_close (g_ptr_array_index (self->connections, i), NULL, NULL);
  g_clear_pointer (&self->connections, g_ptr_array_unref);
  g_clear_object (&self->server);
}

static gpointer
server_thread (gpointer data)
{
  AtomrInspectorServer *self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GInetAddress) bind_to = g_inet_address_new_from_string (self->address);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (bind_to, 0);
  g_autoptr(GSocketAddress) effective = NULL;
  GSource *timer;

  g_main_context_push_thread_default (self->core->context);
  server_setup (self);
  self->service = g_socket_service_new ();
  g_signal_connect (self->service, "incoming", G_CALLBACK (on_incoming), self);
  if (!g_socket_listener_add_address (G_SOCKET_LISTENER (self->service), address, G_SOCKET_TYPE_STREAM,
                                      G_SOCKET_PROTOCOL_TCP, NULL, &effective, &error))
    {
      g_prefix_error (&error, "inspector server: cannot listen on %s: ", self->address);
      g_mutex_lock (&self->start_lock);
      self->start_error = g_steal_pointer (&error);
      self->start_done = TRUE;
      g_cond_signal (&self->start_cond);
      g_mutex_unlock (&self->start_lock);
      g_clear_object (&self->service);
      g_clear_object (&self->server);
      g_clear_pointer (&self->connections, g_ptr_array_unref);
      g_main_context_pop_thread_default (self->core->context);
      return NULL;
    }
  g_socket_service_start (self->service);
  timer = g_timeout_source_new (HOUSEKEEPING_MS);
  g_source_set_callback (timer, housekeeping_cb, self, NULL);
  g_source_set_static_name (timer, "[atomr] inspector housekeeping");
  g_source_attach (timer, self->core->context);
  flush_timer_update (self);   /* always-record set before the start */

  g_mutex_lock (&self->start_lock);
  self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
  self->start_done = TRUE;
  g_cond_signal (&self->start_cond);
  g_mutex_unlock (&self->start_lock);

  /* Not g_main_loop_run(): a quit that came before the run would be lost
   * (a stop right after the start). */
  while (!g_atomic_int_get (&self->quit))
    g_main_context_iteration (self->core->context, TRUE);

  g_source_destroy (timer);
  g_source_unref (timer);
  g_socket_service_stop (self->service);
  g_socket_listener_close (G_SOCKET_LISTENER (self->service));
  server_teardown (self);
  g_clear_object (&self->service);
  /* Let the closes finish. */
  while (g_main_context_iteration (self->core->context, FALSE))
    ;
  g_main_context_pop_thread_default (self->core->context);
  return NULL;
}

/* The fuzzing and seed-replay entry point (tests/fuzz): one connection
 * (a socketpair) whose client sends @data, served on this thread by a
 * libsoup server set up exactly as the server thread's (auth domain,
 * handlers, limits, the WebSocket stream) until the server has read
 * everything and answered.  Every "@TOKEN@" in @data is replaced with the
 * server's token, so that inputs reach the authorized handlers.  Returns
 * what the server wrote. */
GBytes *
atomr_inspector_server_serve_bytes (AtomrInspectorServer *self,
                                    const guint8         *data,
                                    gsize                 size)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GByteArray) input = g_byte_array_sized_new (size);
  g_autoptr(GByteArray) answer = g_byte_array_new ();
  g_autoptr(GSocketAddress) local = g_inet_socket_address_new_from_string ("127.0.0.1", 1);
  g_autoptr(GSocketAddress) remote = g_inet_socket_address_new_from_string ("127.0.0.1", 2);
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GSocketConnection) conn = NULL;
  g_autoptr(GError) error = NULL;
  static const gchar marker[] = "@TOKEN@";
  gsize written = 0;
  guint quiet = 0;
  int sv[2];

  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  g_return_val_if_fail (self->thread == NULL, NULL);   /* not while running */

  for (gsize i = 0; i < size; )
    {
      if (size - i >= sizeof marker - 1 && memcmp (data + i, marker, sizeof marker - 1) == 0)
        {
          g_byte_array_append (input, (const guint8 *) self->token, strlen (self->token));
          i += sizeof marker - 1;
        }
      else
        g_byte_array_append (input, data + i++, 1);
    }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
    {
      g_warning ("inspector: socketpair: %s", g_strerror (errno));
      return g_bytes_new (NULL, 0);
    }
  socket = g_socket_new_from_fd (sv[0], &error);
  if (socket == NULL)
    {
      g_warning ("inspector: %s", error->message);
      close (sv[0]);
      close (sv[1]);
      return g_bytes_new (NULL, 0);
    }
  conn = g_socket_connection_factory_create_connection (socket);

  self->core->context = context;
  g_main_context_push_thread_default (context);
  server_setup (self);
  g_ptr_array_add (self->connections, g_object_ref (conn));
  if (!soup_server_accept_iostream (self->server, G_IO_STREAM (conn), local, remote, &error))
    g_debug ("inspector: cannot serve the bytes: %s", error->message);
  /* Nothing blocks: send, serve, read, until the server has nothing left
   * to do or closed (with a bound, for a connection that never ends). */
  for (guint i = 0; i < 100000 && quiet < 10; i++)
    {
      gboolean progress = FALSE;
      guint8 buf[16384];
      ssize_t n;

      if (written < input->len)
        {
          n = write (sv[1], input->data + written, input->len - written);
          if (n > 0)
            written += n, progress = TRUE;
        }
      while ((n = read (sv[1], buf, sizeof buf)) > 0)
        {
          g_byte_array_append (answer, buf, n);
          progress = TRUE;
        }
      if (g_main_context_iteration (context, FALSE))
        progress = TRUE;
      if (n == 0 && written == input->len)
        break;   /* the server closed the connection */
      quiet = progress ? 0 : quiet + 1;
    }
  server_teardown (self);
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_pop_thread_default (context);
  self->core->context = NULL;
  close (sv[1]);
  return g_byte_array_free_to_bytes (g_steal_pointer (&answer));
}

/* ------------------------------------------------------------------ */
/* Discovery                                                           */

static gchar *
discovery_directory (void)
{
  return g_build_filename (g_get_user_runtime_dir (), "atomr", NULL);
}

/* The SHA-256 of the certificate's DER form, lower-case hex: what a
 * client pins a self-signed certificate to. */
static gchar *
certificate_sha256 (GTlsCertificate *certificate)
{
  g_autoptr(GByteArray) der = NULL;

  g_object_get (certificate, "certificate", &der, NULL);
  if (der == NULL)
    return g_strdup ("");
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, der->data, der->len);
}

static gboolean
write_discovery (AtomrInspectorServer *self,
                 GError              **error)
{
  g_autofree gchar *dir = discovery_directory ();
  g_autofree gchar *name = g_strdup_printf ("inspect-%d.json", (int) getpid ());
  g_autofree gchar *path = g_build_filename (dir, name, NULL);
  g_autofree gchar *tmp = g_strdup_printf ("%s.tmp-%08x", path, g_random_int ());
  g_autoptr(JsonBuilder) b = answer_begin ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree gchar *text = NULL;
  gsize len, done = 0;
  int fd;

  json_builder_set_member_name (b, "address");
  json_builder_add_string_value (b, self->address);
  json_builder_set_member_name (b, "port");
  json_builder_add_int_value (b, self->port);
  json_builder_set_member_name (b, "token");
  json_builder_add_string_value (b, self->token);
  json_builder_set_member_name (b, "scheme");
  json_builder_add_string_value (b, self->tls_certificate ? "https" : "http");
  {
    g_autofree gchar *url = atomr_inspector_server_dup_url (self);
    g_autofree gchar *stream = g_strdup_printf ("%s://%s%s%s:%u/v1/stream", self->tls_certificate ? "wss" : "ws",
                                                strchr (self->address, ':') ? "[" : "", self->address,
                                                strchr (self->address, ':') ? "]" : "", self->port);
    json_builder_set_member_name (b, "url");
    json_builder_add_string_value (b, url);
    json_builder_set_member_name (b, "stream_url");
    json_builder_add_string_value (b, stream);
  }
  if (self->tls_certificate)
    {
      g_autofree gchar *fp = certificate_sha256 (self->tls_certificate);
      json_builder_set_member_name (b, "tls_certificate_sha256");
      json_builder_add_string_value (b, fp);
    }
  add_process (self, b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = json_to_string (root, TRUE);
  len = strlen (text);

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "inspector server: cannot create %s: %s", dir, g_strerror (errsv));
      return FALSE;
    }
  fd = g_open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "inspector server: cannot write %s: %s", tmp, g_strerror (errsv));
      return FALSE;
    }
  while (done < len)
    {
      ssize_t n = write (fd, text + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;
          close (fd);
          g_unlink (tmp);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                       "inspector server: cannot write %s: %s", tmp, g_strerror (errsv));
          return FALSE;
        }
      done += n;
    }
  close (fd);
  if (g_rename (tmp, path) != 0)
    {
      int errsv = errno;
      g_unlink (tmp);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "inspector server: cannot rename %s: %s", tmp, g_strerror (errsv));
      return FALSE;
    }
  self->discovery_path = g_steal_pointer (&path);
  return TRUE;
}

/**
 * atomr_inspector_list_local:
 * @error: return location for a #GError
 *
 * The discovery files of this user's processes that run an inspector
 * server (see #AtomrInspectorServer), as JSON texts: objects with
 * `api_version`, `address`, `port`, `token`, `pid`, `program`,
 * `atomr_version`, `started_us`.  Files of processes that are gone are
 * skipped and removed; malformed files are skipped.  Any thread.
 *
 * Returns: (transfer full) (array zero-terminated=1): the live processes'
 *   discovery texts, possibly none; %NULL only on error (an unreadable
 *   directory other than a missing one)
 *
 * Since: 0.2
 */
gchar **
atomr_inspector_list_local (GError **error)
{
  g_autofree gchar *dir = discovery_directory ();
  g_autoptr(GStrvBuilder) out = g_strv_builder_new ();
  g_autoptr(GError) local = NULL;
  g_autoptr(GDir) d = g_dir_open (dir, 0, &local);
  const gchar *name;

  if (d == NULL)
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_strv_builder_end (out);
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  while ((name = g_dir_read_name (d)))
    {
      g_autofree gchar *path = NULL;
      g_autofree gchar *text = NULL;
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *o;
      gint64 pid;

      if (!g_str_has_prefix (name, "inspect-") || !g_str_has_suffix (name, ".json"))
        continue;
      path = g_build_filename (dir, name, NULL);
      if (!g_file_get_contents (path, &text, NULL, NULL)
          || !json_parser_load_from_data (parser, text, -1, NULL)
          || json_parser_get_root (parser) == NULL   /* an empty file */
          || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      o = json_node_get_object (json_parser_get_root (parser));
      pid = json_object_get_int_member_with_default (o, "pid", 0);
      if (pid <= 0 || !json_object_has_member (o, "port") || !json_object_has_member (o, "token"))
        continue;
      if (kill ((pid_t) pid, 0) != 0 && errno == ESRCH)
        {
          g_unlink (path);   /* stale: the process is gone */
          continue;
        }
      g_strv_builder_add (out, text);
    }
  return g_strv_builder_end (out);
}

/* ------------------------------------------------------------------ */
/* The object                                                          */

/**
 * atomr_inspector_server_new:
 *
 * Creates a stopped server with its own #AtomrTraceRecorder.
 *
 * Returns: (transfer full): a new #AtomrInspectorServer
 *
 * Since: 0.2
 */
AtomrInspectorServer *
atomr_inspector_server_new (void)
{
  return g_object_new (ATOMR_TYPE_INSPECTOR_SERVER, NULL);
}

/**
 * atomr_inspector_server_start:
 * @self: a server
 * @error: return location for a #GError
 *
 * Starts the server thread, listening on
 * [property@Atomr.InspectorServer:address] (127.0.0.1 unless set) on a
 * port the kernel picks, with TLS when a certificate is set, and writes
 * the discovery file.  Returns once it accepts connections.  Starting a
 * running server does nothing.
 *
 * Fails with %ATOMR_ERROR_INVALID_ARGUMENT when the address is not an IP
 * address, or is not a loopback address and no TLS certificate is set.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_inspector_server_start (AtomrInspectorServer *self,
                              GError              **error)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->thread)
    return TRUE;
  {
    g_autoptr(GInetAddress) bind_to = g_inet_address_new_from_string (self->address);
    if (bind_to == NULL)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "inspector server: address \"%s\" is not an IP address", self->address);
        return FALSE;
      }
    if (!g_inet_address_get_is_loopback (bind_to) && self->tls_certificate == NULL)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "inspector server: listening on %s (not a loopback address) needs a TLS certificate "
                     "(atomr_inspector_server_set_tls_files(), ATOMR_INSPECT_TLS_CERT)", self->address);
        return FALSE;
      }
  }
  self->core->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->core->context, FALSE);
  self->start_done = FALSE;
  g_atomic_int_set (&self->quit, 0);
  self->started_us = g_get_real_time ();
  self->thread = g_thread_new ("atomr-inspector", server_thread, self);
  g_mutex_lock (&self->start_lock);
  while (!self->start_done)
    g_cond_wait (&self->start_cond, &self->start_lock);
  g_mutex_unlock (&self->start_lock);
  if (self->start_error)
    {
      g_propagate_error (error, g_steal_pointer (&self->start_error));
      g_thread_join (g_steal_pointer (&self->thread));
      g_clear_pointer (&self->loop, g_main_loop_unref);
      g_clear_pointer (&self->core->context, g_main_context_unref);
      return FALSE;
    }
  g_mutex_lock (&self->core->lock);
  g_atomic_int_set (&self->core->running, TRUE);
  g_mutex_unlock (&self->core->lock);
  if (!write_discovery (self, error))
    {
      atomr_inspector_server_stop (self);
      return FALSE;
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PORT]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  return TRUE;
}

/**
 * atomr_inspector_server_stop:
 * @self: a server
 *
 * Closes every connection, stops the server thread and removes the
 * discovery file.  Stopping a stopped server does nothing.  Not from the
 * server's own thread.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_stop (AtomrInspectorServer *self)
{
  GMainContext *context;

  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));

  if (self->thread == NULL)
    return;
  g_mutex_lock (&self->core->lock);
  g_atomic_int_set (&self->core->running, FALSE);
  context = self->core->context;
  g_mutex_unlock (&self->core->lock);
  g_atomic_int_set (&self->quit, 1);
  g_main_context_wakeup (context);
  g_thread_join (g_steal_pointer (&self->thread));
  g_mutex_lock (&self->core->lock);
  self->core->context = NULL;
  g_queue_clear_full (&self->core->queue, (GDestroyNotify) atomr_launch_info_unref);
  self->core->queue_dropped = 0;
  g_mutex_unlock (&self->core->lock);
  /* The server thread is gone: this thread is the ring's consumer now. */
  atomr_record_ring_pop (self->core->ring, ring_record_ignore, NULL, 0);
  atomr_record_ring_take_dropped (self->core->ring);
  g_main_context_unref (context);
  g_clear_pointer (&self->loop, g_main_loop_unref);
  if (self->discovery_path)
    {
      g_unlink (self->discovery_path);
      g_clear_pointer (&self->discovery_path, g_free);
    }
  self->port = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PORT]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
}

/**
 * atomr_inspector_server_is_running:
 * @self: a server
 *
 * Returns whether the server accepts connections.
 *
 * Returns: whether the server accepts connections
 *
 * Since: 0.2
 */
gboolean
atomr_inspector_server_is_running (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), FALSE);
  return self->thread != NULL;
}

/**
 * atomr_inspector_server_get_port:
 * @self: a server
 *
 * Returns the TCP port on 127.0.0.1, 0 while stopped.
 *
 * Returns: the TCP port on 127.0.0.1, 0 while stopped
 *
 * Since: 0.2
 */
guint
atomr_inspector_server_get_port (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), 0);
  return self->port;
}

/**
 * atomr_inspector_server_get_token:
 * @self: a server
 *
 * Returns the bearer token requests must carry (64 hex digits).
 *
 * Returns: the bearer token requests must carry (64 hex digits)
 *
 * Since: 0.2
 */
const gchar *
atomr_inspector_server_get_token (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  return self->token;
}

/**
 * atomr_inspector_server_get_discovery_path:
 * @self: a server
 *
 * Returns the discovery file written while running, %NULL while stopped.
 *
 * Returns: (nullable) (type filename): the discovery file written while
 *   running, %NULL while stopped
 *
 * Since: 0.2
 */
const gchar *
atomr_inspector_server_get_discovery_path (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  return self->discovery_path;
}

/**
 * atomr_inspector_server_get_recorder:
 * @self: a server
 *
 * Returns the recorder `/v1/trace` exports; actors added to the server are
 * added to it.
 *
 * Returns: (transfer none): the recorder `/v1/trace` exports; actors
 *   added to the server are added to it
 *
 * Since: 0.2
 */
AtomrTraceRecorder *
atomr_inspector_server_get_recorder (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  return self->recorder;
}

/**
 * atomr_inspector_server_get_max_clients:
 * @self: a server
 *
 * Returns the most connections served at once.
 *
 * Returns: the most connections served at once
 *
 * Since: 0.2
 */
guint
atomr_inspector_server_get_max_clients (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), 0);
  return self->max_clients;
}

/**
 * atomr_inspector_server_set_max_clients:
 * @self: a server
 * @max_clients: the most connections served at once, at least 1
 *
 * Sets #AtomrInspectorServer:max-clients; takes effect for connections
 * accepted afterwards.  0 is taken as 1.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_set_max_clients (AtomrInspectorServer *self,
                                        guint                 max_clients)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  max_clients = MAX (max_clients, 1);
  if (self->max_clients == max_clients)
    return;
  self->max_clients = max_clients;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_CLIENTS]);
}

/**
 * atomr_inspector_server_get_idle_timeout:
 * @self: a server
 *
 * Returns the seconds a connection may stay silent before a request.
 *
 * Returns: the seconds a connection may stay silent before a request
 *
 * Since: 0.2
 */
guint
atomr_inspector_server_get_idle_timeout (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), 0);
  return self->idle_timeout;
}

/**
 * atomr_inspector_server_set_idle_timeout:
 * @self: a server
 * @seconds: the idle limit, at least 1
 *
 * Sets #AtomrInspectorServer:idle-timeout for connections accepted
 * afterwards.  0 is taken as 1.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_set_idle_timeout (AtomrInspectorServer *self,
                                         guint                 seconds)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  seconds = MAX (seconds, 1);
  if (self->idle_timeout == seconds)
    return;
  self->idle_timeout = seconds;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IDLE_TIMEOUT]);
}

/**
 * atomr_inspector_server_add_actor:
 * @self: a server
 * @actor: an actor
 *
 * Lists @actor in `/v1/actors`; while a client streams (or
 * #AtomrInspectorServer:always-record is on) streams its completed
 * operations and records them in the recorder.  Holds no reference on it.
 * Any thread.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_add_actor (AtomrInspectorServer *self,
                                  AtomrActor           *actor)
{
  ActorWatch *w;

  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  g_mutex_lock (&self->actors_lock);
  w = g_hash_table_lookup (self->actors, actor);
  if (w)
    {
      g_autoptr(AtomrActor) alive = g_weak_ref_get (&w->actor);
      if (alive == actor)
        {
          g_mutex_unlock (&self->actors_lock);
          return;
        }
      g_hash_table_remove (self->actors, actor);
    }
  w = g_new0 (ActorWatch, 1);
  g_atomic_ref_count_init (&w->ref);
  w->core = core_ref (self->core);
  g_weak_ref_init (&w->actor, actor);
  if (self->hooked)
    watch_hook (w, actor);
  g_hash_table_insert (self->actors, actor, w);
  g_mutex_unlock (&self->actors_lock);
}

/* Under actors_lock (the table's value destroy function). */
static void
watch_detach (gpointer data)
{
  ActorWatch *w = data;

  watch_unhook (w);
  watch_unref (w);
}

/**
 * atomr_inspector_server_remove_actor:
 * @self: a server
 * @actor: an actor added before
 *
 * Stops listing and streaming @actor.  Any thread.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_remove_actor (AtomrInspectorServer *self,
                                     AtomrActor           *actor)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  g_mutex_lock (&self->actors_lock);
  g_hash_table_remove (self->actors, actor);
  g_mutex_unlock (&self->actors_lock);
}

/**
 * atomr_inspector_server_get_always_record:
 * @self: a server
 *
 * Returns whether the added actors' operations are recorded even while no
 * client streams.
 *
 * Returns: the value of [property@Atomr.InspectorServer:always-record]
 *
 * Since: 0.2
 */
gboolean
atomr_inspector_server_get_always_record (AtomrInspectorServer *self)
{
  gboolean on;

  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), FALSE);
  g_mutex_lock (&self->actors_lock);
  on = self->always_record;
  g_mutex_unlock (&self->actors_lock);
  return on;
}

/**
 * atomr_inspector_server_set_always_record:
 * @self: a server
 * @always_record: whether to record while no client streams
 *
 * Sets [property@Atomr.InspectorServer:always-record]: on, every operation
 * of the added actors goes to the recorder (so `/v1/trace` holds the
 * history from before a tool attached), at the cost of the actors' launch
 * records and signal emissions; off (the default), an idle server costs
 * the actors nothing.  Any thread.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_set_always_record (AtomrInspectorServer *self,
                                          gboolean              always_record)
{
  GMainContext *context;
  gboolean changed;

  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  always_record = !!always_record;
  g_mutex_lock (&self->actors_lock);
  changed = self->always_record != always_record;
  self->always_record = always_record;
  g_mutex_unlock (&self->actors_lock);
  if (!changed)
    return;
  update_hooks (self);
  /* The flush timer (server thread) follows it. */
  g_mutex_lock (&self->core->lock);
  context = self->core->context ? g_main_context_ref (self->core->context) : NULL;
  g_mutex_unlock (&self->core->lock);
  if (context)
    {
      g_main_context_invoke_full (context, G_PRIORITY_DEFAULT, flush_timer_update_cb, g_object_ref (self),
                                  g_object_unref);
      g_main_context_unref (context);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ALWAYS_RECORD]);
}

/**
 * atomr_inspector_server_get_address:
 * @self: a server
 *
 * Returns the IP address the server listens on (or will, once started).
 *
 * Returns: the value of [property@Atomr.InspectorServer:address]
 *
 * Since: 0.2
 */
const gchar *
atomr_inspector_server_get_address (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  return self->address;
}

/**
 * atomr_inspector_server_set_address:
 * @self: a server
 * @address: (nullable): an IPv4 or IPv6 address, %NULL for 127.0.0.1
 *
 * Sets [property@Atomr.InspectorServer:address], used by the next
 * [method@Atomr.InspectorServer.start].  A non-loopback address needs a
 * TLS certificate; the start checks both.  Not while the server starts or
 * stops on another thread.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_set_address (AtomrInspectorServer *self,
                                    const gchar          *address)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  if (address == NULL)
    address = "127.0.0.1";
  if (g_strcmp0 (self->address, address) == 0)
    return;
  g_free (self->address);
  self->address = g_strdup (address);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ADDRESS]);
}

/**
 * atomr_inspector_server_get_tls_certificate:
 * @self: a server
 *
 * Returns the certificate the server presents, %NULL for plain HTTP.
 *
 * Returns: (transfer none) (nullable): the value of
 *   [property@Atomr.InspectorServer:tls-certificate]
 *
 * Since: 0.2
 */
GTlsCertificate *
atomr_inspector_server_get_tls_certificate (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  return self->tls_certificate;
}

/**
 * atomr_inspector_server_set_tls_certificate:
 * @self: a server
 * @certificate: (nullable): a certificate with its private key, or %NULL
 *
 * Sets [property@Atomr.InspectorServer:tls-certificate], used by the next
 * [method@Atomr.InspectorServer.start]: the server then speaks only
 * `https://` and `wss://`, and the discovery file names the scheme, the
 * URLs and the certificate's SHA-256 (for clients to pin a self-signed
 * one).
 *
 * Since: 0.2
 */
void
atomr_inspector_server_set_tls_certificate (AtomrInspectorServer *self,
                                            GTlsCertificate      *certificate)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  g_return_if_fail (certificate == NULL || G_IS_TLS_CERTIFICATE (certificate));
  if (g_set_object (&self->tls_certificate, certificate))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TLS_CERTIFICATE]);
}

/**
 * atomr_inspector_server_set_tls_files:
 * @self: a server
 * @cert_file: (type filename): a PEM file with the certificate (and
 *   possibly its chain and private key)
 * @key_file: (type filename) (nullable): a PEM file with the private key,
 *   or %NULL when @cert_file holds it
 * @error: return location for a #GError
 *
 * Loads a certificate and its private key with
 * g_tls_certificate_new_from_files() and sets it as with
 * [method@Atomr.InspectorServer.set_tls_certificate].
 *
 * Returns: %TRUE on success; %FALSE with @error naming the file otherwise
 *   (the previous certificate is kept)
 *
 * Since: 0.2
 */
gboolean
atomr_inspector_server_set_tls_files (AtomrInspectorServer *self,
                                      const gchar          *cert_file,
                                      const gchar          *key_file,
                                      GError              **error)
{
  g_autoptr(GTlsCertificate) certificate = NULL;
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), FALSE);
  g_return_val_if_fail (cert_file != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  certificate = key_file ? g_tls_certificate_new_from_files (cert_file, key_file, &local)
                         : g_tls_certificate_new_from_file (cert_file, &local);
  if (certificate == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "inspector server: cannot load the TLS certificate %s%s%s: %s", cert_file,
                   key_file ? " with the key " : "", key_file ? key_file : "", local->message);
      return FALSE;
    }
  {
    gboolean has_key = FALSE;
    g_autofree gchar *pem = NULL;
    g_object_get (certificate, "private-key-pem", &pem, NULL);
    has_key = pem != NULL;
    if (!has_key)
      {
        GByteArray *der = NULL;
        g_object_get (certificate, "private-key", &der, NULL);
        has_key = der != NULL;
        if (der)
          g_byte_array_unref (der);
      }
    if (!has_key)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "inspector server: the TLS certificate %s has no private key%s", cert_file,
                     key_file ? "" : " (give the key file too)");
        return FALSE;
      }
  }
  atomr_inspector_server_set_tls_certificate (self, certificate);
  return TRUE;
}

/**
 * atomr_inspector_server_dup_url:
 * @self: a server
 *
 * Returns the base URL of the API, `http://ADDRESS:PORT` or
 * `https://ADDRESS:PORT` with TLS, while running.
 *
 * Returns: (transfer full) (nullable): the URL, %NULL while stopped
 *
 * Since: 0.2
 */
gchar *
atomr_inspector_server_dup_url (AtomrInspectorServer *self)
{
  gboolean v6;

  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), NULL);
  if (self->port == 0)
    return NULL;
  v6 = strchr (self->address, ':') != NULL;
  return g_strdup_printf ("%s://%s%s%s:%u", self->tls_certificate ? "https" : "http", v6 ? "[" : "",
                          self->address, v6 ? "]" : "", self->port);
}

void
atomr_inspector_server_get_debug_counters (AtomrInspectorServer *self,
                                           guint64              *observed,
                                           guint64              *published,
                                           guint64              *serialized,
                                           guint64              *flushes)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  if (observed)
    *observed = atomr_record_ring_get_pushed (self->core->ring) + atomr_record_ring_get_dropped (self->core->ring);
  if (published)
    *published = (guint64) g_atomic_pointer_get (&self->core->n_published);
  if (serialized)
    *serialized = (guint64) g_atomic_pointer_get (&self->core->n_serialized);
  if (flushes)
    *flushes = (guint64) g_atomic_pointer_get (&self->core->n_flushes);
}

gboolean
atomr_inspector_server_is_flushing (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), FALSE);
  return g_atomic_int_get (&self->core->flush_timer_on);
}

gboolean
atomr_inspector_server_is_hooked (AtomrInspectorServer *self)
{
  gboolean hooked;

  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), FALSE);
  g_mutex_lock (&self->actors_lock);
  hooked = self->hooked;
  g_mutex_unlock (&self->actors_lock);
  return hooked;
}

/**
 * atomr_inspector_server_publish:
 * @self: a server
 * @info: a completed operation
 *
 * Streams @info to the WebSocket clients as added actors' operations are
 * (for records made elsewhere, and for tests).  Never blocks on the
 * network: when the queue is full the record is dropped and counted.
 * Any thread.
 *
 * Since: 0.2
 */
void
atomr_inspector_server_publish (AtomrInspectorServer *self,
                                AtomrLaunchInfo      *info)
{
  g_return_if_fail (ATOMR_IS_INSPECTOR_SERVER (self));
  g_return_if_fail (info != NULL);
  core_publish (self->core, info);
}

/**
 * atomr_inspector_server_get_n_clients:
 * @self: a server
 *
 * Returns the WebSocket clients streaming now (counted once the server
 * thread has taken the upgraded connection, a moment after the client sees
 * it open).
 *
 * Returns: the WebSocket clients streaming now (counted once the server
 *   thread has taken the upgraded connection, a moment after the client
 *   sees it open)
 *
 * Since: 0.2
 */
guint
atomr_inspector_server_get_n_clients (AtomrInspectorServer *self)
{
  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), 0);
  return (guint) g_atomic_int_get (&self->core->n_clients);
}

/**
 * atomr_inspector_server_get_n_dropped:
 * @self: a server
 *
 * Returns records dropped so far (queue full, or per slow client).
 *
 * Returns: records dropped so far (queue full, or per slow client)
 *
 * Since: 0.2
 */
guint64
atomr_inspector_server_get_n_dropped (AtomrInspectorServer *self)
{
  guint64 n;

  g_return_val_if_fail (ATOMR_IS_INSPECTOR_SERVER (self), 0);
  g_mutex_lock (&self->core->lock);
  n = self->core->n_dropped;
  g_mutex_unlock (&self->core->lock);
  n += atomr_record_ring_get_dropped (self->core->ring);
  return n;
}

static void
atomr_inspector_server_dispose (GObject *object)
{
  AtomrInspectorServer *self = ATOMR_INSPECTOR_SERVER (object);

  atomr_inspector_server_stop (self);
  g_mutex_lock (&self->actors_lock);
  g_hash_table_remove_all (self->actors);
  g_mutex_unlock (&self->actors_lock);
  g_clear_object (&self->recorder);
  G_OBJECT_CLASS (atomr_inspector_server_parent_class)->dispose (object);
}

static void
atomr_inspector_server_finalize (GObject *object)
{
  AtomrInspectorServer *self = ATOMR_INSPECTOR_SERVER (object);

  g_hash_table_unref (self->actors);
  g_mutex_clear (&self->actors_lock);
  g_mutex_clear (&self->start_lock);
  g_cond_clear (&self->start_cond);
  g_free (self->token);
  g_free (self->address);
  g_clear_object (&self->tls_certificate);
  core_unref (self->core);
  G_OBJECT_CLASS (atomr_inspector_server_parent_class)->finalize (object);
}

static void
atomr_inspector_server_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  AtomrInspectorServer *self = ATOMR_INSPECTOR_SERVER (object);

  switch (prop_id)
    {
    case PROP_PORT:
      g_value_set_uint (value, self->port);
      break;
    case PROP_TOKEN:
      g_value_set_string (value, self->token);
      break;
    case PROP_RECORDER:
      g_value_set_object (value, self->recorder);
      break;
    case PROP_MAX_CLIENTS:
      g_value_set_uint (value, self->max_clients);
      break;
    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, self->idle_timeout);
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, self->thread != NULL);
      break;
    case PROP_ALWAYS_RECORD:
      g_value_set_boolean (value, atomr_inspector_server_get_always_record (self));
      break;
    case PROP_ADDRESS:
      g_value_set_string (value, self->address);
      break;
    case PROP_TLS_CERTIFICATE:
      g_value_set_object (value, self->tls_certificate);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_inspector_server_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  AtomrInspectorServer *self = ATOMR_INSPECTOR_SERVER (object);

  switch (prop_id)
    {
    case PROP_MAX_CLIENTS:
      atomr_inspector_server_set_max_clients (self, g_value_get_uint (value));
      break;
    case PROP_IDLE_TIMEOUT:
      atomr_inspector_server_set_idle_timeout (self, g_value_get_uint (value));
      break;
    case PROP_ALWAYS_RECORD:
      atomr_inspector_server_set_always_record (self, g_value_get_boolean (value));
      break;
    case PROP_ADDRESS:
      atomr_inspector_server_set_address (self, g_value_get_string (value));
      break;
    case PROP_TLS_CERTIFICATE:
      atomr_inspector_server_set_tls_certificate (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_inspector_server_class_init (AtomrInspectorServerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = atomr_inspector_server_dispose;
  object_class->finalize = atomr_inspector_server_finalize;
  object_class->get_property = atomr_inspector_server_get_property;
  object_class->set_property = atomr_inspector_server_set_property;

  /**
   * AtomrInspectorServer:port:
   *
   * The TCP port on 127.0.0.1, 0 while stopped.
   *
 * Since: 0.2
 */
  properties[PROP_PORT] =
    g_param_spec_uint ("port", NULL, NULL, 0, G_MAXUINT16, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:token:
   *
   * The bearer token, random per server.
   *
 * Since: 0.2
 */
  properties[PROP_TOKEN] =
    g_param_spec_string ("token", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:recorder:
   *
   * The recorder `/v1/trace` exports.
   *
 * Since: 0.2
 */
  properties[PROP_RECORDER] =
    g_param_spec_object ("recorder", NULL, NULL, ATOMR_TYPE_TRACE_RECORDER,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:max-clients:
   *
   * The most connections served at once; more are closed as accepted.
   *
 * Since: 0.2
 */
  properties[PROP_MAX_CLIENTS] =
    g_param_spec_uint ("max-clients", NULL, NULL, 1, 1024, DEFAULT_MAX_CLIENTS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:idle-timeout:
   *
   * Seconds a connection may stay silent (before its WebSocket upgrade)
   * before it is closed.
   *
 * Since: 0.2
 */
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_uint ("idle-timeout", NULL, NULL, 1, 3600, DEFAULT_IDLE_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:running:
   *
   * Whether the server accepts connections.
   *
 * Since: 0.2
 */
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:always-record:
   *
   * Whether the added actors' operations go to the recorder even while no
   * client streams.  Off by default: an idle server then connects no
   * handler to the actors and costs them nothing.
   *
   * Since: 0.2
   */
  properties[PROP_ALWAYS_RECORD] =
    g_param_spec_boolean ("always-record", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:address:
   *
   * The IP address to listen on, 127.0.0.1 by default.  Any other than a
   * loopback address needs
   * [property@Atomr.InspectorServer:tls-certificate].
   *
   * Since: 0.2
   */
  properties[PROP_ADDRESS] =
    g_param_spec_string ("address", NULL, NULL, "127.0.0.1",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrInspectorServer:tls-certificate:
   *
   * The certificate (with its private key) the server presents; set, it
   * serves only `https://` and `wss://`.
   *
   * Since: 0.2
   */
  properties[PROP_TLS_CERTIFICATE] =
    g_param_spec_object ("tls-certificate", NULL, NULL, G_TYPE_TLS_CERTIFICATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_inspector_server_init (AtomrInspectorServer *self)
{
  GString *token = g_string_sized_new (64);

  for (guint i = 0; i < 8; i++)
    g_string_append_printf (token, "%08x", g_random_int ());
  self->token = g_string_free (token, FALSE);
  self->core = g_new0 (Core, 1);
  g_atomic_ref_count_init (&self->core->ref);
  g_mutex_init (&self->core->lock);
  g_queue_init (&self->core->queue);
  self->core->ring = atomr_record_ring_new (QUEUE_CAPACITY);
  self->core->clients = g_ptr_array_new_with_free_func (client_free);
  self->core->texts = g_string_sized_new (4096);
  self->core->offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  self->core->frames = g_string_sized_new (4096);
  self->core->frame_offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  self->core->frame_ends = g_array_new (FALSE, FALSE, sizeof (guint));
  /* The recorder's default capacity (atomr_trace_recorder_new (0) would
   * keep one operation: the capacity is at least 1, not "default"). */
  self->recorder = g_object_new (ATOMR_TYPE_TRACE_RECORDER, NULL);
  self->core->recorder = g_object_ref (self->recorder);
  self->max_clients = DEFAULT_MAX_CLIENTS;
  self->idle_timeout = DEFAULT_IDLE_TIMEOUT;
  self->address = g_strdup ("127.0.0.1");
  g_mutex_init (&self->actors_lock);
  g_mutex_init (&self->start_lock);
  g_cond_init (&self->start_cond);
  self->actors = g_hash_table_new_full (NULL, NULL, NULL, watch_detach);
}

/* ------------------------------------------------------------------ */
/* The process server                                                  */

static AtomrInspectorServer *process_server;   /* under process_lock */
static GMutex process_lock;

static void
process_server_atexit (void)
{
  /* Only the discovery file: threads may still run at exit. */
  g_mutex_lock (&process_lock);
  if (process_server && process_server->discovery_path)
    g_unlink (process_server->discovery_path);
  g_mutex_unlock (&process_lock);
}

/**
 * atomr_inspector_enable:
 * @error: return location for a #GError
 *
 * Starts the process's inspector server (once; later calls return the
 * same server) and removes its discovery file at exit.  With
 * `ATOMR_INSPECT=1` in the environment the first actor created calls this
 * and every actor is added to it.  `ATOMR_INSPECT_TLS_CERT` (and
 * `ATOMR_INSPECT_TLS_KEY`, when the key is in another PEM file) turn on
 * TLS; `ATOMR_INSPECT_ADDRESS` sets the address to listen on (other than
 * loopback only with TLS).  Any thread.
 *
 * Returns: (transfer none): the process's running server, or %NULL with
 *   @error set when it could not start
 *
 * Since: 0.2
 */
AtomrInspectorServer *
atomr_inspector_enable (GError **error)
{
  AtomrInspectorServer *server;

  g_mutex_lock (&process_lock);
  if (process_server == NULL)
    {
      g_autoptr(AtomrInspectorServer) s = atomr_inspector_server_new ();
      const gchar *cert = g_getenv ("ATOMR_INSPECT_TLS_CERT");
      const gchar *key = g_getenv ("ATOMR_INSPECT_TLS_KEY");
      const gchar *address = g_getenv ("ATOMR_INSPECT_ADDRESS");

      if (address && *address)
        atomr_inspector_server_set_address (s, address);
      if (cert && *cert && !atomr_inspector_server_set_tls_files (s, cert, key && *key ? key : NULL, error))
        {
          g_mutex_unlock (&process_lock);
          return NULL;
        }
      if (!atomr_inspector_server_start (s, error))
        {
          g_mutex_unlock (&process_lock);
          return NULL;
        }
      process_server = g_steal_pointer (&s);
      atexit (process_server_atexit);
    }
  server = process_server;
  g_mutex_unlock (&process_lock);
  return server;
}

void
atomr_inspector_env_attach (AtomrActor *actor)
{
  static gint state;   /* 0 unknown, 1 off, 2 on */
  gint s = g_atomic_int_get (&state);
  AtomrInspectorServer *server;
  g_autoptr(GError) error = NULL;

  if (s == 0)
    {
      const gchar *env = g_getenv ("ATOMR_INSPECT");
      s = (env && *env && !g_str_equal (env, "0")) ? 2 : 1;
      g_atomic_int_set (&state, s);
    }
  if (s != 2)
    return;
  server = atomr_inspector_enable (&error);
  if (server == NULL)
    {
      g_warning ("ATOMR_INSPECT: %s", error->message);
      g_atomic_int_set (&state, 1);
      return;
    }
  atomr_inspector_server_add_actor (server, actor);
}
