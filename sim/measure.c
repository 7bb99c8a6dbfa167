/*
 * measure.c - see measure.h.
 */
#include "sim/measure.h"

#include <stdlib.h>
#include <string.h>

typedef struct Span {
    SimTime a, b;
} Span;

/* The bytes moved inside [t0, t1) by the piecewise-constant rates of every
 * initiator, fed change by change; a bound not known yet is SIM_TIME_MAX
 * (t0: no interval counts yet; t1: every change so far is before it). */
typedef struct Integral {
    SimTime t0, t1, prev;
    double bytes;
} Integral;

typedef struct OpTime {
    SimTime busy;
    double *elems;               /* per processor */
} OpTime;

/* An operating point in force from @from on. */
typedef struct Clock {
    SimTime from;
    uint32_t point;
} Clock;

typedef struct Prepare {
    uint32_t id;
    SimPhase phase;
    SimTime dur_ps;
} Prepare;

struct SimMeasure {
    uint32_t n_procs;
    double *rate;                /* GB/s per initiator now */
    double total;                /* their sum, in initiator order (total_rate) */
    Integral dram[2];            /* prefill, decode */
    gboolean peak_pending;
    SimTime peak_when;
    double peak;
    SimTime pe, de, end;         /* SIM_TIME_MAX until known */
    SimTime pe_seen, de_seen;    /* largest ends so far */
    gboolean any_decode;
    GArray **open;               /* per processor: disjoint Spans, by start */
    SimTime *busy[3];            /* prefill, decode, all */
    GArray **clocks;             /* per processor: Clocks by time, from the one
                                  * in force at the earliest unfolded interval */
    GArray **negs;               /* per processor: preempted Spans, not folded */
    SimTime *pt[2];              /* prefill, decode: busy per point */
    GHashTable *ops;             /* label -> OpTime: prefill kernels */
    SimTime op_total;
    GArray *prepares;            /* of Prepare */
};

static void
op_time_free(gpointer p)
{
    OpTime *o = p;
    g_free(o->elems);
    g_free(o);
}

void
sim_measured_clear(SimMeasured *m)
{
    g_clear_pointer(&m->busy_prefill_ps, g_free);
    g_clear_pointer(&m->busy_decode_ps, g_free);
    g_clear_pointer(&m->busy_all_ps, g_free);
    g_clear_pointer(&m->point_prefill_ps, g_free);
    g_clear_pointer(&m->point_decode_ps, g_free);
    g_clear_pointer(&m->hot_split, g_free);
}

SimMeasure *
sim_measure_new(uint32_t n_procs)
{
    SimMeasure *m = g_new0(SimMeasure, 1);
    m->n_procs = n_procs;
    m->rate = g_new0(double, MAX(1, n_procs));
    m->dram[0] = (Integral) { 0, SIM_TIME_MAX, 0, 0 };
    m->dram[1] = (Integral) { SIM_TIME_MAX, SIM_TIME_MAX, 0, 0 };
    m->pe = m->de = m->end = SIM_TIME_MAX;
    m->open = g_new0(GArray *, MAX(1, n_procs));
    for (uint32_t p = 0; p < n_procs; p++) {
        m->open[p] = g_array_new(FALSE, FALSE, sizeof(Span));
    }
    for (int i = 0; i < 3; i++) {
        m->busy[i] = g_new0(SimTime, MAX(1, n_procs));
    }
    m->clocks = g_new0(GArray *, MAX(1, n_procs));
    m->negs = g_new0(GArray *, MAX(1, n_procs));
    for (uint32_t p = 0; p < n_procs; p++) {
        m->clocks[p] = g_array_new(FALSE, FALSE, sizeof(Clock));
        Clock c = { 0, 0 };
        g_array_append_val(m->clocks[p], c);
        m->negs[p] = g_array_new(FALSE, FALSE, sizeof(Span));
    }
    for (int i = 0; i < 2; i++) {
        m->pt[i] = g_new0(SimTime, (size_t) MAX(1, n_procs) * HW_DVFS_MAX_POINTS);
    }
    m->ops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, op_time_free);
    m->prepares = g_array_new(FALSE, FALSE, sizeof(Prepare));
    return m;
}

