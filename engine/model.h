/*
 * model.h - a model's weights for the functional engine.
 *
 * Weights are synthetic by default: every element is a pure function of
 * (seed, tensor, index) through a counter-based hash, so any tensor can be
 * generated on its own, in any order, on any thread count, and always
 * comes out the same.  Scales are realistic (uniform with variance
 * 1/fan_in, norm weights 1), so activations stay finite through every
 * layer.  Matmul weights are stored as they would be on the device — INT4
 * in groups of 128 with FP16 scales (W4A16, packed: see EngMatrix).  Layers are generated when first asked for, so checking
 * the first N layers of an 8B model never builds the other ones; the
 * embedding table is never built (rows are generated on demand).
 */
#ifndef ENG_MODEL_H
#define ENG_MODEL_H

#include <glib.h>
#include <stdint.h>

#include "engine/kernels.h"

typedef struct EngConfig {
    uint32_t hidden, intermediate, layers, heads, kv_heads, head_dim, vocab;
    double rope_theta, rms_eps;
    gboolean tie_embeddings, gelu, embed_scale, norm_plus_one;
    uint64_t seed;
} EngConfig;

typedef enum {
    ENG_W_Q, ENG_W_K, ENG_W_V, ENG_W_O, ENG_W_GATE, ENG_W_UP, ENG_W_DOWN,
    ENG_W_COUNT
} EngWeight;

typedef struct EngModel EngModel;

EngModel *eng_model_new(const EngConfig *cfg);       /* (transfer full) */

/*
 * Real weights from a Hugging Face model directory (*.safetensors, HF
 * Llama-family names: model.layers.N.self_attn.q_proj.weight, ...).  With
 * @w4 the matmul weights are stored as W4A16 like the synthetic ones.
 * Errors (HS_MODEL_ERROR) name the tensor and the file.  (transfer full)
 */
EngModel *eng_model_load(const EngConfig *cfg, const char *dir, gboolean w4, GError **error);
void eng_model_free(EngModel *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngModel, eng_model_free)

const EngConfig *eng_model_config(const EngModel *m);

/* Matmul weight [out, in] of @layer (generated on first use).  (transfer none) */
const EngMatrix *eng_model_weight(EngModel *m, uint32_t layer, EngWeight w);
/* LM head [vocab, hidden] (generated on first use).  (transfer none) */
const EngMatrix *eng_model_lm_head(EngModel *m);
/* Norm weights [hidden]: attn (0), ffn (1) of @layer; final if layer == layers. */
const float *eng_model_norm(EngModel *m, uint32_t layer, int which);

/* Bias of Q (0), K (1) or V (2) of @layer, or NULL (no bias). */
const float *eng_model_bias(const EngModel *m, uint32_t layer, int which);

/* Embedding of @token into @out [hidden] (scaled for Gemma). */
void eng_model_embed(const EngModel *m, uint32_t token, float *out);

#endif /* ENG_MODEL_H */
