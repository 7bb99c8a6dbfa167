/*
 * exec.c - see exec.h.
 */
#include "sim/exec.h"
#include "hw/runtime.h"
#include "sim/cost.h"
#include "sim/kernel/kernel.h"
#include "sim/util/error.h"

#include <stdlib.h>

typedef struct Exec Exec;

typedef struct TaskRun {
    Exec *ex;
    uint32_t id;
} TaskRun;

struct Exec {
    const SimPlan *plan;
    const HwSoc *soc;
    SimKernel *k;
    HwRuntime *rt;
    const SimValuesOps *values;
    void *values_opaque;
    uint32_t n;
    uint32_t *remaining;         /* unfinished deps per task */
    uint32_t *first, *users;     /* CSR: tasks waiting on each task */
    uint32_t *held_by;           /* the driver sync that drained this
                                  * kernel's queue before it; UINT32_MAX */
    gboolean *started, *done;
    TaskRun *runs;
    SimTaskTime *times;
    GArray *bw;
    uint32_t n_done;
    GError *error;               /* first submission failure */
    SimRender render;            /* fps 0: none */
    uint32_t gpu;                /* the GPU rendering runs on */
    gboolean frame_in_flight;
    SimFrame frame;
    GArray *frames;              /* of SimFrame */
    GArray *preemptions;         /* of SimPreemption */
    uint32_t vsyncs;
};

