/*
 * common.c - see common.h.
 */
#include "sim/policies/common.h"

gboolean
policy_whole(SimBuilder *b, uint32_t node, uint32_t proc, MdlPrecision prec,
             GError **error)
{
    return sim_builder_kernel(b, node, proc, sim_builder_full(b, node), prec,
                              error) != UINT32_MAX;
}

gboolean
policy_all_on(SimBuilder *b, uint32_t proc, GError **error)
{
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        if (!policy_whole(b, i, proc, MDL_PREC_W4A16, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
policy_npu_tokens(SimBuilder *b, uint32_t node, uint32_t tok0, uint32_t tok1,
                  uint32_t pad, MdlPrecision prec, GError **error)
{
    SimSlice s = sim_builder_full(b, node);
    s.tok0 = tok0;
    s.tok1 = tok1;
    s.pad_tokens = pad;
    return sim_builder_kernel(b, node, sim_builder_info(b)->proc_npu, s, prec,
                              error) != UINT32_MAX;
}

MdlPrecision
policy_npu_prec(const SimBuilder *b)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    if (info->phase == SIM_PHASE_DECODE && !sim_builder_npu_w4a16_decode(b)) {
        return MDL_PREC_W4A8;
    }
    return MDL_PREC_W4A16;
}

gboolean
policy_prefill(SimBuilder *b, PolicyMatmulFn matmul, uint32_t other, GError **error)
{
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        gboolean ok = sim_builder_node(b, i)->op == MDL_OP_MATMUL
                      ? matmul(b, i, error)
                      : policy_whole(b, i, other, MDL_PREC_W4A16, error);
        if (!ok) {
            return FALSE;
        }
    }
    return TRUE;
}
