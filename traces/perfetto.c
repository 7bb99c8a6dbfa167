/*
 * perfetto.c - see perfetto.h.
 */
#include "traces/perfetto.h"
#include "sim/util/outfile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tids of the extra tracks, above any task lane */
#define TID_SUBMIT 100000
#define TID_FRAMES 100001

/* What a flow still needs of an ended task. */
typedef struct Ended {
    SimTime a_ps, b_ps;
    uint32_t pid, lane;
    gboolean valid, kept, sync;
} Ended;

typedef struct Run {
    uint32_t pid0;               /* procs pid0+1.., then sync, dram, request */
    char *label;                 /* a labelled run's (compare: the policy), or NULL */
    uint32_t n_procs;
    char **proc_names;
    uint32_t control_proc, frame_proc;
    gboolean submit_track, frame_track;
    GArray **lanes;              /* per pid - pid0 - 1: SimTime, each lane's last end */
    GArray *ended;               /* of Ended, task ids from ended0 on */
    uint32_t ended0;
    GHashTable *preempted;       /* task id -> GArray of SimPreemption */
    double *bw_cur;
    SimTime bw_when;
    gboolean bw_pending, bw_any;
    gboolean started, in_window;
    SimPhase last_phase;
    uint32_t last_step;
    SimTime prefill_a, prefill_b;
    gboolean prefill_seen;
    char *sync_name;             /* "sync on cpu-mid": hand-offs run on the control CPU */
    GArray *steps;               /* of Step, the kept decode steps in order */
} Run;

/* A decode step's span: its first task's start to its last task's end. */
typedef struct Step {
    uint32_t step, first_task;
    SimTime a_ps, b_ps;
} Step;

struct TrcTrace {
    HsOutFile *out;              /* NULL: writing to a memory stream */
    FILE *fp;
    gboolean first;
    uint32_t next_pid;
    uint64_t flow_id;
    uint32_t step_first, step_last;
    gboolean keep_prefill;
    Run *run;
};

/* ---- times ------------------------------------------------------------- */

/* ps -> whole ns, rounded once per end-point (ts and dur
 * rounded apart overlapped by 1 ns). */
static uint64_t
ns(SimTime ps)
{
    return (ps + 500) / 1000;
}

/* "12.345" microseconds of @t_ns into @buf (32 bytes). */
static const char *
us_ns(char *buf, uint64_t t_ns)
{
    snprintf(buf, 32, "%" PRIu64 ".%03" PRIu64, t_ns / 1000, t_ns % 1000);
    return buf;
}

/* A flow's end-point inside the slice [a_ps, b_ps): its middle, so the
 * flow binds to that slice and not to one ending or starting next to it. */
static uint64_t
inside_ns(SimTime a_ps, SimTime b_ps)
{
    return ns(a_ps) + (ns(b_ps) - ns(a_ps)) / 2;
}

static void
json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', fp);
            fputc(*p, fp);
        } else if (*p == '\n') {
            fputs("\\n", fp);
        } else if ((unsigned char) *p < 0x20) {
            fprintf(fp, "\\u%04x", *p);
        } else {
            fputc(*p, fp);
        }
    }
    fputc('"', fp);
}

/* Start the next event (the separator before it). */
static FILE *
ev(TrcTrace *tr)
{
    fputs(tr->first ? "\n" : ",\n", tr->fp);
    tr->first = FALSE;
    return tr->fp;
}