void
sim_exec_result_clear(SimExecResult *r)
{
    g_clear_pointer(&r->times, g_free);
    g_clear_pointer(&r->procs, g_free);
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

static void
on_bw(void *opaque, SimTime when_ps, uint32_t initiator, double gbps)
{
    Exec *ex = opaque;
    SimBwSample s = { when_ps, initiator, gbps };
    g_array_append_val(ex->bw, s);
}

static void submit(Exec *ex, uint32_t id);

static void
task_start(void *opaque)
{
    TaskRun *r = opaque;
    Exec *ex = r->ex;
    ex->times[r->id].start_ps = sim_kernel_now(ex->k);
    ex->started[r->id] = TRUE;
    if (ex->values && ex->values->task_start) {
        ex->values->task_start(ex->values_opaque, r->id, sim_plan_task(ex->plan, r->id));
    }
}

static void
task_resume(void *opaque, SimTime off_ps)
{
    TaskRun *r = opaque;
    SimPreemption p = { r->id, off_ps, sim_kernel_now(r->ex->k) };
    g_array_append_val(r->ex->preemptions, p);
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
    const SimTask *t = sim_plan_task(ex->plan, r->id);
    ex->times[r->id].end_ps = sim_kernel_now(ex->k);
    ex->done[r->id] = TRUE;
    ex->n_done++;
    if (ex->values && ex->values->task_end) {
        ex->values->task_end(ex->values_opaque, r->id, t);
    }
    if (t->kind == SIM_TASK_PREPARE) {
        hw_runtime_npu_prepared(ex->rt, t->work.m);
    }
    /* users that became ready go in id order: deterministic queues */
    uint32_t cnt = ex->first[r->id + 1] - ex->first[r->id];
    g_autofree uint32_t *ready = g_new(uint32_t, MAX(1, cnt));
    uint32_t nr = 0;
    for (uint32_t e = ex->first[r->id]; e < ex->first[r->id + 1]; e++) {
        uint32_t u = ex->users[e];
        if (--ex->remaining[u] == 0) {
            ready[nr++] = u;
        }
    }
    qsort(ready, nr, sizeof(uint32_t), cmp_u32);
    for (uint32_t i = 0; i < nr; i++) {
        submit(ex, ready[i]);
    }
}

static void
submit(Exec *ex, uint32_t id)
{
    if (ex->error) {
        return;
    }
    const SimTask *t = sim_plan_task(ex->plan, id);
    HwSubmit s = {
        .dev = t->proc, .on_start = task_start, .on_done = task_done,
        .on_resume = task_resume, .opaque = &ex->runs[id],
    };
    if (t->kind == SIM_TASK_SYNC) {
        s.op.kind = HW_OP_SYNC;
        s.sync = t->sync == SIM_SYNC_DRIVER ? HW_SYNC_DRIVER : HW_SYNC_FAST;
        s.sync_from = t->sync_from;
        s.sync_to = t->sync_to;
    } else {
        sim_work_to_hw_op(&t->work, t->kind, &s.op);
        s.npu_tokens = t->slice.pad_tokens ? t->slice.pad_tokens
                                           : t->slice.tok1 - t->slice.tok0;
        /* a kernel waiting only on its own queue was enqueued ahead; one
         * waiting on another processor is submitted when that one hands
         * over (and after a blocking driver sync, into a drained queue) */
        s.presubmitted = t->n_deps > 0;
        if (ex->held_by[id] != UINT32_MAX) {
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
        g_prefix_error(&ex->error, "task %u (%s): ", id, t->name);
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
}

/* A vsync: submit a frame unless the last one is still in flight; stop
 * once the LLM has finished. */
static void
vsync(SimKernel *k, void *opaque)
{
    Exec *ex = opaque;
    if (ex->n_done == ex->n || ex->error) {
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
    for (uint32_t i = 0; i < ex->n && shown < 5; i++) {
        if (ex->done[i] || ex->started[i]) {
            continue;
        }
        const SimTask *t = sim_plan_task(ex->plan, i);
        for (uint32_t d = 0; d < t->n_deps && shown < 5; d++) {
            if (!ex->done[t->deps[d]]) {
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
 * @order, a topological order of the plan (so the new edges make no
 * cycle).  Appends (before, after) pairs to @edges and fills @held_by. */
static void
host_order_edges(const SimPlan *plan, const uint32_t *order, uint32_t n_procs,
                 GArray *edges, uint32_t *held_by)
{
    uint32_t n = sim_plan_len(plan);
    g_autofree uint32_t *last_sync = g_new(uint32_t, n_procs);
    g_autofree GArray **pending = g_new0(GArray *, n_procs);
    uint32_t prev_driver = UINT32_MAX;
    for (uint32_t p = 0; p < n_procs; p++) {
        last_sync[p] = UINT32_MAX;
        pending[p] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    }
    for (uint32_t o = 0; o < n; o++) {
        uint32_t i = order[o];
        const SimTask *t = sim_plan_task(plan, i);
        held_by[i] = UINT32_MAX;
        if (t->kind == SIM_TASK_KERNEL) {
            held_by[i] = last_sync[t->proc];
            if (held_by[i] != UINT32_MAX) {
                uint32_t e[2] = { held_by[i], i };
                g_array_append_vals(edges, e, 2);
            }
            g_array_append_val(pending[t->proc], i);
        } else if (t->kind == SIM_TASK_SYNC && t->sync == SIM_SYNC_DRIVER) {
            GArray *before = pending[t->sync_from];
            for (guint j = 0; j < before->len; j++) {
                uint32_t e[2] = { g_array_index(before, uint32_t, j), i };
                g_array_append_vals(edges, e, 2);
            }
            g_array_set_size(before, 0);
            last_sync[t->sync_from] = i;
            /* blocking calls return in the order the host made them */
            if (prev_driver != UINT32_MAX) {
                uint32_t e[2] = { prev_driver, i };
                g_array_append_vals(edges, e, 2);
            }
            prev_driver = i;
        }
    }
    for (uint32_t p = 0; p < n_procs; p++) {
        g_array_free(pending[p], TRUE);
    }
}

gboolean
sim_exec_run(const SimPlan *plan, const HwSoc *soc, const HwStack *stack,
             const SimRender *render,
             const SimValuesOps *values,
             void *values_opaque, SimExecResult *out, GError **error)
{
    uint32_t n = sim_plan_len(plan);
    if (!sim_plan_check(plan, soc->devs->len, error)) {
        return FALSE;
    }
    g_autofree uint32_t *order = sim_plan_topo_order(plan, error);
    if (order == NULL) {
        return FALSE;
    }
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, stack, k);
    Exec ex = {
        .plan = plan, .soc = soc, .k = k, .rt = rt, .values = values,
        .values_opaque = values_opaque, .n = n,
        .remaining = g_new0(uint32_t, MAX(1, n)), .first = g_new0(uint32_t, n + 1),
        .started = g_new0(gboolean, MAX(1, n)), .done = g_new0(gboolean, MAX(1, n)),
        .runs = g_new0(TaskRun, MAX(1, n)), .times = g_new0(SimTaskTime, MAX(1, n)),
        .held_by = g_new(uint32_t, MAX(1, n)),
        .bw = g_array_new(FALSE, FALSE, sizeof(SimBwSample)),
        .preemptions = g_array_new(FALSE, FALSE, sizeof(SimPreemption)),
    };
    /* every (dependency, user) pair: the plan's, then the host order's */
    g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++) {
        const SimTask *t = sim_plan_task(plan, i);
        ex.runs[i] = (TaskRun) { &ex, i };
        for (uint32_t d = 0; d < t->n_deps; d++) {
            uint32_t e[2] = { t->deps[d], i };
            g_array_append_vals(pairs, e, 2);
        }
    }
    host_order_edges(plan, order, soc->devs->len, pairs, ex.held_by);

    const uint32_t *pr = (const uint32_t *) pairs->data;
    uint32_t edges = pairs->len / 2;
    for (uint32_t e = 0; e < edges; e++) {
        ex.first[pr[2 * e] + 1]++;
        ex.remaining[pr[2 * e + 1]]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        ex.first[i + 1] += ex.first[i];
    }
    ex.users = g_new(uint32_t, MAX(1, edges));
    g_autofree uint32_t *fill = g_memdup2(ex.first, sizeof(uint32_t) * (n + 1));
    for (uint32_t e = 0; e < edges; e++) {
        ex.users[fill[pr[2 * e]]++] = pr[2 * e + 1];
    }
    for (guint i = 0; i < plan->npu_offline->len; i++) {
        hw_runtime_npu_prepared(rt, g_array_index(plan->npu_offline, uint32_t, i));
    }
    hw_mem_set_observer(hw_runtime_mem(rt), on_bw, &ex);
    sim_kernel_register(k, "executor", exec_pending, exec_dump, &ex);

    for (uint32_t i = 0; i < n; i++) {
        if (ex.remaining[i] == 0) {
            submit(&ex, i);
        }
    }
    if (render && render->fps > 0) {
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
    gboolean ok = ex.error == NULL;
    if (ok) {
        ok = sim_kernel_run_all(k, error);
    }
    if (ex.error) {
        g_propagate_error(error, g_steal_pointer(&ex.error));
        ok = FALSE;
    }
    if (ok) {
        *out = (SimExecResult) {
            .n_tasks = n, .times = g_steal_pointer(&ex.times), .bw = g_steal_pointer(&ex.bw),
            .n_procs = soc->devs->len, .events = sim_kernel_events_run(k),
            .frames = g_steal_pointer(&ex.frames), .vsyncs = ex.vsyncs,
            .preemptions = g_steal_pointer(&ex.preemptions),
            .frames_proc = render && render->fps > 0 ? ex.gpu : UINT32_MAX,
        };
        /* the LLM's end (a last frame may finish after it) */
        for (uint32_t i = 0; i < n; i++) {
            out->end_ps = MAX(out->end_ps, out->times[i].end_ps);
        }
        const GArray *spans = hw_runtime_control_spans(rt, &out->control_proc);
        out->control = g_array_sized_new(FALSE, FALSE, sizeof(HwSpan), spans->len);
        g_array_append_vals(out->control, spans->data, spans->len);
        out->procs = g_new0(SimProcStats, out->n_procs);
        for (uint32_t p = 0; p < out->n_procs; p++) {
            out->procs[p].busy_ps = hw_runtime_busy_ps(rt, p);
            out->procs[p].dram_bytes =
                (uint64_t) hw_mem_initiator_bytes(hw_runtime_mem(rt), p);
        }
    }
    g_free(ex.remaining);
    g_free(ex.held_by);
    g_free(ex.first);
    g_free(ex.users);
    g_free(ex.started);
    g_free(ex.done);
    g_free(ex.runs);
    g_free(ex.times);
    if (ex.bw) {
        g_array_unref(ex.bw);
    }
    if (ex.frames) {
        g_array_unref(ex.frames);
    }
    if (ex.preemptions) {
        g_array_unref(ex.preemptions);
    }
    return ok;
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
