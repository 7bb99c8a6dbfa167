/*
 * model.h - a whole model for the functional engine: its configuration,
 * its weights (synthetic from a seed, or read from a Hugging Face model
 * directory), a KV cache, and the unpartitioned forward pass (prefill of
 * tokens, decode steps) that the simulator's checked runs are compared
 * with and that `hetero-sim infer` runs.
 *
 * Synthetic weights: every element is a pure function of (seed, tensor,
 * index) through a counter-based hash (weights.c), so any tensor or slice
 * can be generated alone, in any order, on any thread count, and always
 * comes out the same.  Scales are realistic: matmul weights uniform with
 * variance 1/fan_in, norm gains 1 + U(-0.05, 0.05), embedding rows of unit
 * RMS, so activations stay finite through every layer.  Matmul weights are
 * generated when first asked for and stored in the configured format
 * (W4A16 by default), 256 rows at a time, so the FP32 matrix never exists
 * whole, and shared with every other model of the process that asks for
 * the same values in the same format (engine/wcache.h); embedding rows are generated on demand.  The synthetic LM head
 * has its own table even when embeddings are tied (a tied head would only
 * rescale the synthetic embedding).
 */
#ifndef ENG_MODEL_H
#define ENG_MODEL_H

#include <glib.h>
#include <stdint.h>

#include "engine/kernels.h"
#include "engine/quant-formats.h"
#include "engine/tensor.h"

typedef enum {
    ENG_NORM_RMS,                /* RMSNorm (Llama and most) */
    ENG_NORM_LAYER,              /* LayerNorm with weight and bias (Phi-2) */
} EngNorm;

/* How a model directory names (and packs) its tensors: the modelling
 * code's own names, one scheme per Hugging Face model_type family. */
typedef enum {
    ENG_LAYOUT_LLAMA,            /* model.layers.N.self_attn.q_proj ... (Llama, Mistral,
                                  * Qwen2, Gemma) */
    ENG_LAYOUT_PHI,              /* q/k/v_proj, self_attn.dense, mlp.fc1/fc2, biases */
    ENG_LAYOUT_INTERNLM2,        /* attention.wqkv packed per KV group, feed_forward.w1-3 */
    ENG_LAYOUT_CHATGLM,          /* transformer.encoder.layers.N: query_key_value packed
                                  * [q; k; v], mlp.dense_h_to_4h packed [gate; up] */
    ENG_LAYOUT_COUNT
} EngLayout;

typedef struct EngModelConfig {
    uint32_t hidden;             /* d_model */
    uint32_t intermediate;       /* FFN width */
    uint32_t layers;
    uint32_t heads;              /* query heads */
    uint32_t kv_heads;           /* GQA key/value heads (divides heads) */
    uint32_t head_dim;
    uint32_t vocab;
    double rope_theta;           /* RoPE base (the graph's rope nodes carry it) */
    double rms_eps;              /* the norm's epsilon, RMSNorm or LayerNorm */
    gboolean tie_embeddings;     /* LM head = embedding table (loaded weights) */
    EngAct act;                  /* the MLP's activation */
    gboolean attention_bias;     /* Q/K/V biases (Qwen2, ChatGLM2, Phi-2) */
    gboolean o_bias;             /* bias on the attention output projection (Phi-2) */
    gboolean mlp_bias;           /* biases on the MLP's projections (Phi-2) */
    gboolean head_bias;          /* bias on the LM head (Phi-2) */
    gboolean embed_scale;        /* embeddings times sqrt(hidden) (Gemma) */
    gboolean norm_plus_one;      /* RMSNorm gain is 1 + w (Gemma) */
    EngNorm norm;                /* RMSNorm or LayerNorm */
    gboolean ungated_mlp;        /* up -> act -> down, no gate (Phi-2) */
    gboolean parallel_block;     /* attention and MLP read one norm of x (Phi-2) */
    uint32_t rotary_dim;         /* dimensions of each head rotated; 0 = head_dim */
    gboolean rope_interleaved;   /* rotate pairs (2i, 2i + 1) (ChatGLM2), not halves */
    uint32_t sliding_window;     /* attend to the last N positions only; 0 = all */
    EngLayout layout;            /* tensor names in a model directory */
    EngWFormat weights;          /* storage of matmul weights; 0 = W4A16 */
    uint64_t seed;               /* synthetic weights */
} EngModelConfig;

/* The older name, still used by sim/. */
typedef EngModelConfig EngConfig;

typedef enum {
    ENG_W_Q, ENG_W_K, ENG_W_V, ENG_W_O, ENG_W_GATE, ENG_W_UP, ENG_W_DOWN,
    ENG_W_COUNT
} EngWeight;

typedef struct EngModel EngModel;

/* A model with synthetic weights from cfg->seed.  (transfer full) */
/*
 * What the engine can compute, checked where a config is read for values
 * (the functional check, `infer`) before anything runs: heads and KV heads
 * non-zero with kv_heads dividing heads, an even head_dim (RoPE rotates
 * pairs).  Errors are HS_CONFIG_ERROR "$.key: expected ... (got ...)"
 * without the file name.  eng_model_new() asserts the same.
 */
