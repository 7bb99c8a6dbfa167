/*
 * transformer-lite.c - Transformer-Lite (arXiv:2403.20041): a GPU-only engine
 * on its own OpenCL kernels (the "transformer-lite" stack: 1.6 TFLOPS
 * FP16 matmuls where PPL reaches ~1, separate prefill and decode kernels).
 * Weights are E0M4 FP4 in groups of 128 (MDL_PREC_FP4A16), dequantised by
 * a shift and an OR; activations FP16.  The LM head (Gemma: the tied
 * embedding table) is taken to stay FP16: the paper quantises the blocks'
 * matmuls and does not say the head is, and its decode runs "near the
 * memory-bandwidth limit" (§5) — with an FP4 head Gemma-2B's 30 tokens/s
 * would move 1.34 GB x 30 = 40 GB/s, 59 % of the DRAM's 68; with an FP16
 * head 2.1 GB x 30 = 63 GB/s.  The KV cache is kept once and
 * written in place (the graph's attention reads and appends to it: no copy
 * between steps).  Its kernels go to the GPU at the lowest priority so the
 * phone's rendering keeps its frame rate (--llm-priority low with a game
 * alongside).
 *
 * It runs the ONNX graph exported from the model's PyTorch forward as it
 * is (Transformer-Lite §3: ONNX models, shapes derived symbolically), and
 * that forward computes the logits of every position: in prefill the LM
 * head multiplies all S prompt tokens, of which the next token needs the
 * last one.  The kernel is charged for S rows (a padded slice: computed,
 * then cropped to the last).
 */
#include "sim/policies/common.h"

static gboolean
tl_plan(SimBuilder *b, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    uint32_t gpu = info->proc_gpu;
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        const MdlNode *n = sim_builder_node(b, i);
        MdlPrecision prec = n->op != MDL_OP_MATMUL ? MDL_PREC_W4A16
                            : n->weight == MDL_W_LM_HEAD ? MDL_PREC_FP16 : MDL_PREC_FP4A16;
        SimSlice s = sim_builder_full(b, i);
        if (info->phase == SIM_PHASE_PREFILL && n->weight == MDL_W_LM_HEAD &&
            info->tokens > s.tok1 - s.tok0) {
            s.pad_tokens = info->tokens;        /* logits of every prompt token */
        }
        if (sim_builder_kernel(b, i, gpu, s, prec, error) == UINT32_MAX) {
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