void
sim_measure_free(SimMeasure *m)
{
    if (m == NULL) {
        return;
    }
    for (uint32_t p = 0; p < m->n_procs; p++) {
        g_array_unref(m->open[p]);
    }
    for (int i = 0; i < 3; i++) {
        g_free(m->busy[i]);
    }
    for (uint32_t p = 0; p < m->n_procs; p++) {
        g_array_unref(m->clocks[p]);
        g_array_unref(m->negs[p]);
    }
    g_free(m->clocks);
    g_free(m->negs);
    g_free(m->pt[0]);
    g_free(m->pt[1]);
    g_free(m->open);
    g_free(m->rate);
    g_hash_table_unref(m->ops);
    g_array_unref(m->prepares);
    g_free(m);
}

/* ---- DRAM: the average over a phase, the peak ------------------------- */

/* The rates' sum, added in initiator order: what m->total keeps (summed
 * afresh at each change, never adjusted, so the same bits). */
static double
total_rate(const SimMeasure *m)
{
    return m->total;
}

static double
sum_rates(const SimMeasure *m)
{
    double total = 0;
    for (uint32_t p = 0; p < m->n_procs; p++) {
        total += m->rate[p];
    }
    return total;
}

/* The interval [prev, when) at the rates in force. */
static void
integral_step(const SimMeasure *m, Integral *g, SimTime when)
{
    SimTime a = MAX(g->prev, g->t0), b = MIN(when, g->t1);
    if (b > a) {
        g->bytes += total_rate(m) * (double) (b - a) / 1000.0;    /* GB/s x ns */
    }
}

static double
integral_gbps(const SimMeasure *m, Integral *g)
{
    if (g->t1 <= g->t0 || g->t1 == SIM_TIME_MAX) {
        return 0;
    }
    integral_step(m, g, g->t1);
    return g->bytes / ((double) (g->t1 - g->t0) / 1000.0);
}

void
sim_measure_bw(SimMeasure *m, SimTime when_ps, uint32_t initiator, double gbps)
{
    /* the peak is taken once every change of an instant is in */
    if (m->peak_pending && when_ps != m->peak_when) {
        m->peak = MAX(m->peak, total_rate(m));
    }
    for (int i = 0; i < 2; i++) {
        integral_step(m, &m->dram[i], when_ps);
        m->dram[i].prev = when_ps;
    }
    m->rate[initiator] = gbps;
    m->total = sum_rates(m);
    m->peak_pending = TRUE;
    m->peak_when = when_ps;
}

/* ---- busy time: the union of intervals per processor ------------------ */

static void
add_span(SimMeasure *m, uint32_t proc, SimTime a, SimTime b)
{
    if (b <= a || proc >= m->n_procs) {
        return;
    }
    GArray *open = m->open[proc];
    /* most intervals come in start order: at or after the last one */
    if (open->len > 0) {
        Span *last = &g_array_index(open, Span, open->len - 1);
        if (last->a <= a) {
            if (last->b >= a) {
                last->b = MAX(last->b, b);
            } else {
                Span s = { a, b };
                g_array_append_val(open, s);
            }
            return;
        }
    }
    /* the first interval starting after a (binary search) */
    guint lo = 0, hi = open->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(open, Span, mid).a > a) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    guint i = lo;
    /* merge with the one before if it reaches a, then swallow those after */
    if (i > 0 && g_array_index(open, Span, i - 1).b >= a) {
        i--;
        Span *s = &g_array_index(open, Span, i);
        s->b = MAX(s->b, b);
    } else {
        Span s = { a, b };
        g_array_insert_val(open, i, s);
    }
    Span *s = &g_array_index(open, Span, i);
    guint j = i + 1;
    while (j < open->len && g_array_index(open, Span, j).a <= s->b) {
        s->b = MAX(s->b, g_array_index(open, Span, j).b);
        j++;
    }
    if (j > i + 1) {
        /* (GLib moves the tail even to remove nothing) */
        g_array_remove_range(open, i + 1, j - i - 1);
    }
}

static SimTime
overlap(SimTime a, SimTime b, SimTime t0, SimTime t1)
{
    SimTime lo = MAX(a, t0), hi = MIN(b, t1);
    return hi > lo ? hi - lo : 0;
}

/* [a, b) of processor @p into (or, @neg, out of) its busy time per
 * operating point in each phase: cut where its point changed.  The pieces
 * partition [a, b), so per phase they add up to the interval's own share,
 * in integers. */
