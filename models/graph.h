/*
 * graph.h - the operator DAG of one prefill or one decode step.
 *
 * ggml-like: nodes in topological order, each with an op, up to four
 * source nodes, and an output of [tokens, features] (attention: tokens x
 * heads*head_dim).  Shapes are checked when a node is built.  Each node
 * can say what computing any slice of its output costs in operations and
 * DRAM bytes at a storage precision (mdl_node_work): these numbers drive
 * the timing model, so they are documented where they are computed.
 *
 * Per layer (Llama family; Gemma with GeGLU):
 *
 *   attn_norm = rmsnorm(x)            q = attn_norm . Wq^T (+b)
 *   k = attn_norm . Wk^T (+b)         v = attn_norm . Wv^T (+b)
 *   q_rope = rope(q)  k_rope = rope(k)
 *   attn = attention(q_rope, k_rope, v)   (writes K/V cache, reads it)
 *   o = attn . Wo^T                   h = x + o
 *   ffn_norm = rmsnorm(h)             gate, up = ffn_norm . Wg^T, . Wu^T
 *   act = silu(gate) * up             down = act . Wd^T
 *   x' = h + down
 *
 * then final_norm and lm_head (logits of the last token in prefill, of
 * every sequence in decode).  The config's keys change the block: Phi-2's
 * parallel block has one input LayerNorm feeding both attention and an
 * ungated MLP (up -> gelu -> down), and x' = x + o + down (no attn_add,
 * no ffn_norm: the MLP does not wait for attention); a partial or
 * interleaved rotary embedding, biases, and a sliding window are node
 * fields.
 */
#ifndef MDL_GRAPH_H
#define MDL_GRAPH_H

#include <glib.h>
#include <stdint.h>

#include "models/spec.h"

typedef enum {
    MDL_OP_EMBED,
    MDL_OP_RMSNORM,
    MDL_OP_MATMUL,
    MDL_OP_ROPE,
    MDL_OP_ATTENTION,
    MDL_OP_ACT,              /* SwiGLU / GeGLU: act(gate) * up */
    MDL_OP_ADD,              /* residual */
    MDL_OP_LAYERNORM,        /* LayerNorm with bias (Phi-2) */
    MDL_OP_COUNT
} MdlOp;

extern const char *const mdl_op_name[];   /* MDL_OP_COUNT entries: checked where defined */

/* Which weight a matmul node uses (the engine finds it by this). */
typedef enum {
    MDL_W_NONE, MDL_W_Q, MDL_W_K, MDL_W_V, MDL_W_O,
    MDL_W_GATE, MDL_W_UP, MDL_W_DOWN, MDL_W_LM_HEAD,
    MDL_W_COUNT
} MdlWeight;

extern const char *const mdl_weight_name[];   /* MDL_W_COUNT entries: checked where defined */

/* Storage precision of weights / activations. */
typedef enum {
    MDL_PREC_W4A16,          /* INT4 weights, groups of 128, FP16 scale; FP16 act */
    MDL_PREC_W8A16,          /* INT8 weights, FP16 scale per row; FP16 act */
    MDL_PREC_W8A8,           /* INT8 weights and activations (per-tensor) */
    MDL_PREC_W4A8,           /* INT4 weights as W4A16, INT8 activations */
    MDL_PREC_FP16,           /* FP16 weights and activations */
    MDL_PREC_W8A8_SHADOW,    /* W8A8 with the outlier activation channels
                              * extracted and computed in float, added back
                              * (mllm-NPU §3.3 shadow outliers) */
    MDL_PREC_FP4A16,         /* E0M4 FP4 weights, groups of 128, FP16 scale
                              * and bias; FP16 act (Transformer-Lite) */
    MDL_PREC_Q4_0,           /* INT4 weights, groups of 32, FP16 scale; FP16
                              * act (llama.cpp Q4_0, NPU-TTS) */
    MDL_PREC_Q8_0,           /* INT8 weights, groups of 32, FP16 scale; FP16
                              * act (llama.cpp Q8_0, NPU-TTS FFN-down) */
    MDL_PREC_COUNT
} MdlPrecision;

