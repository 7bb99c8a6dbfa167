/*
 * measure.h - a run's figures reduced as it goes: the
 * executor hands every finished task, every bandwidth change and every
 * host control span over once, and only what the figures still need is
 * kept — per processor the busy intervals that a task still running could
 * overlap, the rates in force, running sums.  So a decode of any length
 * is measured in memory flat in its steps, with the same arithmetic, in
 * the same order, as a pass over the whole run would do.
 */
#ifndef SIM_MEASURE_H
#define SIM_MEASURE_H

#include <glib.h>

#include "hw/dvfs.h"
#include "sim/kernel/clock.h"
#include "sim/plan.h"

typedef struct SimMeasure SimMeasure;

/* What a run's report is made of (in SimExecResult). */
typedef struct SimMeasured {
    SimTime prefill_end_ps, decode_end_ps;     /* last end of each phase (0: none) */
    /* per processor: the union of its tasks' and control spans' intervals
     * inside [0, prefill_end), [prefill_end, decode_end), [0, end)
     * (preemptions not yet taken off) (transfer full) */
    SimTime *busy_prefill_ps, *busy_decode_ps, *busy_all_ps;
    /* the prefill's and the decode's busy time split by the processor's
     * operating point (DVFS), preemptions taken off:
     * [proc * HW_DVFS_MAX_POINTS + point] (transfer full) */
    SimTime *point_prefill_ps, *point_decode_ps;
    double dram_prefill_gbps, dram_decode_gbps;  /* averages over each phase */
    double peak_gbps;                          /* largest total of the rates */
    double prepare_prefill_ms, prepare_decode_ms;
    /* the prefill op with the most kernel time (see SimRunReport) */
    char hot_op[32];
    double hot_time_share;
    double *hot_split;                         /* per processor (transfer full) */
} SimMeasured;

void sim_measured_clear(SimMeasured *m);

SimMeasure *sim_measure_new(uint32_t n_procs);
void sim_measure_free(SimMeasure *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimMeasure, sim_measure_free)

/* Initiator @initiator draws @gbps from @when_ps on (in time order). */
void sim_measure_bw(SimMeasure *m, SimTime when_ps, uint32_t initiator, double gbps);
/* Task @id ended; @off_ps of [start, end) it spent preempted. */
void sim_measure_task(SimMeasure *m, uint32_t id, const SimTask *t, SimTime start_ps,
                      SimTime end_ps, SimTime off_ps);
/* Processor @proc runs at operating point @point from @when_ps on (in
 * time order per processor; every processor starts at point 0 until told). */
void sim_measure_clock(SimMeasure *m, uint32_t proc, SimTime when_ps, uint32_t point);
/* A kernel of @proc was off it (preempted) during [@off_ps, @back_ps),
 * told when it is back (energy per point leaves that time out). */
void sim_measure_preempted(SimMeasure *m, uint32_t proc, SimTime off_ps, SimTime back_ps);
/* The host's control work on processor @proc. */
void sim_measure_span(SimMeasure *m, uint32_t proc, SimTime a_ps, SimTime b_ps);
/* Every prefill task has ended (the prefill's end is known). */
void sim_measure_prefill_done(SimMeasure *m);
/* No busy interval still to come starts before @mark_ps: fold the
 * intervals that end by then into the sums. */
void sim_measure_fold(SimMeasure *m, SimTime mark_ps);
/* Every task has ended: the run's end is known. */
void sim_measure_tasks_done(SimMeasure *m);
/* After the run (every bandwidth change seen). */
void sim_measure_finish(SimMeasure *m, SimMeasured *out);

#endif /* SIM_MEASURE_H */
