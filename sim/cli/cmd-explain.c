/*
 * cmd-explain.c - `hetero-sim explain`: why a kernel took what it took, in
 * words and numbers, for a class or a researcher checking the model.
 *
 *   explain --task L0.ffn_down [run options]   the cost model's reasoning
 *                                              for every slice of that
 *                                              kernel, then what happened
 *                                              to it in the run
 *   explain --task 24                          the same for task id 24
 *   explain --steps [run options]              every event of the run in
 *                                              time order (a tiny run)
 *
 * It plans and executes the request as `run` does, then reads the plan,
 * the task times and the DRAM samples, and asks each processor's model
 * (hw_dev_estimate, hw_dev_explain: hw/ says why, in its own terms) for
 * its breakdown.
 */
#include "hw/soc.h"
#include "hw/stack.h"
#include "sim/cli/run-opts.h"
#include "sim/cost.h"
#include "sim/util/error.h"
#include "sim/util/nearest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double
ms(SimTime t)
{
    return (double) t / 1e9;
}

static double
us(uint64_t ps)
{
    return (double) ps / 1e6;
}

/* "12.0 KiB", "3.50 MiB" */
static char *
bytes_text(double b)
{
    return b >= 1024.0 * 1024 ? g_strdup_printf("%.2f MiB", b / (1024.0 * 1024))
           : b >= 1024 ? g_strdup_printf("%.1f KiB", b / 1024)
                       : g_strdup_printf("%.0f B", b);
}

/* "1.44 MFLOP", "16.9 GFLOP" */
static char *
flops_text(double f)
{
    return f >= 1e9 ? g_strdup_printf("%.3g GFLOP", f / 1e9)
           : f >= 1e6 ? g_strdup_printf("%.3g MFLOP", f / 1e6)
                      : g_strdup_printf("%.3g kFLOP", f / 1e3);
}

static const HwDev *
dev_of(const HwSoc *soc, uint32_t proc)
{
    return g_ptr_array_index(soc->devs, proc);
}

/* Average DRAM rate of each initiator over [a, b] from the samples. */
static void
dram_over(const SimExecResult *x, uint32_t n_procs, SimTime a, SimTime b, double *avg)
{
    g_autofree double *cur = g_new0(double, n_procs);
    g_autofree SimTime *since = g_new0(SimTime, n_procs);
    memset(avg, 0, sizeof(double) * n_procs);
    if (b <= a) {
        return;
    }
    for (uint32_t p = 0; p < n_procs; p++) {
        since[p] = a;
    }
    for (guint i = 0; i < x->bw->len; i++) {
        const SimBwSample *s = &g_array_index(x->bw, SimBwSample, i);
        if (s->initiator >= n_procs) {
            continue;
        }
        if (s->when_ps > b) {
            break;
        }
        uint32_t p = s->initiator;
        if (s->when_ps > a) {
            avg[p] += cur[p] * (double) (s->when_ps - since[p]);
            since[p] = s->when_ps;
        }
        cur[p] = s->gbps;
    }
    for (uint32_t p = 0; p < n_procs; p++) {
        avg[p] += cur[p] * (double) (b - since[p]);
        avg[p] /= (double) (b - a);
    }
}

