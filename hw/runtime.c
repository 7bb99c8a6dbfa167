/*
 * runtime.c - see runtime.h.
 */
#include "hw/runtime.h"
#include "hw/sync.h"
#include "sim/util/error.h"

typedef struct Job {
    HwRuntime *rt;
    HwSubmit s;
    HwCost cost;
    SimTime released_ps;         /* the host finished submitting it */
    SimTime enqueued_ps;         /* the host started submitting it: FIFO key */
    uint64_t seq;                /* submission order: last tie-break */
    gboolean compute_done, bytes_done;
    gboolean started;            /* on_start has fired */
    gboolean preempted;          /* resumes after a preemption: restore */
    gboolean stopped;            /* stopped after it started, at off_ps */
    SimTime off_ps;
    SimEventId start_ev, compute_ev;
    SimTime compute_end_ps;
    HwFlow *flow;                /* its DRAM traffic while it moves */
    struct Job *prev, *next;     /* its queue's waiting list */
} Job;

/* Jobs waiting in submission order: a list through the jobs themselves
 * (a GQueue allocated a link per task). */
typedef struct JobList {
    Job *head, *tail;
} JobList;

static void
list_push_tail(JobList *l, Job *j)
{
    j->next = NULL;
    j->prev = l->tail;
    if (l->tail) {
        l->tail->next = j;
    } else {
        l->head = j;
    }
    l->tail = j;
}

static void
list_push_head(JobList *l, Job *j)
{
    j->prev = NULL;
    j->next = l->head;
    if (l->head) {
        l->head->prev = j;
    } else {
        l->tail = j;
    }
    l->head = j;
}

static void
list_remove(JobList *l, Job *j)
{
    if (j->prev) {
        j->prev->next = j->next;
    } else {
        l->head = j->next;
    }
    if (j->next) {
        j->next->prev = j->prev;
    } else {
        l->tail = j->prev;
    }
    j->prev = j->next = NULL;
}

typedef struct Queue {
    JobList waiting;             /* in submission order */
    Job *running;
    SimTime busy_ps;
    SimTime started_ps;
    gboolean switching;          /* the next job pays a context save */
    double slow;                 /* compute stretch at the clock now: f_top / f */
} Queue;

/* hw_dev_estimate's answers by processor and op.  The estimate is a pure
 * function of the processor, the stack and the op, and a decode step
 * submits the shapes the step before did (every layer the same ones), so
 * most are found here.  Direct-mapped and bounded: an op whose entry holds
 * another one is estimated again and takes the entry. */
#define COST_MEMO 1024              /* entries: a power of two */

typedef struct CostMemo {
    gboolean used;
    uint32_t dev;
    HwOp op;
    HwCost cost;
} CostMemo;

struct HwRuntime {
    const HwSoc *soc;
    const HwStack *stack;
    SimKernel *k;
    HwMem *mem;
    Queue *queues;
    uint32_t n;
    GHashTable *npu_shapes;      /* prepared NPU token counts */
    uint64_t in_flight;          /* jobs submitted and not done */
    const HwDev *host;           /* runs the control plane (may be NULL) */
    GArray *control;             /* of HwSpan: host submission work */
    SimTime host_free_ps;        /* end of the host's last submission */
    uint64_t seq;
    Job *spare;                  /* ended jobs, re-used (no malloc per task),
                                  * a list through their next */
    CostMemo *memo;              /* COST_MEMO entries */
};

static Job *
job_new(HwRuntime *rt)
{
    Job *j = rt->spare;
    if (j) {
        rt->spare = j->next;
    } else {
        j = g_new(Job, 1);
    }
    *j = (Job) { .rt = rt };
    return j;
}

static void
job_free(Job *j)
{
    j->next = j->rt->spare;
    j->rt->spare = j;
}

