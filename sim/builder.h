/*
 * builder.h - builds one phase of a plan from a policy's placement
 * decisions, deriving dependencies and syncs from the data flow.
 *
 * The policy says *where* each slice of each node runs
 * (sim_builder_kernel); the builder works out *what waits on what*: a task
 * that reads node S waits on the tasks that wrote the part of S it reads;
 * when such a producer ran on another processor, the wait goes through a
 * sync task of the run's mechanism (driver or fast), one per (node, from,
 * to) hand-off.  Because dependencies come from the data flow and not from
 * the policy, a policy cannot forget one — and a test that deliberately
 * drops one (sim_builder_set_drop_syncs) shows the executor computing wrong
 * numbers.
 *
 */
#ifndef SIM_BUILDER_H
#define SIM_BUILDER_H

#include <glib.h>

#include "models/graph.h"
#include "sim/plan.h"

typedef struct SimBuilder SimBuilder;
typedef struct SimCostModel SimCostModel;

/* Options every policy may read (parsed from the command line). */
typedef struct SimPolicyOptions {
    uint32_t chunk_tokens;       /* chunked prefill: chunk size (default 256) */
    uint32_t row_align;          /* tensor partitions: rows aligned to (256) */
    uint32_t tok_align;          /* sequence cuts at multiples of (32) */
    uint32_t min_npu_shape;      /* standard NPU shapes: powers of two ... */
    uint32_t max_npu_shape;      /* ... from min to max (32..1024) */
} SimPolicyOptions;

void sim_policy_options_init(SimPolicyOptions *o);

/* Everything a policy sees of the phase it plans. */
typedef struct SimPhaseInfo {
    SimPhase phase;
    uint32_t step;               /* decode step index */
    uint32_t tokens;             /* S (prefill) or batch B (decode) */
    uint32_t context;            /* tokens already in the KV cache */
    SimSyncMech sync;
    uint32_t proc_cpu, proc_gpu, proc_npu;   /* processor indices */
    uint32_t n_procs;
    const SimPolicyOptions *opts;
    uint32_t proc_control;       /* the CPU running sync threads (appended:
                                  * plug-in ABI 1 layout unchanged before it) */
} SimPhaseInfo;

/*
 * Start a phase.  @graph (borrowed) is the phase's operator graph; tasks are appended to @plan.  Every task without a
 * data dependency waits on the tasks in @entry (the end of the previous
 * phase).  @cost answers "how long would this take" (may be NULL for
 * policies that do not ask).
 */
SimBuilder *sim_builder_new(SimPlan *plan, const MdlGraph *graph,
                            const SimPhaseInfo *info, const SimCostModel *cost,
                            const uint32_t *entry, uint32_t n_entry);
void sim_builder_free(SimBuilder *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimBuilder, sim_builder_free)

const SimPhaseInfo *sim_builder_info(const SimBuilder *b);
uint32_t sim_builder_n_nodes(const SimBuilder *b);
const MdlNode *sim_builder_node(const SimBuilder *b, uint32_t i);

/* The whole output of a node as a slice. */
SimSlice sim_builder_full(const SimBuilder *b, uint32_t node);

/*
 * Run @slice of @node on processor @proc with storage precision @prec.
 * slice.pad_tokens > 0 computes that many tokens and crops (NPU static
 * shapes).  On the NPU, the padded shape must have been prepared
 * (offline: sim_builder_npu_offline; or in-plan: sim_builder_prepare).
 * Returns the task id.
 */
uint32_t sim_builder_kernel(SimBuilder *b, uint32_t node, uint32_t proc,
                            SimSlice slice, MdlPrecision prec, GError **error);

/*
 * Say why the policy put task @task (an id returned by sim_builder_kernel)
 * where it is: one line `explain` prints beside the cost model's reasoning
 * (e.g. the solver's candidates).  @why is copied.
 */
void sim_builder_note(SimBuilder *b, uint32_t task, const char *why);

