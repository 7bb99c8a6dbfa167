/*
 * spec.h - a model's shape description, read from a Hugging Face style
 * config.json (the file shipped next to the weights).
 *
 * Pure structure: no weights, no timing.  Every field keeps the name it has
 * in config.json so a reader can check one against the other.  Family
 * quirks that change the computation (Gemma's sqrt(hidden) embedding scale
 * and (1 + w) RMSNorm, Qwen's QKV bias) are explicit flags derived from
 * "model_type" / "architectures", never guessed from the model's name.
 */
#ifndef MDL_SPEC_H
#define MDL_SPEC_H

#include <glib.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "sim/util/json.h"

typedef enum {
    MDL_ACT_SILU,          /* SwiGLU: silu(gate) * up  (Llama, Qwen, Mistral) */
    MDL_ACT_GELU_TANH,     /* GeGLU with tanh-approximated GELU (Gemma); gelu_new (Phi-2) */
    MDL_ACT_GELU,          /* exact GELU through erf (HF "gelu" outside Gemma) */
    MDL_ACT_COUNT
} MdlAct;

typedef struct MdlSpec {
    char *name;                    /* short name: "llama-3-8b" (file stem or dir name) */
    char *path;                    /* the config.json it came from */
    char *model_type;              /* config "model_type": "llama", "qwen2", "gemma", ... */
    char *description;             /* one line for `list models` (shipped files only) */

    uint32_t hidden_size;          /* d_model */
    uint32_t intermediate_size;    /* FFN width */
    uint32_t num_hidden_layers;
    uint32_t num_attention_heads;
    uint32_t num_key_value_heads;  /* GQA; equals heads when absent */
    uint32_t head_dim;             /* hidden / heads when absent */
    uint32_t vocab_size;
    uint32_t max_position_embeddings;
    double rope_theta;             /* RoPE base */
    double rms_norm_eps;
    gboolean tie_word_embeddings;  /* LM head shares the embedding matrix */
    MdlAct act;                    /* from "hidden_act" / "hidden_activation" */
    gboolean attention_bias;       /* bias on Q/K/V projections (Qwen2) */
    gboolean o_bias;               /* bias on the attention output (Phi-2; Llama's
                                    * attention_bias, InternLM2's bias) */
    gboolean mlp_bias;             /* biases on the MLP (Phi-2; Llama's mlp_bias) */
    gboolean head_bias;            /* bias on the LM head (Phi-2) */
    gboolean rope_interleaved;     /* rotary pairs (2i, 2i + 1) (ChatGLM2), not halves */
    gboolean embed_scale;          /* multiply embeddings by sqrt(hidden) (Gemma) */
    gboolean norm_plus_one;        /* RMSNorm uses (1 + w) (Gemma) */

    /* Block structure beyond Llama's (the graph follows it: graph.h). */
    gboolean gated_mlp;            /* gate * act(up) (all but Phi: fc1 -> GELU -> fc2) */
    gboolean layer_norm;           /* LayerNorm, not RMSNorm (Phi) */
    gboolean parallel_block;       /* attention and MLP from the same input (Phi) */
    double partial_rotary_factor;  /* share of head_dim rotated (1; Phi 0.4, ChatGLM2 0.5) */
    uint32_t sliding_window;       /* attention window in positions, 0 = none (Mistral) */
    char *rope_scaling;            /* rope_scaling's type, NULL = none */
    char *not_computed;            /* "$.key: expected ..." of a key whose value the
                                    * functional engine does not compute, or NULL */
    double rope_factor, rope_low_freq_factor, rope_high_freq_factor;
    double rope_original_max_pos;  /* rope_scaling of type llama3 (Llama 3.1/3.2) */
} MdlSpec;

/*
 * What the functional engine (engine/) cannot compute for @spec over
 * @positions positions (prompt + decode), as "$.key: ..." naming the key,
 * or NULL if it can: a block variant it does not compute (ChatGLM2's
 * rmsnorm false, ...: spec.c arith_keys), a rope_scaling that changes the
 * rotary frequencies at these positions, a rotary embedding on an odd
 * number of dimensions.
 * (transfer full)
 */
char *mdl_spec_functional_gap(const MdlSpec *spec, uint64_t positions);

/* Dimensions of each head the rotary embedding turns. */
uint32_t mdl_spec_rotary_dim(const MdlSpec *spec);

/*
 * Load a model description.  @name_or_path is a shipped model's short name
 * ("llama-3-8b", looked up in @models_dir), a config.json file, or a
 * directory holding config.json (a Hugging Face model directory).
 * (transfer full).  Errors: HS_CONFIG_ERROR with the file and JSON path.
 */
MdlSpec *mdl_spec_load(const char *name_or_path, const char *models_dir,
                       GError **error);
/* The same, with @edit (if non-NULL) applied to the parsed JSON first. */
MdlSpec *mdl_spec_load_edit(const char *name_or_path, const char *models_dir,
                            HsJsonEditFn edit, void *opaque, GError **error);
void mdl_spec_free(MdlSpec *spec);            /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MdlSpec, mdl_spec_free)

/* A spec from a parsed config.json object; @name names it.  Errors carry
 * the JSON path without a file name.  (transfer full) */
MdlSpec *mdl_spec_from_json(const cJSON *root, const char *name, GError **error);

/* The fields hetero-sim uses, as a config.json object (for recordings). */
cJSON *mdl_spec_to_json(const MdlSpec *spec);        /* (transfer full) */

/* Short names of the models shipped in @models_dir, sorted.  (transfer full) */
GStrv mdl_spec_list(const char *models_dir, GError **error);

/* Parameter count (embedding + layers + final norm + untied LM head). */
uint64_t mdl_spec_param_count(const MdlSpec *spec);

#endif /* MDL_SPEC_H */
