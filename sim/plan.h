/*
 * plan.h - what a policy produces and the executor runs: a DAG of tasks.
 *
 * A task is one kernel on one processor working on one slice of one graph
 * node's output (weight rows [row0,row1), tokens [tok0,tok1), optionally
 * padded to a prepared static NPU shape and cropped afterwards), or an
 * explicit sync task between processors, or an NPU graph preparation.
 *
 * The plan carries everything timing needs (processor, dims after padding,
 * dtypes, flops, bytes) so a recorded plan can be re-timed on another SoC
 * without the policy that made it, and the graph node + slice that values
 * need, so the executor can compute each task's slice and a plan that
 * forgets a dependency produces wrong numbers.
 *
 * Tasks are stored in an array; a task's id is its index.  Dependencies
 * name earlier or later ids freely; sim_plan_check() rejects cycles,
 * dangling ids and slices that overlap or leave holes.
 */
#ifndef SIM_PLAN_H
#define SIM_PLAN_H

#include <glib.h>
#include <stdint.h>

#include "models/graph.h"

typedef enum {
    SIM_TASK_KERNEL,          /* computes a slice of a graph node */
    SIM_TASK_SYNC,            /* hands data from one processor to another */
    SIM_TASK_PREPARE,         /* builds a static NPU graph for a shape */
    SIM_TASK_SHADOW,          /* timing only: extra work on a node whose
                               * values are its kernels' (mllm-NPU's shadow
                               * outlier matmul on the CPU, merged into the
                               * NPU's output); readers of the node wait on it */
    SIM_TASK_KIND_COUNT
} SimTaskKind;

extern const char *const sim_task_kind_name[];   /* SIM_TASK_KIND_COUNT entries: checked where defined */

typedef enum {
    SIM_SYNC_DRIVER,          /* blocking finish, copy, queue restart */
    SIM_SYNC_FAST,            /* unified buffers, predicted sleep, flag poll */
    SIM_SYNC_COUNT
} SimSyncMech;

extern const char *const sim_sync_name[];   /* SIM_SYNC_COUNT entries: checked where defined */

typedef enum {
    SIM_PHASE_PREFILL,
    SIM_PHASE_DECODE,
    SIM_PHASE_COUNT
} SimPhase;

extern const char *const sim_phase_name[];   /* SIM_PHASE_COUNT entries: checked where defined */

/* The part of a node's output [tokens, features] a kernel task computes. */
typedef struct SimSlice {
    uint32_t tok0, tok1;      /* token rows [tok0, tok1) of the output */
    uint32_t row0, row1;      /* output features [row0, row1) (weight rows) */
    uint32_t pad_tokens;      /* computed as this many tokens (>= tok1-tok0), 0 = no padding */
} SimSlice;

/* What the timing model needs (turned into an hw op by sim/cost.c). */
typedef struct SimWork {
    MdlOp op;                 /* what kind of kernel */
    MdlPrecision prec;        /* storage precision of weights / activations */
    uint64_t m, k, n;         /* GEMM-like dims after padding: [m,k] x [k,n];
                               * attention: q tokens, head_dim, kv tokens */
    gboolean weight_lhs;      /* run as W . X^T (weights on the left: the
                               * NPU then holds the small operand stationary,
                               * HeteroLLM's order-aware permutation) */
    uint64_t flops;
    uint64_t read_bytes;      /* DRAM bytes read */
    uint64_t write_bytes;     /* DRAM bytes written */
    uint64_t serial_elems;    /* elements one thread walks in scalar code
                               * beside the rest (a shadow linear's outlier
                               * scan); 0 for a kernel */
} SimWork;

typedef struct SimTask {
    SimTaskKind kind;
    SimPhase phase;
    uint32_t step;            /* decode step (0 for prefill) */
    uint32_t proc;            /* processor index in the SoC */
    int32_t node;             /* graph node of this phase/step, -1 if none */
    SimSlice slice;           /* KERNEL only */
    SimWork work;             /* KERNEL, PREPARE and SHADOW */
    SimSyncMech sync;         /* SYNC only */
    uint32_t sync_from;       /* SYNC: producer processor */
    uint32_t sync_to;         /* SYNC: consumer processor */
    uint32_t n_deps;
    uint32_t *deps;           /* task ids that must end before this starts */
    char *name;               /* "L3.ffn_down[rows 0:8960]" */
    const char *why;          /* the policy's reason for this placement, or
                               * NULL (interned; shown by explain) */
} SimTask;