static void
meta_name(TrcTrace *tr, const char *what, uint32_t pid, int64_t tid, const char *name)
{
    FILE *fp = ev(tr);
    fprintf(fp, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,", what, pid);
    if (tid >= 0) {
        fprintf(fp, "\"tid\":%" PRId64 ",", tid);
    }
    fputs("\"args\":{\"name\":", fp);
    json_str(fp, name);
    fputs("}}", fp);
}

/* The name of the run's "process" @vpid (a processor, sync, dram or
 * request). */
static const char *
vpid_name(const Run *r, uint32_t vpid)
{
    uint32_t k = vpid - r->pid0;
    return k <= r->n_procs ? (k ? r->proc_names[k - 1] : "?")
           : k == r->n_procs + 1 ? r->sync_name : k == r->n_procs + 2 ? "dram" : "request";
}

/* Name the track (@vpid, @tid) of the current run: a thread of its
 * process. */
static void
track_name(TrcTrace *tr, uint32_t vpid, uint32_t tid, const char *name)
{
    meta_name(tr, "thread_name", vpid, tid, name);
}

/* Name the run's lane @lane of @vpid.  Perfetto titles a thread track
 * "<thread_name> <tid>" (its UI always appends the tid), and a lane's tid
 * is its number: named after its processor, a lane reads "gpu lane 0"
 * under the "gpu" process (a labelled run's "<label> gpu"). */
static void
lane_name(TrcTrace *tr, uint32_t vpid, uint32_t lane)
{
    g_autofree char *name = g_strdup_printf("%s lane", vpid_name(tr->run, vpid));
    track_name(tr, vpid, lane, name);
}

/* ---- opening and closing ------------------------------------------------ */

static TrcTrace *
trace_new(FILE *fp, HsOutFile *out)
{
    TrcTrace *tr = g_new0(TrcTrace, 1);
    tr->out = out;
    tr->fp = fp;
    tr->first = TRUE;
    tr->step_last = UINT32_MAX;
    tr->keep_prefill = TRUE;
    fputs("{\"traceEvents\":[", fp);
    return tr;
}

TrcTrace *
trc_trace_open(const char *path, GError **error)
{
    HsOutFile *out = hs_outfile_open(path, error);
    return out ? trace_new(hs_outfile_stream(out), out) : NULL;
}

void
trc_trace_set_steps(TrcTrace *tr, uint32_t first, uint32_t last, gboolean prefill)
{
    tr->step_first = first;
    tr->step_last = last;
    tr->keep_prefill = prefill;
}

static void
run_free(Run *r)
{
    if (r == NULL) {
        return;
    }
    g_strfreev(r->proc_names);
    g_free(r->sync_name);
    g_free(r->label);
    g_array_unref(r->steps);
    for (uint32_t p = 0; p < r->n_procs + 1; p++) {
        g_array_unref(r->lanes[p]);
    }
    g_free(r->lanes);
    g_array_unref(r->ended);
    g_hash_table_destroy(r->preempted);
    g_free(r->bw_cur);
    g_free(r);
}

void
trc_trace_begin_run(TrcTrace *tr, const char *label, const char *const *proc_names,
                    uint32_t n_procs, uint32_t control_proc, uint32_t frame_proc)
{
    g_assert(tr->run == NULL);
    Run *r = g_new0(Run, 1);
    /* each run's processes after the previous run's */
    r->pid0 = tr->next_pid;
    tr->next_pid += n_procs + 3;
    r->label = label ? g_strdup(label) : NULL;
    r->n_procs = n_procs;
    r->proc_names = g_new0(char *, n_procs + 1);
    for (uint32_t p = 0; p < n_procs; p++) {
        r->proc_names[p] = g_strdup(proc_names[p]);
    }
    r->control_proc = control_proc;
    /* the hand-offs' track says where they run: the host's control CPU
     * polls or waits on the fence (DESIGN.md: the control plane) */
    r->sync_name = control_proc < n_procs
                   ? g_strdup_printf("sync on %s", proc_names[control_proc]) : g_strdup("sync");
    r->steps = g_array_new(FALSE, FALSE, sizeof(Step));
    r->frame_proc = frame_proc;
    r->lanes = g_new(GArray *, n_procs + 1);
    for (uint32_t p = 0; p < n_procs + 1; p++) {
        r->lanes[p] = g_array_new(FALSE, FALSE, sizeof(SimTime));
    }
    r->ended = g_array_new(FALSE, TRUE, sizeof(Ended));
    r->preempted = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                         (GDestroyNotify) g_array_unref);
    r->bw_cur = g_new0(double, MAX(1, n_procs));
    r->in_window = TRUE;
    tr->run = r;

    /* a process per processor, the sync hand-offs, DRAM and the request:
     * a labelled run's named after its label too ("hetero-tensor gpu"),
     * each run's kept together by their sort index (the request first) */
    for (uint32_t k = 1; k <= n_procs + 3; k++) {
        g_autofree char *name = label ? g_strdup_printf("%s %s", label,
                                                        vpid_name(r, r->pid0 + k))
                                      : g_strdup(vpid_name(r, r->pid0 + k));
        meta_name(tr, "process_name", r->pid0 + k, -1, name);
        if (k <= n_procs || k == n_procs + 3) {     /* sync and DRAM fall in after */
            uint32_t sort = k == n_procs + 3 ? r->pid0 : r->pid0 + k;
            fprintf(ev(tr), "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,"
                            "\"args\":{\"sort_index\":%u}}", r->pid0 + k, sort);
        }
    }
    meta_name(tr, "thread_name", r->pid0 + n_procs + 3, 0, "phases");
    meta_name(tr, "thread_name", r->pid0 + n_procs + 3, 1, "decode steps");
}

