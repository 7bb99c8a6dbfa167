/*
 * values.h - the functional side of a simulated run: every kernel task
 * computes its slice with the engine when it *starts* in simulated time,
 * from the shared buffers as they are at that moment, into a staging
 * buffer that becomes visible to others when the task *ends*.  A plan
 * whose dependencies are wrong reads stale (zero) data and produces wrong
 * numbers, which the comparison with an unpartitioned reference reports.
 *
 * What is checked is selectable: the first N layers at full width (layers
 * are alike, so this checks partitioning and syncs at real shapes) or the
 * whole model including the logits.  Decode steps feed the reference's
 * greedy tokens (or, when only layers are checked, a fixed token sequence)
 * to both runs, so the two stay comparable step by step.
 */
#ifndef SIM_VALUES_H
#define SIM_VALUES_H

#include <glib.h>

#include "engine/model.h"
#include "models/graph.h"
#include "sim/exec.h"

typedef struct SimValues SimValues;
typedef struct SimChecker SimChecker;

/*
 * When every task runs at the reference precision (W4A16), the run is
 * compared with the unpartitioned reference.  When some run at another
 * (the NPU's W4A8 decode path), it is compared with the plan's own
 * arithmetic done in order — every slice at its precision, from complete
 * inputs — which isolates ordering and sync errors from quantisation.
 * Every run's difference from the FP reference (the same computation with
 * every matmul on FP16 weights made from the values before quantisation,
 * FP32 activations) is its precision_err:
 * what its storage precisions cost, W4A16 included, over the prefill and
 * the decode steps d = 0, every power of two and the last (values.c:
 * fp_compared; the FP reference of a step reads four times the bytes of
 * the run's).  INT8 activations take a static scale calibrated on the
 * W4A16 reference's input of the same matmul in the prefill.
 */
typedef struct SimCheck {
    gboolean checked;
    uint32_t layers;             /* layers computed (all for full) */
    gboolean full;               /* logits compared too */
    gboolean match;
    gboolean precision_changed;  /* some task ran at another precision */
    double max_abs_err;          /* over every compared phase output */
    double max_abs_ref;
    double precision_err;        /* max |run - FP reference| (compared steps) */
    uint64_t reused;             /* slices copied from the reference (see below) */
    /* the unpartitioned reference itself went non-finite (weights whose
     * products overflow): the input's fault, not the policy's; where it
     * first did, as "L0.ffn_down of prefill" */
    gboolean ref_nonfinite;
    char ref_nonfinite_at[64];
} SimCheck;

/*
 * The reference of one workload, shared by every policy run on it.
 * @graphs: the phase graphs (prefill, then one per decode step; every
 * policy's plan of the workload has the same; a decode step's after the
 * first may be NULL: the first moved on, made when reached and freed
 * once compared, so a long decode holds a few).  @layers: how many layers
 * to compute (0 or >= all: the full model).  Runs the unpartitioned
 * reference's prefill at once; its decode steps, and the FP reference,
 * are computed as the first run reaches them.  @progress (NULL: none)
 * is told of the prefill's nodes as they are computed.  (transfer full;
 * takes @model over)
 */
SimChecker *sim_checker_new(EngModel *model, GPtrArray *graphs, uint32_t layers,
                            uint32_t batch,
                            void (*progress)(void *opaque, const char *what,
                                             uint64_t done, uint64_t total),
                            void *progress_opaque);

/*
 * Bytes a checker of @graphs (as sim_checker_new's arguments) and one
 * checked run on it hold at most: the W4A16 and FP16 weights of the
 * computed layers, four KV caches (the reference, the FP reference, the
 * run, the run's own arithmetic in order), the reference's phases it
 * keeps, two phases in flight of the other three, and each phase's
 * compared outputs.
 */
uint64_t sim_checker_bytes(const EngConfig *c, const GPtrArray *graphs, uint32_t layers,
                           uint32_t batch);
void sim_checker_free(SimChecker *c);

/*
 * A run's slice whose inputs hold exactly the reference's bits is copied
 * from the reference instead of computed: the engine gives each output
 * element the same bits whatever the cut (engine/kernels.h), so that is
 * what computing it would give.  Slices reading anything else (a stale
 * buffer behind a missing sync) are computed.  @recompute TRUE computes
 * every slice (the default when HS_VALUES_RECOMPUTE is set), to show
 * both give the same numbers.
 */
void sim_checker_set_recompute(SimChecker *c, gboolean recompute);

/*
 * The FP reference computes, of a decode step it does not compare, only
 * what later steps read (the K/V rows of the checked layers); with
 * HS_VALUES_FP_WHOLE set when the checker is made, it computes those
 * steps whole, to show (a test) that the compared steps' values, hence
 * precision_err, are the same.  When layers are checked, the FP
 * reference is computed whole by sim_checker_new(), its FP16 weights
 * let go before any run makes its own formats.
 */

/* The FP reference's compared output of @phase (its @n floats), computing
 * it and the phases before it if not yet; NULL if @phase is not compared.
 * (transfer none) */
const float *sim_checker_fp_output(SimChecker *c, uint32_t phase, size_t *n);

/* The token sequence the reference ran: the fixed prompt, then one token
 * per decode step (greedy from the reference's logits when the whole model
 * is checked: then computes the reference's phases not yet computed).
 * (transfer none) */
const uint32_t *sim_checker_tokens(SimChecker *c, uint32_t *n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimChecker, sim_checker_free)

/* Buffers of one checked run of @plan (its tasks so far: empty for a
 * streamed run): a phase's are compared and freed when its last kernel
 * task ends.  (transfer full; @checker borrowed: must outlive it) */
SimValues *sim_values_new(SimChecker *checker, const SimPlan *plan);

/* Tasks [@from, end) of @plan were added (a streamed run's next phase:
 * SimPlanSource), before any of them starts.  What the check needs of them
 * is copied: the plan may forget them once they end. */
void sim_values_add(SimValues *v, const SimPlan *plan, uint32_t from);
void sim_values_free(SimValues *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimValues, sim_values_free)

/* Hooks for sim_exec_run (opaque: the SimValues). */
extern const SimValuesOps sim_values_ops;

/* After the run: compare with the reference. */
void sim_values_check(SimValues *v, SimCheck *out);

/* Graph index of a task: 0 for prefill, 1 + step for decode. */
static inline uint32_t
sim_values_phase_index(const SimTask *t)
{
    return t->phase == SIM_PHASE_PREFILL ? 0 : 1 + t->step;
}

#endif /* SIM_VALUES_H */
