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
#include "sim/values.h"

/* Progress of a long run, for a terminal: @what ("reference", a policy's
 * name) has done @done of @total units (tasks, steps); done == total
 * last.  Set by the caller (the CLI); the library never prints. */
typedef void (*SimProgressFn)(void *opaque, const char *what, uint64_t done, uint64_t total);

typedef struct SimWorkload {
    uint32_t prompt;             /* prompt tokens (prefill) */
    uint32_t decode;             /* decode steps */
    uint32_t batch;              /* sequences decoded together */
    SimSyncMech sync;
    SimPolicyOptions opts;
    int32_t check_layers;        /* functional check: -1 off, 0 full, N layers */
    uint64_t seed;               /* synthetic weights */
    const char *weights_dir;     /* a Hugging Face model directory whose
                                  * weights the values check uses; NULL:
                                  * synthetic from @seed (not owned) */
    SimRender render;            /* a game on the GPU alongside (fps 0: none) */
    SimProgressFn progress;      /* NULL: none (not recorded) */
    void *progress_opaque;
    const char *stack;           /* software stack (configs/stacks/ name or a
                                  * file), replacing the policy's; NULL: the
                                  * policy's, or SIM_DEFAULT_STACK (not owned) */
    /* outputs written as the run goes (a trace, a recording; NULL: none;
     * not recorded): the executor's events, and each phase's tasks
     * [from, sim_plan_len) once planned (the whole plan at once when the
     * run is not streamed) */
    const SimExecObserver *observer;
    void *observer_opaque;
    gboolean (*planned)(void *opaque, const SimPlan *plan, uint32_t from, GError **error);
    void *planned_opaque;
} SimWorkload;

/* The stack of a policy that names none: the engine the SoC configs'
 * calibration rows were measured on (HeteroLLM: PPL-OpenCL + QNN). */
#define SIM_DEFAULT_STACK "heterollm"

void sim_workload_init(SimWorkload *w);

/* "off" -> -1, "full" -> 0, "layers=N" -> N (1..1000); FALSE otherwise. */
gboolean sim_functional_parse(const char *text, int32_t *check_layers);

typedef struct SimPhaseStats {
    double time_ms;
    double prepare_ms;           /* NPU graph preparation inside the phase */
    double tokens_per_s;
    double dram_gbps;            /* average over the phase */
    double energy_j;
    double avg_w;
} SimPhaseStats;

typedef struct SimRunReport {
    const char *soc;             /* (transfer none) names */
    const char *model;
    const char *policy;
    const char *stack;           /* the stack it ran on */
    SimWorkload workload;
    SimPhaseStats prefill, decode;
    double tpot_ms, ttft_ms;
    double peak_gbps;
    uint32_t n_procs;
    double *busy_ms;             /* per processor (transfer full) */
    double *util;                /* busy / run time */
    uint64_t tasks, events;
    double wall_s;
    SimCheck check;              /* functional check (checked FALSE if off) */
    /* rendering alongside (workload.render.fps > 0): frames finished per
     * second of each phase, the share of vsyncs whose frame was shown on
     * time (finished before the next vsync), the worst vsync-to-done */
    double render_fps_prefill, render_fps_decode, render_on_time_pct, render_worst_ms;
    /* where prefill time goes: the op (layer prefix dropped, "ffn_down")
     * whose kernels take the most processor time, that share of all
     * prefill kernel time, and how its output is split between processors
     * (fraction of output elements each computed; per processor) */
    char hot_op[32];
    double hot_time_share;
    double *hot_split;
    /* why some of these figures are an assumption rather than a
     * measurement (hw_dev_caveat of each processor that ran: a stack's
     * figures carried over to another architecture), sentences joined by
     * "; "; NULL: none.  (transfer full) */
    char *caveats;
} SimRunReport;

void sim_run_report_clear(SimRunReport *r);

/* Build the whole plan of a request.  (transfer full)  @graphs (may be
 * NULL) receives the phase graphs: prefill, then one per decode step. */
SimPlan *sim_run_plan(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
                      const SimWorkload *w, GPtrArray **graphs, GError **error);

/* The engine configuration of a model spec. */
void sim_run_engine_config(const MdlSpec *spec, uint64_t seed, EngConfig *cfg);

/*
 * Plan, execute (with the functional check the workload asks for, against
 * @checker's reference, or one built here if @checker is NULL) and
 * measure.  @exec (may be NULL) receives the raw execution result (task
 * times, bandwidth samples) for traces; @plan_out (may be NULL) the plan.
 * With neither, the run is streamed (checked or not): each phase planned
 * when the one before starts and forgotten once it has ended.
 */
gboolean sim_run(const HwSoc *soc, const MdlSpec *spec, const SimPolicy *policy,
                 const SimWorkload *w, SimChecker *checker, SimRunReport *report,
                 SimExecResult *exec, SimPlan **plan_out, GError **error);

/* Execute an already built @plan of @w (from a policy named @policy, or a
 * recording) and measure it, as sim_run does after planning. */
gboolean sim_run_execute(const HwSoc *soc, const MdlSpec *spec, const char *policy,
                         const SimPlan *plan, const SimWorkload *w, SimChecker *checker,
                         SimRunReport *report, SimExecResult *exec, GError **error);

/* The functional reference of a workload (NULL if its check is off, or
 * NULL with @error set if it needs more memory than the machine has), to
 * share among the policies run on it.  (transfer full) */
SimChecker *sim_run_checker_new(const MdlSpec *spec, const SimWorkload *w,
                                GError **error);

/* The weights a check of @w uses, for reports: the directory, or
 * "synthetic seed N".  (transfer full) */
char *sim_workload_weights(const SimWorkload *w);

/* Measure an executed plan (used by run and replay). */
void sim_run_measure(const HwSoc *soc, const SimExecResult *r, const SimWorkload *w,
                     SimRunReport *report);

#endif /* SIM_RUN_H */