/* ---- the run's events -------------------------------------------------- */

static gboolean
kept(const TrcTrace *tr, const SimTask *t)
{
    return t->phase == SIM_PHASE_PREFILL
           ? tr->keep_prefill : t->step >= tr->step_first && t->step <= tr->step_last;
}

static uint32_t
pid_of(const Run *r, const SimTask *t)
{
    /* processors are pids 1..n, sync hand-offs n+1 (after the run's pid0) */
    return r->pid0 + (t->kind == SIM_TASK_SYNC ? r->n_procs + 1 : t->proc + 1);
}

static void
flush_bw(TrcTrace *tr)
{
    Run *r = tr->run;
    if (!r->bw_pending) {
        return;
    }
    r->bw_pending = FALSE;
    if (!r->in_window) {
        return;
    }
    char ts[32];
    uint32_t pid = r->pid0 + r->n_procs + 2;
    FILE *fp = ev(tr);
    fprintf(fp, "{\"name\":\"dram_bw_gbps\",\"ph\":\"C\",\"pid\":%u,\"ts\":%s,\"args\":{", pid,
            us_ns(ts, ns(r->bw_when)));
    double total = 0;
    for (uint32_t p = 0; p < r->n_procs; p++) {
        fprintf(fp, "%s", p ? "," : "");
        json_str(fp, r->proc_names[p]);
        fprintf(fp, ":%.3f", r->bw_cur[p]);
        total += r->bw_cur[p];
    }
    fputs("}}", fp);
    fprintf(ev(tr), "{\"name\":\"dram_total_gbps\",\"ph\":\"C\",\"pid\":%u,\"ts\":%s,"
                    "\"args\":{\"total\":%.3f}}", pid, ts, total);
}

static void
on_bw(void *opaque, const SimBwSample *s)
{
    TrcTrace *tr = opaque;
    Run *r = tr->run;
    g_assert(s->initiator < r->n_procs);
    if (r->bw_pending && s->when_ps != r->bw_when) {
        flush_bw(tr);
    }
    r->bw_cur[s->initiator] = s->gbps;
    r->bw_when = s->when_ps;
    r->bw_pending = TRUE;
}

static void
on_task_start(void *opaque, uint32_t id, const SimTask *t, SimTime start_ps)
{
    TrcTrace *tr = opaque;
    Run *r = tr->run;
    (void) id;
    if (t->phase == SIM_PHASE_PREFILL) {
        if (!r->prefill_seen) {
            r->prefill_seen = TRUE;
            r->prefill_a = start_ps;
        }
        r->prefill_a = MIN(r->prefill_a, start_ps);
    }
    /* a step's first task: its marker (tasks start in time order, and a
     * step's tasks after the last step's first) */
    if (!r->started || t->phase != r->last_phase ||
        (t->phase == SIM_PHASE_DECODE && t->step > r->last_step)) {
        r->started = TRUE;
        r->last_phase = t->phase;
        r->last_step = t->step;
        flush_bw(tr);
        r->in_window = kept(tr, t);
        if (t->phase == SIM_PHASE_DECODE && r->in_window) {
            Step st = { t->step, id, start_ps, start_ps };
            g_array_append_val(r->steps, st);
            char ts[32];
            uint32_t req = r->pid0 + r->n_procs + 3;
            fprintf(ev(tr), "{\"name\":\"decode step %u\",\"cat\":\"marker\",\"ph\":\"i\","
                            "\"s\":\"t\",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%s,"
                            "\"args\":{\"step\":%u,\"first_task\":%u}}", t->step,
                    req, (uint64_t) 1, us_ns(ts, ns(start_ps)), t->step, id);
        }
    }
}

