/*
 * cmd-bench.c - `hetero-sim bench TARGET [--quick] [--format text|json]`.
 */
#include "sim/cli/bench.h"
#include "sim/util/error.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

extern const HsBench hs_bench_kernel;
extern const HsBench hs_bench_cost;
extern const HsBench hs_bench_engine;
extern const HsBench hs_bench_default;
extern const HsBench hs_bench_sweep;
extern const HsBench hs_bench_calibrate;
extern const HsBench hs_bench_sim;

static const HsBench *const benches[] = {
    &hs_bench_kernel,
    &hs_bench_cost,
    &hs_bench_engine,
    &hs_bench_default,
    &hs_bench_sweep,
    &hs_bench_calibrate,
    &hs_bench_sim,
};

double
hs_bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* `bench all`: each target in a process of its own, one after another.
 * Peak RSS is a process's high-water mark, kept across fork and exec: a
 * target that measures its children's memory (sim, default) would report
 * whatever an earlier target left resident in a shared process (the
 * engine's weight cache, the read probe's buffer). */
static gboolean
run_all(gboolean quick, HsFormat format, GError **error)
{
    g_autofree char *self = g_file_read_link("/proc/self/exe", error);
    if (self == NULL) {
        return FALSE;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(benches); i++) {
        const char *argv[] = { self, "bench", benches[i]->name, "--format",
                               format == HS_FORMAT_JSON ? "json" : "text",
                               quick ? "--quick" : NULL, NULL };
        fflush(stdout);
        int status = 0;
        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL,
                          NULL, NULL, &status, error)) {
            return FALSE;
        }
        if (!g_spawn_check_wait_status(status, NULL)) {
            g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                        "bench all: target %s failed", benches[i]->name);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean quick = FALSE, help = FALSE;
    g_autofree char *format_name = NULL;
    GOptionEntry entries[] = {
        { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick,
          "Smaller problem sizes (a smoke test, figures not meaningful)", NULL },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Output format: text or json (default text)", "FMT" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GString) summary = g_string_new("Targets:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(benches); i++) {
        g_string_append_printf(summary, "  %-10s %s\n", benches[i]->name,
                               benches[i]->summary);
    }
    g_string_append(summary, "  all        every target above, one after another");

    if (!hs_cli_parse("bench", "TARGET", summary->str, entries, &argc, &argv,
                      &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_format(format_name, HS_FORMATS_TEXT_JSON, &format, error)) {
        return FALSE;
    }
    if (argc < 2) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "bench: missing TARGET (see 'hetero-sim bench --help')");
        return FALSE;
    }
    if (!hs_cli_no_extra_args(argc, argv, 1, error)) {
        return FALSE;
    }
    if (strcmp(argv[1], "all") == 0) {
        return run_all(quick, format, error);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(benches); i++) {
        if (strcmp(argv[1], benches[i]->name) == 0) {
            return benches[i]->run(quick, format, error);
        }
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "bench: unknown target \"%s\" (see 'hetero-sim bench --help')",
                argv[1]);
    return FALSE;
}

const HsCommand hs_cmd_bench = {
    "bench", "TARGET", "print speed figures (events/s, GFLOPS, queries/s)", run,
};