HwRuntime *
hw_runtime_new(const HwSoc *soc, const HwStack *stack, SimKernel *k)
{
    HwRuntime *rt = g_new0(HwRuntime, 1);
    rt->soc = soc;
    rt->stack = stack;
    rt->k = k;
    rt->n = soc->devs->len;
    rt->queues = g_new0(Queue, rt->n);
    for (uint32_t i = 0; i < rt->n; i++) {
        rt->queues[i].slow = 1.0;            /* runs start warm, at the top point */
    }
    g_autofree double *caps = g_new(double, rt->n);
    for (uint32_t i = 0; i < rt->n; i++) {
        caps[i] = hw_dev_dram_cap_gbps(g_ptr_array_index(soc->devs, i), stack);
    }
    rt->mem = hw_mem_new(k, soc->mem.ceiling_gbps, caps, rt->n);
    rt->npu_shapes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    rt->host = g_ptr_array_index(soc->devs, soc->control_cpu);
    rt->control = g_array_new(FALSE, FALSE, sizeof(HwSpan));
    rt->memo = g_new0(CostMemo, COST_MEMO);
    return rt;
}

void
hw_runtime_free(HwRuntime *rt)
{
    if (rt == NULL) {
        return;
    }
    for (uint32_t i = 0; i < rt->n; i++) {
        for (Job *j = rt->queues[i].waiting.head, *next; j; j = next) {
            next = j->next;
            g_free(j);
        }
        g_free(rt->queues[i].running);
    }
    g_free(rt->queues);
    hw_mem_free(rt->mem);
    g_hash_table_destroy(rt->npu_shapes);
    g_array_unref(rt->control);
    for (Job *j = rt->spare, *next; j; j = next) {
        next = j->next;
        g_free(j);
    }
    g_free(rt->memo);
    g_free(rt);
}

void
hw_runtime_npu_prepared(HwRuntime *rt, uint64_t tokens)
{
    if (!g_hash_table_contains(rt->npu_shapes, &tokens)) {
        gint64 *key = g_new(gint64, 1);
        *key = (gint64) tokens;
        g_hash_table_add(rt->npu_shapes, key);
    }
}

HwMem *
hw_runtime_mem(HwRuntime *rt)
{
    return rt->mem;
}

const GArray *
hw_runtime_control_spans(const HwRuntime *rt, uint32_t *host)
{
    *host = rt->host ? rt->host->index : UINT32_MAX;
    return rt->control;
}

void
hw_runtime_control_spans_drop(HwRuntime *rt, guint n)
{
    g_array_remove_range(rt->control, 0, MIN(n, rt->control->len));
}

SimTime
hw_runtime_busy_ps(const HwRuntime *rt, uint32_t dev)
{
    return rt->queues[dev].busy_ps;
}

SimTime
hw_runtime_busy_now_ps(const HwRuntime *rt, uint32_t dev)
{
    const Queue *q = &rt->queues[dev];
    const Job *j = q->running;
    /* a job still in its launch has not started executing */
    return q->busy_ps + (j && j->start_ev == 0 ? sim_kernel_now(rt->k) - q->started_ps : 0);
}

/* @compute_ps of work at the top clock as time at @slow (exact at 1). */
static SimTime
stretch(SimTime compute_ps, double slow)
{
    return slow == 1.0 ? compute_ps : sim_time_from_ps((double) compute_ps * slow);
}

static void compute_done(SimKernel *k, void *opaque);

void
hw_runtime_set_clock(HwRuntime *rt, uint32_t dev, double slow)
{
    g_assert(dev < rt->n && slow >= 1.0);
    Queue *q = &rt->queues[dev];
    Job *j = q->running;
    if (j && j->start_ev == 0 && !j->compute_done && j->compute_ev && slow != q->slow) {
        /* the kernel's remaining cycles go at the new clock (its bytes
         * keep the demand they started with) */
        SimTime now = sim_kernel_now(rt->k);
        double left = (double) (j->compute_end_ps - now) * slow / q->slow;
        sim_kernel_cancel(rt->k, j->compute_ev);
        SimTime d = sim_time_from_ps(left);
        j->compute_end_ps = now + d;
        j->compute_ev = sim_kernel_schedule(rt->k, d, SIM_PRIO_DONE, compute_done, j);
    }
    q->slow = slow;
}

