/*
 * kernel.c - see kernel.h.
 */
#include "sim/kernel/kernel.h"
#include "sim/util/error.h"

#include <string.h>

#define HEAP_ARITY 4
#define SLOT_BITS 32              /* SimEventId = generation << 32 | slot + 1 */

/* Above RADIX_ON_LEN heap entries the far future moves into radix buckets
 * (see kernel.h); below RADIX_OFF_LIVE pending events it comes back.  The
 * gap keeps a queue that hovers near one bound from switching back and
 * forth.  Chosen with `hetero-sim bench kernel`: a 4-ary heap of up to a
 * few thousand entries stays in L1/L2 and is as fast as the buckets. */
#define RADIX_ON_LEN 512
#define RADIX_OFF_LIVE 128
#define RADIX_BUCKETS 64

typedef struct HeapEntry {
    SimTime when_ps;
    uint64_t order;               /* prio << 56 | sequence */
    uint32_t slot;
    uint32_t version;             /* must equal the slot's, else stale */
} HeapEntry;

/* 32 bytes: a run reads a random slot, so two share a cache line. */
typedef struct Slot {
    SimEventFn fn;
    void *opaque;
    uint32_t gen;                 /* bumped on each reuse: stale ids fail */
    uint32_t version;             /* bumped on cancel / move / reuse */
    uint32_t next_free;
    SimPrio prio;                 /* kept for move() */
    uint8_t live;                 /* scheduled and not yet run or cancelled */
} Slot;

/* The radix buckets' entries, in no order. */
typedef struct Bucket {
    HeapEntry *e;
    uint32_t len, cap;
} Bucket;

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

    /* Radix mode: the heap holds the entries due at or before last_ps, and
     * bucket[b] those due later whose time differs from last_ps first at bit
     * b (a radix heap's invariant, Ahuja, Mehlhorn, Orlin and Tarjan 1990). */
    gboolean radix;
    SimTime last_ps;
    uint64_t occupied;            /* bit b: bucket[b] has entries */
    Bucket bucket[RADIX_BUCKETS];
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
    for (int b = 0; b < RADIX_BUCKETS; b++) {
        g_free(k->bucket[b].e);
    }
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

static void
bucket_add(SimKernel *k, HeapEntry e)
{
    int b = 63 - __builtin_clzll(e.when_ps ^ k->last_ps);   /* when > last */
    Bucket *bk = &k->bucket[b];
    if (bk->len == bk->cap) {
        bk->cap = bk->cap ? bk->cap * 2 : 256;
        bk->e = g_renew(HeapEntry, bk->e, bk->cap);
    }
    bk->e[bk->len++] = e;
    k->occupied |= UINT64_C(1) << b;
}

/* Leave radix mode: every pending entry back into the heap. */
static void
radix_off(SimKernel *k)
{
    for (int b = 0; b < RADIX_BUCKETS; b++) {
        Bucket *bk = &k->bucket[b];
        for (uint32_t i = 0; i < bk->len; i++) {
            if (entry_live(k, &bk->e[i])) {
                heap_push(k, bk->e[i]);
            }
        }
        bk->len = 0;
    }
    k->occupied = 0;
    k->radix = FALSE;
}

/* Enter radix mode: the heap keeps the entries due first, at one time, and
 * the rest go to the buckets. */
static __attribute__((noinline)) void
radix_on(SimKernel *k)
{
    skip_stale(k);
    if (k->heap_len == 0) {
        return;
    }
    k->radix = TRUE;
    k->last_ps = k->heap[0].when_ps;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < k->heap_len; i++) {
        HeapEntry e = k->heap[i];
        if (!entry_live(k, &e)) {
            continue;
        }
        if (e.when_ps == k->last_ps) {
            k->heap[kept++] = e;
        } else {
            bucket_add(k, e);
        }
    }
    k->heap_len = kept;
    for (uint32_t i = kept; i-- > 0;) {        /* heapify: sift every parent */
        sift_down(k, i, k->heap[i]);
    }
}

/* The heap ran dry in radix mode: the lowest bucket's earliest time becomes
 * last_ps; its entries due then go to the heap and the rest to lower
 * buckets (they all agree with the new last_ps above the bucket's bit). */
static __attribute__((noinline)) void
radix_refill(SimKernel *k)
{
    if (k->live < RADIX_OFF_LIVE) {
        radix_off(k);
        return;
    }
    while (k->heap_len == 0 && k->occupied != 0) {
        int b = __builtin_ctzll(k->occupied);
        Bucket *bk = &k->bucket[b];
        SimTime m = SIM_TIME_MAX;
        for (uint32_t i = 0; i < bk->len; i++) {
            m = MIN(m, bk->e[i].when_ps);
        }
        uint32_t n = bk->len;
        bk->len = 0;
        k->occupied &= ~(UINT64_C(1) << b);
        k->last_ps = m;
        /* Stale entries move along unchecked (a check is a read of a random
         * slot) and are dropped when they reach the top of the heap. */
        for (uint32_t i = 0; i < n; i++) {
            HeapEntry e = bk->e[i];
            if (e.when_ps == m) {
                /* due next: its slot is read when it runs */
                __builtin_prefetch(&k->slots[e.slot]);
                heap_push(k, e);
            } else {
                bucket_add(k, e);               /* a lower bucket: no aliasing */
            }
        }
    }
}

/* Schedule an entry: the heap, or in radix mode a bucket if it is due after
 * the heap's time. */
static inline __attribute__((always_inline)) void
queue_push(SimKernel *k, HeapEntry e)
{
    if (G_UNLIKELY(k->radix) && e.when_ps > k->last_ps) {
        bucket_add(k, e);
        return;
    }
    heap_push(k, e);
    if (G_UNLIKELY(k->heap_len > RADIX_ON_LEN) && !k->radix) {
        radix_on(k);
    }
}

/* The live entry that runs next, or NULL if nothing is pending. */
static inline __attribute__((always_inline)) HeapEntry *
queue_top(SimKernel *k)
{
    for (;;) {
        skip_stale(k);
        if (k->heap_len > 0) {
            return &k->heap[0];
        }
        if (!k->radix || k->occupied == 0) {
            return NULL;
        }
        radix_refill(k);
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
    slot->prio = prio;
    queue_push(k, (HeapEntry) { when_ps, next_order(k, prio), s, slot->version });
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
    slot->version++;                      /* the old entry goes stale */
    queue_push(k, (HeapEntry) { when_ps, next_order(k, slot->prio), s, slot->version });
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
    const HeapEntry *top = queue_top((SimKernel *) k);
    return top ? top->when_ps : SIM_TIME_MAX;
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
        const HeapEntry *next = queue_top(k);
        if (next == NULL) {
            break;
        }
        HeapEntry top = *next;
        if (top.when_ps > until_ps) {
            break;
        }
        g_assert(top.when_ps >= k->now_ps);  /* time never runs backwards */
        /* Leave the entry at the top: releasing the slot makes it stale, and
         * the next push replaces it or skip_stale() pops it. */
        Slot *slot = &k->slots[top.slot];
        /* the next event is one of the top's children: fetch their slots
         * while this one runs (a run reads a random slot) */
        for (uint32_t c = 1; c <= HEAP_ARITY && c < k->heap_len; c++) {
            __builtin_prefetch(&k->slots[k->heap[c].slot]);
        }
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