static Ended *
ended_of(Run *r, uint32_t id)
{
    if (id < r->ended0 || id - r->ended0 >= r->ended->len) {
        return NULL;
    }
    Ended *e = &g_array_index(r->ended, Ended, id - r->ended0);
    return e->valid ? e : NULL;
}

static void
flow(TrcTrace *tr, const Ended *from, const Ended *to)
{
    char ts[32];
    uint64_t id = ++tr->flow_id;
    fprintf(ev(tr), "{\"name\":\"sync\",\"cat\":\"sync\",\"ph\":\"s\",\"id\":%" PRIu64
                    ",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%s}", id, from->pid,
            (uint64_t) from->lane, us_ns(ts, inside_ns(from->a_ps, from->b_ps)));
    fprintf(ev(tr), "{\"name\":\"sync\",\"cat\":\"sync\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%"
                    PRIu64 ",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%s}", id, to->pid,
            (uint64_t) to->lane, us_ns(ts, inside_ns(to->a_ps, to->b_ps)));
}

static void
task_slice(TrcTrace *tr, uint32_t id, const SimTask *t, const Ended *e)
{
    const Run *r = tr->run;
    char ts[32], dur[32];
    FILE *fp = ev(tr);
    fputs("{\"name\":", fp);
    json_str(fp, t->name);
    fprintf(fp, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%s,"
                "\"dur\":%s,\"args\":{\"task\":%u,\"phase\":\"%s\"",
            sim_task_kind_name[t->kind], e->pid, (uint64_t) e->lane,
            us_ns(ts, ns(e->a_ps)),
            us_ns(dur, ns(e->b_ps) - ns(e->a_ps)), id, sim_phase_name[t->phase]);
    if (t->phase == SIM_PHASE_DECODE) {
        fprintf(fp, ",\"step\":%u", t->step);
    }
    if (t->kind == SIM_TASK_KERNEL) {
        fprintf(fp, ",\"node\":%d,\"tokens\":[%u,%u],\"rows\":[%u,%u]", t->node,
                t->slice.tok0, t->slice.tok1, t->slice.row0, t->slice.row1);
        if (t->slice.pad_tokens) {
            fprintf(fp, ",\"pad_tokens\":%u", t->slice.pad_tokens);
        }
    }
    if (t->kind != SIM_TASK_SYNC) {
        fprintf(fp, ",\"shape\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],\"flops\":%" PRIu64
                    ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64,
                t->work.m, t->work.k, t->work.n, t->work.flops, t->work.read_bytes,
                t->work.write_bytes);
    } else {
        fprintf(fp, ",\"mechanism\":\"%s\",\"from\":", sim_sync_name[t->sync]);
        json_str(fp, r->proc_names[t->sync_from]);
        fputs(",\"to\":", fp);
        json_str(fp, r->proc_names[t->sync_to]);
    }
    fputs("}}", fp);
}

