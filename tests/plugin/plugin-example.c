/*
 * plugin-example.c - a scheduling policy built as a shared module, loaded
 * with --policy-plugin: the template for users' own policies.
 *
 * "gpu-npu-alternate" sends the matmuls of even layers to the NPU (padded
 * to the next prepared shape) and everything else to the GPU.  It only
 * says where things run; the builder adds the dependencies and syncs.
 */
#include "sim/policies/policy.h"

static gboolean
plan_phase(SimBuilder *b, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    for (uint32_t s = info->opts->min_npu_shape; s <= info->opts->max_npu_shape; s *= 2) {
        sim_builder_npu_offline(b, s);
    }
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        const MdlNode *n = sim_builder_node(b, i);
        SimSlice s = sim_builder_full(b, i);
        uint32_t proc = info->proc_gpu;
        uint32_t shape = sim_builder_std_shape(b, n->tokens);
        if (info->phase == SIM_PHASE_PREFILL && n->op == MDL_OP_MATMUL &&
            n->layer >= 0 && n->layer % 2 == 0 && shape != 0) {
            proc = info->proc_npu;
            s.pad_tokens = shape == n->tokens ? 0 : shape;
        }
        if (sim_builder_kernel(b, i, proc, s, MDL_PREC_W4A16, error) == UINT32_MAX) {
            return FALSE;
        }
    }
    return TRUE;
}

/* the tests build it a second time as "gpu-only", which must be refused */
#ifndef PLUGIN_NAME
#define PLUGIN_NAME "gpu-npu-alternate"
#endif

static const SimPolicy policy = {
    SIM_POLICY_ABI, PLUGIN_NAME,
    "example plug-in: even layers' prefill matmuls on the NPU, the rest on the GPU",
    plan_phase,
    NULL,                        /* the default software stack */
};

const SimPolicy *hs_policy_plugin(void);

const SimPolicy *
hs_policy_plugin(void)
{
    return &policy;
}
