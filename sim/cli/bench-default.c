/*
 * bench-default.c - wall time and peak memory of `hetero-sim` with no
 * command: the compare of every policy on the embedded defaults, with the
 * first layer's values checked (targets: within 5 s of wall time and
 * 1 GB of memory on the project's 2-core machine).  It runs this same executable as a child, as a user
 * would, three times, and reports the median and the range; --quick runs
 * it once on a short request (a smoke test, not the target).
 */
#include "sim/cli/bench.h"
#include "sim/util/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define TARGET_S 5.0
#define TARGET_GIB (1e9 / 1073741824.0)    /* 1 GB */

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    g_autofree char *self = g_file_read_link("/proc/self/exe", error);
    if (self == NULL) {
        return FALSE;
    }
    const char *full[] = { self, NULL };
    const char *small[] = { self, "compare", "--prompt", "32", "--decode", "2", NULL };
    const char *const *argv = quick ? small : full;
    enum { RUNS = 3 };
    const int runs = quick ? 1 : RUNS;
    double wall_s[RUNS];
    for (int i = 0; i < runs; i++) {
        int status = 0;
        g_autofree char *err = NULL;
        double t0 = hs_bench_now_s();
        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                          NULL, &err, &status, error)) {
            return FALSE;
        }
        wall_s[i] = hs_bench_now_s() - t0;
        if (!g_spawn_check_wait_status(status, NULL)) {
            g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                        "bench default: '%s' failed: %s", self, err ? err : "");
            return FALSE;
        }
    }
    qsort(wall_s, (size_t) runs, sizeof(double), cmp_double);
    double median = wall_s[runs / 2];
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);               /* the largest child's peak */
    double rss_gib = u.ru_maxrss / 1048576.0;
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "default");
        cJSON_AddBoolToObject(root, "quick", quick);
        cJSON_AddNumberToObject(root, "runs", runs);
        cJSON_AddNumberToObject(root, "wall_s_median", median);
        cJSON_AddNumberToObject(root, "wall_s_min", wall_s[0]);
        cJSON_AddNumberToObject(root, "wall_s_max", wall_s[runs - 1]);
        cJSON_AddNumberToObject(root, "target_s", TARGET_S);
        cJSON_AddNumberToObject(root, "peak_rss_gib", rss_gib);
        cJSON_AddNumberToObject(root, "target_rss_gib", TARGET_GIB);
        g_autofree char *s = hs_json_print(root, FALSE);
        printf("%s\n", s);
    } else {
        printf("hetero-sim %s: %.2f s wall, median of %d (%.2f-%.2f)%s; peak RSS %.2f GiB%s\n",
               quick ? "compare --prompt 32 --decode 2 (quick)" : "(default compare)", median,
               runs, wall_s[0], wall_s[runs - 1],
               quick ? "" : median <= TARGET_S ? " (target <= 5 s: met)"
                                               : " (target <= 5 s: MISSED)",
               rss_gib,
               quick ? "" : rss_gib <= TARGET_GIB ? " (target <= 1 GB: met)"
                                                  : " (target <= 1 GB: MISSED)");
    }
    return TRUE;
}

const HsBench hs_bench_default = {
    "default", "wall time and memory of 'hetero-sim' with no command (targets <= 5 s, <= 1 GB)", run,
};