static void
on_task_end(void *opaque, const SimPlan *plan, uint32_t id, const SimTask *t,
            SimTime start_ps, SimTime end_ps)
{
    TrcTrace *tr = opaque;
    Run *r = tr->run;
    if (t->phase == SIM_PHASE_PREFILL) {
        r->prefill_b = MAX(r->prefill_b, end_ps);
    }
    /* a step's span grows to its last task's end (steps end in order, the
     * one a task belongs to is near the back) */
    for (guint i = r->steps->len; t->phase == SIM_PHASE_DECODE && i-- > 0;) {
        Step *st = &g_array_index(r->steps, Step, i);
        if (st->step == t->step) {
            st->b_ps = MAX(st->b_ps, end_ps);
            break;
        }
        if (st->step < t->step) {
            break;
        }
    }
    /* forget the times of tasks no task still to end can name */
    if (plan->base > r->ended0 + 4096) {
        guint drop = MIN(plan->base - r->ended0, r->ended->len);
        g_array_remove_range(r->ended, 0, drop);
        r->ended0 += drop;
    }
    g_assert(id >= r->ended0);
    if (id - r->ended0 >= r->ended->len) {
        g_array_set_size(r->ended, id - r->ended0 + 1);
    }
    Ended *e = &g_array_index(r->ended, Ended, id - r->ended0);
    *e = (Ended) { start_ps, end_ps, pid_of(r, t), 0, TRUE, kept(tr, t),
                   t->kind == SIM_TASK_SYNC };
    g_autoptr(GArray) pre = NULL;
    g_hash_table_steal_extended(r->preempted, GUINT_TO_POINTER(id), NULL, (gpointer *) &pre);
    if (!e->kept) {
        return;
    }
    /* the lowest lane whose slices all end by this start */
    GArray *lanes = r->lanes[e->pid - r->pid0 - 1];
    uint32_t l = 0;
    while (l < lanes->len && g_array_index(lanes, SimTime, l) > start_ps) {
        l++;
    }
    if (l == lanes->len) {
        SimTime none = 0;
        g_array_append_val(lanes, none);
        lane_name(tr, e->pid, l);
    }
    g_array_index(lanes, SimTime, l) = end_ps;
    e->lane = l;
    task_slice(tr, id, t, e);
    /* time a kernel spent preempted: nested inside its slice */
    for (guint i = 0; pre && i < pre->len; i++) {
        const SimPreemption *p = &g_array_index(pre, SimPreemption, i);
        char ts[32], dur[32];
        fprintf(ev(tr), "{\"name\":\"preempted\",\"cat\":\"preemption\",\"ph\":\"X\","
                        "\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%s,\"dur\":%s,"
                        "\"args\":{\"task\":%u}}", e->pid, (uint64_t) l,
                us_ns(ts, ns(p->off_ps)), us_ns(dur, ns(p->back_ps) - ns(p->off_ps)), id);
    }
    /* flows: producers -> this sync, or syncs -> this consumer */
    for (uint32_t d = 0; d < t->n_deps; d++) {
        const Ended *dep = ended_of(r, t->deps[d]);
        if (dep == NULL || !dep->kept) {
            continue;
        }
        if (e->sync) {
            flow(tr, dep, e);
        } else if (dep->sync) {
            flow(tr, dep, e);
        }
    }
}

static void
on_span(void *opaque, uint32_t proc, SimTime a_ps, SimTime b_ps, uint32_t id,
        const SimTask *t)
{
    TrcTrace *tr = opaque;
    Run *r = tr->run;
    if (proc >= r->n_procs || (t && !kept(tr, t))) {
        return;
    }
    uint32_t pid = r->pid0 + proc + 1;
    if (!r->submit_track) {
        r->submit_track = TRUE;
        track_name(tr, pid, TID_SUBMIT, "submissions");
    }
    char ts[32], dur[32];
    FILE *fp = ev(tr);
    fprintf(fp, "{\"name\":\"submit\",\"cat\":\"control\",\"ph\":\"X\",\"pid\":%u,\"tid\":%"
                PRIu64 ",\"ts\":%s,\"dur\":%s", pid, (uint64_t) TID_SUBMIT,
            us_ns(ts, ns(a_ps)),
            us_ns(dur, ns(b_ps) - ns(a_ps)));
    if (t) {
        fprintf(fp, ",\"args\":{\"task\":%u,\"kind\":\"%s\",\"on\":", id,
                sim_task_kind_name[t->kind]);
        json_str(fp, r->proc_names[t->proc]);
        fputs(",\"kernel\":", fp);
        json_str(fp, t->name);
        fputc('}', fp);
    }
    fputc('}', fp);
}

