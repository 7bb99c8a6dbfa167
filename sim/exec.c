/*
 * exec.c - see exec.h.
 *
 * Tasks come in phases (the whole plan as one, or a stream of them); each
 * phase's run state is a Chunk, dropped once its tasks have ended and no
 * later task can name them.  Every finished task, bandwidth change and
 * host span goes to the measurement (sim/measure.c) as it happens.
 */
#include "sim/exec.h"
#include "hw/runtime.h"
#include "sim/cost.h"
#include "sim/kernel/kernel.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"

#include <stdlib.h>

typedef struct Exec Exec;

/* One processor's DVFS governor (hw/dvfs.h), sampled every window. */
typedef struct Gov {
    Exec *ex;
    uint32_t proc;
    SimTime window_ps;
    SimTime busy0;               /* the runtime's busy count at the last sample */
} Gov;

typedef struct HostSpan {
    SimTime a, b;
} HostSpan;

/* The run state of one task. */
typedef struct Task {
    uint32_t remaining;          /* unfinished deps */
    uint32_t n_users, cap_users;
    uint32_t *users;             /* tasks waiting on this one */
    uint32_t few[2];             /* users' storage while they are few */
    gboolean held;               /* a driver sync drained its queue before it */
    gboolean started, done;
    SimTime start_ps, end_ps, off_ps;   /* off: preempted */
} Task;

typedef struct TaskRun {
    Exec *ex;
    uint32_t id;
    Task *task;
} TaskRun;

/* The tasks [id0, id0 + n) of one phase. */
typedef struct Chunk {
    uint32_t id0, n, n_done;
    uint32_t cap;                /* tasks and runs allocated */
    uint32_t min_dep;            /* the lowest id its tasks depend on */
    Task *tasks;
    TaskRun *runs;
} Chunk;

struct Exec {
    SimPlan *plan;
    const SimPlanSource *src;
    gboolean more;               /* the source has phases still to give */
    uint32_t ask_at;             /* ask for the next phase when this id is submitted */
    gboolean retain;             /* keep every task's times and the samples */
    const HwSoc *soc;
    SimKernel *k;
    HwRuntime *rt;
    const SimValuesOps *values;
    void *values_opaque;
    const SimExecObserver *obs;
    void *obs_opaque;
    GPtrArray *chunks;           /* of Chunk*, by id; ended ones dropped */
    Chunk *spare;                /* a dropped one, re-used by the next phase
                                  * (a phase's arrays are ~100 KB: malloc
                                  * gave them back to the system each time) */
    uint32_t n;                  /* tasks so far */
    uint32_t n_done;
    uint32_t n_prefill, n_prefill_done;
    gboolean prefill_known;
    guint n_offline;             /* NPU shapes told to the runtime */
    uint32_t forget_to;          /* the plan's tasks below have been dropped */
    uint32_t *ready;             /* task_done's scratch */
    uint32_t cap_ready;
    /* the host's program order across phases (see host_order) */
    uint32_t n_procs;
    uint32_t *last_sync;         /* per processor */
    gboolean *drained;           /* per processor: no kernel since its last driver sync */
    GArray **pending;            /* per processor */
    uint32_t prev_driver;
    SimMeasure *measure;
    GArray *started;             /* ids of started tasks, in start order
                                  * (ended ones at the front dropped) */
    guint started_head;
    uint32_t ends;               /* tasks ended since the last fold */
    GArray *bw;                  /* retain only */
    SimTime spans_b;             /* end of the last host span read */
    guint spans_read;            /* the runtime's spans read so far */
    GError *error;               /* first submission failure */
    SimRender render;            /* fps 0: none */
    uint32_t gpu;                /* the GPU rendering runs on */
    gboolean frame_in_flight;
    SimFrame frame;
    GArray *frames;              /* of SimFrame */
    GArray *preemptions;         /* of SimPreemption */
    uint32_t vsyncs;
    Gov *govs;                   /* per processor; window_ps 0: no governor */
    uint32_t *point;             /* per processor: its operating point now */
    uint32_t gov_host;           /* the host CPU if its governor samples, else UINT32_MAX */
    GArray *gov_spans;           /* of HostSpan: host work not yet wholly sampled */
};

void
sim_exec_result_clear(SimExecResult *r)
{
    g_clear_pointer(&r->times, g_free);
    g_clear_pointer(&r->procs, g_free);
    sim_measured_clear(&r->m);
    if (r->bw) {
        g_array_unref(r->bw);
        r->bw = NULL;
    }
    if (r->control) {
        g_array_unref(r->control);
        r->control = NULL;
    }
    if (r->frames) {
        g_array_unref(r->frames);
        r->frames = NULL;
    }
    if (r->preemptions) {
        g_array_unref(r->preemptions);
        r->preemptions = NULL;
    }
}

