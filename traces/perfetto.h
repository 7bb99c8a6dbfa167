/*
 * perfetto.h - Chrome / Perfetto trace JSON of an executed plan.
 *
 * One process (pid) per processor plus one for sync hand-offs and one for
 * DRAM counters; within a process, tasks are packed onto as few threads
 * (tids, "lanes") as keep slices from overlapping, so every track nests
 * perfectly as Perfetto's JSON importer requires.  Counter tracks show DRAM
 * bandwidth per initiator and in total; flow arrows join a sync's producer
 * to the sync and the sync to its consumers.  Timestamps are microseconds
 * printed exactly from picoseconds (never through a double).  Events are
 * written one per line, sorted by (ts, sequence).  A kernel a game's frame
 * preempted keeps one slice from its start to its end, with a nested
 * "preempted" slice for each time it was off the GPU.  Open the file at
 * ui.perfetto.dev.
 */
#ifndef TRC_PERFETTO_H
#define TRC_PERFETTO_H

#include <glib.h>

#include "sim/kernel/clock.h"
#include "sim/exec.h"
#include "sim/plan.h"


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
     * processor control_proc (may be NULL / 0) */
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

/* Write the trace to @path atomically.  FALSE with an I/O error. */
gboolean trc_perfetto_write(const char *path, const TrcInput *in, GError **error);

/* The same into a string.  (transfer full) */
char *trc_perfetto_to_string(const TrcInput *in);

#endif /* TRC_PERFETTO_H */
