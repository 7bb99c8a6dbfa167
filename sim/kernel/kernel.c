/*
 * kernel.c - see kernel.h.
 */
#include "sim/kernel/kernel.h"
#include "sim/util/error.h"

#include <string.h>

#define HEAP_ARITY 4
#define SLOT_BITS 32              /* SimEventId = generation << 32 | slot + 1 */

typedef struct HeapEntry {
    SimTime when_ps;
    uint64_t order;               /* prio << 56 | sequence */
    uint32_t slot;
    uint32_t version;             /* must equal the slot's, else stale */
} HeapEntry;

typedef struct Slot {
    SimEventFn fn;
    void *opaque;
    SimTime when_ps;              /* where the live entry is, for move() */
    uint64_t order;
    uint32_t gen;                 /* bumped on each reuse: stale ids fail */
    uint32_t version;             /* bumped on cancel / move / reuse */
    uint32_t next_free;
    gboolean live;                /* scheduled and not yet run or cancelled */
} Slot;

typedef struct Component {
    char *name;
    SimPendingFn pending;
    SimDumpFn dump;
    void *opaque;
} Component;

struct SimKernel {
    SimTime now_ps;
    uint64_t seq;                 /* insertion sequence, 56 bits used */
    uint64_t events_run;
    gboolean stop;
    GError *error;                /* sticky: the run failed (sim_kernel_fail) */

    HeapEntry *heap;              /* may hold stale entries (lazy deletion) */
    uint32_t heap_len, heap_cap;
    uint64_t live;                /* events really pending */

    Slot *slots;
    uint32_t slots_len, slots_cap;
    uint32_t free_head;           /* UINT32_MAX when empty */

    GArray *components;           /* of Component */
};

#define NO_SLOT UINT32_MAX
#define SEQ_MASK ((UINT64_C(1) << 56) - 1)

SimKernel *
sim_kernel_new(void)
{
    SimKernel *k = g_new0(SimKernel, 1);
    k->free_head = NO_SLOT;
    k->heap_cap = 1024;
    k->heap = g_new(HeapEntry, k->heap_cap);
    k->slots_cap = 1024;
    k->slots = g_new(Slot, k->slots_cap);
    k->components = g_array_new(FALSE, TRUE, sizeof(Component));
    return k;
}

void
sim_kernel_free(SimKernel *k)
{
    if (k == NULL) {
        return;
    }
    for (guint i = 0; i < k->components->len; i++) {
        g_free(g_array_index(k->components, Component, i).name);
    }
    g_array_free(k->components, TRUE);
    g_clear_error(&k->error);
    g_free(k->heap);
    g_free(k->slots);
    g_free(k);
}

SimTime
sim_kernel_now(const SimKernel *k)
{
    return k->now_ps;
}

static inline gboolean
before(const HeapEntry *a, const HeapEntry *b)
{
    return a->when_ps < b->when_ps ||
           (a->when_ps == b->when_ps && a->order < b->order);
}

/* The sifts take the entry moving into the hole at @pos as separate
 * fields, and are inlined: a 24-byte entry passed by value was written to
 * the stack in 8- and 4-byte pieces and read back in 16, a store-to-load
 * forwarding stall that took ~5 % of a timing-only run (perf). */
static inline __attribute__((always_inline)) void
sift_up(SimKernel *k, uint32_t pos, HeapEntry e)
{
    while (pos > 0) {
        uint32_t parent = (pos - 1) / HEAP_ARITY;
        if (!before(&e, &k->heap[parent])) {
            break;
        }
        k->heap[pos] = k->heap[parent];
        pos = parent;
    }
    k->heap[pos] = e;
}

static inline __attribute__((always_inline)) void
sift_down(SimKernel *k, uint32_t pos, HeapEntry e)
{
    for (;;) {
        uint32_t first = pos * HEAP_ARITY + 1;
        if (first >= k->heap_len) {
            break;
        }
        uint32_t last = MIN(first + HEAP_ARITY, k->heap_len);
        uint32_t best = first;
        for (uint32_t c = first + 1; c < last; c++) {
            if (before(&k->heap[c], &k->heap[best])) {
                best = c;
            }
        }
        if (!before(&k->heap[best], &e)) {
            break;
        }
        k->heap[pos] = k->heap[best];
        pos = best;
    }
    k->heap[pos] = e;
}

static inline gboolean entry_live(const SimKernel *k, const HeapEntry *e);

static inline __attribute__((always_inline)) void
heap_push(SimKernel *k, HeapEntry e)
{
    /* The event that just ran is still at the top, stale: replace it and
     * sift once instead of pop + push (the common "hold" pattern of a
     * handler scheduling its successor). */
    if (k->heap_len > 0 && !entry_live(k, &k->heap[0])) {
        sift_down(k, 0, e);
        return;
    }
    if (k->heap_len == k->heap_cap) {
        k->heap_cap *= 2;
        k->heap = g_renew(HeapEntry, k->heap, k->heap_cap);
    }
    sift_up(k, k->heap_len++, e);
}