/* Its tasks' users lists go; the arrays stay for another phase. */
static void
chunk_clear(Chunk *c)
{
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->tasks[i].users != c->tasks[i].few) {
            g_free(c->tasks[i].users);
        }
    }
    c->n = 0;
}

static void
chunk_free(gpointer p)
{
    Chunk *c = p;
    if (c == NULL) {
        return;
    }
    chunk_clear(c);
    g_free(c->tasks);
    g_free(c->runs);
    g_free(c);
}

/* The phase of task @id, NULL if it has been dropped (ended).  Mostly the
 * last one or the one before: searched from the end. */
static inline Chunk *
chunk_of(const Exec *ex, uint32_t id)
{
    Chunk **cs = (Chunk **) ex->chunks->pdata;
    for (guint i = ex->chunks->len; i-- > 0;) {
        if (id >= cs[i]->id0) {
            return id - cs[i]->id0 < cs[i]->n ? cs[i] : NULL;
        }
    }
    return NULL;
}

/* The run state of task @id, NULL if its phase has been dropped (ended). */
static inline Task *
task_of(const Exec *ex, uint32_t id)
{
    Chunk *c = chunk_of(ex, id);
    return c ? &c->tasks[id - c->id0] : NULL;
}

static gboolean
llm_done(const Exec *ex)
{
    return !ex->more && ex->n_done == ex->n;
}

/* @after waits on @before (nothing if @before has ended). */
static void
add_edge(Exec *ex, uint32_t before, uint32_t after)
{
    Task *b = task_of(ex, before);
    if (b == NULL || b->done) {
        return;
    }
    if (b->n_users == b->cap_users) {
        b->cap_users = MAX(8, 2 * b->cap_users);
        if (b->users == b->few) {
            b->users = g_memdup2(b->few, sizeof(b->few));
        }
        b->users = g_renew(uint32_t, b->users, b->cap_users);
    }
    b->users[b->n_users++] = after;
    task_of(ex, after)->remaining++;
}

static void
on_bw(void *opaque, SimTime when_ps, uint32_t initiator, double gbps)
{
    Exec *ex = opaque;
    sim_measure_bw(ex->measure, when_ps, initiator, gbps);
    SimBwSample s = { when_ps, initiator, gbps };
    if (ex->retain) {
        g_array_append_val(ex->bw, s);
    }
    if (ex->obs && ex->obs->bw) {
        ex->obs->bw(ex->obs_opaque, &s);
    }
}

/* Hand the host spans recorded since the last call to the measurement. */
static void
read_spans(Exec *ex)
{
    uint32_t host;
    const GArray *spans = hw_runtime_control_spans(ex->rt, &host);
    if (spans->len == ex->spans_read) {
        return;                  /* nothing new (most task ends) */
    }
    for (guint i = ex->spans_read; i < spans->len; i++) {
        const HwSpan *c = &g_array_index(spans, HwSpan, i);
        sim_measure_span(ex->measure, host, c->a_ps, c->b_ps);
        ex->spans_b = MAX(ex->spans_b, c->b_ps);
        if (host == ex->gov_host) {
            HostSpan hs = { c->a_ps, c->b_ps };
            g_array_append_val(ex->gov_spans, hs);
        }
        if (ex->obs && ex->obs->span) {
            /* every span is a task's (frames are not submitted by the host) */
            const TaskRun *r = c->opaque;
            ex->obs->span(ex->obs_opaque, host, c->a_ps, c->b_ps, r ? r->id : UINT32_MAX,
                          r ? sim_plan_task(ex->plan, r->id) : NULL);
        }
    }
    ex->spans_read = spans->len;
    if (!ex->retain && spans->len >= 1024) {
        /* read ones go in bulk (each drop moves the array's tail) */
        hw_runtime_control_spans_drop(ex->rt, spans->len);
        ex->spans_read = 0;
    }
}

/* Fold into the measurement the busy intervals nothing still to come can
 * overlap: every task yet to start starts at now or later, a running one
 * has its start, and the host's next span starts after its last one. */
static void
fold(Exec *ex)
{
    read_spans(ex);
    SimTime mark = MIN(sim_kernel_now(ex->k), ex->spans_b);
    /* tasks start in time order: the first still running started first */
    while (ex->started_head < ex->started->len) {
        const Task *t = task_of(ex, g_array_index(ex->started, uint32_t, ex->started_head));
        if (t && !t->done) {
            mark = MIN(mark, t->start_ps);
            break;
        }
        ex->started_head++;
    }
    if (ex->started_head > 4096 && 2 * ex->started_head > ex->started->len) {
        g_array_remove_range(ex->started, 0, ex->started_head);
        ex->started_head = 0;
    }
    sim_measure_fold(ex->measure, mark);
    ex->ends = 0;
}

