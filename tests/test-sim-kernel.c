/*
 * test-sim-kernel.c - the event kernel: ordering, ties, cancel / move,
 * stepping time, deadlock reports, a million random events checked
 * against a sorted reference, and events that schedule, cancel and move
 * others checked against a scanned one.
 */
#include "sim/kernel/kernel.h"
#include "sim/util/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct Log {
    GArray *ids;             /* of int: tags in the order events ran */
    GArray *times;           /* of SimTime: when each ran */
} Log;

typedef struct Tagged {
    Log *log;
    int tag;
} Tagged;

static void
record(SimKernel *k, void *opaque)
{
    Tagged *t = opaque;
    SimTime now = sim_kernel_now(k);
    g_array_append_val(t->log->ids, t->tag);
    g_array_append_val(t->log->times, now);
}

static Log *
log_new(void)
{
    Log *l = g_new0(Log, 1);
    l->ids = g_array_new(FALSE, FALSE, sizeof(int));
    l->times = g_array_new(FALSE, FALSE, sizeof(SimTime));
    return l;
}

static void
log_free(Log *l)
{
    g_array_free(l->ids, TRUE);
    g_array_free(l->times, TRUE);
    g_free(l);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Log, log_free)

static void
test_order_by_time(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[4] = { { log, 0 }, { log, 1 }, { log, 2 }, { log, 3 } };

    sim_kernel_schedule(k, 300, SIM_PRIO_NORMAL, record, &t[0]);
    sim_kernel_schedule(k, 100, SIM_PRIO_NORMAL, record, &t[1]);
    sim_kernel_schedule(k, 200, SIM_PRIO_NORMAL, record, &t[2]);
    sim_kernel_schedule(k, 0, SIM_PRIO_NORMAL, record, &t[3]);
    g_assert_cmpuint(sim_kernel_next_time(k), ==, 0);
    g_assert_cmpuint(sim_kernel_run_until(k, SIM_TIME_MAX), ==, 4);

    int want[] = { 3, 1, 2, 0 };
    SimTime want_t[] = { 0, 100, 200, 300 };
    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(g_array_index(log->ids, int, i), ==, want[i]);
        g_assert_cmpuint(g_array_index(log->times, SimTime, i), ==, want_t[i]);
    }
    g_assert_cmpuint(sim_kernel_now(k), ==, 300);
    g_assert_cmpuint(sim_kernel_queued(k), ==, 0);
}

/* Same time: priority first, then insertion order. */
static void
test_ties_are_deterministic(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = (Tagged) { log, i };
    }
    sim_kernel_schedule(k, 50, SIM_PRIO_NORMAL, record, &t[0]);
    sim_kernel_schedule(k, 50, SIM_PRIO_LAST, record, &t[1]);
    sim_kernel_schedule(k, 50, SIM_PRIO_DONE, record, &t[2]);
    sim_kernel_schedule(k, 50, SIM_PRIO_NORMAL, record, &t[3]);
    sim_kernel_schedule(k, 50, SIM_PRIO_FIRST, record, &t[4]);
    sim_kernel_schedule(k, 50, SIM_PRIO_DONE, record, &t[5]);
    sim_kernel_run_until(k, SIM_TIME_MAX);

    int want[] = { 4, 2, 5, 0, 3, 1 };
    g_assert_cmpuint(log->ids->len, ==, 6);
    for (int i = 0; i < 6; i++) {
        g_assert_cmpint(g_array_index(log->ids, int, i), ==, want[i]);
    }
}

static void
test_cancel(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[3] = { { log, 0 }, { log, 1 }, { log, 2 } };

    SimEventId a = sim_kernel_schedule(k, 10, SIM_PRIO_NORMAL, record, &t[0]);
    SimEventId b = sim_kernel_schedule(k, 20, SIM_PRIO_NORMAL, record, &t[1]);
    sim_kernel_schedule(k, 30, SIM_PRIO_NORMAL, record, &t[2]);
    g_assert_true(sim_kernel_is_pending(k, b));
    g_assert_true(sim_kernel_cancel(k, b));
    g_assert_false(sim_kernel_is_pending(k, b));
    g_assert_false(sim_kernel_cancel(k, b));        /* twice: no-op */
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_false(sim_kernel_cancel(k, a));        /* already ran */
    g_assert_cmpuint(log->ids->len, ==, 2);
    g_assert_cmpint(g_array_index(log->ids, int, 0), ==, 0);
    g_assert_cmpint(g_array_index(log->ids, int, 1), ==, 2);
    g_assert_false(sim_kernel_cancel(k, 0));        /* 0 is never valid */
}