uint64_t
hw_runtime_pending(const HwRuntime *rt)
{
    return rt->in_flight;
}

static void start_next(HwRuntime *rt, uint32_t dev);

static void
job_finish(Job *j)
{
    HwRuntime *rt = j->rt;
    if (j->s.op.kind != HW_OP_SYNC) {
        Queue *q = &rt->queues[j->s.dev];
        q->busy_ps += sim_kernel_now(rt->k) - q->started_ps;
        q->running = NULL;
    }
    rt->in_flight--;
    HwOpFn done = j->s.on_done;
    void *opaque = j->s.opaque;
    uint32_t dev = j->s.dev;
    gboolean queued = j->s.op.kind != HW_OP_SYNC;
    job_free(j);
    done(opaque);
    if (queued) {
        start_next(rt, dev);
    }
}

static void
maybe_finish(Job *j)
{
    if (j->compute_done && j->bytes_done) {
        job_finish(j);
    }
}

static void
compute_done(SimKernel *k, void *opaque)
{
    Job *j = opaque;
    j->compute_done = TRUE;
    j->compute_ev = 0;
    maybe_finish(j);
}

static void
bytes_done(void *opaque)
{
    Job *j = opaque;
    j->bytes_done = TRUE;
    j->flow = NULL;
    maybe_finish(j);
}

/* After the launch overhead: the op starts. */
static void
job_start(SimKernel *k, void *opaque)
{
    Job *j = opaque;
    HwRuntime *rt = j->rt;
    j->start_ev = 0;
    if (j->s.op.kind != HW_OP_SYNC) {
        rt->queues[j->s.dev].started_ps = sim_kernel_now(k);
    }
    if (j->s.on_start && !j->started) {
        j->s.on_start(j->s.opaque);
    }
    if (j->stopped && j->s.on_resume) {
        j->s.on_resume(j->s.opaque, j->off_ps);
    }
    j->started = TRUE;
    j->stopped = FALSE;
    /* what is left of it: all of it, unless it was preempted */
    uint64_t bytes = j->cost.dram_bytes;
    /* compute follows the processor's clock (DVFS); a hand-off's host
     * costs are measured figures and do not */
    uint64_t compute = j->s.op.kind == HW_OP_SYNC
                       ? j->cost.compute_ps
                       : stretch(j->cost.compute_ps, rt->queues[j->s.dev].slow);
    j->bytes_done = bytes == 0;
    j->compute_done = FALSE;
    if (bytes > 0) {
        /* demand: the rate at which the op would eat its bytes if memory
         * were free (GB/s == bytes/ns) */
        double demand = compute > 0 ? (double) bytes / ((double) compute / 1000.0) : 0;
        j->flow = hw_mem_start(rt->mem, j->s.dev, bytes, demand, bytes_done, j);
    }
    /* the compute floor runs alongside: the op ends when both are done */
    j->compute_end_ps = sim_kernel_now(k) + compute;
    j->compute_ev = sim_kernel_schedule(k, compute, SIM_PRIO_DONE, compute_done, j);
}