static void submit(Exec *ex, uint32_t id);
static gboolean add_phase(Exec *ex, uint32_t from, GError **error);

/* The next phase from the source, then phases no one can name any more
 * dropped (streamed runs). */
static void
ask_next(Exec *ex)
{
    uint32_t from = sim_plan_len(ex->plan);
    GError *err = NULL;
    if (!ex->src->next(ex->src->opaque, ex->plan, &ex->more, &err) ||
        !add_phase(ex, from, &err)) {
        ex->more = FALSE;
        if (ex->error == NULL) {
            ex->error = err;
        } else {
            g_clear_error(&err);
        }
        sim_kernel_stop(ex->k);
        return;
    }
    fold(ex);
    /* drop ended phases from the front, keeping the two before the one
     * just started (its tasks' deps, the host order's) */
    while (ex->chunks->len > 3) {
        Chunk *c = g_ptr_array_index(ex->chunks, 0);
        uint32_t end = c->id0 + c->n, named = UINT32_MAX;
        for (guint i = 1; i < ex->chunks->len; i++) {
            /* an ended phase's tasks read their deps no more */
            const Chunk *later = g_ptr_array_index(ex->chunks, i);
            if (later->n_done < later->n) {
                named = MIN(named, later->min_dep);
            }
        }
        if (c->n_done < c->n || named < end) {
            break;
        }
        g_ptr_array_steal_index(ex->chunks, 0);
        if (ex->spare == NULL || ex->spare->cap < c->cap) {
            chunk_free(ex->spare);
            ex->spare = c;
        } else {
            chunk_free(c);
        }
        ex->forget_to = end;
    }
    /* the plan forgets in bulk: each time moves the tasks kept (waiting
     * for four times as many to go moved fewer but ran slower: the
     * plan's array then outgrew the cache) */
    if (ex->forget_to - ex->plan->base >= sim_plan_len(ex->plan) - ex->forget_to) {
        sim_plan_forget(ex->plan, ex->forget_to);
    }
}

static void
task_start(void *opaque)
{
    TaskRun *r = opaque;
    Exec *ex = r->ex;
    r->task->start_ps = sim_kernel_now(ex->k);
    r->task->started = TRUE;
    g_array_append_val(ex->started, r->id);
    if (ex->obs && ex->obs->task_start) {
        ex->obs->task_start(ex->obs_opaque, r->id, sim_plan_task(ex->plan, r->id),
                            r->task->start_ps);
    }
    if (ex->values && ex->values->task_start) {
        ex->values->task_start(ex->values_opaque, r->id, sim_plan_task(ex->plan, r->id));
    }
}

static void
task_resume(void *opaque, SimTime off_ps)
{
    TaskRun *r = opaque;
    SimPreemption p = { r->id, off_ps, sim_kernel_now(r->ex->k),
                        sim_plan_task(r->ex->plan, r->id)->proc };
    r->task->off_ps += p.back_ps - p.off_ps;
    g_array_append_val(r->ex->preemptions, p);
    sim_measure_preempted(r->ex->measure, p.proc, p.off_ps, p.back_ps);
    if (r->ex->obs && r->ex->obs->preempted) {
        r->ex->obs->preempted(r->ex->obs_opaque, &p);
    }
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return x < y ? -1 : (x > y);
}