typedef struct SimPlan {
    GArray *tasks;            /* of SimTask: ids base, base + 1, ... */
    GArray *npu_offline;      /* of uint32_t: NPU shapes prepared before the run */
    uint32_t base;            /* id of tasks[0]: a plan streamed step by step
                               * forgets its finished tasks (0 otherwise) */
    /* storage of the tasks' names (interned: a decode step's names are
     * the last step's) and deps (blocks, freed once their tasks are
     * forgotten), so adding a task allocates nothing */
    GStringChunk *names;
    GPtrArray *dep_blocks;
} SimPlan;

/* Record that NPU static shape @tokens is prepared offline (idempotent). */
void sim_plan_npu_offline(SimPlan *plan, uint32_t tokens);

SimPlan *sim_plan_new(void);                     /* (transfer full) */
void sim_plan_free(SimPlan *plan);               /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimPlan, sim_plan_free)

/* Tasks added so far (the next id). */
static inline uint32_t
sim_plan_len(const SimPlan *plan)
{
    return plan->base + plan->tasks->len;
}

static inline SimTask *
sim_plan_task(const SimPlan *plan, uint32_t id)
{
    g_assert(id >= plan->base && id - plan->base < plan->tasks->len);
    return &g_array_index(plan->tasks, SimTask, id - plan->base);
}

/* Forget tasks below @id (run and no longer referred to). */
void sim_plan_forget(SimPlan *plan, uint32_t id);

/* Append a copy of @t (its deps array and name are copied into the plan's
 * storage: never free them); returns its id. */
uint32_t sim_plan_add(SimPlan *plan, const SimTask *t);

/* sim_plan_add for a @t whose name is already in @plan's storage (the
 * name of one of its tasks, forgotten or not): not interned again. */
uint32_t sim_plan_add_named(SimPlan *plan, const SimTask *t);

/* Append copies of @src[0..@n) whose names are already in @plan's storage
 * (as sim_plan_add_named), each with room for its n_deps deps, which the
 * caller writes (their values are not copied); the first one's id. */
uint32_t sim_plan_add_block(SimPlan *plan, const SimTask *src, uint32_t n);

/* Add dependency @dep to task @id (no-op if already there). */
void sim_plan_add_dep(SimPlan *plan, uint32_t id, uint32_t dep);

/*
 * Structural checks every plan must pass before it runs, each failing with
 * HS_TRACE_ERROR_BAD_PLAN naming the task id and field:
 * dependency ids in range and not self, no cycles, processor indices below
 * @n_procs.  (Slice coverage needs the graph: a recording's plan is checked
 * for overlaps and holes by traces/record.c, check_coverage.)
 */
gboolean sim_plan_check(const SimPlan *plan, uint32_t n_procs, GError **error);

/* The same checks for the tasks from id @from on (a phase added to a plan
 * streamed step by step): their deps may name any earlier id. */
gboolean sim_plan_check_from(const SimPlan *plan, uint32_t from, uint32_t n_procs,
                             GError **error);

/* sim_plan_check_from, then the tasks' sim_plan_topo_order_from (which it
 * computes anyway); NULL with the error. */
uint32_t *sim_plan_checked_order_from(const SimPlan *plan, uint32_t from, uint32_t n_procs,
                                      GError **error);

/*
 * Topological order of the tasks, the smallest ready id first (so the id
 * order when every dep points to a lower id), or NULL with an error naming
 * a task on a cycle.  (transfer full) array of n ids.
 */
uint32_t *sim_plan_topo_order(const SimPlan *plan, GError **error);

/* The same for the tasks from id @from on (deps below @from count as
 * done): (transfer full) array of sim_plan_len - @from ids. */
uint32_t *sim_plan_topo_order_from(const SimPlan *plan, uint32_t from, GError **error);

#endif /* SIM_PLAN_H */