/*
 * A timing-only task (SIM_TASK_SHADOW) doing @work on @proc for @slice of
 * @node: it waits on what a kernel of that slice would read, and readers
 * of @onto_slice of node @onto (@node and @slice: its own) wait on it as
 * on that node's kernels (through a sync when on another processor), but
 * it computes no values — they are part of the node's kernel task (e.g.
 * mllm-NPU's shadow outlier matmul, whose result the W8A8_SHADOW kernel's
 * value already includes, and which corrects the residual sum after it).
 * Returns the task id.
 */
uint32_t sim_builder_shadow(SimBuilder *b, uint32_t node, uint32_t proc, SimSlice slice,
                            const SimWork *work, const char *what, uint32_t onto,
                            SimSlice onto_slice);

/* Task @id starts only after task @before ended: an order a policy
 * imposes on one processor's queue (a scheduler's choice, not data flow;
 * @before must be an earlier task of the same phase). */
void sim_builder_after(SimBuilder *b, uint32_t id, uint32_t before);

/* What a task on processor @to waits on to start after task @before
 * (one with a node): @before itself on the same processor, else a
 * hand-off of it (the consumer learns of its end as of any output: e.g.
 * an NPU graph that returns only when all of it has run).  Call it before
 * adding the task, then sim_builder_after() on the result. */
uint32_t sim_builder_handoff(SimBuilder *b, uint32_t before, uint32_t to);

/* Mark NPU static shape @tokens as prepared before the run (no cost). */
void sim_builder_npu_offline(SimBuilder *b, uint32_t tokens);

/* Prepare the NPU graph of static shape @tokens inside the plan: a task on
 * the NPU whose cost grows with the tensors of all NPU matmuls at that
 * shape.  Kernels of that shape wait on it.  Returns the task id. */
uint32_t sim_builder_prepare(SimBuilder *b, uint32_t tokens);

/* The standard static shape for @tokens: the smallest power of two in
 * [min_npu_shape, max_npu_shape] >= tokens, or 0 if above the largest. */
uint32_t sim_builder_std_shape(const SimBuilder *b, uint32_t tokens);

/* Testing only: leave out every cross-processor dependency (and its sync)
 * so consumers may start before producers end. */
void sim_builder_set_drop_syncs(SimBuilder *b, gboolean drop);

/*
 * Cost of a would-be task (alone on its processor, no contention), in ps:
 * the profiler policies consult.  Uses the same work description the task
 * would get.
 */
uint64_t sim_builder_cost_ps(const SimBuilder *b, uint32_t node, uint32_t proc,
                             SimSlice slice, MdlPrecision prec);
/* Cost of arbitrary @work on @proc alone (e.g. a shadow task's), in ps. */
uint64_t sim_builder_work_cost_ps(const SimBuilder *b, uint32_t proc, const SimWork *work);

/* Does the NPU's vendor stack run W4A16 matmuls in decode? */
gboolean sim_builder_npu_w4a16_decode(const SimBuilder *b);

/* Cost of one sync hand-off as policies plan for it (the fast mechanism:
 * the same plan then runs under --sync driver as an ablation), in ps. */
uint64_t sim_builder_sync_cost_ps(const SimBuilder *b, uint32_t from, uint32_t to);
/* Cost of one hand-off of @bytes under the run's own mechanism
 * (info->sync), for a policy that plans for the sync it will run with. */
uint64_t sim_builder_sync_cost_run_ps(const SimBuilder *b, uint32_t from, uint32_t to,
                                      uint64_t bytes);

/*
 * Finish the phase: every node must have been fully covered.  The ids of
 * the tasks that end the phase (writers of the last node) go to @exit
 * (transfer full, *n_exit long).
 */
gboolean sim_builder_finish(SimBuilder *b, uint32_t **exit, uint32_t *n_exit,
                            GError **error);

#endif /* SIM_BUILDER_H */
