/*
 * npu-tts.c - test-time scaling on a mobile NPU (NPU-TTS, EuroSys '26): decode on
 * the NPU, built for batches (best-of-N, beam search).
 *
 * Matmul weights are Q4_0 (INT4, groups of 32; FFN-down Q8_0), read by the
 * vector unit (HVX), dequantised through a lookup table into the TCM and
 * multiplied on the FP16 matrix unit (HMX).  The matrix unit works on
 * 32x32 tiles, so a decode matmul [B, K] x [K, N] is computed as 32 rows
 * whatever B <= 32 is: the batch is padded to the next standard shape
 * (32, 64, ...) and batch 32 costs the matmuls what batch 1 does.
 * Attention (FlashAttention with the LUT softmax), norms, RoPE and
 * activations run on the NPU too; the LM head and the logits stay on the
 * CPU (the NPU session's 32-bit address window), and so does the token
 * embedding lookup.  Prefill runs the same placement over the prompt, cut
 * into the largest standard shape and padded to a standard one.
 */
#include "sim/policies/common.h"

static MdlPrecision
tts_prec(const MdlNode *n)
{
    return n->weight == MDL_W_DOWN ? MDL_PREC_Q8_0 : MDL_PREC_Q4_0;
}

static gboolean
tts_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    uint32_t n = sim_builder_node(b, node)->tokens;
    uint32_t max = sim_builder_info(b)->opts->max_npu_shape;
    for (uint32_t t0 = 0; t0 < n; t0 += max) {
        uint32_t t1 = MIN(n, t0 + max);
        uint32_t shape = sim_builder_std_shape(b, t1 - t0);
        if (!policy_npu_tokens(b, node, t0, t1, shape == t1 - t0 ? 0 : shape,
                               tts_prec(sim_builder_node(b, node)), error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
tts_plan(SimBuilder *b, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    for (uint32_t s = info->opts->min_npu_shape; s <= info->opts->max_npu_shape; s *= 2) {
        sim_builder_npu_offline(b, s);
    }
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        const MdlNode *n = sim_builder_node(b, i);
        gboolean ok;
        if (n->op == MDL_OP_MATMUL && n->weight == MDL_W_LM_HEAD) {
            ok = policy_whole(b, i, info->proc_cpu, MDL_PREC_Q4_0, error);
        } else if (n->op == MDL_OP_MATMUL) {
            ok = tts_matmul(b, i, error);
        } else if (n->op == MDL_OP_EMBED) {
            ok = policy_whole(b, i, info->proc_cpu, MDL_PREC_W4A16, error);
        } else {
            ok = policy_whole(b, i, info->proc_npu, MDL_PREC_W4A16, error);
        }
        if (!ok) {
            return FALSE;
        }
    }
    return TRUE;
}

const SimPolicy sim_policy_npu_tts = {
    SIM_POLICY_ABI, "npu-tts",
    "NPU test-time scaling: batched decode on the NPU (Q4_0 dequantised by HVX for HMX), "
    "LM head on the CPU", tts_plan, "npu-tts",
};
