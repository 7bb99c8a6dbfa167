/*
 * cost.h - the profiler policies consult: how long would this work take
 * on that processor, alone (no contention), according to the SoC's own
 * timing models.  Also converts plan work into hw op descriptors, the one
 * place where sim/ speaks hw/'s op vocabulary.
 */
#ifndef SIM_COST_H
#define SIM_COST_H

#include <glib.h>
#include <stdint.h>

#include "sim/plan.h"

#include "hw/op.h"

typedef struct HwSoc HwSoc;
typedef struct HwStack HwStack;
typedef struct SimCostModel SimCostModel;

/* The hw op a task's work becomes (NPU matmuls marked weight_lhs are
 * turned around: W . X^T). */
void sim_work_to_hw_op(const SimWork *w, SimTaskKind kind, HwOp *op);

/* The profiler of @soc running @stack's kernels.  (transfer full) */
SimCostModel *sim_cost_new(const HwSoc *soc, const HwStack *stack);
void sim_cost_free(SimCostModel *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimCostModel, sim_cost_free)

/* The share of the GPU's time the LLM can count on: a game rendering
 * ahead of it (its kernels at low priority) takes the rest.  GPU work then
 * costs 1/share as long.  Default 1. */
void sim_cost_share_gpu(SimCostModel *c, double llm_share);

/* Time of @w alone on processor @proc, launch overheads included, in ps;
 * SIM_TIME_HORIZON_PS if it lies beyond the horizon (the executor then
 * refuses the task, naming it and the keys that made it). */
uint64_t sim_cost_work_ps(const SimCostModel *c, uint32_t proc, const SimWork *w);

/* Time of one hand-off of @bytes @from -> @to with mechanism @mech, in ps. */
uint64_t sim_cost_sync_ps(const SimCostModel *c, SimSyncMech mech, uint32_t from,
                          uint32_t to, uint64_t bytes);

/* Does the NPU's runtime on this stack run W4A16 matmuls in decode? */
gboolean sim_cost_npu_w4a16_decode(const SimCostModel *c);

/* The stack the profiler prices.  (transfer none) */
const HwStack *sim_cost_stack(const SimCostModel *c);

#endif /* SIM_COST_H */
