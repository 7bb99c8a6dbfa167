/*
 * cli-run.h - running hetero-sim (or any program) from a CLI test, as a
 * user would: its exit status, stdout and stderr, and never a crash.
 * Shared by the tests in tests/cli (built once: tests/cli/meson.build).
 *
 *   g_autoptr(Run) r = hs_in(dir, "run", "--soc", "tiny", NULL);
 *   assert_ok(r);
 *
 * Each test file says what a bare hs(...) is, e.g.
 *   #define hs(...) hs_in(NULL, __VA_ARGS__)
 */
#ifndef HS_TEST_CLI_RUN_H
#define HS_TEST_CLI_RUN_H

#include <glib.h>
#include <stdarg.h>

typedef struct Run {
    int status;                  /* exit status */
    char *out;                   /* stdout */
    char *err;                   /* stderr */
} Run;

void run_free(Run *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Run, run_free)

/* Run @argv (NULL-terminated, argv[0] the program, looked up in PATH
 * unless a path) in @cwd (NULL: here) with @envp (NULL: ours), to its end.
 * Asserts it started and exited rather than died of a signal. */
Run *cli_spawn(const char *cwd, char *const *argv, char *const *envp);

/* hetero-sim ($HS_BIN) with the NULL-terminated arguments from @first on,
 * in @cwd, with @envp: the form the others wrap. */
Run *hs_run_v(const char *cwd, char *const *envp, const char *first, va_list ap);

/* hetero-sim with NULL-terminated arguments, in @cwd (NULL: here). */
Run *hs_in(const char *cwd, const char *first, ...) G_GNUC_NULL_TERMINATED;

/* The same with environment variable @name set to @value (neither set
 * when @value is NULL), e.g. OMP_NUM_THREADS. */
Run *hs_env_in(const char *cwd, const char *name, const char *value, const char *first, ...)
    G_GNUC_NULL_TERMINATED;

/* Exit status 0; stderr printed when not, to say why. */
void assert_ok(const Run *r);

/* stderr is exactly one line, "hetero-sim: @want". */
void assert_one_error_line(const Run *r, const char *want);

#endif /* HS_TEST_CLI_RUN_H */
