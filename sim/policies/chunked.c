/*
 * chunked.c - mllm-NPU's chunked prefill (mllm-NPU §3.2): the prompt is cut
 * into fixed chunks (default 256 tokens, --chunk) that share one prepared
 * NPU graph; only the last chunk is padded.  Matmuls run on the NPU, the
 * float operators (norms, RoPE, attention, activations) on the CPU, as in
 * mllm-NPU.  Chunk i's attention reads the K/V of every earlier chunk, so
 * the builder's data-flow dependencies pipeline chunks across layers by
 * themselves.  Decode runs on the CPU (mllm-NPU decodes on the CPU).
 */
#include "sim/policies/common.h"

static gboolean
chunk_matmul(SimBuilder *b, uint32_t node, GError **error)
{
    uint32_t n = sim_builder_node(b, node)->tokens;
    uint32_t c = sim_builder_info(b)->opts->chunk_tokens;
    for (uint32_t t0 = 0; t0 < n; t0 += c) {
        uint32_t t1 = MIN(n, t0 + c);
        if (!policy_npu_tokens(b, node, t0, t1, t1 - t0 == c ? 0 : c,
                               MDL_PREC_W4A16, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Float operators chunk by chunk too, so chunk 0 can move on. */
static gboolean
chunk_other(SimBuilder *b, uint32_t node, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    SimSlice s = sim_builder_full(b, node);
    uint32_t n = s.tok1, c = info->opts->chunk_tokens;
    for (uint32_t t0 = 0; t0 < n; t0 += c) {
        s.tok0 = t0;
        s.tok1 = MIN(n, t0 + c);
        if (sim_builder_kernel(b, node, info->proc_cpu, s, MDL_PREC_W4A16,
                               error) == UINT32_MAX) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
chunked_plan(SimBuilder *b, GError **error)
{
    const SimPhaseInfo *info = sim_builder_info(b);
    if (info->phase == SIM_PHASE_DECODE) {
        return policy_all_on(b, info->proc_cpu, error);
    }
    sim_builder_npu_offline(b, info->opts->chunk_tokens);
    for (uint32_t i = 0; i < sim_builder_n_nodes(b); i++) {
        gboolean ok = sim_builder_node(b, i)->op == MDL_OP_MATMUL
                      ? chunk_matmul(b, i, error) : chunk_other(b, i, error);
        if (!ok) {
            return FALSE;
        }
    }
    return TRUE;
}

const SimPolicy sim_policy_chunked = {
    SIM_POLICY_ABI, "chunked",
    "mllm-NPU chunked prefill: fixed chunks share one NPU graph; float ops on CPU",
    chunked_plan, "mllm",
};
