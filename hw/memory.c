/*
 * memory.c - see memory.h.
 */
#include "hw/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct HwFlow {
    HwMem *mem;
    uint32_t initiator;
    double remaining;            /* bytes */
    double demand;               /* GB/s; INFINITY if unbounded */
    double rate;                 /* GB/s now */
    SimEventId done_ev;
    HwFlowDoneFn done;
    void *opaque;
};

struct HwMem {
    SimKernel *k;
    double ceiling;
    double *caps;
    uint32_t n_init;
    GPtrArray *flows;            /* active HwFlow*, in start order */
    SimTime last_ps;             /* progress brought up to date at */
    double *init_rate;           /* GB/s per initiator */
    double *init_bytes;          /* bytes moved per initiator */
    HwMemObserverFn observer;
    void *observer_opaque;
    /* scratch of reschedule, grown as needed: it runs on every flow start
     * and end, so it allocates nothing */
    double *init_dem, *init_alloc;    /* per initiator */
    double *dem, *alloc;              /* per flow of one initiator */
    HwFlow **mine;
    uint32_t *idx;                    /* waterfill's order */
    guint scratch_len;                /* flows the per-flow arrays hold */
};

HwMem *
hw_mem_new(SimKernel *k, double ceiling_gbps, const double *caps_gbps, uint32_t n)
{
    HwMem *m = g_new0(HwMem, 1);
    m->k = k;
    m->ceiling = ceiling_gbps;
    m->caps = g_memdup2(caps_gbps, sizeof(double) * n);
    m->n_init = n;
    m->flows = g_ptr_array_new();
    m->init_rate = g_new0(double, n);
    m->init_bytes = g_new0(double, n);
    m->init_dem = g_new0(double, n);
    m->init_alloc = g_new0(double, n);
    return m;
}

void
hw_mem_free(HwMem *m)
{
    if (m == NULL) {
        return;
    }
    for (guint i = 0; i < m->flows->len; i++) {
        g_free(g_ptr_array_index(m->flows, i));
    }
    g_ptr_array_unref(m->flows);
    g_free(m->caps);
    g_free(m->init_rate);
    g_free(m->init_bytes);
    g_free(m->init_dem);
    g_free(m->init_alloc);
    g_free(m->dem);
    g_free(m->alloc);
    g_free(m->mine);
    g_free(m->idx);
    g_free(m);
}

void
hw_mem_set_observer(HwMem *m, HwMemObserverFn fn, void *opaque)
{
    m->observer = fn;
    m->observer_opaque = opaque;
}

static int
cmp_double_idx(const void *a, const void *b, void *d)
{
    const double *dem = d;
    double x = dem[*(const uint32_t *) a], y = dem[*(const uint32_t *) b];
    if (x != y) {
        return x < y ? -1 : 1;
    }
    return (int) *(const uint32_t *) a - (int) *(const uint32_t *) b;
}