/* A stale handle must not cancel the event that reused its slot. */
static void
test_stale_handle(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[2] = { { log, 0 }, { log, 1 } };

    SimEventId a = sim_kernel_schedule(k, 10, SIM_PRIO_NORMAL, record, &t[0]);
    sim_kernel_run_until(k, SIM_TIME_MAX);
    SimEventId b = sim_kernel_schedule(k, 10, SIM_PRIO_NORMAL, record, &t[1]);
    g_assert_cmpuint(a, !=, b);
    g_assert_false(sim_kernel_cancel(k, a));
    g_assert_true(sim_kernel_is_pending(k, b));
}

static void
test_move(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[3] = { { log, 0 }, { log, 1 }, { log, 2 } };

    SimEventId a = sim_kernel_schedule(k, 100, SIM_PRIO_NORMAL, record, &t[0]);
    sim_kernel_schedule(k, 200, SIM_PRIO_NORMAL, record, &t[1]);
    SimEventId c = sim_kernel_schedule(k, 300, SIM_PRIO_NORMAL, record, &t[2]);

    g_assert_true(sim_kernel_move(k, a, 250));     /* later */
    g_assert_true(sim_kernel_move(k, c, 50));      /* earlier */
    sim_kernel_run_until(k, SIM_TIME_MAX);
    int want[] = { 2, 1, 0 };
    SimTime want_t[] = { 50, 200, 250 };
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(g_array_index(log->ids, int, i), ==, want[i]);
        g_assert_cmpuint(g_array_index(log->times, SimTime, i), ==, want_t[i]);
    }
    g_assert_false(sim_kernel_move(k, a, 400));    /* already ran */
}

/* A moved event counts as newly inserted among equal-time ties. */
static void
test_move_takes_new_sequence(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[2] = { { log, 0 }, { log, 1 } };

    SimEventId a = sim_kernel_schedule(k, 100, SIM_PRIO_NORMAL, record, &t[0]);
    sim_kernel_schedule(k, 100, SIM_PRIO_NORMAL, record, &t[1]);
    g_assert_true(sim_kernel_move(k, a, 100));
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpint(g_array_index(log->ids, int, 0), ==, 1);
    g_assert_cmpint(g_array_index(log->ids, int, 1), ==, 0);
}

/* Step time as QEMU's ptimer-test does. */
static void
test_run_until_steps(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(Log) log = log_new();
    Tagged t[2] = { { log, 0 }, { log, 1 } };

    sim_kernel_schedule(k, 1000, SIM_PRIO_NORMAL, record, &t[0]);
    sim_kernel_schedule(k, 3000, SIM_PRIO_NORMAL, record, &t[1]);
    g_assert_cmpuint(sim_kernel_run_until(k, 999), ==, 0);
    g_assert_cmpuint(sim_kernel_now(k), ==, 999);
    g_assert_cmpuint(sim_kernel_run_until(k, 1000), ==, 1);
    g_assert_cmpuint(sim_kernel_now(k), ==, 1000);
    g_assert_cmpuint(sim_kernel_run_until(k, 2500), ==, 0);
    g_assert_cmpuint(sim_kernel_now(k), ==, 2500);
    g_assert_cmpuint(sim_kernel_run_until(k, SIM_TIME_MAX), ==, 1);
    g_assert_cmpuint(sim_kernel_now(k), ==, 3000);
    g_assert_cmpuint(sim_kernel_events_run(k), ==, 2);
}

/* Events that schedule events; stop() ends the run early. */
typedef struct Chain {
    int left;
    int ran;
} Chain;

static void
chain_step(SimKernel *k, void *opaque)
{
    Chain *c = opaque;
    c->ran++;
    if (--c->left > 0) {
        sim_kernel_schedule(k, 7, SIM_PRIO_NORMAL, chain_step, c);
    }
    if (c->ran == 5) {
        sim_kernel_stop(k);
    }
}

