/*
 * bench-kernel.c - the event kernel's hold-model benchmark.
 *
 * The classic priority-queue "hold" workload: fill the queue with N events,
 * then each event, when it runs, schedules one more at now + a random
 * increment, so the queue stays at N while events flow through it.  The
 * figure is events run per second of host time on one thread.
 */
#include "sim/cli/bench.h"
#include "sim/kernel/kernel.h"

#include <stdio.h>
#include "sim/util/json.h"

/* the kernel's throughput target, as the bench's one-line summary states it */
#define KERNEL_TARGET_EPS 10e6

typedef struct Hold {
    SimKernel *k;
    uint64_t rng;            /* xorshift64 state: cheap, so we time the kernel */
    uint64_t left;           /* events still to schedule */
} Hold;

/* Increment in [0, 2 us) in whole ns: mean 1 us, ties happen often enough. */
static SimTime
hold_delay(Hold *h)
{
    h->rng ^= h->rng << 13;
    h->rng ^= h->rng >> 7;
    h->rng ^= h->rng << 17;
    return (h->rng % 2000) * 1000;
}

static void
hold_event(SimKernel *k, void *opaque)
{
    Hold *h = opaque;
    if (h->left > 0) {
        h->left--;
        sim_kernel_schedule(k, hold_delay(h), SIM_PRIO_NORMAL, hold_event, h);
    }
}

static double
hold_run(uint64_t queue_len, uint64_t events, uint64_t *ran)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    Hold h = { k, 0x9E3779B97F4A7C15ull, events - queue_len };

    for (uint64_t i = 0; i < queue_len; i++) {
        sim_kernel_schedule(k, hold_delay(&h), SIM_PRIO_NORMAL, hold_event, &h);
    }
    double t0 = hs_bench_now_s();
    *ran = sim_kernel_run_until(k, SIM_TIME_MAX);
    double dt = hs_bench_now_s() - t0;
    return dt;
}

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    static const uint64_t sizes[] = { 64, 1024, 16384, 262144 };
    /* the verdict is on the slowest queue length, as the target is a floor */
    double slowest = 0;
    const uint64_t events = quick ? 200000 : 4000000;
    g_autoptr(cJSON) rows = cJSON_CreateArray();

    if (format == HS_FORMAT_TEXT) {
        printf("event kernel, hold model, %" G_GUINT64_FORMAT " events, one thread\n",
               events);
        printf("  %10s %14s %12s\n", "queue_len", "events/s", "ns/event");
    }
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint64_t ran = 0;
        double dt = hold_run(sizes[i], events + sizes[i], &ran);
        double rate = (double) ran / dt;
        slowest = i == 0 || rate < slowest ? rate : slowest;
        if (format == HS_FORMAT_TEXT) {
            printf("  %10" G_GUINT64_FORMAT " %14.0f %12.1f\n", sizes[i], rate,
                   1e9 / rate);
        } else {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "queue_len", (double) sizes[i]);
            cJSON_AddNumberToObject(r, "events", (double) ran);
            cJSON_AddNumberToObject(r, "events_per_s", rate);
            cJSON_AddItemToArray(rows, r);
        }
    }
    if (format == HS_FORMAT_TEXT) {
        printf("  target: >= 10000000 events/s at every queue length: %s (slowest %.0f)\n",
               slowest >= KERNEL_TARGET_EPS ? "met" : "MISSED", slowest);
    } else {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "kernel");
        cJSON_AddBoolToObject(root, "target_met", slowest >= KERNEL_TARGET_EPS);
        cJSON_AddItemToObject(root, "rows", g_steal_pointer(&rows));
        char *s = cJSON_PrintUnformatted(root);
        printf("%s\n", s);
        cJSON_free(s);
    }
    return TRUE;
}

const HsBench hs_bench_kernel = {
    "kernel", "event kernel hold model: events per second (target >= 10M/s)", run,
};