/* What the task waited for: its last dependency, the processor's queue. */
static void
explain_wait(const HwSoc *soc, const SimPlan *plan, const SimExecResult *x, uint32_t id)
{
    const SimTask *t = sim_plan_task(plan, id);
    SimTime ready = 0;
    uint32_t last = UINT32_MAX;
    for (uint32_t d = 0; d < t->n_deps; d++) {
        if (x->times[t->deps[d]].end_ps >= ready) {
            ready = x->times[t->deps[d]].end_ps;
            last = t->deps[d];
        }
    }
    if (last == UINT32_MAX) {
        printf("    waited for: nothing (no dependencies)\n");
    } else {
        const SimTask *lt = sim_plan_task(plan, last);
        printf("    waited for: task %u (%s on %s), the last of its %u dependencies, to end "
               "at %.4f ms\n", last, lt->name, dev_of(soc, lt->proc)->name, t->n_deps,
               ms(ready));
    }
    /* the task before it on its processor: a queue it stood in */
    uint32_t prev = UINT32_MAX;
    SimTime prev_end = 0;
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *o = sim_plan_task(plan, i);
        if (i != id && o->proc == t->proc && x->times[i].end_ps <= x->times[id].start_ps &&
            x->times[i].end_ps >= prev_end && x->times[i].end_ps > ready) {
            prev = i;
            prev_end = x->times[i].end_ps;
        }
    }
    if (prev != UINT32_MAX) {
        printf("    then its processor's queue: task %u (%s) held %s until %.4f ms\n", prev,
               sim_plan_task(plan, prev)->name, dev_of(soc, t->proc)->name, ms(prev_end));
    }
    SimTime from = MAX(ready, prev_end);
    if (x->times[id].start_ps > from) {
        printf("    then %.2f us of launch and submission (the host submits every "
               "accelerator kernel; a queue that ran empty restarts)\n",
               us(x->times[id].start_ps - from));
    }
}

static void
explain_task(const HwSoc *soc, const HwStack *stack, const SimPlan *plan,
             const SimExecResult *x, uint32_t id)
{
    const SimTask *t = sim_plan_task(plan, id);
    const HwDev *dev = dev_of(soc, t->proc);
    SimTime dur = x->times[id].end_ps - x->times[id].start_ps;
    g_autofree char *step = t->phase == SIM_PHASE_DECODE ? g_strdup_printf(" step %u", t->step)
                                                         : g_strdup("");
    printf("task %u: %s, %s%s, on %s (%s)\n", id, t->name, sim_phase_name[t->phase], step,
           dev->name, dev->cls->model);
    if (t->why) {
        printf("  placed: %s\n", t->why);
    }
    if (t->kind == SIM_TASK_SYNC) {
        printf("  a %s hand-off %s -> %s, run by the control CPU\n", sim_sync_name[t->sync],
               dev_of(soc, t->sync_from)->name, dev_of(soc, t->sync_to)->name);
    } else {
        HwOp op;
        HwCost c;
        sim_work_to_hw_op(&t->work, t->kind, &op);
        hw_dev_estimate(dev, stack, &op, &c);
        g_autofree char *rd = bytes_text((double) t->work.read_bytes);
        g_autofree char *wr = bytes_text((double) t->work.write_bytes);
        g_autofree char *fl = flops_text((double) t->work.flops);
        printf("  work: %s [%" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT "] x [%" G_GUINT64_FORMAT
               " x %" G_GUINT64_FORMAT "]%s, %s; %s, reads %s, writes %s\n",
               hw_op_name[op.kind], op.m, op.k, op.k, op.n,
               t->work.weight_lhs ? " as W . X^T (weights on the left, the small operand "
                                    "stationary)" : "",
               mdl_precision_name[t->work.prec], fl, rd, wr);
        printf("  the cost model, alone on %s (stack %s):\n", dev->name, stack->name);
        g_autoptr(GString) why = g_string_new(NULL);
        hw_dev_explain(dev, stack, &op, &c, why);
        fputs(why->str, stdout);
        /* where the stack's figures for this processor are an assumption */
        g_autoptr(GString) caveat = g_string_new(NULL);
        hw_dev_caveat(dev, stack, caveat);
        if (caveat->len) {
            printf("    caveat: %s\n", caveat->str);
        }
    }
    printf("  in this run: %.4f -> %.4f ms, %.2f us", ms(x->times[id].start_ps),
           ms(x->times[id].end_ps), us(dur));
    if (t->kind != SIM_TASK_SYNC) {
        /* the launch is paid before the start; the rest may stretch */
        HwOp op;
        HwCost c;
        sim_work_to_hw_op(&t->work, t->kind, &op);
        hw_dev_estimate(dev, stack, &op, &c);
        uint64_t body = c.alone_ps - c.overhead_ps;
        if (dur > body + body / 100) {
            printf(" (%.0f %% longer than its %.2f us alone: a smaller DRAM share than its "
                   "cap, below)", 100.0 * ((double) dur / (double) body - 1), us(body));
        } else {
            printf(" (as alone: %.2f us without the launch)", us(body));
        }
    }
    printf("\n");
    explain_wait(soc, plan, x, id);
    if (t->kind != SIM_TASK_SYNC && dur > 0) {
        uint32_t np = soc->devs->len;
        g_autofree double *avg = g_new0(double, np);
        dram_over(x, np, x->times[id].start_ps, x->times[id].end_ps, avg);
        double total = 0;
        g_autoptr(GString) others = g_string_new(NULL);
        for (uint32_t p = 0; p < np; p++) {
            total += avg[p];
            if (p != t->proc && avg[p] > 1e-6) {
                g_string_append_printf(others, "%s%s %.2f", others->len ? ", " : "",
                                       dev_of(soc, p)->name, avg[p]);
            }
        }
        printf("    DRAM: %s drew %.2f GB/s on average (its cap %g)%s%s%s; all together "
               "%.2f of the %g GB/s ceiling\n", dev->name, avg[t->proc],
               dev->dram_cap_gbps, others->len ? ", while " : "", others->str,
               others->len ? " GB/s drew too" : ", alone on the bus", total,
               soc->mem.ceiling_gbps);
        /* why that share: the bus arbitrates max-min fair (hw/memory.h) */
        if (avg[t->proc] >= 0.98 * dev->dram_cap_gbps) {
            printf("    why: it ran at its own cap, so it was memory-bound and the bus "
                   "had room for it\n");
        } else if (total >= 0.98 * soc->mem.ceiling_gbps) {
            printf("    why: the bus was full; the ceiling is shared max-min fair (each "
                   "processor gets what it asks or an equal share of the rest, whichever "
                   "is less), so it got less than its cap and took longer\n");
        } else {
            printf("    why: it asked no more: its bytes spread over its compute time "
                   "(compute-bound), and the bus had room\n");
        }
    }
}

