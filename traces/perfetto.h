/*
 * perfetto.h - Chrome / Perfetto trace JSON of a run, written as it goes.
 *
 * A trace holds one or more runs (e.g. one per policy of a comparison).
 * A lone run gets processes (pids): one per processor, one for sync
 * hand-offs, one for DRAM counters and one, "request", with the prefill as
 * a slice and an instant marker where each decode step starts.  A labelled
 * run (`compare`: one per policy) gets the same processes, after the
 * previous run's, named after the label too ("hetero-tensor gpu"), and its
 * lanes named after their processor ("gpu lane", tid 0, 1, ..): Perfetto
 * titles a thread track "<name> <tid>", so it reads "gpu lane 0" (a lone
 * run's "lane 0" reads "lane 0 0").  Within a
 * processor, a task lands on the lowest thread (tid, "lane") whose slices
 * all end before it starts, so every track nests perfectly as Perfetto's
 * JSON importer requires.  Counter tracks show DRAM bandwidth per
 * initiator and in total; flow arrows join a sync's producers to the sync
 * and the sync to its consumers, each end-point in the middle of its
 * slice (so it binds to that slice and no neighbour).  The host's kernel
 * submissions are slices on a track of the control CPU, with the task
 * they submit in their args; a game's frames a track of the GPU.  A kernel
 * a frame preempted has a nested "preempted" slice per time it was off.
 *
 * Times are whole nanoseconds (µs with 3 decimals), each end-point rounded
 * once from picoseconds, so slices that do not overlap in picoseconds do
 * not once Perfetto reads them.  Events are written one per line in the
 * order the run produced them (nothing is held for a long
 * decode but the last steps' task times), not sorted: the trace format
 * does not ask it and Perfetto sorts on import.  The file is a temporary
 * one renamed into place by trc_trace_close (sim/util/outfile.h).
 */
#ifndef TRC_PERFETTO_H
#define TRC_PERFETTO_H

#include <glib.h>

#include "sim/kernel/clock.h"
#include "sim/exec.h"
#include "sim/plan.h"

typedef struct TrcTrace TrcTrace;

/* Start writing a trace to @path ("-": stdout).  (transfer full) */
TrcTrace *trc_trace_open(const char *path, GError **error);

/* Keep only decode steps @first..@last (inclusive, from 0) and the
 * prefill if @prefill: their tasks, flows and submissions, and DRAM
 * counters and frames while one of them runs.  Default: everything. */
void trc_trace_set_steps(TrcTrace *tr, uint32_t first, uint32_t last, gboolean prefill);

/*
 * Start a run on a SoC whose processors are @proc_names (@n_procs), the
 * host's submissions on @control_proc and a game's frames on @frame_proc
 * (UINT32_MAX: none).  @label (may be NULL: a lone run) makes the run
 * one process of that name (see above).  Then feed it the
 * run's events through trc_trace_observer with @tr as opaque, and
 * trc_trace_end_run when it has ended.
 */
void trc_trace_begin_run(TrcTrace *tr, const char *label, const char *const *proc_names,
                         uint32_t n_procs, uint32_t control_proc, uint32_t frame_proc);
extern const SimExecObserver trc_trace_observer;
void trc_trace_end_run(TrcTrace *tr);

/* Write otherData (@meta_keys / @meta_values, NULL-terminated, may be
 * NULL) and rename the file into place; frees @tr.  FALSE on an I/O
 * error (the file is removed). */
gboolean trc_trace_close(TrcTrace *tr, const char *const *meta_keys,
                         const char *const *meta_values, GError **error);
/* Drop the trace (the run failed): no file is left.  NULL is a no-op. */
void trc_trace_abort(TrcTrace *tr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TrcTrace, trc_trace_abort)

/* ---- a trace of an executed whole plan (times kept) -------------------- */

typedef struct TrcInput {
    const SimPlan *plan;
    const SimTaskTime *times;  /* one per task */
    const char *const *proc_names;   /* one per processor */
    uint32_t n_procs;
    const SimBwSample *bw;     /* sorted by time */
    uint32_t n_bw;
    /* extra "otherData" members: soc, model, policy ... (may be NULL) */
    const char *const *meta_keys;
    const char *const *meta_values;
    /* the host's kernel submissions (control plane), on their own track of
     * processor control_proc (may be NULL / 0); opaque as in
     * SimExecResult.control */
    const HwSpan *control;
    uint32_t n_control;
    uint32_t control_proc;
    /* a game's frames, on their own track of processor frame_proc (the
     * GPU; may be NULL / 0) */
    const SimFrame *frames;
    uint32_t n_frames;
    uint32_t frame_proc;
    /* kernels preempted by a frame: a "preempted" slice nested in the
     * task's slice for each time it was off its processor (may be NULL) */
    const SimPreemption *preemptions;
    uint32_t n_preemptions;
} TrcInput;

/* Feed @in to @tr as one run (@label as in trc_trace_begin_run), in time
 * order as the executor would have. */
void trc_trace_add_input(TrcTrace *tr, const char *label, const TrcInput *in);

/* Write the trace of @in to @path atomically.  FALSE with an I/O error. */
gboolean trc_perfetto_write(const char *path, const TrcInput *in, GError **error);

/* The same into a string.  (transfer full) */
char *trc_perfetto_to_string(const TrcInput *in);

#endif /* TRC_PERFETTO_H */
