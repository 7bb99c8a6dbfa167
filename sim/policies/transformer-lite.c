/*
 * transformer-lite.c - Transformer-Lite (FACTS.md §7): a GPU-only engine
 * on its own OpenCL kernels (the "transformer-lite" stack: 1.6 TFLOPS
 * FP16 matmuls where PPL reaches ~1, separate prefill and decode kernels).
 * Weights are E0M4 FP4 in groups of 128 (MDL_PREC_FP4A16), dequantised by
 * a shift and an OR; activations FP16.  The KV cache is kept once and
 * written in place (the graph's attention reads and appends to it: no copy
 * between steps).  Its kernels go to the GPU at the lowest priority so the
 * phone's rendering keeps its frame rate (--llm-priority low with a game
 * alongside).
 */
#include "sim/policies/common.h"

static gboolean
tl_plan(SimBuilder *b, GError **error)
{
    uint32_t gpu = sim_builder_info(b)->proc_gpu;
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        MdlPrecision prec = sim_builder_node(b, i)->op == MDL_OP_MATMUL ? MDL_PREC_FP4A16
                                                                         : MDL_PREC_W4A16;
        if (!policy_whole(b, i, gpu, prec, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

const SimPolicy sim_policy_transformer_lite = {
    SIM_POLICY_ABI, "transformer-lite",
    "Transformer-Lite: GPU only on its own kernels, E0M4 FP4 weights, in-place KV cache",
    tl_plan, "transformer-lite",
};
