/*
 * bench.h - `hetero-sim bench TARGET`: benchmarks that print the speed and
 * memory figures the issues set targets for.  Figures come from
 * benchmarks, never from timed unit tests (those are flaky on shared
 * machines).  One target per bench-<name>.c.
 */
#ifndef HS_BENCH_H
#define HS_BENCH_H

#include <glib.h>

#include "sim/cli/cli.h"

typedef struct HsBench {
    const char *name;       /* "kernel" */
    const char *summary;    /* one line for `bench --help` */
    /* @quick: a smaller run for smoke tests.  Prints to stdout. */
    gboolean (*run)(gboolean quick, HsFormat format, GError **error);
} HsBench;

/* Wall-clock seconds, monotonic, for benchmarks only (never simulated time). */
double hs_bench_now_s(void);

#endif /* HS_BENCH_H */
