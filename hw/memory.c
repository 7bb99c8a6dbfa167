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
    SimTime when_ps;             /* its last byte moves then, at this rate */
    HwFlowDoneFn done;
    void *opaque;
};

struct HwMem {
    SimKernel *k;
    double ceiling;
    double *caps;
    uint32_t n_init;
    GPtrArray *flows;            /* active HwFlow*, in start order */
    GPtrArray *spare;            /* ended HwFlow*, re-used */
    SimEventId next_ev;          /* the earliest completion (0: none) */
    SimTime last_ps;             /* progress brought up to date at */
    double *init_rate;           /* GB/s per initiator */
    double *init_bytes;          /* bytes moved per initiator */
    HwMemObserverFn observer;
    void *observer_opaque;
    /* scratch of reschedule, grown as needed: it runs on every flow start
     * and end, so it allocates nothing */
    double *init_dem, *init_alloc;    /* per initiator */
    double *dem, *alloc;              /* per flow of one initiator */
    HwFlow **mine;                    /* flows by initiator, in start order */
    gboolean *asking;                 /* per initiator: has flows (scratch) */
    uint32_t *mine_init;              /* initiators with flows, by index */
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
    m->flows = g_ptr_array_new_with_free_func(g_free);
    m->spare = g_ptr_array_new_with_free_func(g_free);
    m->asking = g_new0(gboolean, MAX(1, n));
    m->mine_init = g_new0(uint32_t, MAX(1, n));
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
    g_ptr_array_unref(m->flows);
    g_ptr_array_unref(m->spare);
    g_free(m->asking);
    g_free(m->mine_init);
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

static void flows_done(SimKernel *k, void *opaque);

/*
 * Rates after a flow started or ended, and when each flow will end at
 * them.  One kernel event stands for every flow's completion: the
 * earliest (ties: the first started), re-armed with a fresh sequence at
 * each recomputation — the order one event per flow, all moved here in
 * start order, would run in, at the cost of one heap push instead of one
 * per flow.
 */
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
    /* the initiators that have flows (a few of the SoC's), by index, and
     * what each asks: the sum of its flows' demands (in start order) up
     * to its cap.  Those with none ask nothing: they would sort first and
     * get 0 without changing the others' shares, so they are left out. */
    HwFlow **flows = (HwFlow **) m->flows->pdata;
    uint32_t k = 0;
    if (nf == 1) {
        /* one flow (half the calls of a decode): the arithmetic below
         * with its one-element sums, sorts and shares taken out (a share
         * of one is the whole: x / 1.0 == x) */
        HwFlow *f = flows[0];
        uint32_t ini = f->initiator;
        double dem = MIN(f->demand, m->caps[ini]);
        init_alloc[ini] = dem < m->ceiling ? dem : m->ceiling;
        m->asking[ini] = TRUE;
        f->rate = f->demand < init_alloc[ini] ? f->demand : init_alloc[ini];
        nf = 0;                  /* the general part has nothing left to do */
    } else if (nf == 2 && flows[0]->initiator != flows[1]->initiator) {
        /* two flows of two initiators (most other calls): the same, each
         * initiator's sum one flow's demand; the share of the smaller
         * demand (ties: the lower initiator) first, then what is left */
        HwFlow *lo = flows[0]->initiator < flows[1]->initiator ? flows[0] : flows[1];
        HwFlow *hi = lo == flows[0] ? flows[1] : flows[0];
        double dlo = MIN(lo->demand, m->caps[lo->initiator]);
        double dhi = MIN(hi->demand, m->caps[hi->initiator]);
        gboolean hi_first = dlo > dhi;
        double d1 = hi_first ? dhi : dlo, d2 = hi_first ? dlo : dhi;
        double left = m->ceiling, share = left / 2.0;
        double a1 = d1 < share ? d1 : share;
        left -= a1;
        double a2 = d2 < left ? d2 : left;
        init_alloc[lo->initiator] = hi_first ? a2 : a1;
        init_alloc[hi->initiator] = hi_first ? a1 : a2;
        m->asking[lo->initiator] = m->asking[hi->initiator] = TRUE;
        for (int i = 0; i < 2; i++) {
            double cap = init_alloc[flows[i]->initiator];
            flows[i]->rate = flows[i]->demand < cap ? flows[i]->demand : cap;
        }
        nf = 0;
    }
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t ini = flows[i]->initiator;
        if (!m->asking[ini]) {
            m->asking[ini] = TRUE;
            init_dem[ini] = 0;
            uint32_t j = k++;
            for (; j > 0 && m->mine_init[j - 1] > ini; j--) {
                m->mine_init[j] = m->mine_init[j - 1];
            }
            m->mine_init[j] = ini;
        }
        init_dem[ini] += flows[i]->demand;
    }
    for (uint32_t j = 0; j < k; j++) {
        uint32_t ini = m->mine_init[j];
        m->dem[j] = MIN(init_dem[ini], m->caps[ini]);
    }
    waterfill(m->dem, k, m->ceiling, m->alloc, m->idx);
    for (uint32_t j = 0; j < k; j++) {
        init_alloc[m->mine_init[j]] = m->alloc[j];
    }
    /* then each one's share among its flows, in start order */
    for (uint32_t j = 0; j < k; j++) {
        uint32_t ini = m->mine_init[j], n_mine = 0;
        for (uint32_t i = 0; i < nf; i++) {
            if (flows[i]->initiator == ini) {
                m->mine[n_mine] = flows[i];
                m->dem[n_mine++] = flows[i]->demand;
            }
        }
        waterfill(m->dem, n_mine, init_alloc[ini], m->alloc, m->idx);
        for (uint32_t i = 0; i < n_mine; i++) {
            m->mine[i]->rate = m->alloc[i];
        }
    }
    for (uint32_t ini = 0; ini < m->n_init; ini++) {
        double rate = m->asking[ini] ? init_alloc[ini] : 0;
        m->asking[ini] = FALSE;
        if (rate != m->init_rate[ini]) {
            m->init_rate[ini] = rate;
            if (m->observer) {
                m->observer(m->observer_opaque, sim_kernel_now(m->k), ini, rate);
            }
        }
    }

    nf = m->flows->len;
    SimTime now = sim_kernel_now(m->k), first = SIM_TIME_MAX;
    for (uint32_t i = 0; i < nf; i++) {
        HwFlow *f = flows[i];
        g_assert(f->rate > 0);                 /* every flow gets a share */
        /* saturated at the horizon (now is at most the horizon: no wrap);
         * the kernel fails the run if the completion lies beyond it */
        f->when_ps = now + sim_time_from_ps(ceil(f->remaining / f->rate * 1000.0));
        first = MIN(first, f->when_ps);
    }
    if (nf == 0) {
        if (m->next_ev) {
            sim_kernel_cancel(m->k, m->next_ev);
            m->next_ev = 0;
        }
    } else if (m->next_ev == 0 || !sim_kernel_move(m->k, m->next_ev, first)) {
        m->next_ev = sim_kernel_schedule_at(m->k, first, SIM_PRIO_DONE, flows_done, m);
    }
}

/* The earliest flow (the first started among equals) has moved its last
 * byte. */
static void
flows_done(SimKernel *k, void *opaque)
{
    HwMem *m = opaque;
    SimTime now = sim_kernel_now(k);
    HwFlow *f = NULL;
    guint i;
    for (i = 0; i < m->flows->len; i++) {
        f = g_ptr_array_index(m->flows, i);
        if (f->when_ps == now) {
            break;
        }
    }
    g_assert(i < m->flows->len);
    m->next_ev = 0;
    advance(m);
    m->init_bytes[f->initiator] += f->remaining;   /* rounding crumbs */
    g_ptr_array_add(m->spare, g_ptr_array_steal_index(m->flows, i));
    HwFlowDoneFn done = f->done;
    void *done_opaque = f->opaque;
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
    HwFlow *f = m->spare->len ? g_ptr_array_steal_index_fast(m->spare, m->spare->len - 1)
                              : g_new0(HwFlow, 1);
    *f = (HwFlow) { 0 };
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
    guint i;
    gboolean found = g_ptr_array_find(m->flows, f, &i);
    g_assert(found);
    g_ptr_array_add(m->spare, g_ptr_array_steal_index(m->flows, i));
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