/* hw_mem_waterfill with @idx (n long) as its scratch. */
static void
waterfill(const double *demand, uint32_t n, double cap, double *alloc, uint32_t *idx)
{
    if (n == 0) {
        return;
    }
    /* satisfy the smallest demands first; the rest share what is left */
    for (uint32_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    /* insertion sort: a handful of demands, a strict total order (ties by
     * index), so the same order a general sort gives */
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = idx[i], j = i;
        while (j > 0 && cmp_double_idx(&idx[j - 1], &v, (void *) demand) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
    double left = cap;
    for (uint32_t j = 0; j < n; j++) {
        double share = left / (double) (n - j);
        double d = demand[idx[j]];
        double a = d < share ? d : share;
        alloc[idx[j]] = a;
        left -= a;
    }
}

void
hw_mem_waterfill(const double *demand, uint32_t n, double cap, double *alloc)
{
    g_autofree uint32_t *idx = g_new(uint32_t, MAX(1, n));
    waterfill(demand, n, cap, alloc, idx);
}

/* Bring every flow's remaining bytes up to now. */
static void
advance(HwMem *m)
{
    SimTime now = sim_kernel_now(m->k);
    double dt_ns = (double) (now - m->last_ps) / 1000.0;
    if (dt_ns > 0) {
        for (guint i = 0; i < m->flows->len; i++) {
            HwFlow *f = g_ptr_array_index(m->flows, i);
            double moved = MIN(f->remaining, f->rate * dt_ns);   /* GB/s = B/ns */
            f->remaining -= moved;
            m->init_bytes[f->initiator] += moved;
        }
    }
    m->last_ps = now;
}

static void flow_done(SimKernel *k, void *opaque);

static void
reschedule(HwMem *m)
{
    uint32_t nf = m->flows->len;
    double *init_dem = m->init_dem, *init_alloc = m->init_alloc;
    if (MAX(nf, m->n_init) > m->scratch_len) {
        m->scratch_len = MAX(MAX(nf, m->n_init), 2 * m->scratch_len);
        m->dem = g_renew(double, m->dem, m->scratch_len);
        m->alloc = g_renew(double, m->alloc, m->scratch_len);
        m->mine = g_renew(HwFlow *, m->mine, m->scratch_len);
        m->idx = g_renew(uint32_t, m->idx, m->scratch_len);
    }
    memset(init_dem, 0, sizeof(double) * m->n_init);

    for (uint32_t i = 0; i < nf; i++) {
        HwFlow *f = g_ptr_array_index(m->flows, i);
        init_dem[f->initiator] += f->demand;
    }
    for (uint32_t i = 0; i < m->n_init; i++) {
        init_dem[i] = MIN(init_dem[i], m->caps[i]);
    }
    waterfill(init_dem, m->n_init, m->ceiling, init_alloc, m->idx);

    for (uint32_t ini = 0; ini < m->n_init; ini++) {
        uint32_t n_mine = 0;
        for (uint32_t i = 0; i < nf; i++) {
            HwFlow *f = g_ptr_array_index(m->flows, i);
            if (f->initiator == ini) {
                m->mine[n_mine] = f;
                m->dem[n_mine++] = f->demand;
            }
        }
        waterfill(m->dem, n_mine, init_alloc[ini], m->alloc, m->idx);
        for (uint32_t j = 0; j < n_mine; j++) {
            m->mine[j]->rate = m->alloc[j];
        }
        if (init_alloc[ini] != m->init_rate[ini]) {
            m->init_rate[ini] = init_alloc[ini];
            if (m->observer) {
                m->observer(m->observer_opaque, sim_kernel_now(m->k), ini, init_alloc[ini]);
            }
        }
    }

    SimTime now = sim_kernel_now(m->k);
    for (uint32_t i = 0; i < nf; i++) {
        HwFlow *f = g_ptr_array_index(m->flows, i);
        g_assert(f->rate > 0);                 /* every flow gets a share */
        SimTime when = now + (SimTime) ceil(f->remaining / f->rate * 1000.0);
        if (f->done_ev == 0 || !sim_kernel_move(m->k, f->done_ev, when)) {
            f->done_ev = sim_kernel_schedule_at(m->k, when, SIM_PRIO_DONE, flow_done, f);
        }
    }
}

static void
flow_done(SimKernel *k, void *opaque)
{
    HwFlow *f = opaque;
    HwMem *m = f->mem;
    advance(m);
    m->init_bytes[f->initiator] += f->remaining;   /* rounding crumbs */
    g_ptr_array_remove(m->flows, f);
    HwFlowDoneFn done = f->done;
    void *done_opaque = f->opaque;
    g_free(f);
    reschedule(m);
    done(done_opaque);
}

HwFlow *
hw_mem_start(HwMem *m, uint32_t initiator, uint64_t bytes, double demand_gbps,
             HwFlowDoneFn done, void *opaque)
{
    g_assert(initiator < m->n_init);
    g_assert(bytes > 0);
    advance(m);
    HwFlow *f = g_new0(HwFlow, 1);
    f->mem = m;
    f->initiator = initiator;
    f->remaining = (double) bytes;
    f->demand = demand_gbps > 0 ? demand_gbps : INFINITY;
    f->done = done;
    f->opaque = opaque;
    g_ptr_array_add(m->flows, f);
    reschedule(m);
    return f;
}

uint64_t
hw_mem_stop(HwMem *m, HwFlow *f)
{
    advance(m);
    uint64_t left = (uint64_t) ceil(f->remaining);
    sim_kernel_cancel(m->k, f->done_ev);
    g_ptr_array_remove(m->flows, f);
    g_free(f);
    reschedule(m);
    return left;
}

double
hw_mem_flow_gbps(const HwFlow *f)
{
    return f->rate;
}

double
hw_mem_initiator_gbps(const HwMem *m, uint32_t initiator)
{
    return m->init_rate[initiator];
}

double
hw_mem_initiator_bytes(const HwMem *m, uint32_t initiator)
{
    return m->init_bytes[initiator];
}

uint32_t
hw_mem_active(const HwMem *m)
{
    return m->flows->len;
}
