/*
 * node-compute.h - the arithmetic of one node of a step's operator graph
 * (models/graph.h): any slice of its output, from its sources' buffers,
 * at a task's storage precision.  The one definition of each op's
 * arithmetic: the whole-model forward pass (sim/forward.h, `infer`) runs
 * every node whole through it, the simulator's checker (sim/values.c)
 * runs each task's slice through it, so the two cannot drift apart.
 * Everything a node's arithmetic depends on is a field of the node (which
 * norm's weights, which bias, the activation, the rotary layout, the
 * window) or the model's weights; never its name.
 */
#ifndef SIM_NODE_COMPUTE_H
#define SIM_NODE_COMPUTE_H

#include <glib.h>

#include "engine/model.h"
#include "engine/quant-formats.h"
#include "models/graph.h"
#include "sim/plan.h"

/* MDL_PREC_COUNT stands for the FP reference here: FP16 weights (the
 * papers' own reference: mllm-NPU §5 measures W8A8 against FP16) with FP32 activations. */
#define SIM_PREC_FP_REF MDL_PREC_COUNT

/* @m makes the FP reference's weights (FP16) in the pass that makes its
 * own, not by generating their values again (eng_model_also_make): for a
 * check, which computes both.  Before any weight is asked for. */
void sim_node_weights_for_fp_ref(EngModel *m);

typedef struct SimNodeInputs {
    const float *src[MDL_MAX_SRC];   /* each source's full-size buffer */
    /* MATMUL at INT8 activations: the per-tensor parameters, calibrated
     * offline (sim/values.c: on the unpartitioned W4A16 reference's whole
     * input of this matmul in the prefill; NULL otherwise) */
    const EngActInt8 *act8;
    /* ATTENTION: this layer's K and V caches [max_pos, kv_heads * head_dim]
     * of each row's sequence (prefill: one, [0]; decode: row t's is [t]) */
    float *const *k_cache, *const *v_cache;
    /* EMBED: the tokens from the graph's pos0 on (prefill: row t's is
     * [t]; decode: every row's is [0]) */
    const uint32_t *tokens;
} SimNodeInputs;

/*
 * Tokens [tok0, tok1) x features [row0, row1) of node @ni of @g into @out
 * (a full-size [tokens, features] buffer of the node; norms, RoPE and
 * embeddings write whole rows) at precision @prec (MDL_PREC_W4A16: the
 * model's own weights; SIM_PREC_FP_REF: FP16 weights).  Attention does
 * not file its K/V in the cache (sim_node_store_kv does).
 */
void sim_node_compute(EngModel *m, const MdlGraph *g, uint32_t ni, const SimNodeInputs *in,
                      const SimSlice *sl, MdlPrecision prec, float *out);

/*
 * Matmul node @n's slice @sl (tokens of @x, [tokens, n->k]) into @out
 * ([tokens, n->features]): sim_node_compute's arithmetic for any number of
 * rows stacked in @x, such as several decode steps' inputs.
 */
void sim_node_matmul(EngModel *m, const MdlNode *n, const float *x, size_t tokens,
                     const EngActInt8 *act8, const SimSlice *sl, MdlPrecision prec, float *out);

/*
 * Whether matmul @n at @prec gives an output row the same bits whatever
 * other rows are computed with it: every engine kernel does
 * (engine/kernels.h), OpenBLAS (a model's own FP32/FP16 weights) does not.
 */
gboolean sim_node_rows_apart(EngModel *m, const MdlNode *n, MdlPrecision prec);

/* Whether the @rows rows of @k floats at @x all equal the first, bit for
 * bit (a checked batch's sequences share their input). */
gboolean sim_rows_same(const float *x, size_t rows, size_t k);

#endif /* SIM_NODE_COMPUTE_H */
