/*
 * cli-run.c - see cli-run.h.
 */
#include "cli-run.h"

#include <sys/wait.h>

void
run_free(Run *r)
{
    if (r == NULL) {
        return;
    }
    g_free(r->out);
    g_free(r->err);
    g_free(r);
}

Run *
cli_spawn(const char *cwd, char *const *argv, char *const *envp)
{
    Run *r = g_new0(Run, 1);
    int wait = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(cwd, (char **) argv, (char **) envp, G_SPAWN_SEARCH_PATH, NULL,
                               NULL, &r->out, &r->err, &wait, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait));        /* never a crash */
    r->status = WEXITSTATUS(wait);
    return r;
}

Run *
hs_run_v(const char *cwd, char *const *envp, const char *first, va_list ap)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    const char *bin = g_getenv("HS_BIN");
    g_assert_nonnull(bin);                 /* set by tests/cli/meson.build */
    g_ptr_array_add(argv, (char *) bin);
    for (const char *a = first; a; a = va_arg(ap, const char *)) {
        g_ptr_array_add(argv, (char *) a);
    }
    g_ptr_array_add(argv, NULL);
    return cli_spawn(cwd, (char *const *) argv->pdata, envp);
}

Run *
hs_in(const char *cwd, const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    Run *r = hs_run_v(cwd, NULL, first, ap);
    va_end(ap);
    return r;
}

Run *
hs_env_in(const char *cwd, const char *name, const char *value, const char *first, ...)
{
    g_auto(GStrv) envp = g_get_environ();
    if (value) {
        envp = g_environ_setenv(envp, name, value, TRUE);
    }
    va_list ap;
    va_start(ap, first);
    Run *r = hs_run_v(cwd, envp, first, ap);
    va_end(ap);
    return r;
}

void
assert_ok(const Run *r)
{
    if (r->status != 0) {
        g_printerr("stderr: %s\n", r->err);
    }
    g_assert_cmpint(r->status, ==, 0);
}

void
assert_one_error_line(const Run *r, const char *want)
{
    g_autofree char *line = g_strdup_printf("hetero-sim: %s\n", want);
    g_assert_cmpstr(r->err, ==, line);
}
