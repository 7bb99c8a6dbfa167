/*
 * hetero-layer.c - HeteroLLM's layer-level policy (HeteroLLM §4): each
 * operator on the backend that suits it — matmuls on the NPU with the
 * weights permuted for its order sensitivity and the sequence padded to the
 * next prepared shape; RMSNorm, RoPE, attention, SwiGLU and residual adds
 * on the GPU — with syncs at every hand-off.  The NPU stack has no W4A16
 * decode, so decode matmuls stay on the GPU.
 */
#include "sim/policies/common.h"

static gboolean
layer_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    uint32_t n = sim_builder_node(b, node)->tokens;
    uint32_t max = sim_builder_info(b)->opts->max_npu_shape;
    for (uint32_t t0 = 0; t0 < n; t0 += max) {
        uint32_t t1 = MIN(n, t0 + max);
        uint32_t shape = sim_builder_std_shape(b, t1 - t0);
        if (!policy_npu_tokens(b, node, t0, t1, shape == t1 - t0 ? 0 : shape,
                               MDL_PREC_W4A16, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
layer_plan(SimBuilder *b, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    if (info->phase == SIM_PHASE_DECODE) {
        return policy_all_on(b, info->proc_gpu, error);
    }
    const SimPolicyOptions *o = info->opts;
    for (uint32_t s = o->min_npu_shape; s <= o->max_npu_shape; s *= 2) {
        sim_builder_npu_offline(b, s);
    }
    return policy_prefill(b, layer_matmul, info->proc_gpu, error);
}

const SimPolicy sim_policy_hetero_layer = {
    SIM_POLICY_ABI, "hetero-layer",
    "HeteroLLM layer level: matmuls on NPU (permuted, padded), the rest on GPU",
    layer_plan, "heterollm",
};