static void
task_done(void *opaque)
{
    TaskRun *r = opaque;
    Exec *ex = r->ex;
    Task *me = r->task;
    const SimTask *t = sim_plan_task(ex->plan, r->id);
    me->end_ps = sim_kernel_now(ex->k);
    me->done = TRUE;
    ex->n_done++;
    sim_measure_task(ex->measure, r->id, t, me->start_ps, me->end_ps, me->off_ps);
    read_spans(ex);
    if (ex->obs && ex->obs->task_end) {
        ex->obs->task_end(ex->obs_opaque, ex->plan, r->id, t, me->start_ps, me->end_ps);
    }
    if (++ex->ends >= 256) {
        fold(ex);                /* keeps the measurement's open intervals few */
    }
    if (t->phase == SIM_PHASE_PREFILL) {
        ex->n_prefill_done++;
    }
    chunk_of(ex, r->id)->n_done++;
    if (!ex->prefill_known && ex->n_prefill_done == ex->n_prefill &&
        (ex->chunks->len > 1 || !ex->more)) {
        ex->prefill_known = TRUE;
        sim_measure_prefill_done(ex->measure);
    }
    if (llm_done(ex)) {
        sim_measure_tasks_done(ex->measure);
    }
    if (ex->values && ex->values->task_end) {
        ex->values->task_end(ex->values_opaque, r->id, t);
    }
    if (t->kind == SIM_TASK_PREPARE) {
        hw_runtime_npu_prepared(ex->rt, t->work.m);
    }
    /* users that became ready go in id order: deterministic queues */
    if (me->n_users > ex->cap_ready) {
        ex->cap_ready = MAX(me->n_users, 2 * ex->cap_ready);
        ex->ready = g_renew(uint32_t, ex->ready, ex->cap_ready);
    }
    uint32_t nr = 0;
    for (uint32_t e = 0; e < me->n_users; e++) {
        uint32_t u = me->users[e];
        if (--task_of(ex, u)->remaining == 0) {
            ex->ready[nr++] = u;
        }
    }
    if (nr > 16) {
        qsort(ex->ready, nr, sizeof(uint32_t), cmp_u32);
    } else {
        for (uint32_t i = 1; i < nr; i++) {      /* a few: insertion sort */
            uint32_t v = ex->ready[i], j = i;
            for (; j > 0 && ex->ready[j - 1] > v; j--) {
                ex->ready[j] = ex->ready[j - 1];
            }
            ex->ready[j] = v;
        }
    }
    for (uint32_t i = 0; i < nr; i++) {
        submit(ex, ex->ready[i]);
    }
}

static void
submit(Exec *ex, uint32_t id)
{
    if (ex->error) {
        return;
    }
    if (ex->more && id >= ex->ask_at) {
        /* this phase starts: the next one must be there before any of
         * its tasks can end */
        ex->ask_at = UINT32_MAX;
        ask_next(ex);
        if (ex->error) {
            return;
        }
    }
    const SimTask *t = sim_plan_task(ex->plan, id);
    Chunk *c = chunk_of(ex, id);
    Task *me = &c->tasks[id - c->id0];
    HwSubmit s = {
        .dev = t->proc, .on_start = task_start, .on_done = task_done,
        .on_resume = task_resume, .opaque = &c->runs[id - c->id0],
    };
    if (t->kind == SIM_TASK_SYNC) {
        s.op.kind = HW_OP_SYNC;
        s.sync = t->sync == SIM_SYNC_DRIVER ? HW_SYNC_DRIVER : HW_SYNC_FAST;
        s.sync_from = t->sync_from;
        s.sync_to = t->sync_to;
        /* what it hands over: all its producer's slices wrote of the node
         * (its deps; a padded NPU slice's output is the padded tensor) */
        for (uint32_t d = 0; d < t->n_deps; d++) {
            s.sync_bytes += sim_plan_task(ex->plan, t->deps[d])->work.write_bytes;
        }
    } else {
        sim_work_to_hw_op(&t->work, t->kind, &s.op);
        s.npu_tokens = t->slice.pad_tokens ? t->slice.pad_tokens
                                           : t->slice.tok1 - t->slice.tok0;
        /* a kernel waiting only on its own queue was enqueued ahead; one
         * waiting on another processor is submitted when that one hands
         * over (and after a blocking driver sync, into a drained queue) */
        s.presubmitted = t->n_deps > 0;
        if (me->held) {
            /* the host enqueues it after a blocking finish returned */
            s.after_drain = TRUE;
            s.presubmitted = FALSE;
        }
        for (uint32_t d = 0; d < t->n_deps; d++) {
            const SimTask *dt = sim_plan_task(ex->plan, t->deps[d]);
            if (dt->kind == SIM_TASK_SYNC && dt->sync == SIM_SYNC_DRIVER) {
                s.after_drain = TRUE;
            }
            /* a new decode step needs the previous token back on the host */
            if (dt->proc != t->proc || dt->kind == SIM_TASK_SYNC ||
                dt->phase != t->phase || dt->step != t->step) {
                s.presubmitted = FALSE;
            }
        }
        if (ex->render.fps > 0 && t->proc == ex->gpu) {
            s.priority = ex->render.llm_priority;
        }
    }
    if (!hw_runtime_submit(ex->rt, &s, &ex->error)) {
        g_autofree char *name = hs_escape(t->name);     /* a recording's: input text */
        g_prefix_error(&ex->error, "task %u (%s): ", id, name);
        sim_kernel_stop(ex->k);
    }
}

/* ---- a game rendering alongside ---------------------------------------- */

static void
frame_start(void *opaque)
{
    Exec *ex = opaque;
    ex->frame.start_ps = sim_kernel_now(ex->k);
}

