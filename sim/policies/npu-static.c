/*
 * npu-static.c - the NPU-only prefill baselines of HeteroLLM §5.2, which
 * differ only in how they meet the NPU's static shapes (HeteroLLM §3.2, §5.2):
 *
 *   npu-only        pad the sequence up to the next prepared standard shape
 *                   (powers of two 32..1024; longer sequences run as
 *                   1024-token pieces with the last one padded)
 *   npu-pipe        cut the sequence into standard shapes run one after
 *                   another (600 = 512 + 64 + 32 (24 padded to 32))
 *   online-prepare  prepare a graph for the exact length at request time
 *                   and pay for it
 *
 * Matmuls run on the NPU with the weights permuted for its order
 * sensitivity; every other operator runs on the GPU.  The NPU stack runs no
 * W4A16 decode, so decode runs on the GPU as in gpu-only.
 *
 * HeteroLLM's layer-level policy (§4, hetero-layer) is the padding plan:
 * each operator on the backend that suits it, matmuls on the NPU padded to
 * the next prepared shape, RMSNorm, RoPE, attention, SwiGLU and residual
 * adds on the GPU, with a sync at every hand-off.  The two names are one
 * plan: padding is how the layer-level engine meets a length it has no
 * graph for, the baseline §5.2 measures hetero-tensor's cuts against.
 */
#include "sim/policies/common.h"

static void
offline_standard_shapes(SimBuilder *b)
{
    const SimPolicyOptions *o = sim_builder_info(b)->opts;
    for (uint32_t s = o->min_npu_shape; s <= o->max_npu_shape; s *= 2) {
        sim_builder_npu_offline(b, s);
    }
}

static gboolean
padding_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    uint32_t n = sim_builder_node(b, node)->tokens;
    uint32_t max = sim_builder_info(b)->opts->max_npu_shape;
    for (uint32_t t0 = 0; t0 < n; t0 += max) {
        uint32_t t1 = MIN(n, t0 + max);
        uint32_t shape = sim_builder_std_shape(b, t1 - t0);
        uint32_t pad = shape == t1 - t0 ? 0 : shape;
        if (!policy_npu_tokens(b, node, t0, t1, pad, MDL_PREC_W4A16, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
pipe_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    const SimPolicyOptions *o = sim_builder_info(b)->opts;
    uint32_t n = sim_builder_node(b, node)->tokens;
    uint32_t t0 = 0;
    while (t0 < n) {
        uint32_t left = n - t0;
        uint32_t shape = o->max_npu_shape;
        while (shape > o->min_npu_shape && shape > left) {
            shape /= 2;
        }
        uint32_t t1 = t0 + MIN(shape, left);
        uint32_t pad = t1 - t0 == shape ? 0 : shape;
        if (!policy_npu_tokens(b, node, t0, t1, pad, MDL_PREC_W4A16, error)) {
            return FALSE;
        }
        t0 = t1;
    }
    return TRUE;
}

static gboolean
exact_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    uint32_t n = sim_builder_node(b, node)->tokens;
    if (n != info->tokens) {
        /* the last token's LM head: one more length would mean preparing
         * the model's graphs again for a matrix-vector product, which the
         * GPU does anyway */
        return policy_whole(b, node, info->proc_gpu, MDL_PREC_W4A16, error);
    }
    sim_builder_prepare(b, n);          /* the request's graphs, once */
    return policy_npu_tokens(b, node, 0, n, 0, MDL_PREC_W4A16, error);
}

static gboolean
plan_with(SimBuilder *b, PolicyMatmulFn matmul, gboolean online, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    if (info->phase == SIM_PHASE_DECODE) {
        return policy_all_on(b, info->proc_gpu, error);
    }
    if (!online) {
        offline_standard_shapes(b);
    }
    return policy_prefill(b, matmul, info->proc_gpu, error);
}

static gboolean
padding_plan(SimBuilder *b, GError **error)
{
    return plan_with(b, padding_matmul, FALSE, error);
}

static gboolean
pipe_plan(SimBuilder *b, GError **error)
{
    return plan_with(b, pipe_matmul, FALSE, error);
}

static gboolean
online_plan(SimBuilder *b, GError **error)
{
    return plan_with(b, exact_matmul, TRUE, error);
}

const SimPolicy sim_policy_hetero_layer = {
    SIM_POLICY_ABI, "hetero-layer",
    "HeteroLLM layer level: matmuls on NPU (permuted, padded), the rest on GPU",
    padding_plan, "heterollm",
};

const SimPolicy sim_policy_npu_only = {
    SIM_POLICY_ABI, "npu-only",
    "prefill matmuls on the NPU padded to the next prepared shape; rest on GPU",
    padding_plan, "heterollm",
};

const SimPolicy sim_policy_npu_pipe = {
    SIM_POLICY_ABI, "npu-pipe",
    "prefill matmuls on the NPU as several prepared shapes in a row; rest on GPU",
    pipe_plan, "heterollm",
};

const SimPolicy sim_policy_online_prepare = {
    SIM_POLICY_ABI, "online-prepare",
    "NPU graph prepared for the exact prompt length at request time (cost paid)",
    online_plan, "heterollm",
};