static void
on_frame(void *opaque, uint32_t proc, const SimFrame *f)
{
    TrcTrace *tr = opaque;
    Run *r = tr->run;
    if (proc >= r->n_procs || !r->in_window) {
        return;
    }
    uint32_t pid = r->pid0 + proc + 1;
    if (!r->frame_track) {
        r->frame_track = TRUE;
        track_name(tr, pid, TID_FRAMES, "game frames");
    }
    char ts[32], dur[32], vs[32];
    fprintf(ev(tr), "{\"name\":\"frame\",\"cat\":\"render\",\"ph\":\"X\",\"pid\":%u,\"tid\":%"
                    PRIu64 ",\"ts\":%s,\"dur\":%s,\"args\":{\"vsync_us\":%s}}",
            pid, (uint64_t) TID_FRAMES,
            us_ns(ts, ns(f->start_ps)), us_ns(dur, ns(f->end_ps) - ns(f->start_ps)),
            us_ns(vs, ns(f->vsync_ps)));
}

static void
on_preempted(void *opaque, const SimPreemption *p)
{
    TrcTrace *tr = opaque;
    GArray *a = g_hash_table_lookup(tr->run->preempted, GUINT_TO_POINTER(p->task));
    if (a == NULL) {
        a = g_array_new(FALSE, FALSE, sizeof(SimPreemption));
        g_hash_table_insert(tr->run->preempted, GUINT_TO_POINTER(p->task), a);
    }
    g_array_append_val(a, *p);
}

const SimExecObserver trc_trace_observer = {
    on_task_start, on_task_end, on_bw, on_span, on_frame, on_preempted,
};

void
trc_trace_end_run(TrcTrace *tr)
{
    Run *r = tr->run;
    if (r == NULL) {
        return;
    }
    flush_bw(tr);
    if (r->prefill_seen && tr->keep_prefill) {
        char ts[32], dur[32];
        uint32_t req = r->pid0 + r->n_procs + 3;
        fprintf(ev(tr), "{\"name\":\"prefill\",\"cat\":\"marker\",\"ph\":\"X\",\"pid\":%u,"
                        "\"tid\":%" PRIu64 ",\"ts\":%s,\"dur\":%s}", req,
                (uint64_t) 0, us_ns(ts, ns(r->prefill_a)),
                us_ns(dur, ns(r->prefill_b) - ns(r->prefill_a)));
    }
    /* each decode step a slice on the "decode steps" track, so its
     * duration reads off the timeline; one that overlaps the next step
     * (a pipelined plan) is cut at the next one's start, as slices on
     * one track must nest or be disjoint */
    uint32_t req = r->pid0 + r->n_procs + 3;
    for (guint i = 0; i < r->steps->len; i++) {
        const Step *st = &g_array_index(r->steps, Step, i);
        SimTime b = st->b_ps;
        if (i + 1 < r->steps->len) {
            b = MIN(b, g_array_index(r->steps, Step, i + 1).a_ps);
        }
        char ts[32], dur[32], full[32];
        fprintf(ev(tr), "{\"name\":\"decode step %u\",\"cat\":\"step\",\"ph\":\"X\","
                        "\"pid\":%u,\"tid\":%" PRIu64 ",\"ts\":%s,\"dur\":%s,"
                        "\"args\":{\"step\":%u,\"first_task\":%u,\"span_us\":%s}}",
                st->step, req, (uint64_t) 1, us_ns(ts, ns(st->a_ps)),
                us_ns(dur, ns(b) - ns(st->a_ps)), st->step, st->first_task,
                us_ns(full, ns(st->b_ps) - ns(st->a_ps)));
    }
    run_free(r);
    tr->run = NULL;
}

static void
finish(TrcTrace *tr, const char *const *keys, const char *const *vals)
{
    trc_trace_end_run(tr);
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"hs_trace_version\":2", tr->fp);
    for (uint32_t i = 0; keys && keys[i]; i++) {
        fputc(',', tr->fp);
        json_str(tr->fp, keys[i]);
        fputc(':', tr->fp);
        json_str(tr->fp, vals[i]);
    }
    fputs("}}\n", tr->fp);
}