static void
test_stop(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    Chain c = { 10, 0 };
    sim_kernel_schedule(k, 0, SIM_PRIO_NORMAL, chain_step, &c);
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpint(c.ran, ==, 5);
    g_assert_cmpuint(sim_kernel_now(k), ==, 28);
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert_cmpint(c.ran, ==, 10);
}

/* A component with work outstanding when the queue drains: deadlock. */
typedef struct Waiter {
    uint64_t pending;
} Waiter;

static uint64_t
waiter_pending(void *opaque)
{
    return ((Waiter *) opaque)->pending;
}

static void
waiter_dump(void *opaque, GString *out)
{
    g_string_append(out, "task L0.ffn_down waits on task L0.swiglu (never started)\n");
    g_string_append(out, "task L0.add waits on task L0.ffn_down\n");
}

static void
test_deadlock_report(void)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(GError) error = NULL;
    Waiter idle = { 0 }, stuck = { 2 };
    Chain c = { 3, 0 };

    sim_kernel_register(k, "gpu", waiter_pending, NULL, &idle);
    sim_kernel_register(k, "executor", waiter_pending, waiter_dump, &stuck);
    sim_kernel_schedule(k, 0, SIM_PRIO_NORMAL, chain_step, &c);
    g_assert_false(sim_kernel_run_all(k, &error));
    g_assert_error(error, HS_SIM_ERROR, HS_SIM_ERROR_DEADLOCK);
    g_assert_cmpstr(error->message, ==,
                    "deadlock at t=0.000014 us: event queue empty but executor has 2 "
                    "pending items (task L0.ffn_down waits on task L0.swiglu (never "
                    "started);task L0.add waits on task L0.ffn_down)");

    g_clear_error(&error);
    stuck.pending = 0;
    g_assert_true(sim_kernel_run_all(k, &error));
    g_assert_no_error(error);
}

/* One million random events against a sorted reference. */
typedef struct RefEvent {
    SimTime when;
    SimPrio prio;
    uint32_t seq;
    gboolean cancelled;
} RefEvent;

typedef struct Stress {
    RefEvent *ref;
    uint32_t *ran;       /* seqs in the order they ran */
    uint32_t n_ran;
} Stress;

typedef struct StressTag {
    Stress *s;
    uint32_t seq;
} StressTag;

static void
stress_event(SimKernel *k, void *opaque)
{
    StressTag *t = opaque;
    g_assert_cmpuint(sim_kernel_now(k), ==, t->s->ref[t->seq].when);
    t->s->ran[t->s->n_ran++] = t->seq;
}