static void
heap_pop(SimKernel *k)
{
    HeapEntry last = k->heap[--k->heap_len];
    if (k->heap_len > 0) {
        sift_down(k, 0, last);
    }
}

static inline gboolean
entry_live(const SimKernel *k, const HeapEntry *e)
{
    return k->slots[e->slot].version == e->version;
}

/* Drop stale entries from the top so heap[0] (if any) is live. */
static void
skip_stale(SimKernel *k)
{
    while (k->heap_len > 0 && !entry_live(k, &k->heap[0])) {
        heap_pop(k);
    }
}

static uint32_t
slot_alloc(SimKernel *k)
{
    uint32_t s;
    if (k->free_head != NO_SLOT) {
        s = k->free_head;
        k->free_head = k->slots[s].next_free;
    } else {
        if (k->slots_len == k->slots_cap) {
            g_assert(k->slots_cap < (UINT32_MAX >> 1));
            k->slots_cap *= 2;
            k->slots = g_renew(Slot, k->slots, k->slots_cap);
        }
        s = k->slots_len++;
        k->slots[s].gen = 0;
        k->slots[s].version = 0;
    }
    k->slots[s].gen++;
    k->slots[s].version++;
    k->slots[s].live = TRUE;
    k->live++;
    return s;
}

/* The slot stops being live; its heap entry (if any) becomes stale. */
static void
slot_release(SimKernel *k, uint32_t s)
{
    k->slots[s].live = FALSE;
    k->slots[s].version++;
    k->slots[s].next_free = k->free_head;
    k->free_head = s;
    k->live--;
}

static inline SimEventId
make_id(const SimKernel *k, uint32_t s)
{
    return ((uint64_t) k->slots[s].gen << SLOT_BITS) | ((uint64_t) s + 1);
}

/* The slot of a still-pending @id, or NO_SLOT. */
static uint32_t
lookup(const SimKernel *k, SimEventId id)
{
    uint64_t s1 = id & ((UINT64_C(1) << SLOT_BITS) - 1);
    if (s1 == 0 || s1 > k->slots_len) {
        return NO_SLOT;
    }
    uint32_t s = (uint32_t) (s1 - 1);
    if (k->slots[s].gen != (uint32_t) (id >> SLOT_BITS) || !k->slots[s].live) {
        return NO_SLOT;
    }
    return s;
}

static inline uint64_t
next_order(SimKernel *k, SimPrio prio)
{
    g_assert(k->seq < SEQ_MASK);
    return ((uint64_t) prio << 56) | k->seq++;
}

void
sim_kernel_fail(SimKernel *k, GError *error)
{
    g_assert(error != NULL);
    if (k->error == NULL) {
        k->error = error;
    } else {
        g_error_free(error);
    }
    k->stop = TRUE;
}

const GError *
sim_kernel_error(const SimKernel *k)
{
    return k->error;
}

/* An event due at @when_ps (already known to be >= now): at or beyond
 * the horizon the run fails and the event is kept at the horizon, where it
 * never runs (the kernel stops) but its id stays valid for the caller's
 * cancel or move. */
static inline SimTime
within_horizon(SimKernel *k, SimTime when_ps)
{
    if (G_LIKELY(when_ps < SIM_TIME_HORIZON_PS)) {
        return when_ps;
    }
    GError *e = g_error_new(HS_SIM_ERROR, HS_SIM_ERROR_HORIZON,
                            "at t=%.9g s an event was scheduled %.3g s later, beyond the "
                            "%g s horizon of simulated time", sim_time_to_s(k->now_ps),
                            sim_time_to_s(when_ps - k->now_ps), SIM_TIME_HORIZON_S);
    sim_kernel_fail(k, e);
    return SIM_TIME_HORIZON_PS;
}

SimEventId
sim_kernel_schedule_at(SimKernel *k, SimTime when_ps, SimPrio prio,
                       SimEventFn fn, void *opaque)
{
    g_assert(fn != NULL);
    g_assert(when_ps >= k->now_ps);          /* never into the past */
    when_ps = within_horizon(k, when_ps);

    uint32_t s = slot_alloc(k);
    Slot *slot = &k->slots[s];
    slot->fn = fn;
    slot->opaque = opaque;
    slot->when_ps = when_ps;
    slot->order = next_order(k, prio);
    heap_push(k, (HeapEntry) { when_ps, slot->order, s, slot->version });
    return make_id(k, s);
}