static void
frame_done(void *opaque)
{
    Exec *ex = opaque;
    ex->frame.end_ps = sim_kernel_now(ex->k);
    g_array_append_val(ex->frames, ex->frame);
    ex->frame_in_flight = FALSE;
    if (ex->obs && ex->obs->frame) {
        ex->obs->frame(ex->obs_opaque, ex->gpu, &ex->frame);
    }
}

/* A vsync: submit a frame unless the last one is still in flight; stop
 * once the LLM has finished. */
static void
vsync(SimKernel *k, void *opaque)
{
    Exec *ex = opaque;
    if (llm_done(ex) || ex->error) {
        return;
    }
    ex->vsyncs++;
    if (!ex->frame_in_flight) {
        HwSubmit s = {
            .dev = ex->gpu, .priority = HW_PRIO_NORMAL, .foreign = TRUE,
            .on_start = frame_start, .on_done = frame_done, .opaque = ex,
        };
        s.op.kind = HW_OP_RENDER;
        s.op.busy_ps = sim_time_from_us(ex->render.frame_ms * 1000.0);
        s.op.read_bytes = (uint64_t) (ex->render.frame_mb * 1024 * 1024);
        ex->frame = (SimFrame) { .vsync_ps = sim_kernel_now(k) };
        ex->frame_in_flight = TRUE;
        if (!hw_runtime_submit(ex->rt, &s, &ex->error)) {
            sim_kernel_stop(k);
            return;
        }
    }
    sim_kernel_schedule(k, sim_time_from_us(1e6 / ex->render.fps), SIM_PRIO_NORMAL, vsync, ex);
}

/* ---- DVFS governors ---------------------------------------------------- */

/* The host's work inside [t0, t1), forgetting what ends by t1. */
static SimTime
host_busy(Exec *ex, SimTime t0, SimTime t1)
{
    SimTime busy = 0;
    guint gone = 0;
    for (guint i = 0; i < ex->gov_spans->len; i++) {
        const HostSpan *h = &g_array_index(ex->gov_spans, HostSpan, i);
        SimTime lo = MAX(h->a, t0), hi = MIN(h->b, t1);
        busy += hi > lo ? hi - lo : 0;
        gone += h->b <= t1 && gone == i;
    }
    g_array_remove_range(ex->gov_spans, 0, gone);
    return busy;
}

/* A window ended: the processor's governor picks its next operating
 * point from how busy it was; the runtime's clock and the measurement's
 * energy per point follow.  Driven by simulated time only. */
static void
gov_tick(SimKernel *k, void *opaque)
{
    Gov *g = opaque;
    Exec *ex = g->ex;
    if (llm_done(ex) || ex->error) {
        return;
    }
    uint32_t p = g->proc;
    const HwDvfs *d = &ex->soc->dvfs[p];
    SimTime now = sim_kernel_now(k);
    SimTime busy_now = hw_runtime_busy_now_ps(ex->rt, p);
    SimTime busy = busy_now - g->busy0;
    g->busy0 = busy_now;
    if (p == ex->gov_host) {
        read_spans(ex);
        busy += host_busy(ex, now - g->window_ps, now);
    }
    double u = MIN(1.0, (double) busy / (double) g->window_ps);
    uint32_t next = hw_dvfs_next(d, ex->point[p], u);
    if (next != ex->point[p]) {
        ex->point[p] = next;
        hw_runtime_set_clock(ex->rt, p, hw_dvfs_slowdown(d, next));
        sim_measure_clock(ex->measure, p, now, next);
    }
    sim_kernel_schedule(k, g->window_ps, SIM_PRIO_LAST, gov_tick, g);
}

/* Every processor starts at its top point; those whose governor samples
 * (hw_soc_governor_samples: not pinned by the run's mode or the stack's
 * runtime) get their first window. */
static void
gov_start(Exec *ex, const HwStack *stack)
{
    const HwSoc *soc = ex->soc;
    ex->govs = g_new0(Gov, MAX(1, ex->n_procs));
    ex->point = g_new0(uint32_t, MAX(1, ex->n_procs));
    ex->gov_host = UINT32_MAX;
    ex->gov_spans = g_array_new(FALSE, FALSE, sizeof(HostSpan));
    for (uint32_t p = 0; p < ex->n_procs && p < soc->n_dvfs; p++) {
        const HwDvfs *d = &soc->dvfs[p];
        ex->point[p] = hw_dvfs_top(d);
        sim_measure_clock(ex->measure, p, 0, ex->point[p]);
        if (!hw_soc_governor_samples(soc, stack, p)) {
            continue;
        }
        Gov *g = &ex->govs[p];
        *g = (Gov) { ex, p, sim_time_from_us(d->window_ms * 1000.0), 0 };
        if (p == soc->control_cpu) {
            ex->gov_host = p;
        }
        sim_kernel_schedule(ex->k, g->window_ps, SIM_PRIO_LAST, gov_tick, g);
    }
}

