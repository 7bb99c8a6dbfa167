/*
 * perfetto.c - see perfetto.h.
 */
#include "traces/perfetto.h"
#include "sim/util/outfile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct Line {
    SimTime ts_ps;
    uint64_t seq;
    char *text;
} Line;

typedef struct Writer {
    GArray *lines;            /* of Line */
    uint64_t seq;
} Writer;

static void G_GNUC_PRINTF(3, 4)
emit(Writer *w, SimTime ts_ps, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    Line l = { ts_ps, w->seq++, g_strdup_vprintf(fmt, ap) };
    va_end(ap);
    g_array_append_val(w->lines, l);
}

/* Times are written in whole nanoseconds (µs with 3 decimals), each
 * end-point rounded once from picoseconds: a slice is [round(start),
 * round(end)), its dur round(end) - round(start), so slices that do not
 * overlap in picoseconds do not overlap once Perfetto reads them either
 * (issue #19: ts and dur rounded apart overlapped by 1 ns). */
static uint64_t
ns(SimTime ps)
{
    return (ps + 500) / 1000;
}

/* ns -> "12.345" microseconds. */
static char *
us_ns(uint64_t t_ns)
{
    return g_strdup_printf("%" PRIu64 ".%03" PRIu64, t_ns / 1000, t_ns % 1000);
}

/* The ts of a slice starting at @a_ps. */
static char *
us(SimTime a_ps)
{
    return us_ns(ns(a_ps));
}

/* The dur of a slice [a_ps, b_ps). */
static char *
dur_us(SimTime a_ps, SimTime b_ps)
{
    return us_ns(ns(b_ps) - ns(a_ps));
}

/* A flow's end-point inside the slice [a_ps, b_ps): its middle, so the
 * flow binds to that slice and not to one ending or starting next to it. */
static uint64_t
inside_ns(SimTime a_ps, SimTime b_ps)
{
    return ns(a_ps) + (ns(b_ps) - ns(a_ps)) / 2;
}

static char *
inside_us(SimTime a_ps, SimTime b_ps)
{
    return us_ns(inside_ns(a_ps, b_ps));
}

static char *
json_str(const char *s)
{
    GString *o = g_string_new("\"");
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '"':
            g_string_append(o, "\\\"");
            break;
        case '\\':
            g_string_append(o, "\\\\");
            break;
        case '\n':
            g_string_append(o, "\\n");
            break;
        default:
            if ((unsigned char) *p < 0x20) {
                g_string_append_printf(o, "\\u%04x", *p);
            } else {
                g_string_append_c(o, *p);
            }
        }
    }
    g_string_append_c(o, '"');
    return g_string_free(o, FALSE);
}

