/*
 * common.h - small placement helpers the built-in policies share.
 */
#ifndef SIM_POLICY_COMMON_H
#define SIM_POLICY_COMMON_H

#include "sim/policies/policy.h"

/* The whole of @node on @proc. */
gboolean policy_whole(SimBuilder *b, uint32_t node, uint32_t proc,
                      MdlPrecision prec, GError **error);

/* Every node of the phase on @proc (cpu-only, gpu-only, and decode of the
 * NPU-prefill policies). */
gboolean policy_all_on(SimBuilder *b, uint32_t proc, GError **error);

/* Tokens [tok0, tok1) of matmul @node on the NPU, padded to @pad (0: none). */
gboolean policy_npu_tokens(SimBuilder *b, uint32_t node, uint32_t tok0,
                           uint32_t tok1, uint32_t pad, MdlPrecision prec,
                           GError **error);

/* Precision the NPU runs matmuls at in this phase: W4A16, unless the
 * vendor stack lacks W4A16 in decode; then the INT path, W4A8 (HeteroLLM
 * §5.1: NPU decode used integer activations). */
MdlPrecision policy_npu_prec(const SimBuilder *b);

/* Prefill: matmuls via @matmul, every other node whole on @other. */
typedef gboolean (*PolicyMatmulFn)(SimBuilder *b, uint32_t node, GError **error);
gboolean policy_prefill(SimBuilder *b, PolicyMatmulFn matmul, uint32_t other,
                        GError **error);

#endif /* SIM_POLICY_COMMON_H */