/*
 * Why task @id started when it did, in a few words: its last input ending
 * then; else what held it after that input was ready: its processor busy
 * with another task (and then the kernel's launch, @stack's), the host
 * blocked in a driver sync (the control CPU
 * waits out a driver round trip before it submits more), the host's
 * submission of it; the dependency list alone named an input that ended
 * long before.  (transfer full)
 */
static char *
start_reason(const HwSoc *soc, const HwStack *stack, const SimPlan *plan,
             const SimExecResult *x, uint32_t id)
{
    const SimTask *t = sim_plan_task(plan, id);
    const SimTime start = x->times[id].start_ps;
    SimTime ready = 0;
    uint32_t last = UINT32_MAX;
    for (uint32_t d = 0; d < t->n_deps; d++) {
        if (last == UINT32_MAX || x->times[t->deps[d]].end_ps >= ready) {
            ready = x->times[t->deps[d]].end_ps;
            last = t->deps[d];
        }
    }
    /* within a nanosecond of its input: nothing else held it */
    if (start <= ready + 1000) {
        return last == UINT32_MAX ? g_strdup("no inputs")
               : g_strdup_printf("its input #%u %s ended", last, sim_plan_task(plan, last)->name);
    }
    const double waited_ms = ms(start - ready);
    g_autofree char *input = last == UINT32_MAX ? g_strdup("no inputs")
                             : g_strdup_printf("input #%u ready at %.4f", last, ms(ready));
    /* the latest task on the same processor that ended after the input
     * was ready and by this start: the processor was busy with it */
    uint32_t busy = UINT32_MAX, drv = UINT32_MAX;
    SimTime busy_end = 0, drv_end = 0;
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *o = sim_plan_task(plan, i);
        SimTime e = x->times[i].end_ps;
        if (i == id || e <= ready || e > start) {
            continue;
        }
        if (o->kind != SIM_TASK_SYNC && t->kind != SIM_TASK_SYNC && o->proc == t->proc &&
            e >= busy_end) {
            busy = i;
            busy_end = e;
        }
        if (o->kind == SIM_TASK_SYNC && o->sync == SIM_SYNC_DRIVER && e >= drv_end) {
            drv = i;
            drv_end = e;
        }
    }
    /* the launch a kernel pays before its start (an NPU graph execute:
     * the stack's npu.launch_us) follows the task it queued behind */
    SimTime launch = 0;
    if (t->kind != SIM_TASK_SYNC) {
        HwOp op;
        HwCost c;
        sim_work_to_hw_op(&t->work, t->kind, &op);
        hw_dev_estimate(dev_of(soc, t->proc), stack, &op, &c);
        launch = c.overhead_ps;
    }
    if (busy != UINT32_MAX && start <= busy_end + 1000) {
        return g_strdup_printf("waited %.4f ms: %s busy with #%u %s until %.4f; %s", waited_ms,
                               dev_of(soc, t->proc)->name, busy,
                               sim_plan_task(plan, busy)->name, ms(busy_end), input);
    }
    if (busy != UINT32_MAX && start <= busy_end + launch + 1000) {
        return g_strdup_printf("waited %.4f ms: %s busy with #%u %s until %.4f, then its "
                               "%.4f ms launch; %s", waited_ms, dev_of(soc, t->proc)->name,
                               busy, sim_plan_task(plan, busy)->name, ms(busy_end),
                               ms(start - busy_end), input);
    }
    if (drv != UINT32_MAX) {
        const char *host = x->control_proc < soc->devs->len
                           ? dev_of(soc, x->control_proc)->name : "the host";
        return g_strdup_printf("waited %.4f ms: the host (%s) blocked in driver sync #%u "
                               "until %.4f; %s", waited_ms, host, drv, ms(drv_end), input);
    }
    for (guint i = 0; x->control && i < x->control->len; i++) {
        const HwSpan *c = &g_array_index(x->control, HwSpan, i);
        if (GPOINTER_TO_UINT(c->opaque) == id + 1 && c->b_ps > ready) {
            const char *host = x->control_proc < soc->devs->len
                               ? dev_of(soc, x->control_proc)->name : "the host";
            return g_strdup_printf("waited %.4f ms: the host (%s) submitting it from %.4f "
                                   "until %.4f; %s", waited_ms, host, ms(c->a_ps), ms(c->b_ps),
                                   input);
        }
    }
    return g_strdup_printf("waited %.4f ms after its %s (the processor's queue)", waited_ms,
                           input);
}

