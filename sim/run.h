/*
 * run.h - one simulated request: plan a model's prefill and decode steps
 * with a policy, execute the plan, and measure what a researcher asks for
 * (TTFT, tokens/s, DRAM bandwidth, energy, per-processor utilisation).
 */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <glib.h>

#include "hw/soc.h"
#include "models/spec.h"
#include "sim/exec.h"
#include "sim/policies/policy.h"

typedef struct SimWorkload {
    uint32_t prompt;             /* prompt tokens (prefill) */
    uint32_t decode;             /* decode steps */
    uint32_t batch;              /* sequences decoded together */
    SimSyncMech sync;
    SimPolicyOptions opts;
} SimWorkload;

void sim_workload_init(SimWorkload *w);

typedef struct SimPhaseStats {
    double time_ms;
    double tokens_per_s;
    double dram_gbps;            /* average over the phase */
    double energy_j;
    double avg_w;
} SimPhaseStats;

typedef struct SimRunReport {
    const char *soc;             /* (transfer none) names */
    const char *model;
    const char *policy;
    SimWorkload workload;
    SimPhaseStats prefill, decode;
    double tpot_ms, ttft_ms;
    double peak_gbps;
    uint32_t n_procs;
    double *busy_ms;             /* per processor (transfer full) */
    double *util;                /* busy / run time */
    uint64_t tasks, events;
    double wall_s;
} SimRunReport;

void sim_run_report_clear(SimRunReport *r);

/* Build the whole plan of a request.  (transfer full) */
SimPlan *sim_run_plan(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
                      const SimWorkload *w, GError **error);

/*
 * Plan, execute and measure.  @exec (may be NULL) receives the raw
 * execution result (task times, bandwidth samples) for traces; @plan_out
 * (may be NULL) the plan.
 */
gboolean sim_run(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
                 const SimWorkload *w, const SimValuesOps *values, void *values_opaque,
                 SimRunReport *report, SimExecResult *exec, SimPlan **plan_out,
                 GError **error);

/* Measure an executed plan (used by run and replay). */
void sim_run_measure(const HwSoc *soc, const SimPlan *plan, const SimExecResult *r,
                     const SimWorkload *w, SimRunReport *report);

#endif /* SIM_RUN_H */