static int
ref_cmp(const void *a, const void *b)
{
    const RefEvent *x = a, *y = b;
    if (x->when != y->when) {
        return x->when < y->when ? -1 : 1;
    }
    if (x->prio != y->prio) {
        return x->prio < y->prio ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static void
test_stress_million(void)
{
    const uint32_t n = 1000000;
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(GRand) rng = g_rand_new_with_seed(20261122);
    Stress s = { g_new0(RefEvent, n), g_new0(uint32_t, n), 0 };
    StressTag *tags = g_new(StressTag, n);
    SimEventId *ids = g_new(SimEventId, n);

    for (uint32_t i = 0; i < n; i++) {
        /* small time range so ties (same time, same prio) are frequent */
        s.ref[i].when = g_rand_int_range(rng, 0, 50000);
        s.ref[i].prio = (SimPrio) g_rand_int_range(rng, 0, 4) * 64;
        s.ref[i].seq = i;
        tags[i] = (StressTag) { &s, i };
        ids[i] = sim_kernel_schedule_at(k, s.ref[i].when, s.ref[i].prio,
                                        stress_event, &tags[i]);
    }
    /* cancel 1 in 10 */
    uint32_t cancelled = 0;
    for (uint32_t i = 0; i < n; i += 10) {
        g_assert_true(sim_kernel_cancel(k, ids[i]));
        s.ref[i].cancelled = TRUE;
        cancelled++;
    }
    g_assert_cmpuint(sim_kernel_queued(k), ==, n - cancelled);
    sim_kernel_run_until(k, SIM_TIME_MAX);

    qsort(s.ref, n, sizeof(RefEvent), ref_cmp);
    uint32_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (s.ref[i].cancelled) {
            continue;
        }
        g_assert_cmpuint(j, <, s.n_ran);
        if (s.ran[j] != s.ref[i].seq) {
            g_error("event %u ran at position %u, reference wants %u", s.ran[j],
                    j, s.ref[i].seq);
        }
        j++;
    }
    g_assert_cmpuint(j, ==, s.n_ran);
    g_assert_cmpuint(j, ==, n - cancelled);
    g_free(s.ref);
    g_free(s.ran);
    g_free(tags);
    g_free(ids);
}

/*
 * Events that schedule, cancel and move others while they run, and a
 * driver that steps time with run_until and schedules from outside, all
 * checked against a reference that scans the pending set for the least
 * (time, priority, sequence).  Thousands pending, so the kernel's radix
 * buckets are used; then drained, so it leaves them.  Delays of 0 at a
 * lower priority than the running event's, and times between a stepped now
 * and the buckets' base, are the cases a radix heap gets wrong first.
 */
typedef struct DynEvent {
    SimTime when;
    SimPrio prio;
    uint64_t seq;            /* the kernel's: one per schedule and per move */
    SimEventId id;
    uint32_t pending_at;     /* index in Dyn.pending, or UINT32_MAX */
} DynEvent;

typedef struct Dyn {
    SimKernel *k;
    GRand *rng;
    DynEvent *ev;
    uint32_t n_ev, cap_ev;
    uint32_t *pending;       /* indices into ev */
    uint32_t n_pending;
    uint64_t seq;
    uint32_t budget;         /* events the handlers may still schedule */
    uint32_t ran;
} Dyn;

static void dyn_event(SimKernel *k, void *opaque);

static SimTime
dyn_delay(Dyn *d)
{
    switch (g_rand_int_range(d->rng, 0, 4)) {
    case 0:  return 0;
    case 1:  return g_rand_int_range(d->rng, 0, 64);
    case 2:  return g_rand_int_range(d->rng, 0, 1000000);
    default: return (SimTime) g_rand_int_range(d->rng, 0, 1 << 30) << 10;
    }
}

static void
dyn_pending_add(Dyn *d, uint32_t i)
{
    d->ev[i].pending_at = d->n_pending;
    d->pending[d->n_pending++] = i;
}

static void
dyn_pending_drop(Dyn *d, uint32_t i)
{
    uint32_t at = d->ev[i].pending_at, last = d->pending[--d->n_pending];
    d->pending[at] = last;
    d->ev[last].pending_at = at;
    d->ev[i].pending_at = UINT32_MAX;
}

static void
dyn_schedule(Dyn *d, SimTime when)
{
    g_assert_cmpuint(d->n_ev, <, d->cap_ev);
    uint32_t i = d->n_ev++;
    SimPrio prio = (SimPrio) g_rand_int_range(d->rng, 0, 4) * 64;
    d->ev[i] = (DynEvent) { when, prio, d->seq++, 0, UINT32_MAX };
    d->ev[i].id = sim_kernel_schedule_at(d->k, when, prio, dyn_event,
                                         GUINT_TO_POINTER(i + 1));
    dyn_pending_add(d, i);
}

static gboolean
dyn_before(const DynEvent *a, const DynEvent *b)
{
    if (a->when != b->when) {
        return a->when < b->when;
    }
    if (a->prio != b->prio) {
        return a->prio < b->prio;
    }
    return a->seq < b->seq;
}

static Dyn *dyn_current;

static void
dyn_event(SimKernel *k, void *opaque)
{
    Dyn *d = dyn_current;
    uint32_t i = GPOINTER_TO_UINT(opaque) - 1;
    g_assert_cmpuint(d->ev[i].pending_at, !=, UINT32_MAX);
    g_assert_cmpuint(sim_kernel_now(k), ==, d->ev[i].when);
    for (uint32_t j = 0; j < d->n_pending; j++) {
        if (dyn_before(&d->ev[d->pending[j]], &d->ev[i])) {
            g_error("event %u ran before event %u, which is due first", i,
                    d->pending[j]);
        }
    }
    dyn_pending_drop(d, i);
    d->ran++;

    /* 1.25 new events a run against 1/16 cancelled: the queue grows until
     * the budget is spent, then drains */
    for (int n = 1 + (g_rand_int_range(d->rng, 0, 4) == 0); n > 0 && d->budget > 0; n--) {
        d->budget--;
        dyn_schedule(d, sim_kernel_now(k) + dyn_delay(d));
    }
    if (d->n_pending > 0 && g_rand_int_range(d->rng, 0, 16) == 0) {
        uint32_t v = d->pending[g_rand_int_range(d->rng, 0, (gint32) d->n_pending)];
        g_assert_true(sim_kernel_cancel(k, d->ev[v].id));
        dyn_pending_drop(d, v);
    }
    if (d->n_pending > 0 && g_rand_int_range(d->rng, 0, 4) == 0) {
        uint32_t v = d->pending[g_rand_int_range(d->rng, 0, (gint32) d->n_pending)];
        SimTime when = sim_kernel_now(k) + dyn_delay(d);
        g_assert_true(sim_kernel_move(k, d->ev[v].id, when));
        d->ev[v].when = when;
        d->ev[v].seq = d->seq++;
    }
}

static void
test_dynamic_against_reference(void)
{
    const uint32_t start = 4000, budget = 60000;
    Dyn d = { 0 };
    d.k = sim_kernel_new();
    d.rng = g_rand_new_with_seed(20261129);
    d.cap_ev = start + budget + 100000;
    d.ev = g_new0(DynEvent, d.cap_ev);
    d.pending = g_new(uint32_t, d.cap_ev);
    d.budget = budget;
    dyn_current = &d;

    for (uint32_t i = 0; i < start; i++) {
        dyn_schedule(&d, dyn_delay(&d));
    }
    /* step time from outside, scheduling between steps at or after the
     * stepped now (which may lie below the kernel's bucket base) */
    while (d.n_pending > 0) {
        SimTime until = sim_kernel_now(d.k) + dyn_delay(&d);
        sim_kernel_run_until(d.k, until);
        g_assert_cmpuint(sim_kernel_queued(d.k), ==, d.n_pending);
        if (d.n_pending > 0) {
            g_assert_cmpuint(sim_kernel_now(d.k), ==, until);
        }
        if (d.budget > 0 && g_rand_int_range(d.rng, 0, 2) == 0) {
            d.budget--;
            dyn_schedule(&d, sim_kernel_now(d.k) + g_rand_int_range(d.rng, 0, 3));
        }
        SimTime next = sim_kernel_next_time(d.k);
        for (uint32_t j = 0; j < d.n_pending; j++) {
            g_assert_cmpuint(next, <=, d.ev[d.pending[j]].when);
        }
    }
    g_assert_cmpuint(sim_kernel_next_time(d.k), ==, SIM_TIME_MAX);
    g_assert_cmpuint(d.budget, ==, 0);
    g_assert_cmpuint(d.ran, >, start + budget / 2);
    dyn_current = NULL;
    sim_kernel_free(d.k);
    g_rand_free(d.rng);
    g_free(d.ev);
    g_free(d.pending);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/kernel/order-by-time", test_order_by_time);
    g_test_add_func("/sim/kernel/ties-are-deterministic", test_ties_are_deterministic);
    g_test_add_func("/sim/kernel/cancel", test_cancel);
    g_test_add_func("/sim/kernel/stale-handle", test_stale_handle);
    g_test_add_func("/sim/kernel/move", test_move);
    g_test_add_func("/sim/kernel/move-takes-new-sequence", test_move_takes_new_sequence);
    g_test_add_func("/sim/kernel/run-until-steps", test_run_until_steps);
    g_test_add_func("/sim/kernel/stop", test_stop);
    g_test_add_func("/sim/kernel/deadlock-report", test_deadlock_report);
    g_test_add_func("/sim/kernel/stress-million", test_stress_million);
    g_test_add_func("/sim/kernel/dynamic-against-reference",
                    test_dynamic_against_reference);
    return g_test_run();
}