SimEventId
sim_kernel_schedule(SimKernel *k, SimTime delay_ps, SimPrio prio,
                    SimEventFn fn, void *opaque)
{
    /* now < the horizon, so now + a delay up to the horizon cannot wrap;
     * a longer delay is beyond the horizon whatever now is */
    SimTime when_ps = delay_ps <= SIM_TIME_HORIZON_PS ? k->now_ps + delay_ps : SIM_TIME_MAX;
    return sim_kernel_schedule_at(k, when_ps, prio, fn, opaque);
}

gboolean
sim_kernel_cancel(SimKernel *k, SimEventId id)
{
    uint32_t s = lookup(k, id);
    if (s == NO_SLOT) {
        return FALSE;
    }
    slot_release(k, s);
    return TRUE;
}

gboolean
sim_kernel_move(SimKernel *k, SimEventId id, SimTime when_ps)
{
    uint32_t s = lookup(k, id);
    if (s == NO_SLOT) {
        return FALSE;
    }
    g_assert(when_ps >= k->now_ps);
    when_ps = within_horizon(k, when_ps);
    Slot *slot = &k->slots[s];
    SimPrio prio = (SimPrio) (slot->order >> 56);
    slot->version++;                      /* the old entry goes stale */
    slot->when_ps = when_ps;
    slot->order = next_order(k, prio);
    heap_push(k, (HeapEntry) { when_ps, slot->order, s, slot->version });
    return TRUE;
}

gboolean
sim_kernel_is_pending(const SimKernel *k, SimEventId id)
{
    return lookup(k, id) != NO_SLOT;
}

SimTime
sim_kernel_next_time(const SimKernel *k)
{
    skip_stale((SimKernel *) k);
    return k->heap_len ? k->heap[0].when_ps : SIM_TIME_MAX;
}

uint64_t
sim_kernel_queued(const SimKernel *k)
{
    return k->live;
}

uint64_t
sim_kernel_events_run(const SimKernel *k)
{
    return k->events_run;
}

void
sim_kernel_stop(SimKernel *k)
{
    k->stop = TRUE;
}

uint64_t
sim_kernel_run_until(SimKernel *k, SimTime until_ps)
{
    uint64_t n = 0;

    k->stop = k->error != NULL;             /* a failed run stays stopped */
    while (!k->stop) {
        skip_stale(k);
        if (k->heap_len == 0) {
            break;
        }
        HeapEntry top = k->heap[0];
        if (top.when_ps > until_ps) {
            break;
        }
        g_assert(top.when_ps >= k->now_ps);  /* time never runs backwards */
        /* Leave the entry at the top: releasing the slot makes it stale, and
         * the next push replaces it or skip_stale() pops it. */
        Slot *slot = &k->slots[top.slot];
        SimEventFn fn = slot->fn;
        void *opaque = slot->opaque;
        slot_release(k, top.slot);
        k->now_ps = top.when_ps;
        k->events_run++;
        n++;
        fn(k, opaque);
    }
    if (!k->stop && until_ps != SIM_TIME_MAX && k->live > 0 &&
        until_ps > k->now_ps) {
        k->now_ps = until_ps;
    }
    return n;
}

void
sim_kernel_register(SimKernel *k, const char *name, SimPendingFn pending,
                    SimDumpFn dump, void *opaque)
{
    Component c = { g_strdup(name), pending, dump, opaque };
    g_array_append_val(k->components, c);
}

gboolean
sim_kernel_run_all(SimKernel *k, GError **error)
{
    sim_kernel_run_until(k, SIM_TIME_MAX);
    if (k->error) {
        g_propagate_error(error, g_error_copy(k->error));
        return FALSE;
    }
    if (k->stop || k->live > 0) {
        return TRUE;
    }
    g_autoptr(GString) report = NULL;
    for (guint i = 0; i < k->components->len; i++) {
        Component *c = &g_array_index(k->components, Component, i);
        uint64_t n = c->pending(c->opaque);
        if (n == 0) {
            continue;
        }
        if (report == NULL) {
            report = g_string_new(NULL);
        }
        g_string_append_printf(report, "%s%s has %" G_GUINT64_FORMAT
                               " pending item%s", report->len ? "; " : "",
                               c->name, n, n == 1 ? "" : "s");
        if (c->dump) {
            g_autoptr(GString) d = g_string_new(NULL);
            c->dump(c->opaque, d);
            /* one-line message: fold the dump's lines */
            g_strchomp(d->str);
            for (gsize j = 0; j < strlen(d->str); j++) {
                if (d->str[j] == '\n') {
                    d->str[j] = ';';
                }
            }
            if (d->str[0]) {
                g_string_append_printf(report, " (%s)", d->str);
            }
        }
    }
    if (report) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_DEADLOCK,
                    "deadlock at t=%.6f us: event queue empty but %s",
                    sim_time_to_us(k->now_ps), report->str);
        return FALSE;
    }
    return TRUE;
}