static uint64_t
exec_pending(void *opaque)
{
    Exec *ex = opaque;
    return ex->n - ex->n_done;
}

static void
exec_dump(void *opaque, GString *out)
{
    Exec *ex = opaque;
    uint32_t shown = 0;
    for (uint32_t i = ex->plan->base; i < ex->n && shown < 5; i++) {
        const Task *me = task_of(ex, i);
        if (me == NULL || me->done || me->started) {
            continue;
        }
        const SimTask *t = sim_plan_task(ex->plan, i);
        for (uint32_t d = 0; d < t->n_deps && shown < 5; d++) {
            const Task *dep = task_of(ex, t->deps[d]);
            if (dep && !dep->done) {
                g_string_append_printf(out, "task %u %s waits on task %u %s\n", i,
                                       t->name, t->deps[d],
                                       sim_plan_task(ex->plan, t->deps[d])->name);
                shown++;
                break;
            }
        }
    }
}

/* A driver sync is a blocking finish on the producer's queue, made by the
 * host thread, which runs the plan in task order: it waits for every
 * kernel the host enqueued on that queue before it, and the host enqueues
 * nothing more there until it returns.  The plan says which mechanism a
 * sync uses, the executor what the mechanism implies — so a plan replayed
 * with another mechanism gets that mechanism's ordering.  The host also
 * makes its blocking calls one after another.  The host's program order is
 * @order, a topological order of the phase's @n tasks (phase after phase:
 * the order of the whole plan, as every task of a phase waits on the phase
 * before), so the new edges make no cycle; the state (each queue's last
 * driver sync and kernels since, the last blocking call) goes on from
 * phase to phase. */
static void
host_order(Exec *ex, const uint32_t *order, uint32_t n)
{
    for (uint32_t p = 0; p < ex->n_procs; p++) {
        /* kernels that have ended need no edge: forget them */
        GArray *before = ex->pending[p];
        guint kept = 0;
        for (guint j = 0; j < before->len; j++) {
            uint32_t id = g_array_index(before, uint32_t, j);
            const Task *bt = task_of(ex, id);
            if (bt && !bt->done) {
                g_array_index(before, uint32_t, kept++) = id;
            }
        }
        g_array_set_size(before, kept);
    }
    for (uint32_t o = 0; o < n; o++) {
        uint32_t i = order[o];
        const SimTask *t = sim_plan_task(ex->plan, i);
        if (t->kind == SIM_TASK_KERNEL) {
            /* enqueued after the finish returned; the first into a
             * drained queue, the next ones behind it */
            uint32_t held_by = ex->last_sync[t->proc];
            if (held_by != UINT32_MAX) {
                task_of(ex, i)->held = ex->drained[t->proc];
                ex->drained[t->proc] = FALSE;
                add_edge(ex, held_by, i);
            }
            g_array_append_val(ex->pending[t->proc], i);
        } else if (t->kind == SIM_TASK_SYNC && t->sync == SIM_SYNC_DRIVER) {
            GArray *before = ex->pending[t->sync_from];
            for (guint j = 0; j < before->len; j++) {
                add_edge(ex, g_array_index(before, uint32_t, j), i);
            }
            g_array_set_size(before, 0);
            ex->last_sync[t->sync_from] = i;
            ex->drained[t->sync_from] = TRUE;
            /* blocking calls return in the order the host made them */
            if (ex->prev_driver != UINT32_MAX) {
                add_edge(ex, ex->prev_driver, i);
            }
            ex->prev_driver = i;
        }
    }
}

/* Take the plan's tasks from @from on as a phase: check them, link them
 * to what they wait on, submit those that wait on nothing. */
