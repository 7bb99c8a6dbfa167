/*
 * exec.h - runs a plan: timing through the hw models, values through the
 * functional engine, in one pass of the event kernel.
 *
 * A task is submitted to its processor's queue as soon as every task it
 * depends on has ended (ties in id order, so the run is deterministic).
 * When the processor actually *starts* it, the values hook computes the
 * task's slice from the buffers as they are at that simulated moment; when
 * it *ends*, the hook publishes the slice to the shared buffers.  A plan
 * with a missing dependency therefore reads stale data and the functional
 * check reports the mismatch.
 */
#ifndef SIM_EXEC_H
#define SIM_EXEC_H

#include <glib.h>

#include "hw/runtime.h"
#include "sim/kernel/clock.h"
#include "sim/measure.h"
#include "sim/plan.h"

typedef struct HwSoc HwSoc;
typedef struct HwStack HwStack;

/* When one task ran. */
typedef struct SimTaskTime {
    SimTime start_ps;
    SimTime end_ps;
} SimTaskTime;

/* DRAM bandwidth of one initiator from @when_ps until its next sample. */
typedef struct SimBwSample {
    SimTime when_ps;
    uint32_t initiator;          /* processor index */
    double gbps;
} SimBwSample;

/* Functional hooks (may be NULL: timing only). */
typedef struct SimValuesOps {
    void (*task_start)(void *opaque, uint32_t id, const SimTask *t);
    void (*task_end)(void *opaque, uint32_t id, const SimTask *t);
} SimValuesOps;

/* Per-processor totals of one run. */
typedef struct SimProcStats {
    SimTime busy_ps;             /* time executing tasks */
    uint64_t dram_bytes;         /* bytes moved as initiator */
    double energy_j;             /* active + idle energy */
} SimProcStats;

/* A game rendering next to the LLM on the GPU (Transformer-Lite §3; HeteroLLM §5.5: GPU priority):
 * at every vsync (1/fps) it submits a frame unless its previous frame is
 * still in flight (double buffering), at normal priority; the LLM's GPU
 * kernels go at llm_priority. */
typedef struct SimRender {
    double fps;                  /* 0: no rendering */
    double frame_ms;             /* GPU time of one frame alone */
    double frame_mb;             /* DRAM traffic of one frame (MiB) */
    int llm_priority;            /* HW_PRIO_LOW or HW_PRIO_NORMAL */
} SimRender;

/* One rendered frame: its vsync and when the GPU ran it. */
typedef struct SimFrame {
    SimTime vsync_ps, start_ps, end_ps;
} SimFrame;

/* A task's kernel taken off its processor by a higher-priority op (a
 * game's frame) from off_ps, back (context restored) at back_ps. */
typedef struct SimPreemption {
    uint32_t task;
    SimTime off_ps, back_ps;
    uint32_t proc;               /* the task's processor */
} SimPreemption;

typedef struct SimExecResult {
    uint32_t n_tasks;
    SimTaskTime *times;          /* one per task (transfer full); NULL when
                                  * the run was streamed (see SimPlanSource) */
    GArray *bw;                  /* of SimBwSample, sorted by time (NULL
                                  * when streamed) */
    SimMeasured m;               /* the figures, reduced as the run went */
    uint32_t n_procs;
    SimProcStats *procs;         /* one per processor (transfer full) */
    SimTime end_ps;              /* when the last task ended */
    uint32_t control_proc;       /* the host CPU, UINT32_MAX if none */
    GArray *control;             /* of HwSpan: its kernel submissions (NULL
                                  * when streamed), opaque the submitted
                                  * task's id + 1 (GUINT_TO_POINTER) */
    GArray *frames;              /* of SimFrame, finished ones (render only) */
    uint32_t frames_proc;        /* the GPU they ran on, UINT32_MAX if none */
    uint32_t vsyncs;             /* vsyncs while the LLM ran (render only) */
    GArray *preemptions;         /* of SimPreemption, in resume order */
    double dram_energy_j;
    uint64_t events;             /* event-kernel events run */
} SimExecResult;

void sim_exec_result_clear(SimExecResult *r);

