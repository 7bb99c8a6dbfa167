/*
 * test-cli.c - the hetero-sim command line as a user meets it: exit
 * status (0 ok, 1 bad input, 2 usage), one "hetero-sim: " line on stderr
 * for errors, JSON on stdout that parses, nothing left behind on failure.
 */
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <string.h>

typedef struct Run {
    int status;
    char *out;
    char *err;
} Run;

static void
run_free(Run *r)
{
    g_free(r->out);
    g_free(r->err);
    g_free(r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Run, run_free)

/* Run hetero-sim with NULL-terminated arguments. */
static Run *
hs(const char *first, ...)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    va_list ap;
    g_ptr_array_add(argv, (char *) g_getenv("HS_BIN"));
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) {
        g_ptr_array_add(argv, (char *) a);
    }
    va_end(ap);
    g_ptr_array_add(argv, NULL);

    Run *r = g_new0(Run, 1);
    int wait = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **) argv->pdata, NULL, 0, NULL, NULL,
                               &r->out, &r->err, &wait, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait));        /* never a crash */
    r->status = WEXITSTATUS(wait);
    return r;
}

static void
assert_one_error_line(const Run *r, const char *want)
{
    g_autofree char *line = g_strdup_printf("hetero-sim: %s\n", want);
    g_assert_cmpstr(r->err, ==, line);
}

static void
test_version(void)
{
    g_autoptr(Run) r = hs("--version", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_true(g_str_has_prefix(r->out, "hetero-sim "));
}

static void
test_help(void)
{
    g_autoptr(Run) r = hs("--help", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_nonnull(strstr(r->out, "Usage: hetero-sim <command>"));
    g_assert_nonnull(strstr(r->out, "soc show"));

    g_autoptr(Run) s = hs("soc", "--help", NULL);
    g_assert_cmpint(s->status, ==, 0);
    g_assert_nonnull(strstr(s->out, "--format"));
    g_assert_cmpstr(s->err, ==, "");
}

static void
test_usage_errors(void)
{
    g_autoptr(Run) a = hs("frobnicate", NULL);
    g_assert_cmpint(a->status, ==, 2);
    assert_one_error_line(a, "unknown command \"frobnicate\" (see 'hetero-sim --help')");

    g_autoptr(Run) b = hs("soc", "show", "sd8gen3", "--format", "yaml", NULL);
    g_assert_cmpint(b->status, ==, 2);
    assert_one_error_line(b, "--format: expected one of text, json (got \"yaml\")");

    g_autoptr(Run) c = hs("soc", "show", "--bogus", NULL);
    g_assert_cmpint(c->status, ==, 2);
    assert_one_error_line(c, "soc: Unknown option --bogus (see 'hetero-sim soc --help')");

    g_autoptr(Run) d = hs("list", "gadgets", NULL);
    g_assert_cmpint(d->status, ==, 2);
    g_assert_true(g_str_has_prefix(d->err, "hetero-sim: list: expected one of "));

    g_autoptr(Run) e = hs("soc", "show", NULL);
    g_assert_cmpint(e->status, ==, 2);
    g_assert_cmpstr(e->out, ==, "");
}

static void
test_bad_config(void)
{
    g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests",
                                             "data", "bad-configs", "empty.json", NULL);
    g_autoptr(Run) r = hs("soc", "show", path, NULL);
    g_assert_cmpint(r->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: empty file", path);
    assert_one_error_line(r, want);
    g_assert_cmpstr(r->out, ==, "");

    g_autoptr(Run) u = hs("soc", "show", "nosuchsoc", NULL);
    g_assert_cmpint(u->status, ==, 1);
    g_assert_true(g_str_has_prefix(u->err, "hetero-sim: unknown SoC \"nosuchsoc\" (known: "));
}

static void
test_soc_show(void)
{
    g_autoptr(Run) t = hs("soc", "show", "sd8gen3", NULL);
    g_assert_cmpint(t->status, ==, 0);
    g_assert_nonnull(strstr(t->out, "peak_gbps"));
    g_assert_nonnull(strstr(t->out, "68 GB/s"));
    g_assert_nonnull(strstr(t->out, "[HeteroLLM §3.3"));

    g_autoptr(Run) j = hs("soc", "show", "tiny", "--format", "json", NULL);
    g_assert_cmpint(j->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(j->out);
    g_assert_nonnull(root);
    g_assert_cmpstr(cJSON_GetObjectItem(root, "name")->valuestring, ==, "tiny");
    const cJSON *procs = cJSON_GetObjectItem(root, "processors");
    g_assert_cmpint(cJSON_GetArraySize(procs), >=, 3);
    const cJSON *mem = cJSON_GetObjectItem(root, "memory");
    g_assert_cmpfloat(cJSON_GetObjectItem(mem, "peak_gbps")->valuedouble, ==, 20);
}

static void
test_default_run(void)
{
    g_autoptr(Run) r = hs(NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_cmpstr(r->err, ==, "");
    g_assert_cmpuint(strlen(r->out), >, 100);
}

static void
test_list_socs(void)
{
    g_autoptr(Run) r = hs("list", "socs", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_true(g_str_has_prefix(r->out, "sd8gen3 "));
    g_assert_nonnull(strstr(r->out, "\ntiny "));
    g_assert_null(strstr(r->out, "cannot load"));
}

static void
test_bench_kernel_quick(void)
{
    g_autoptr(Run) r = hs("bench", "kernel", "--quick", "--format", "json", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r->out);
    g_assert_nonnull(root);
    const cJSON *rows = cJSON_GetObjectItem(root, "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), >, 0);
    const cJSON *row = NULL;
    cJSON_ArrayForEach(row, rows) {
        g_assert_cmpfloat(cJSON_GetObjectItem(row, "events_per_s")->valuedouble, >, 0);
        g_assert_cmpfloat(cJSON_GetObjectItem(row, "events")->valuedouble, >=, 200000);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_assert_nonnull(g_getenv("HS_BIN"));
    g_test_add_func("/cli/version", test_version);
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/usage-errors", test_usage_errors);
    g_test_add_func("/cli/bad-config", test_bad_config);
    g_test_add_func("/cli/soc-show", test_soc_show);
    g_test_add_func("/cli/default-run", test_default_run);
    g_test_add_func("/cli/list-socs", test_list_socs);
    g_test_add_func("/cli/bench-kernel-quick", test_bench_kernel_quick);
    return g_test_run();
}