static void
start_next(HwRuntime *rt, uint32_t dev)
{
    Queue *q = &rt->queues[dev];
    if (q->running || q->waiting.head == NULL) {
        return;
    }
    /* highest priority, then earliest enqueued, then first submitted */
    Job *j = q->waiting.head;
    for (Job *a = j->next; a; a = a->next) {
        if (a->s.priority != j->s.priority ? a->s.priority > j->s.priority
            : a->enqueued_ps != j->enqueued_ps ? a->enqueued_ps < j->enqueued_ps
            : a->seq < j->seq) {
            j = a;
        }
    }
    list_remove(&q->waiting, j);
    q->running = j;
    SimTime overhead = j->s.presubmitted ? 0 : j->cost.overhead_ps;
    const HwDev *d = g_ptr_array_index(rt->soc->devs, dev);
    /* a queue that ran empty restarts once work arrives: after the
     * kernel's submission, however late the host is */
    SimTime restart = j->s.after_drain ? hw_dev_restart_ps(d, rt->stack) : 0;
    /* a preemption: the GPU saves the preempted kernel's context before
     * the next one and restores it before it resumes */
    if (q->switching || j->preempted) {
        restart += hw_dev_preempt_ps(d);
        q->switching = j->preempted = FALSE;
    }
    SimTime now = sim_kernel_now(rt->k);
    /* a host that falls behind starves the device: nothing runs before
     * it has been submitted (released_ps) */
    overhead = MAX(now + overhead, j->released_ps) + restart - now;
    q->started_ps = now;
    j->start_ev = sim_kernel_schedule(rt->k, overhead, SIM_PRIO_NORMAL, job_start, j);
}

/* A higher-priority op arrived at a GPU that preempts: the running kernel
 * stops where it is (its remaining compute and bytes are kept) and waits
 * at the head of its priority; the next op pays the context save. */
static void
maybe_preempt(HwRuntime *rt, uint32_t dev, const Job *arrived)
{
    Queue *q = &rt->queues[dev];
    const HwDev *d = g_ptr_array_index(rt->soc->devs, dev);
    Job *r = q->running;
    if (r == NULL || hw_dev_preempt_ps(d) == 0 ||
        arrived->s.priority <= r->s.priority) {
        return;
    }
    SimTime now = sim_kernel_now(rt->k);
    if (r->start_ev) {
        /* still in its launch: it simply goes back to the queue */
        sim_kernel_cancel(rt->k, r->start_ev);
        r->start_ev = 0;
    } else {
        q->busy_ps += now - q->started_ps;
        r->cost.compute_ps = 0;
        if (!r->compute_done) {
            sim_kernel_cancel(rt->k, r->compute_ev);
            r->compute_ev = 0;
            /* back in cycles at the top clock: it resumes at whatever
             * clock is in force then */
            double slow = q->slow;
            r->cost.compute_ps = slow == 1.0 ? r->compute_end_ps - now
                                 : sim_time_from_ps((double) (r->compute_end_ps - now) / slow);
        }
        r->cost.dram_bytes = 0;
        if (r->flow) {
            r->cost.dram_bytes = hw_mem_stop(rt->mem, r->flow);
            r->flow = NULL;
        }
        r->preempted = TRUE;
        q->switching = TRUE;
        r->stopped = TRUE;              /* off the GPU from now */
        r->off_ps = now;
    }
    r->s.presubmitted = TRUE;          /* no new submission to resume */
    r->s.after_drain = FALSE;
    list_push_head(&q->waiting, r);
    q->running = NULL;
}

/* Field by field: an op's padding bytes are whatever its maker left. */
static gboolean
op_equal(const HwOp *a, const HwOp *b)
{
    return a->kind == b->kind && a->m == b->m && a->k == b->k && a->n == b->n &&
           a->a_dtype == b->a_dtype && a->b_dtype == b->b_dtype &&
           a->compute == b->compute && a->wfmt == b->wfmt &&
           a->weight_bytes == b->weight_bytes && a->flops == b->flops &&
           a->read_bytes == b->read_bytes && a->write_bytes == b->write_bytes &&
           a->busy_ps == b->busy_ps && a->serial_elems == b->serial_elems;
}

static inline uint64_t
mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

/* hw_dev_estimate of @op on @d, through the memo. */
static void
estimate(HwRuntime *rt, const HwDev *d, const HwOp *op, HwCost *cost)
{
    /* the fields that tell a step's ops apart (equality checks them all) */
    uint64_t h = mix(((uint64_t) d->index << 32) ^ ((uint64_t) op->kind << 8) ^ op->wfmt,
                     op->m);
    h = mix(h, op->k);
    h = mix(h, op->n);
    h = mix(h, op->read_bytes);
    CostMemo *e = &rt->memo[(h ^ (h >> 29)) & (COST_MEMO - 1)];
    if (e->used && e->dev == d->index && op_equal(&e->op, op)) {
        *cost = e->cost;
        return;
    }
    hw_dev_estimate(d, rt->stack, op, cost);
    *e = (CostMemo) { TRUE, d->index, *op, *cost };
}

