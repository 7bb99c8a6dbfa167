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
 * whole; embedding rows are generated on demand.  The synthetic LM head
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

typedef struct EngModelConfig {
    uint32_t hidden;             /* d_model */
    uint32_t intermediate;       /* FFN width */
    uint32_t layers;
    uint32_t heads;              /* query heads */
    uint32_t kv_heads;           /* GQA key/value heads (divides heads) */
    uint32_t head_dim;
    uint32_t vocab;
    double rope_theta;           /* RoPE base */
    double rms_eps;
    gboolean tie_embeddings;     /* LM head = embedding table (loaded weights) */
    union {
        EngAct act;              /* ENG_ACT_SILU or ENG_ACT_GELU_TANH */
        gboolean gelu;           /* the same field under its older name: TRUE = GeGLU */
    };
    gboolean attention_bias;     /* Q/K/V biases (Qwen2) */
    gboolean embed_scale;        /* embeddings times sqrt(hidden) (Gemma) */
    gboolean norm_plus_one;      /* RMSNorm gain is 1 + w (Gemma) */
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
 * optional; Llama-family names (model.embed_tokens.weight,
 * model.layers.N.self_attn.q_proj.weight, ..., model.norm.weight,
 * lm_head.weight or tied to the embedding).  Matmul weights are stored in
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
/* Norm gains [hidden]: attn (0) or ffn (1) of @layer; the final norm when
 * layer == layers.  (transfer none) */
const float *eng_model_norm(EngModel *m, uint32_t layer, int which);
/* Bias of Q (0), K (1) or V (2) of @layer, or NULL (no bias).  (transfer none) */
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

/*
 * Run @n tokens at positions [pos0, pos0 + n) — the cache must hold
 * [0, pos0) — file their K/V in the cache, and write the logits of every
 * position to @logits [n, vocab].
 */
void eng_forward(EngModel *m, EngKV *kv, const uint32_t *tokens, uint32_t n, uint32_t pos0,
                 float *logits);

/* Prefill: eng_forward at the cache's current length. */
void eng_model_prefill(EngModel *m, EngKV *kv, const uint32_t *tokens, uint32_t n,
                       float *logits);
/* One decode step: @token at the next position; logits [vocab]. */
void eng_model_decode(EngModel *m, EngKV *kv, uint32_t token, float *logits);

#endif /* ENG_MODEL_H */