/* Every task start and end, and every change of DRAM rates, in time order. */
static void
print_steps(const HwSoc *soc, const HwStack *stack, const SimPlan *plan, const SimExecResult *x)
{
    typedef struct Ev {
        SimTime t;
        int what;                /* 0 end, 1 start (ends first at a tie) */
        uint32_t id;
    } Ev;
    uint32_t n = sim_plan_len(plan);
    g_autofree Ev *ev = g_new(Ev, 2 * (size_t) n);
    for (uint32_t i = 0; i < n; i++) {
        ev[2 * i] = (Ev) { x->times[i].start_ps, 1, i };
        ev[2 * i + 1] = (Ev) { x->times[i].end_ps, 0, i };
    }
    /* stable by (time, end before start, id): insertion sort keeps it simple */
    for (uint32_t i = 1; i < 2 * n; i++) {
        Ev e = ev[i];
        uint32_t j = i;
        while (j > 0 && (ev[j - 1].t > e.t || (ev[j - 1].t == e.t &&
               (ev[j - 1].what > e.what || (ev[j - 1].what == e.what && ev[j - 1].id > e.id))))) {
            ev[j] = ev[j - 1];
            j--;
        }
        ev[j] = e;
    }
    uint32_t np = soc->devs->len;
    g_autofree double *rate = g_new0(double, np);
    guint b = 0;
    printf("%10s  %-5s %-8s %s\n", "time (ms)", "event", "on", "task / DRAM GB/s by processor");
    for (uint32_t i = 0; i < 2 * n; i++) {
        const SimTask *t = sim_plan_task(plan, ev[i].id);
        printf("%10.4f  %-5s %-8s #%u %s", ms(ev[i].t), ev[i].what ? "start" : "end",
               dev_of(soc, t->proc)->name, ev[i].id, t->name);
        if (ev[i].what) {
            g_autofree char *why = start_reason(soc, stack, plan, x, ev[i].id);
            printf("  (%s)", why);
        } else if (t->kind != SIM_TASK_SYNC && t->proc < np) {
            /* a kernel that got less DRAM than it would alone: its share */
            double *avg = g_newa(double, np);
            SimTime a = x->times[ev[i].id].start_ps;
            dram_over(x, np, a, ev[i].t, avg);
            double total = 0;
            for (uint32_t p = 0; p < np; p++) {
                total += avg[p];
            }
            if (ev[i].t > a && total >= 0.9 * soc->mem.ceiling_gbps && avg[t->proc] > 0) {
                printf("  (DRAM share %.2f of %.2f GB/s in use, ceiling %g)", avg[t->proc],
                       total, soc->mem.ceiling_gbps);
            }
        }
        printf("\n");
        if (i + 1 < 2 * n && ev[i + 1].t == ev[i].t) {
            continue;                    /* the DRAM once all at this time are in */
        }
        /* DRAM rates that changed up to here, as they stand after it */
        gboolean changed = FALSE;
        SimTime until = i + 1 < 2 * n ? ev[i + 1].t : SIM_TIME_MAX;
        while (b < x->bw->len && g_array_index(x->bw, SimBwSample, b).when_ps < until) {
            const SimBwSample *sm = &g_array_index(x->bw, SimBwSample, b++);
            if (sm->initiator < np && fabs(rate[sm->initiator] - sm->gbps) > 1e-9) {
                rate[sm->initiator] = sm->gbps;
                changed = TRUE;
            }
        }
        if (changed) {
            double total = 0;
            printf("%10s  %-5s %-8s", "", "dram", "");
            for (uint32_t p = 0; p < np; p++) {
                total += rate[p];
                if (rate[p] > 1e-9) {
                    printf(" %s %.2f", dev_of(soc, p)->name, rate[p]);
                }
            }
            printf("%s= %.2f of %g%s\n", total > 0 ? " " : " (idle) ", total,
                   soc->mem.ceiling_gbps,
                   total >= 0.98 * soc->mem.ceiling_gbps ? ": full, shared max-min fair" : "");
        }
    }
}