static gboolean
add_phase(Exec *ex, uint32_t from, GError **error)
{
    uint32_t to = sim_plan_len(ex->plan);
    g_autofree uint32_t *order = NULL;
    if (ex->src && ex->src->order && from > ex->plan->base) {
        /* a copy of a phase checked before (a decode step from its template) */
        order = g_new(uint32_t, MAX(1, to - from));
        if (!ex->src->order(ex->src->opaque, from, to - from, order)) {
            g_clear_pointer(&order, g_free);
        }
    }
    if (order == NULL &&
        !(order = sim_plan_checked_order_from(ex->plan, from, ex->n_procs, error))) {
        return FALSE;
    }
    /* shapes prepared offline (no cost): known before any task needs one */
    for (; ex->n_offline < ex->plan->npu_offline->len; ex->n_offline++) {
        hw_runtime_npu_prepared(ex->rt, g_array_index(ex->plan->npu_offline, uint32_t,
                                                      ex->n_offline));
    }
    Chunk *c = g_steal_pointer(&ex->spare);
    if (c == NULL) {
        c = g_new0(Chunk, 1);
    }
    chunk_clear(c);
    if (c->cap < MAX(1, to - from)) {
        g_free(c->tasks);
        g_free(c->runs);
        c->cap = MAX(1, to - from);
        c->tasks = g_new(Task, c->cap);
        c->runs = g_new(TaskRun, c->cap);
    }
    c->id0 = from;
    c->n = to - from;
    c->n_done = 0;
    c->min_dep = from;
    for (uint32_t i = 0; i < c->n; i++) {
        c->tasks[i] = (Task) { .cap_users = G_N_ELEMENTS(c->tasks[i].few) };
        c->tasks[i].users = c->tasks[i].few;
        c->runs[i] = (TaskRun) { ex, from + i, &c->tasks[i] };
    }
    g_ptr_array_add(ex->chunks, c);
    ex->n = to;
    for (uint32_t i = from; i < to; i++) {
        const SimTask *t = sim_plan_task(ex->plan, i);
        ex->n_prefill += t->phase == SIM_PHASE_PREFILL;
        for (uint32_t d = 0; d < t->n_deps; d++) {
            c->min_dep = MIN(c->min_dep, t->deps[d]);
            add_edge(ex, t->deps[d], i);
        }
    }
    host_order(ex, order, c->n);
    ex->ask_at = from;
    for (uint32_t i = from; i < to && !ex->error; i++) {
        if (c->tasks[i - from].remaining == 0) {
            submit(ex, i);
        }
    }
    return TRUE;
}

gboolean
sim_exec_run_full(SimPlan *plan, const SimPlanSource *src, const HwSoc *soc,
                  const HwStack *stack, const SimRender *render,
                  const SimValuesOps *values, void *values_opaque,
                  const SimExecObserver *obs, void *obs_opaque,
                  SimExecResult *out, GError **error)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, stack, k);
    Exec ex = {
        .plan = plan, .src = src, .more = src != NULL, .retain = src == NULL,
        .soc = soc, .k = k, .rt = rt, .values = values, .values_opaque = values_opaque,
        .obs = obs, .obs_opaque = obs_opaque,
        .chunks = g_ptr_array_new_with_free_func(chunk_free),
        .n_procs = soc->devs->len, .prev_driver = UINT32_MAX,
        .last_sync = g_new(uint32_t, MAX(1, soc->devs->len)),
        .drained = g_new0(gboolean, MAX(1, soc->devs->len)),
        .pending = g_new0(GArray *, MAX(1, soc->devs->len)),
        .measure = sim_measure_new(soc->devs->len),
        .started = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
        .bw = g_array_new(FALSE, FALSE, sizeof(SimBwSample)),
        .preemptions = g_array_new(FALSE, FALSE, sizeof(SimPreemption)),
    };
    for (uint32_t p = 0; p < ex.n_procs; p++) {
        ex.last_sync[p] = UINT32_MAX;
        ex.pending[p] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    }
    hw_mem_set_observer(hw_runtime_mem(rt), on_bw, &ex);
    sim_kernel_register(k, "executor", exec_pending, exec_dump, &ex);
    gov_start(&ex, stack);

    gboolean ok = TRUE;
    if (src) {
        uint32_t from = sim_plan_len(plan);
        ok = src->next(src->opaque, plan, &ex.more, error) && add_phase(&ex, from, error);
    } else {
        ok = add_phase(&ex, plan->base, error);
    }
    if (ok && render && render->fps > 0) {
        const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
        if (gpu == NULL) {
            if (ex.error == NULL) {
                g_set_error(&ex.error, HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED,
                            "rendering needs a GPU; SoC %s has none", soc->name);
            }
        } else {
            ex.render = *render;
            ex.gpu = gpu->index;
            ex.frames = g_array_new(FALSE, FALSE, sizeof(SimFrame));
            sim_kernel_schedule(k, 0, SIM_PRIO_NORMAL, vsync, &ex);
        }
    }
    ok = ok && ex.error == NULL;
    if (ok) {
        ok = sim_kernel_run_all(k, error);
    }
    if (ex.error) {
        g_clear_error(error);
        g_propagate_error(error, g_steal_pointer(&ex.error));
        ok = FALSE;
    }
    if (ok) {
        read_spans(&ex);
        *out = (SimExecResult) {
            .n_tasks = ex.n, .n_procs = soc->devs->len, .events = sim_kernel_events_run(k),
            .frames = g_steal_pointer(&ex.frames), .vsyncs = ex.vsyncs,
            .preemptions = g_steal_pointer(&ex.preemptions),
            .frames_proc = render && render->fps > 0 ? ex.gpu : UINT32_MAX,
        };
        sim_measure_finish(ex.measure, &out->m);
        /* the LLM's end (a last frame may finish after it) */
        out->end_ps = MAX(out->m.prefill_end_ps, out->m.decode_end_ps);
        const GArray *spans = hw_runtime_control_spans(rt, &out->control_proc);
        if (ex.retain) {
            out->bw = g_steal_pointer(&ex.bw);
            out->times = g_new0(SimTaskTime, MAX(1, ex.n));
            for (uint32_t i = 0; i < ex.n; i++) {
                const Task *tt = task_of(&ex, i);
                out->times[i] = (SimTaskTime) { tt->start_ps, tt->end_ps };
            }
            out->control = g_array_sized_new(FALSE, FALSE, sizeof(HwSpan), spans->len);
            g_array_append_vals(out->control, spans->data, spans->len);
            for (guint i = 0; i < spans->len; i++) {
                /* the run state goes: the task's id + 1 instead */
                HwSpan *c = &g_array_index(out->control, HwSpan, i);
                const TaskRun *r = c->opaque;
                c->opaque = r ? GUINT_TO_POINTER(r->id + 1) : NULL;
            }
        }
        out->procs = g_new0(SimProcStats, out->n_procs);
        for (uint32_t p = 0; p < out->n_procs; p++) {
            out->procs[p].busy_ps = hw_runtime_busy_ps(rt, p);
            out->procs[p].dram_bytes =
                (uint64_t) hw_mem_initiator_bytes(hw_runtime_mem(rt), p);
        }
    }
    for (uint32_t p = 0; p < ex.n_procs; p++) {
        g_array_unref(ex.pending[p]);
    }
    g_free(ex.pending);
    g_free(ex.last_sync);
    g_free(ex.drained);
    g_free(ex.ready);
    g_ptr_array_unref(ex.chunks);
    chunk_free(ex.spare);
    sim_measure_free(ex.measure);
    g_array_unref(ex.started);
    if (ex.bw) {
        g_array_unref(ex.bw);
    }
    if (ex.frames) {
        g_array_unref(ex.frames);
    }
    if (ex.preemptions) {
        g_array_unref(ex.preemptions);
    }
    g_free(ex.govs);
    g_free(ex.point);
    g_array_unref(ex.gov_spans);
    return ok;
}