gboolean eng_config_check(const EngModelConfig *cfg, GError **error);

EngModel *eng_model_new(const EngModelConfig *cfg);

/*
 * Real weights from a Hugging Face model directory: one or more
 * *.safetensors files (F32, F16 or BF16), model.safetensors.index.json
 * optional; tensors named as cfg->layout says (Llama family:
 * model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight, ...,
 * model.norm.weight, lm_head.weight or tied to the embedding); packed
 * Q/K/V and gate/up matrices are split into the engine's own.  Matmul weights are stored in
 * cfg->weights.  Errors (HS_MODEL_ERROR) name the tensor and the file.
 * (transfer full)
 */
EngModel *eng_model_load(const EngModelConfig *cfg, const char *dir, GError **error);
/* The same reading only layers [0, @layers) (and the embedding, final norm
 * and head), for a check of the first layers: the others must never be
 * asked for.  The files stay mapped, and eng_model_weight_as() quantises
 * each format from the directory's own values.  (transfer full) */
EngModel *eng_model_load_layers(const EngModelConfig *cfg, const char *dir, uint32_t layers,
                                GError **error);
void eng_model_free(EngModel *m);                     /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngModel, eng_model_free)

const EngModelConfig *eng_model_config(const EngModel *m);

/* A synthetic model makes each matrix also in @format (as
 * eng_model_weight_as() would, the same bits) in the pass that generates
 * it, not by generating its values again on first use: for a caller
 * that will ask for both (the values check's FP reference, FP16).  Call
 * before any weight is asked for; a loaded model ignores it. */
void eng_model_also_make(EngModel *m, EngQFormat format);

/* Matmul weight [out, in] of @layer (generated on first use).  (transfer none) */
const EngMatrix *eng_model_weight(EngModel *m, uint32_t layer, EngWeight w);
/* LM head [vocab, hidden] (generated on first use).  (transfer none) */
const EngMatrix *eng_model_lm_head(EngModel *m);
/* Matmul weight @which of @layer (ENG_W_COUNT: the LM head, any layer) in
 * another @format, made on first use and kept: a synthetic model
 * quantises the same FP32 values its own matrix was made from; a loaded
 * one dequantises its stored matrix (exact from --weights fp32 or fp16,
 * quantised twice from W4A16).  (transfer none) */
const EngQMatrix *eng_model_weight_as(EngModel *m, uint32_t layer, EngWeight which,
                                      EngQFormat format);
/* The model stops holding its matrices in @format (eng_model_weight_as()'s
 * pointers to them are no longer valid): they stay in the shared cache
 * while its budget allows (engine/wcache.h), and are made again, or taken
 * from there, if asked for later.  For a caller that knows it is done
 * with a format (a checked run that ended). */
void eng_model_release_format(EngModel *m, EngQFormat format);
/* Norm gains [hidden]: attn (0) or ffn (1) of @layer; the final norm when
 * layer == layers.  (transfer none) */
const float *eng_model_norm(EngModel *m, uint32_t layer, int which);
/* The same norm's bias (LayerNorm), or NULL.  (transfer none) */
const float *eng_model_norm_bias(EngModel *m, uint32_t layer, int which);
/* Bias of matmul @which (an EngWeight; ENG_W_COUNT: the LM head, any
 * layer) of @layer, or NULL (no bias).  (transfer none) */
const float *eng_model_bias(EngModel *m, uint32_t layer, int which);
/* Embedding of @token into @out [hidden] (times sqrt(hidden) for Gemma). */
void eng_model_embed(const EngModel *m, uint32_t token, float *out);
/* Bytes of weights held now (generated tensors only). */
size_t eng_model_weight_bytes(const EngModel *m);
/* Bytes of every weight of a model of @cfg once all are generated or
 * loaded: each layer's matmuls and the LM head in cfg->weights' format,
 * the norms, and the FP32 embedding table a loaded model keeps (an upper
 * bound for a synthetic one, which computes embeddings on the fly). */
uint64_t eng_model_bytes(const EngModelConfig *cfg);

/* ---- KV cache and the whole forward pass --------------------------------- */

typedef struct EngKV EngKV;

/* A KV cache for @max_pos positions, FP32.  (transfer full) */
EngKV *eng_kv_new(const EngModelConfig *cfg, uint32_t max_pos);
void eng_kv_free(EngKV *kv);                          /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngKV, eng_kv_free)
/* Positions filled so far. */
uint32_t eng_kv_len(const EngKV *kv);
/* K or V cache of @layer: [max_pos, kv_heads * head_dim].  (transfer none) */
float *eng_kv_k(EngKV *kv, uint32_t layer);
float *eng_kv_v(EngKV *kv, uint32_t layer);
size_t eng_kv_bytes(const EngKV *kv);

/* The forward pass over these weights runs the step's operator graph,
 * node by node (sim/forward.h): the same arithmetic the simulator's
 * checked plans run (sim/node-compute.h). */
void eng_kv_set_len(EngKV *kv, uint32_t len);
/* Capacity in positions. */
uint32_t eng_kv_max_pos(const EngKV *kv);

#endif /* ENG_MODEL_H */