extern const char *const mdl_precision_name[];   /* MDL_PREC_COUNT entries: checked where defined */

#define MDL_MAX_SRC 3

typedef struct MdlNode {
    MdlOp op;
    MdlWeight weight;        /* MATMUL: which weight */
    char name[32];           /* "L3.ffn_down" */
    int32_t layer;           /* -1 outside the layers */
    uint32_t tokens;         /* output rows (S in prefill, batch in decode) */
    uint32_t features;       /* output columns */
    uint32_t n_src;
    uint32_t src[MDL_MAX_SRC];   /* ATTENTION: q, k, v */
    uint32_t k;              /* MATMUL: input features */
    uint32_t pos0;           /* position of token row 0 (context before it) */
    uint32_t heads, kv_heads, head_dim;   /* ATTENTION, ROPE */
    uint32_t src_tok_offset; /* token t reads source token t + this (the
                              * prefill LM head reads only the last token) */
    /* What the arithmetic needs, explicit (sim/node-compute.c reads these,
     * never the name): */
    uint8_t norm;            /* RMSNORM, LAYERNORM: MDL_NORM_* (whose weights) */
    uint8_t bias;            /* MATMUL: adds its projection's bias */
    uint8_t act;             /* ACT: MdlAct (n_src 1: ungated, act(up)) */
    uint8_t rope_interleaved;   /* ROPE: pairs (2i, 2i + 1), else (i, i + rot/2) */
    uint32_t rotary_dim;     /* ROPE: dimensions of each head rotated */
    uint32_t window;         /* ATTENTION: keys of the last N positions; 0 = all */
    double rope_theta;       /* ROPE: base */
    double rope_scale[4];    /* ROPE: llama3 factor (0: none), low and high
                              * frequency factors, original context */
} MdlNode;

/* Which norm's weights a norm node applies. */
enum { MDL_NORM_ATTN, MDL_NORM_FFN, MDL_NORM_FINAL };

typedef struct MdlGraph {
    MdlNode *nodes;
    uint32_t n_nodes;
    uint32_t tokens;         /* S or batch */
    uint32_t pos0;           /* context before this step */
    gboolean decode;
} MdlGraph;

/* Prefill of @seq tokens starting at position @pos0. (transfer full) */
MdlGraph *mdl_graph_new_prefill(const MdlSpec *spec, uint32_t seq, uint32_t pos0);
/* The same with the LM head on every token (the whole-model forward pass
 * of `infer`, which reports every position's logits).  (transfer full) */
MdlGraph *mdl_graph_new_forward(const MdlSpec *spec, uint32_t seq, uint32_t pos0);
/* One decode step of @batch sequences at context @ctx.  (transfer full) */
MdlGraph *mdl_graph_new_decode(const MdlSpec *spec, uint32_t ctx, uint32_t batch);
void mdl_graph_free(MdlGraph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MdlGraph, mdl_graph_free)

/* What a slice costs. */
typedef struct MdlWork {
    uint64_t m, k, n;        /* GEMM-like dims: [m,k] x [k,n] (m padded) */
    uint64_t flops;
    uint64_t read_bytes;     /* compulsory DRAM reads: weights, inputs, KV */
    uint64_t write_bytes;    /* DRAM writes: outputs, new K/V */
} MdlWork;

/*
 * Work of computing tokens [tok0, tok1) x features [row0, row1) of @node
 * at precision @prec, computed as @pad_tokens rows (0 = no padding).
 */
void mdl_node_work(const MdlNode *node, uint32_t tok0, uint32_t tok1,
                   uint32_t row0, uint32_t row1, uint32_t pad_tokens,
                   MdlPrecision prec, MdlWork *out);

/* Bytes per weight / per activation element at @prec. */
double mdl_prec_weight_bytes(MdlPrecision prec);
double mdl_prec_act_bytes(MdlPrecision prec);

/* Totals over every node, whole, at @prec. */
void mdl_graph_total(const MdlGraph *g, MdlPrecision prec, MdlWork *out);

#endif /* MDL_GRAPH_H */