static int
line_cmp(const void *a, const void *b)
{
    const Line *x = a, *y = b;
    if (x->ts_ps != y->ts_ps) {
        return x->ts_ps < y->ts_ps ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Order of task ids by start time (then id) for lane packing. */
static const TrcInput *sort_in;

static int
start_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    const SimTaskTime *tx = &sort_in->times[x], *ty = &sort_in->times[y];
    if (tx->start_ps != ty->start_ps) {
        return tx->start_ps < ty->start_ps ? -1 : 1;
    }
    return x < y ? -1 : (x > y);
}

static uint32_t
pid_of(const TrcInput *in, const SimTask *t)
{
    /* processors are pids 1..n, sync hand-offs n+1, DRAM n+2 */
    return t->kind == SIM_TASK_SYNC ? in->n_procs + 1 : t->proc + 1;
}

/* A named track of process @pid after its task lanes; its tid.  (At most
 * one extra track per process: submissions go to the control CPU, frames
 * to the GPU.) */
static uint32_t
extra_track(Writer *w, GHashTable *lane_end, uint32_t pid, const char *name)
{
    GArray *ends = g_hash_table_lookup(lane_end, GUINT_TO_POINTER(pid));
    uint32_t tid = ends ? ends->len : 0;
    emit(w, 0, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
               "\"args\":{\"name\":\"%s\"}}", pid, tid, name);
    return tid;
}

char *
trc_perfetto_to_string(const TrcInput *in)
{
    Writer w = { g_array_new(FALSE, FALSE, sizeof(Line)), 0 };
    uint32_t n = sim_plan_len(in->plan);
    uint32_t sync_pid = in->n_procs + 1, dram_pid = in->n_procs + 2;
    g_autofree uint32_t *lane = g_new0(uint32_t, n);

    /* metadata first (ts 0, lowest seq) */
    for (uint32_t p = 0; p < in->n_procs; p++) {
        g_autofree char *name = json_str(in->proc_names[p]);
        emit(&w, 0, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":%s}}",
             p + 1, name);
        emit(&w, 0, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,"
                    "\"args\":{\"sort_index\":%u}}", p + 1, p + 1);
    }
    emit(&w, 0, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"sync\"}}",
         sync_pid);
    emit(&w, 0, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"dram\"}}",
         dram_pid);

    /* pack tasks of each pid onto lanes so slices never overlap */
    g_autofree uint32_t *ids = g_new(uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = i;
    }
    sort_in = in;
    qsort(ids, n, sizeof(uint32_t), start_cmp);
    sort_in = NULL;
    g_autoptr(GHashTable) lane_end = g_hash_table_new_full(g_direct_hash, g_direct_equal,
                                                           NULL, (GDestroyNotify) g_array_unref);
    for (uint32_t j = 0; j < n; j++) {
        uint32_t id = ids[j];
        const SimTask *t = sim_plan_task(in->plan, id);
        uint32_t pid = pid_of(in, t);
        GArray *ends = g_hash_table_lookup(lane_end, GUINT_TO_POINTER(pid));
        if (ends == NULL) {
            ends = g_array_new(FALSE, FALSE, sizeof(SimTime));
            g_hash_table_insert(lane_end, GUINT_TO_POINTER(pid), ends);
        }
        uint32_t l = 0;
        while (l < ends->len && g_array_index(ends, SimTime, l) > in->times[id].start_ps) {
            l++;
        }
        if (l == ends->len) {
            SimTime e = 0;
            g_array_append_val(ends, e);
        }
        g_array_index(ends, SimTime, l) = in->times[id].end_ps;
        lane[id] = l;
    }
    for (uint32_t pid = 1; pid <= sync_pid; pid++) {
        GArray *ends = g_hash_table_lookup(lane_end, GUINT_TO_POINTER(pid));
        for (uint32_t l = 0; ends && l < ends->len; l++) {
            emit(&w, 0, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                        "\"args\":{\"name\":\"lane %u\"}}", pid, l, l);
        }
    }

    /* slices */
    for (uint32_t id = 0; id < n; id++) {
        const SimTask *t = sim_plan_task(in->plan, id);
        const SimTaskTime *tt = &in->times[id];
        g_autofree char *ts = us(tt->start_ps);
        g_autofree char *dur = dur_us(tt->start_ps, tt->end_ps);
        g_autofree char *name = json_str(t->name);
        GString *args = g_string_new(NULL);
        g_string_append_printf(args, "\"task\":%u,\"phase\":\"%s\"", id,
                               sim_phase_name[t->phase]);
        if (t->phase == SIM_PHASE_DECODE) {
            g_string_append_printf(args, ",\"step\":%u", t->step);
        }
        if (t->kind == SIM_TASK_KERNEL) {
            g_string_append_printf(args, ",\"node\":%d,\"tokens\":[%u,%u],\"rows\":[%u,%u]",
                                   t->node, t->slice.tok0, t->slice.tok1,
                                   t->slice.row0, t->slice.row1);
            if (t->slice.pad_tokens) {
                g_string_append_printf(args, ",\"pad_tokens\":%u", t->slice.pad_tokens);
            }
        }
        if (t->kind != SIM_TASK_SYNC) {
            g_string_append_printf(args, ",\"shape\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],"
                                   "\"flops\":%" PRIu64 ",\"read_bytes\":%" PRIu64
                                   ",\"write_bytes\":%" PRIu64,
                                   t->work.m, t->work.k, t->work.n, t->work.flops,
                                   t->work.read_bytes, t->work.write_bytes);
        } else {
            g_string_append_printf(args, ",\"mechanism\":\"%s\",\"from\":%s%s%s,\"to\":%s%s%s",
                                   sim_sync_name[t->sync],
                                   "\"", in->proc_names[t->sync_from], "\"",
                                   "\"", in->proc_names[t->sync_to], "\"");
        }
        emit(&w, tt->start_ps,
             "{\"name\":%s,\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%s,"
             "\"dur\":%s,\"args\":{%s}}",
             name, sim_task_kind_name[t->kind], pid_of(in, t), lane[id], ts, dur, args->str);
        g_string_free(args, TRUE);
    }

    /* time a kernel spent preempted: nested inside its slice */
    for (uint32_t i = 0; i < in->n_preemptions; i++) {
        const SimPreemption *p = &in->preemptions[i];
        const SimTask *t = sim_plan_task(in->plan, p->task);
        g_autofree char *ts = us(p->off_ps);
        g_autofree char *dur = dur_us(p->off_ps, p->back_ps);
        emit(&w, p->off_ps, "{\"name\":\"preempted\",\"cat\":\"preemption\",\"ph\":\"X\","
                            "\"pid\":%u,\"tid\":%u,\"ts\":%s,\"dur\":%s,"
                            "\"args\":{\"task\":%u}}", pid_of(in, t), lane[p->task], ts, dur,
             p->task);
    }

    /* the host's submissions, one track above the processor's lanes */
    if (in->n_control && in->control_proc < in->n_procs) {
        uint32_t pid = in->control_proc + 1;
        uint32_t tid = extra_track(&w, lane_end, pid, "submissions");
        for (uint32_t i = 0; i < in->n_control; i++) {
            const HwSpan *c = &in->control[i];
            g_autofree char *ts = us(c->a_ps);
            g_autofree char *dur = dur_us(c->a_ps, c->b_ps);
            emit(&w, c->a_ps, "{\"name\":\"submit\",\"cat\":\"control\",\"ph\":\"X\","
                              "\"pid\":%u,\"tid\":%u,\"ts\":%s,\"dur\":%s}", pid, tid, ts, dur);
        }
    }

    /* a game's frames, one track above the GPU's lanes: slice = on the GPU,
     * args say when its vsync was */
    if (in->n_frames && in->frame_proc < in->n_procs) {
        uint32_t pid = in->frame_proc + 1;
        uint32_t tid = extra_track(&w, lane_end, pid, "game frames");
        for (uint32_t i = 0; i < in->n_frames; i++) {
            const SimFrame *f = &in->frames[i];
            g_autofree char *ts = us(f->start_ps);
            g_autofree char *dur = dur_us(f->start_ps, f->end_ps);
            g_autofree char *vs = us(f->vsync_ps);
            emit(&w, f->start_ps, "{\"name\":\"frame\",\"cat\":\"render\",\"ph\":\"X\","
                                  "\"pid\":%u,\"tid\":%u,\"ts\":%s,\"dur\":%s,"
                                  "\"args\":{\"vsync_us\":%s}}", pid, tid, ts, dur, vs);
        }
    }

    /* flows: producer -> sync -> consumers */
    uint64_t flow_id = 1;
    for (uint32_t id = 0; id < n; id++) {
        const SimTask *t = sim_plan_task(in->plan, id);
        if (t->kind != SIM_TASK_SYNC) {
            continue;
        }
        for (uint32_t d = 0; d < t->n_deps; d++) {
            uint32_t p = t->deps[d];
            const SimTask *pt = sim_plan_task(in->plan, p);
            g_autofree char *ts0 = inside_us(in->times[p].start_ps, in->times[p].end_ps);
            g_autofree char *ts1 = inside_us(in->times[id].start_ps, in->times[id].end_ps);
            emit(&w, 1000 * inside_ns(in->times[p].start_ps, in->times[p].end_ps),
                 "{\"name\":\"sync\",\"cat\":\"sync\",\"ph\":\"s\",\"id\":%" PRIu64
                 ",\"pid\":%u,\"tid\":%u,\"ts\":%s}", flow_id, pid_of(in, pt), lane[p], ts0);
            emit(&w, 1000 * inside_ns(in->times[id].start_ps, in->times[id].end_ps),
                 "{\"name\":\"sync\",\"cat\":\"sync\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%"
                 PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":%s}", flow_id, sync_pid, lane[id], ts1);
            flow_id++;
        }
    }
    for (uint32_t c = 0; c < n; c++) {
        const SimTask *ct = sim_plan_task(in->plan, c);
        for (uint32_t d = 0; d < ct->n_deps; d++) {
            uint32_t s = ct->deps[d];
            if (sim_plan_task(in->plan, s)->kind != SIM_TASK_SYNC || ct->kind == SIM_TASK_SYNC) {
                continue;
            }
            g_autofree char *ts0 = inside_us(in->times[s].start_ps, in->times[s].end_ps);
            g_autofree char *ts1 = inside_us(in->times[c].start_ps, in->times[c].end_ps);
            emit(&w, 1000 * inside_ns(in->times[s].start_ps, in->times[s].end_ps),
                 "{\"name\":\"sync\",\"cat\":\"sync\",\"ph\":\"s\",\"id\":%" PRIu64
                 ",\"pid\":%u,\"tid\":%u,\"ts\":%s}", flow_id, sync_pid, lane[s], ts0);
            emit(&w, 1000 * inside_ns(in->times[c].start_ps, in->times[c].end_ps),
                 "{\"name\":\"sync\",\"cat\":\"sync\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%"
                 PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":%s}", flow_id, pid_of(in, ct),
                 lane[c], ts1);
            flow_id++;
        }
    }

    /* DRAM counters: one "C" event per sample time with every initiator */
    g_autofree double *cur = g_new0(double, in->n_procs ? in->n_procs : 1);
    for (uint32_t i = 0; i < in->n_bw;) {
        SimTime when = in->bw[i].when_ps;
        while (i < in->n_bw && in->bw[i].when_ps == when) {
            g_assert(in->bw[i].initiator < in->n_procs);
            cur[in->bw[i].initiator] = in->bw[i].gbps;
            i++;
        }
        GString *args = g_string_new(NULL);
        double total = 0;
        for (uint32_t p = 0; p < in->n_procs; p++) {
            g_string_append_printf(args, "%s\"%s\":%.3f", p ? "," : "", in->proc_names[p],
                                   cur[p]);
            total += cur[p];
        }
        g_autofree char *ts = us(when);
        emit(&w, when, "{\"name\":\"dram_bw_gbps\",\"ph\":\"C\",\"pid\":%u,\"ts\":%s,"
                       "\"args\":{%s}}", dram_pid, ts, args->str);
        emit(&w, when, "{\"name\":\"dram_total_gbps\",\"ph\":\"C\",\"pid\":%u,\"ts\":%s,"
                       "\"args\":{\"total\":%.3f}}", dram_pid, ts, total);
        g_string_free(args, TRUE);
    }

    g_array_sort(w.lines, line_cmp);
    GString *out = g_string_new("{\"traceEvents\":[\n");
    for (guint i = 0; i < w.lines->len; i++) {
        Line *l = &g_array_index(w.lines, Line, i);
        g_string_append(out, l->text);
        g_string_append(out, i + 1 < w.lines->len ? ",\n" : "\n");
        g_free(l->text);
    }
    g_array_free(w.lines, TRUE);
    g_string_append(out, "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"hs_trace_version\":1");
    for (uint32_t i = 0; in->meta_keys && in->meta_keys[i]; i++) {
        g_autofree char *k = json_str(in->meta_keys[i]);
        g_autofree char *v = json_str(in->meta_values[i]);
        g_string_append_printf(out, ",%s:%s", k, v);
    }
    g_string_append(out, "}}\n");
    return g_string_free(out, FALSE);
}

gboolean
trc_perfetto_write(const char *path, const TrcInput *in, GError **error)
{
    g_autofree char *text = trc_perfetto_to_string(in);
    return hs_outfile_write_all(path, text, strlen(text), error);
}