/* Task ids named by @what: an id, a full name, or a name before its
 * slice ("L0.ffn_down" matches "L0.ffn_down[tokens 0:64]"); prefill
 * first, else the first decode step that has it. */
static GArray *
find_tasks(const SimPlan *plan, const char *what, GError **error)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    guint64 id;
    if (g_ascii_string_to_unsigned(what, 10, 0, G_MAXUINT32, &id, NULL)) {
        if (id >= sim_plan_len(plan)) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--task: expected a task id below %u (got %s)", sim_plan_len(plan),
                        what);
            g_array_free(ids, TRUE);
            return NULL;
        }
        uint32_t v = (uint32_t) id;
        g_array_append_val(ids, v);
        return ids;
    }
    size_t len = strlen(what);
    int phase = -1;
    uint32_t step = 0;
    for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
        const SimTask *t = sim_plan_task(plan, i);
        if (strncmp(t->name, what, len) != 0 || (t->name[len] && t->name[len] != '[')) {
            continue;
        }
        if (phase < 0) {
            phase = t->phase;
            step = t->step;
        }
        if ((int) t->phase == phase && t->step == step) {
            g_array_append_val(ids, i);
        }
    }
    if (ids->len == 0) {
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
            const char *nm = sim_plan_task(plan, i)->name;
            g_ptr_array_add(names, g_strndup(nm, strcspn(nm, "[")));
        }
        g_ptr_array_add(names, NULL);
        const char *near = hs_nearest(what, (const char *const *) names->pdata);
        g_autofree char *hint = near ? g_strdup_printf("did you mean %s? ", near) : NULL;
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--task: no task named \"%s\" in this plan (%sgive a name like "
                    "L0.ffn_down or a task id; 'explain --steps' lists them)", what,
                    hint ? hint : "");
        g_array_free(ids, TRUE);
        return NULL;
    }
    return ids;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    HsRunOpts o;
    g_autofree char *policy_name = NULL, *task = NULL;
    gboolean help = FALSE, steps = FALSE;
    GOptionEntry extra[] = {
        { "task", 'k', 0, G_OPTION_ARG_STRING, &task,
          "The kernel to explain: a name (L0.ffn_down) or a task id", "NAME|ID" },
        { "steps", 0, 0, G_OPTION_ARG_NONE, &steps,
          "Print every event of the run in time order (for a tiny run)", NULL },
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &policy_name,
          "Scheduling policy from 'list policies' (default hetero-tensor)", "POLICY" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    gboolean ok = hs_run_opts_parse("explain",
                                    "Why a kernel took what it took: the cost model's reasoning "
                                    "(tiles, passes, fill/drain, weight loads, bytes) and what "
                                    "happened in the run (what it waited for, the DRAM share "
                                    "it got); or, with --steps, every event in order.",
                                    extra, &o, &argc, &argv, &help, error);
    if (!ok || help) {
        hs_run_opts_clear(&o);
        return ok;
    }
    if ((task == NULL) == !steps) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "explain: expected --task NAME|ID or --steps (see 'hetero-sim explain "
                    "--help')");
        hs_run_opts_clear(&o);
        return FALSE;
    }
    HsFormat format;
    g_autoptr(HwSoc) soc = NULL;
    g_autoptr(MdlSpec) spec = NULL;
    SimWorkload w;
    const SimPolicy *policy = NULL;
    SimRunReport r = { 0 };
    SimExecResult x = { 0 };
    g_autoptr(SimPlan) plan = NULL;
    if (o.functional == NULL) {
        o.functional = g_strdup("off");   /* timing is what is explained */
    }
    ok = hs_run_opts_resolve(&o, 1u << HS_FORMAT_TEXT, &format, &soc, &spec, &w, error) &&
         (policy = hs_run_opts_policy(&o, policy_name, error)) != NULL &&
         sim_run(soc, spec, policy, &w, NULL, &r, &x, &plan, error);
    g_autoptr(GArray) ids = NULL;
    const HwStack *stack = NULL;
    if (ok && task) {
        ids = find_tasks(plan, task, error);   /* before any output */
        ok = ids != NULL;
    }
    ok = ok && (stack = hw_soc_stack(soc, r.stack, error)) != NULL;
    if (ok) {
        printf("%s on %s, policy %s, sync %s: prompt %u, decode %u x batch %u (%u tasks)\n\n",
               r.model, r.soc, r.policy, sim_sync_name[w.sync], w.prompt, w.decode, w.batch,
               sim_plan_len(plan));
        if (steps) {
            print_steps(soc, stack, plan, &x);
        } else {
            for (guint i = 0; i < ids->len; i++) {
                explain_task(soc, stack, plan, &x, g_array_index(ids, uint32_t, i));
                printf("\n");
            }
        }
    }
    sim_exec_result_clear(&x);
    sim_run_report_clear(&r);
    hs_run_opts_clear(&o);
    return ok;
}

const HsCommand hs_cmd_explain = {
    "explain", "--task K | --steps [options]",
    "why a kernel took what it took; every event of a tiny run", run,
};