/*
 * Execute @plan on @soc running @stack's kernels, with a game rendering
 * alongside if @render is not NULL and render->fps > 0.  FALSE with an
 * error, @out untouched, if the plan is malformed (HS_TRACE_ERROR_BAD_PLAN
 * from sim_plan_check or sim_plan_topo_order: bad ids, a cycle) or cannot
 * run (HS_SIM_ERROR: a deadlock, a task a processor cannot run, rendering
 * on a SoC without a GPU, a task the runtime refused to submit; values ops
 * cannot fail).
 */
gboolean sim_exec_run(const SimPlan *plan, const HwSoc *soc, const HwStack *stack,
                      const SimRender *render,
                      const SimValuesOps *values, void *values_opaque,
                      SimExecResult *out, GError **error);

/*
 * A plan handed over phase by phase (long decodes): @next
 * appends the next phase's tasks to the plan (ids go on from the last
 * phase's; a task may depend on any earlier one, and every task of a
 * later phase must wait, directly or not, on a task of the phase before)
 * and sets *@more FALSE after the last.  The executor asks for a phase
 * when the one before starts, and forgets (sim_plan_forget) the tasks of
 * phases that have ended and no later task can name, so memory stays
 * flat in the number of phases; task times are then not kept.
 */
typedef struct SimPlanSource {
    gboolean (*next)(void *opaque, SimPlan *plan, gboolean *more, GError **error);
    void *opaque;
    /* May be NULL.  The phase @next just appended (@n tasks from id @from)
     * is a copy, ids moved, of an earlier one that passed the executor's
     * checks (sim_plan_checked_order_from): its topological order, the
     * same moved, into @order and TRUE, and the executor checks it no
     * more; FALSE: it is checked. */
    gboolean (*order)(void *opaque, uint32_t from, uint32_t n, uint32_t *order);
} SimPlanSource;

/* Execute the phases @src appends to @plan (empty at first), as
 * sim_exec_run would the whole plan, with identical results.  (Values
 * hooks: sim_exec_run_full; the values check learns each phase's tasks
 * from @src, sim_values_add.) */
gboolean sim_exec_run_stream(SimPlan *plan, const SimPlanSource *src, const HwSoc *soc,
                             const HwStack *stack, const SimRender *render,
                             SimExecResult *out, GError **error);

/*
 * What a trace writer sees as the run goes (traces written as
 * the run goes, not from a whole plan's times).  Every hook may be NULL.
 * Tasks start and end in time order; @t is valid during the call only.
 */
typedef struct SimExecObserver {
    void (*task_start)(void *opaque, uint32_t id, const SimTask *t, SimTime start_ps);
    /* @plan names @t's deps (they have ended) */
    void (*task_end)(void *opaque, const SimPlan *plan, uint32_t id, const SimTask *t,
                     SimTime start_ps, SimTime end_ps);
    void (*bw)(void *opaque, const SimBwSample *s);
    /* the host submitting task @id (@t; UINT32_MAX / NULL: not a task) on
     * processor @proc during [a_ps, b_ps) */
    void (*span)(void *opaque, uint32_t proc, SimTime a_ps, SimTime b_ps, uint32_t id,
                 const SimTask *t);
    void (*frame)(void *opaque, uint32_t proc, const SimFrame *f);
    void (*preempted)(void *opaque, const SimPreemption *p);
} SimExecObserver;

/* sim_exec_run (@src NULL) or sim_exec_run_stream (@src), with values
 * hooks in both, telling @obs (may be NULL) what happens. */
gboolean sim_exec_run_full(SimPlan *plan, const SimPlanSource *src, const HwSoc *soc,
                           const HwStack *stack, const SimRender *render,
                           const SimValuesOps *values, void *values_opaque,
                           const SimExecObserver *obs, void *obs_opaque,
                           SimExecResult *out, GError **error);

/* The average DRAM bandwidth (GB/s, all initiators) over [@t0_ps, @t1_ps),
 * a phase. */
double sim_exec_dram_gbps(const SimExecResult *r, SimTime t0_ps, SimTime t1_ps);

#endif /* SIM_EXEC_H */