gboolean
sim_exec_run(const SimPlan *plan, const HwSoc *soc, const HwStack *stack,
             const SimRender *render, const SimValuesOps *values, void *values_opaque,
             SimExecResult *out, GError **error)
{
    /* the whole plan is one phase, never added to nor forgotten */
    return sim_exec_run_full((SimPlan *) plan, NULL, soc, stack, render, values,
                             values_opaque, NULL, NULL, out, error);
}

gboolean
sim_exec_run_stream(SimPlan *plan, const SimPlanSource *src, const HwSoc *soc,
                    const HwStack *stack, const SimRender *render, SimExecResult *out,
                    GError **error)
{
    return sim_exec_run_full(plan, src, soc, stack, render, NULL, NULL, NULL, NULL, out, error);
}

double
sim_exec_dram_gbps(const SimExecResult *r, SimTime t0_ps, SimTime t1_ps)
{
    /* integrate the piecewise-constant per-initiator rates over [t0, t1) */
    if (t1_ps <= t0_ps) {
        return 0;
    }
    g_autofree double *rate = g_new0(double, r->n_procs);
    double bytes = 0;
    SimTime prev = 0;
    for (guint i = 0; i <= r->bw->len; i++) {
        SimTime when = i < r->bw->len ? g_array_index(r->bw, SimBwSample, i).when_ps
                                      : t1_ps;
        SimTime a = MAX(prev, t0_ps), b = MIN(when, t1_ps);
        if (b > a) {
            double total = 0;
            for (uint32_t p = 0; p < r->n_procs; p++) {
                total += rate[p];
            }
            bytes += total * (double) (b - a) / 1000.0;    /* GB/s x ns */
        }
        if (i < r->bw->len) {
            const SimBwSample *s = &g_array_index(r->bw, SimBwSample, i);
            rate[s->initiator] = s->gbps;
            prev = when;
        }
    }
    return bytes / ((double) (t1_ps - t0_ps) / 1000.0);
}