static void
add_points(SimMeasure *m, uint32_t p, SimTime a, SimTime b, gboolean neg)
{
    const GArray *c = m->clocks[p];
    for (guint i = 0; i < c->len; i++) {
        const Clock *e = &g_array_index(c, Clock, i);
        if (e->from >= b) {
            break;
        }
        SimTime lo = MAX(a, e->from);
        SimTime hi = i + 1 < c->len ? MIN(b, g_array_index(c, Clock, i + 1).from) : b;
        if (hi <= lo) {
            continue;
        }
        size_t at = (size_t) p * HW_DVFS_MAX_POINTS + e->point;
        SimTime o0 = overlap(lo, hi, 0, m->pe), o1 = overlap(lo, hi, m->pe, m->de);
        /* (unsigned: a preemption folded before its kernel wraps and
         * comes back exactly) */
        m->pt[0][at] += neg ? -o0 : o0;
        m->pt[1][at] += neg ? -o1 : o1;
    }
}

void
sim_measure_fold(SimMeasure *m, SimTime mark_ps)
{
    if (m->pe == SIM_TIME_MAX) {
        return;                  /* the phases' bounds are not known yet */
    }
    for (uint32_t p = 0; p < m->n_procs; p++) {
        GArray *open = m->open[p];
        guint n = 0;
        while (n < open->len && g_array_index(open, Span, n).b <= mark_ps) {
            const Span *s = &g_array_index(open, Span, n);
            m->busy[0][p] += overlap(s->a, s->b, 0, m->pe);
            m->busy[1][p] += overlap(s->a, s->b, m->pe, m->de);
            m->busy[2][p] += overlap(s->a, s->b, 0, m->end);
            add_points(m, p, s->a, s->b, FALSE);
            n++;
        }
        g_array_remove_range(open, 0, n);
        /* what is left starts no earlier than the floor: the points in
         * force before it are no longer needed */
        SimTime floor = mark_ps;
        if (open->len) {
            floor = MIN(floor, g_array_index(open, Span, 0).a);
        }
        GArray *negs = m->negs[p];
        for (guint i = 0; i < negs->len;) {
            const Span *s = &g_array_index(negs, Span, i);
            if (s->b <= mark_ps) {
                add_points(m, p, s->a, s->b, TRUE);
                g_array_remove_index(negs, i);
            } else {
                floor = MIN(floor, s->a);
                i++;
            }
        }
        GArray *c = m->clocks[p];
        guint keep = 0;
        while (keep + 1 < c->len && g_array_index(c, Clock, keep + 1).from <= floor) {
            keep++;
        }
        if (keep > 0) {
            g_array_remove_range(c, 0, keep);
        }
    }
}

void
sim_measure_clock(SimMeasure *m, uint32_t proc, SimTime when_ps, uint32_t point)
{
    if (proc >= m->n_procs) {
        return;
    }
    g_assert(point < HW_DVFS_MAX_POINTS);
    GArray *c = m->clocks[proc];
    Clock *last = &g_array_index(c, Clock, c->len - 1);
    g_assert(when_ps >= last->from);
    if (last->from == when_ps) {
        last->point = point;
    } else if (last->point != point) {
        Clock e = { when_ps, point };
        g_array_append_val(c, e);
    }
}

void
sim_measure_preempted(SimMeasure *m, uint32_t proc, SimTime off_ps, SimTime back_ps)
{
    if (proc < m->n_procs && back_ps > off_ps) {
        Span s = { off_ps, back_ps };
        g_array_append_val(m->negs[proc], s);
    }
}

void
sim_measure_span(SimMeasure *m, uint32_t proc, SimTime a_ps, SimTime b_ps)
{
    add_span(m, proc, a_ps, b_ps);
}

/* ---- tasks ------------------------------------------------------------- */

/* The op label of a kernel task: "L3.ffn_down[rows 0:2048]" -> "ffn_down". */
static void
op_label(const char *name, char out[32])
{
    const char *a = name[0] == 'L' && strchr(name, '.') ? strchr(name, '.') + 1 : name;
    size_t n = strcspn(a, "[");
    g_strlcpy(out, a, MIN(n + 1, 32));
}