gboolean
hw_runtime_submit(HwRuntime *rt, const HwSubmit *s, GError **error)
{
    g_assert(s->dev < rt->n);
    const HwDev *d = g_ptr_array_index(rt->soc->devs, s->dev);
    Job *j = job_new(rt);
    j->s = *s;

    if (s->op.kind == HW_OP_SYNC) {
        /* (submitted when the producer's slices ended) */
        SimTime now = sim_kernel_now(rt->k);
        /* a host still busy when the producer ended calls the finish on an
         * idle queue, which returns at once: no sleep, no wake-up */
        gboolean wakes = !(s->sync == HW_SYNC_DRIVER && rt->host && rt->host_free_ps > now);
        j->cost.compute_ps = hw_sync_cost_ps(rt->soc, s->sync, s->sync_bytes, wakes);
        SimTime delay = 0;
        if (s->sync == HW_SYNC_DRIVER && rt->host) {
            /* the finish call and the copy block the host thread: other
             * hand-offs and submissions wait for it (fast sync polls from
             * a thread of its own) */
            HwSpan span = { MAX(now, rt->host_free_ps), 0, s->opaque };
            span.b_ps = span.a_ps + j->cost.compute_ps;
            g_array_append_val(rt->control, span);
            rt->host_free_ps = span.b_ps;
            delay = span.a_ps - now;
        }
        rt->in_flight++;
        sim_kernel_schedule(rt->k, delay, SIM_PRIO_NORMAL, job_start, j);
        return TRUE;
    }
    if (d->cls->kind == HW_KIND_NPU && s->op.kind == HW_OP_MATMUL) {
        gint64 shape = (gint64) s->npu_tokens;
        if (!g_hash_table_contains(rt->npu_shapes, &shape)) {
            g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED,
                        "%s: no static graph prepared for a %" G_GUINT64_FORMAT
                        "-token matmul", d->name, (uint64_t) shape);
            job_free(j);
            return FALSE;
        }
    }
    if (s->op.kind == HW_OP_RENDER && d->cls->kind != HW_KIND_GPU) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED,
                    "%s: cannot run a render frame (GPU only)", d->name);
        job_free(j);
        return FALSE;
    }
    /* a cost beyond the horizon is the config's fault: refused here, with
     * the processor and the keys that made it, before anything happened */
    estimate(rt, d, &s->op, &j->cost);
    if (!hw_cost_check(d, &j->cost, error)) {
        job_free(j);
        return FALSE;
    }
    j->seq = rt->seq++;
    j->enqueued_ps = sim_kernel_now(rt->k);
    if (rt->host && d->cls->kind != HW_KIND_CPU && !s->foreign) {
        /* The host thread submits kernels one after another.  One enqueued
         * behind work of its own queue was known in advance: the host did
         * it as soon as it was free (possibly before now).  One released by
         * a hand-off is submitted now, or when the host gets free. */
        SimTime now = sim_kernel_now(rt->k);
        SimTime a = s->presubmitted ? rt->host_free_ps : MAX(now, rt->host_free_ps);
        HwSpan span = { a, a + hw_dev_submit_ps(rt->host, rt->stack), s->opaque };
        if (span.b_ps > span.a_ps) {
            g_array_append_val(rt->control, span);
        }
        rt->host_free_ps = span.b_ps;
        j->released_ps = span.b_ps;
        j->enqueued_ps = span.a_ps;
    }
    rt->in_flight++;
    list_push_tail(&rt->queues[s->dev].waiting, j);
    maybe_preempt(rt, s->dev, j);
    start_next(rt, s->dev);
    return TRUE;
}
