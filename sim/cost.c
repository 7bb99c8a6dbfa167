/*
 * cost.c - see cost.h.
 */
#include "sim/cost.h"
#include "hw/soc.h"
#include "hw/stack.h"
#include "hw/sync.h"

struct SimCostModel {
    const HwSoc *soc;
    const HwStack *stack;
    double gpu_share;            /* of the GPU's time, for the LLM */
};

SimCostModel *
sim_cost_new(const HwSoc *soc, const HwStack *stack)
{
    g_assert(stack != NULL);
    SimCostModel *c = g_new0(SimCostModel, 1);
    c->soc = soc;
    c->stack = stack;
    c->gpu_share = 1.0;
    return c;
}

void
sim_cost_free(SimCostModel *c)
{
    g_free(c);
}

static HwDtype
weight_dtype(MdlPrecision p)
{
    switch (p) {
    case MDL_PREC_W4A16:
    case MDL_PREC_W4A8:
    case MDL_PREC_FP4A16:
    case MDL_PREC_Q4_0:
        return HW_DTYPE_INT4;
    case MDL_PREC_W8A16:
    case MDL_PREC_W8A8:
    case MDL_PREC_W8A8_SHADOW:
    case MDL_PREC_Q8_0:
        return HW_DTYPE_INT8;
    default:
        return HW_DTYPE_FP16;
    }
}

static HwDtype
act_dtype(MdlPrecision p)
{
    return (p == MDL_PREC_W8A8 || p == MDL_PREC_W4A8 || p == MDL_PREC_W8A8_SHADOW)
           ? HW_DTYPE_INT8 : HW_DTYPE_FP16;
}

/* hw's weight formats mirror the model precisions one to one */
G_STATIC_ASSERT((int) HW_WFMT_COUNT == (int) MDL_PREC_COUNT &&
                (int) HW_WFMT_Q8_0 == (int) MDL_PREC_Q8_0 &&
                (int) HW_WFMT_FP16 == (int) MDL_PREC_FP16 &&
                (int) HW_WFMT_FP4A16 == (int) MDL_PREC_FP4A16);

void
sim_work_to_hw_op(const SimWork *w, SimTaskKind kind, HwOp *op)
{
    *op = (HwOp) {
        .flops = w->flops, .read_bytes = w->read_bytes, .write_bytes = w->write_bytes,
        .serial_elems = w->serial_elems, .compute = act_dtype(w->prec), .wfmt = (HwWfmt) w->prec,
        .m = w->m, .k = w->k, .n = w->n,
        .a_dtype = act_dtype(w->prec), .b_dtype = weight_dtype(w->prec),
    };
    if (kind == SIM_TASK_PREPARE) {
        op->kind = HW_OP_PREPARE;
        return;
    }
    switch (w->op) {
    case MDL_OP_MATMUL:
        op->kind = HW_OP_MATMUL;
        /* the weight is the [k, n] operand (before turning it around) */
        op->weight_bytes = (uint64_t) ((double) (w->k * w->n) *
                                       mdl_prec_weight_bytes(w->prec) + 0.5);
        if (w->weight_lhs) {
            /* W [rows, k] . X^T [k, tokens]: the tokens are stationary */
            op->m = w->n;
            op->n = w->m;
            op->a_dtype = weight_dtype(w->prec);
            op->b_dtype = act_dtype(w->prec);
        }
        break;
    case MDL_OP_ATTENTION:
        op->kind = HW_OP_ATTENTION;
        break;
    default:
        op->kind = HW_OP_ELEMWISE;
        break;
    }
}

uint64_t
sim_cost_work_ps(const SimCostModel *c, uint32_t proc, const SimWork *w)
{
    HwOp op;
    HwCost cost;
    sim_work_to_hw_op(w, SIM_TASK_KERNEL, &op);
    const HwDev *d = g_ptr_array_index(c->soc->devs, proc);
    hw_dev_estimate(d, c->stack, &op, &cost);
    if (d->cls->kind == HW_KIND_GPU && c->gpu_share < 1.0) {
        /* saturated at the horizon: the planner sees "too long", and the
         * runtime refuses the task if it is planned anyway */
        return sim_time_from_ps((double) cost.alone_ps / c->gpu_share);
    }
    return cost.alone_ps;
}

void
sim_cost_share_gpu(SimCostModel *c, double llm_share)
{
    g_assert(llm_share > 0 && llm_share <= 1);
    c->gpu_share = llm_share;
}

uint64_t
sim_cost_sync_ps(const SimCostModel *c, SimSyncMech mech, uint32_t from, uint32_t to,
                 uint64_t bytes)
{
    HwSyncMech m = mech == SIM_SYNC_DRIVER ? HW_SYNC_DRIVER : HW_SYNC_FAST;
    return hw_sync_handoff_ps(c->soc, c->stack, m, to, bytes);
}

gboolean
sim_cost_npu_w4a16_decode(const SimCostModel *c)
{
    return c->stack->npu.w4a16_decode;
}

const HwStack *
sim_cost_stack(const SimCostModel *c)
{
    return c->stack;
}