void
sim_measure_task(SimMeasure *m, uint32_t id, const SimTask *t, SimTime start_ps,
                 SimTime end_ps, SimTime off_ps)
{
    if (t->phase == SIM_PHASE_PREFILL) {
        m->pe_seen = MAX(m->pe_seen, end_ps);
    } else {
        m->de_seen = MAX(m->de_seen, end_ps);
        m->any_decode = TRUE;
    }
    add_span(m, t->proc, start_ps, end_ps);
    if (t->kind == SIM_TASK_PREPARE) {
        Prepare p = { id, t->phase, end_ps - start_ps };
        g_array_append_val(m->prepares, p);
    }
    if (t->phase == SIM_PHASE_PREFILL && t->kind == SIM_TASK_KERNEL) {
        /* a kernel's time off the GPU for a game's frames is not its own */
        char label[32];
        op_label(t->name, label);
        OpTime *o = g_hash_table_lookup(m->ops, label);
        if (o == NULL) {
            o = g_new0(OpTime, 1);
            o->elems = g_new0(double, MAX(1, m->n_procs));
            g_hash_table_insert(m->ops, g_strdup(label), o);
        }
        SimTime d = end_ps - start_ps - off_ps;
        o->busy += d;
        m->op_total += d;
        /* whole numbers below 2^53: the sum is exact in any order */
        o->elems[t->proc] += (double) (t->slice.tok1 - t->slice.tok0) *
                             (double) (t->slice.row1 - t->slice.row0);
    }
}

void
sim_measure_prefill_done(SimMeasure *m)
{
    m->pe = m->pe_seen;
    m->dram[0].t1 = m->pe;
    m->dram[1].t0 = m->pe;
}

void
sim_measure_tasks_done(SimMeasure *m)
{
    if (m->pe == SIM_TIME_MAX) {
        sim_measure_prefill_done(m);
    }
    m->de = m->any_decode ? m->de_seen : 0;
    m->end = MAX(m->pe_seen, m->de_seen);
    m->dram[1].t1 = m->de;
}

static int
prepare_cmp(const void *x, const void *y)
{
    const Prepare *p = x, *q = y;
    return p->id < q->id ? -1 : (p->id > q->id);
}

static void
hot_op(SimMeasure *m, SimMeasured *out)
{
    /* the largest; ties by name so the choice is deterministic */
    GHashTableIter it;
    gpointer k, v;
    const char *best = NULL;
    const OpTime *bo = NULL;
    g_hash_table_iter_init(&it, m->ops);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        const OpTime *o = v;
        if (!bo || o->busy > bo->busy || (o->busy == bo->busy && strcmp(k, best) < 0)) {
            best = k;
            bo = o;
        }
    }
    out->hot_split = g_new0(double, MAX(1, m->n_procs));
    if (bo == NULL || m->op_total == 0) {
        return;
    }
    g_strlcpy(out->hot_op, best, sizeof(out->hot_op));
    out->hot_time_share = (double) bo->busy / (double) m->op_total;
    double all = 0;
    for (uint32_t p = 0; p < m->n_procs; p++) {
        all += bo->elems[p];
    }
    for (uint32_t p = 0; p < m->n_procs && all > 0; p++) {
        out->hot_split[p] = bo->elems[p] / all;
    }
}

void
sim_measure_finish(SimMeasure *m, SimMeasured *out)
{
    if (m->end == SIM_TIME_MAX) {
        sim_measure_tasks_done(m);
    }
    sim_measure_fold(m, SIM_TIME_MAX);
    if (m->peak_pending) {
        m->peak = MAX(m->peak, total_rate(m));
    }
    *out = (SimMeasured) {
        .prefill_end_ps = m->pe, .decode_end_ps = m->de, .peak_gbps = m->peak,
        .dram_prefill_gbps = integral_gbps(m, &m->dram[0]),
        .dram_decode_gbps = integral_gbps(m, &m->dram[1]),
    };
    out->busy_prefill_ps = g_memdup2(m->busy[0], sizeof(SimTime) * MAX(1, m->n_procs));
    out->busy_decode_ps = g_memdup2(m->busy[1], sizeof(SimTime) * MAX(1, m->n_procs));
    out->busy_all_ps = g_memdup2(m->busy[2], sizeof(SimTime) * MAX(1, m->n_procs));
    size_t npt = sizeof(SimTime) * MAX(1, m->n_procs) * HW_DVFS_MAX_POINTS;
    out->point_prefill_ps = g_memdup2(m->pt[0], npt);
    out->point_decode_ps = g_memdup2(m->pt[1], npt);
    g_array_sort(m->prepares, prepare_cmp);      /* summed in id order */
    for (guint i = 0; i < m->prepares->len; i++) {
        const Prepare *p = &g_array_index(m->prepares, Prepare, i);
        double ms = sim_time_to_ms(p->dur_ps);
        if (p->phase == SIM_PHASE_PREFILL) {
            out->prepare_prefill_ms += ms;
        } else {
            out->prepare_decode_ms += ms;
        }
    }
    hot_op(m, out);
}