gboolean
trc_trace_close(TrcTrace *tr, const char *const *meta_keys, const char *const *meta_values,
                GError **error)
{
    finish(tr, meta_keys, meta_values);
    HsOutFile *out = tr->out;
    g_free(tr);
    return hs_outfile_commit(out, error);
}

void
trc_trace_abort(TrcTrace *tr)
{
    if (tr == NULL) {
        return;
    }
    run_free(tr->run);
    hs_outfile_abort(tr->out);
    g_free(tr);
}

/* ---- from a whole plan's times ------------------------------------------ */

typedef struct Point {
    SimTime when_ps;
    uint32_t id;
    gboolean end;
} Point;

static int
point_cmp(const void *a, const void *b)
{
    const Point *x = a, *y = b;
    if (x->when_ps != y->when_ps) {
        return x->when_ps < y->when_ps ? -1 : 1;
    }
    if (x->end != y->end) {
        return x->end ? 1 : -1;  /* starts first: a 0-length task starts, then ends */
    }
    return x->id < y->id ? -1 : (x->id > y->id);
}

void
trc_trace_add_input(TrcTrace *tr, const char *label, const TrcInput *in)
{
    trc_trace_begin_run(tr, label, in->proc_names, in->n_procs, in->control_proc,
                        in->frame_proc);
    uint32_t n = sim_plan_len(in->plan) - in->plan->base;
    g_autofree Point *pts = g_new(Point, 2 * (size_t) MAX(1, n));
    for (uint32_t i = 0; i < n; i++) {
        pts[2 * i] = (Point) { in->times[i].start_ps, in->plan->base + i, FALSE };
        pts[2 * i + 1] = (Point) { in->times[i].end_ps, in->plan->base + i, TRUE };
    }
    qsort(pts, 2 * (size_t) n, sizeof(Point), point_cmp);
    for (uint32_t i = 0; i < in->n_preemptions; i++) {
        on_preempted(tr, &in->preemptions[i]);
    }
    for (size_t i = 0; i < 2 * (size_t) n; i++) {
        const SimTask *t = sim_plan_task(in->plan, pts[i].id);
        const SimTaskTime *tt = &in->times[pts[i].id - in->plan->base];
        if (pts[i].end) {
            on_task_end(tr, in->plan, pts[i].id, t, tt->start_ps, tt->end_ps);
        } else {
            on_task_start(tr, pts[i].id, t, tt->start_ps);
        }
    }
    tr->run->in_window = TRUE;   /* counters and frames: all of them */
    for (uint32_t i = 0; i < in->n_control; i++) {
        const HwSpan *c = &in->control[i];
        uint32_t id = GPOINTER_TO_UINT(c->opaque);
        on_span(tr, in->control_proc, c->a_ps, c->b_ps, id ? id - 1 : UINT32_MAX,
                id ? sim_plan_task(in->plan, id - 1) : NULL);
    }
    for (uint32_t i = 0; i < in->n_frames; i++) {
        on_frame(tr, in->frame_proc, &in->frames[i]);
    }
    for (uint32_t i = 0; i < in->n_bw; i++) {
        on_bw(tr, &in->bw[i]);
    }
    trc_trace_end_run(tr);
}

gboolean
trc_perfetto_write(const char *path, const TrcInput *in, GError **error)
{
    TrcTrace *tr = trc_trace_open(path, error);
    if (tr == NULL) {
        return FALSE;
    }
    trc_trace_add_input(tr, NULL, in);
    return trc_trace_close(tr, in->meta_keys, in->meta_values, error);
}

char *
trc_perfetto_to_string(const TrcInput *in)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    g_assert(fp != NULL);
    TrcTrace *tr = trace_new(fp, NULL);
    trc_trace_add_input(tr, NULL, in);
    finish(tr, in->meta_keys, in->meta_values);
    g_free(tr);
    fclose(fp);
    char *s = g_strdup(buf);
    free(buf);
    return s;
}
