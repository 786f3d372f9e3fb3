/* test-gpu-inspector-runner.c — Run's helper process on the GPU
 *
 * The inspector's Run launches user kernels in atomr-kernel-runner.  This
 * program is its own runner ("--runner": inspector_run_main(), the same
 * code atomr-kernel-runner runs), so the GPU bundle needs nothing else:
 * it runs saxpy and checks the numbers, runs a kernel that writes to an
 * illegal address and checks that only the runner is lost (an error or a
 * crash comes back), then runs saxpy again and uses CUDA in this process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "inspector-run.h"

#define N 4096

static const gchar saxpy[] =
  "extern \"C\" __global__ void saxpy (float a, const float *x, float *y, unsigned int n)\n"
  "{\n"
  "  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n)\n"
  "    y[i] += a * x[i];\n"
  "}\n";

/* writes far outside any allocation: CUDA_ERROR_ILLEGAL_ADDRESS */
static const gchar faulty[] =
  "extern \"C\" __global__ void faulty (float *y)\n"
  "{\n"
  "  float *bad = (float *) 0x10;\n"
  "  bad[threadIdx.x * 1024 * 1024] = y[0];\n"
  "}\n";

static gchar *cache_dir;

static void
on_reply (GObject *source, GAsyncResult *result, gpointer data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

static JsonObject *
run (const gchar  *source,
     const gchar  *kernel,
     const gchar  *args_text,
     gint          threads,
     gint          repeat,
     GError      **error)
{
  const gchar *argv[] = { "/proc/self/exe", "--runner", NULL };
  g_autoptr(GArray) args = inspector_run_parse_args (args_text, NULL);
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autofree gchar *request = NULL;

  g_assert_nonnull (args);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, source);
  json_builder_set_member_name (b, "kernel");
  json_builder_add_string_value (b, kernel);
  json_builder_set_member_name (b, "options");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "std");
  json_builder_add_string_value (b, "c++17");
  json_builder_end_object (b);
  json_builder_set_member_name (b, "args");
  json_builder_add_value (b, inspector_run_args_to_json (args));
  json_builder_set_member_name (b, "threads");
  json_builder_add_int_value (b, threads);
  json_builder_set_member_name (b, "block");
  json_builder_add_int_value (b, 256);
  json_builder_set_member_name (b, "repeat");
  json_builder_add_int_value (b, repeat);
  json_builder_set_member_name (b, "cache");
  json_builder_add_string_value (b, cache_dir);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  request = json_generator_to_data (gen, NULL);
  inspector_run_spawn_async (argv, request, 60, NULL, on_reply, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return inspector_run_spawn_finish (result, error);
}

static gboolean
have_gpu (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);

  if (device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      g_test_skip ("no CUDA device");
      return FALSE;
    }
  return TRUE;
}

/* y = 1, x = i, three launches of y += 2x: y[i] = 1 + 6i */
static void
check_saxpy (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply = run (saxpy, "saxpy", "f32:2.0, f32[4096]=linear, f32[4096]=1.0, u32:4096",
                                     N, 3, &error);
  JsonArray *times, *outputs, *sample;
  JsonObject *y;

  g_assert_no_error (error);
  g_assert_nonnull (reply);
  g_test_message ("ran on %s (%s)", json_object_get_string_member (reply, "device"),
                  json_object_get_string_member (reply, "arch"));
  times = json_object_get_array_member (reply, "gpu_ms");
  g_assert_cmpuint (json_array_get_length (times), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_test_message ("launch %u: %.4f ms on the GPU", i, json_array_get_double_element (times, i));
      g_assert_cmpfloat (json_array_get_double_element (times, i), >, 0);
    }
  outputs = json_object_get_array_member (reply, "outputs");
  g_assert_cmpuint (json_array_get_length (outputs), ==, 2);
  y = json_array_get_object_element (outputs, 1);
  g_assert_cmpint (json_object_get_int_member (y, "arg"), ==, 3);
  sample = json_object_get_array_member (y, "sample");
  g_assert_cmpuint (json_array_get_length (sample), ==, 8);
  for (guint k = 0; k < 8; k++)
    g_assert_cmpfloat (json_array_get_double_element (sample, k), ==, 1.0 + 6.0 * k);
  g_assert_cmpfloat (json_object_get_double_member (y, "min"), ==, 1.0);
  g_assert_cmpfloat (json_object_get_double_member (y, "max"), ==, 1.0 + 6.0 * (N - 1));
}

static void
test_runner_saxpy (void)
{
  if (!have_gpu ())
    return;
  check_saxpy ();
}

static void
test_runner_faulty (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply = NULL;

  if (!have_gpu ())
    return;
  reply = run (faulty, "faulty", "f32[16]=1.0", 32, 1, &error);
  g_assert_null (reply);
  g_assert_nonnull (error);
  g_test_message ("the faulty kernel: %s (%s %d)", error->message, g_quark_to_string (error->domain), error->code);
  g_assert_true (error->domain == ATOMR_ERROR);
  g_assert_cmpint (error->code, !=, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (error->code, !=, ATOMR_ERROR_TIMED_OUT);
  g_clear_error (&error);

  /* a new runner works; so does CUDA in this process */
  check_saxpy ();
  {
    g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
    g_autoptr(AtomrBuffer) buf = NULL;
    g_autoptr(GBytes) out = NULL;

    g_assert_no_error (error);
    buf = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
    g_assert_no_error (error);
    g_assert_true (atomr_buffer_fill_sync (buf, 3.0, NULL, &error));
    g_assert_no_error (error);
    out = atomr_buffer_download_sync (buf, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (out, NULL))[15], ==, 3.0f);
  }
}

int
main (int   argc,
      char *argv[])
{
  int rc;

  if (argc > 1 && g_str_equal (argv[1], "--runner"))
    return inspector_run_main ();
  g_test_init (&argc, &argv, NULL);
  cache_dir = g_dir_make_tmp ("inspector-runner-cache-XXXXXX", NULL);
  g_test_add_func ("/inspector/gpu/runner/saxpy", test_runner_saxpy);
  g_test_add_func ("/inspector/gpu/runner/faulty", test_runner_faulty);
  rc = g_test_run ();
  {
    g_autoptr(GDir) dir = g_dir_open (cache_dir, 0, NULL);
    const gchar *name;
    while (dir && (name = g_dir_read_name (dir)))
      {
        g_autofree gchar *child = g_build_filename (cache_dir, name, NULL);
        g_remove (child);
      }
    g_rmdir (cache_dir);
  }
  g_free (cache_dir);
  return rc;
}
