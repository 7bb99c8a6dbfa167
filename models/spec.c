/*
 * spec.c - reads a Hugging Face style config.json into an MdlSpec.
 *
 * Only the keys the simulator needs are read; the many others a HF config
 * holds (token ids, dtype, transformers version) are ignored.  Keys are
 * checked for type and range, and every error names the file and the JSON
 * path.  Family differences come from "model_type".
 */
#include "models/spec.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/param.h"

#include <float.h>
#include <math.h>
#include <string.h>

void
mdl_spec_free(MdlSpec *spec)
{
    if (spec == NULL) {
        return;
    }
    g_free(spec->name);
    g_free(spec->path);
    g_free(spec->model_type);
    g_free(spec->description);
    g_free(spec->rope_scaling);
    g_free(spec->not_computed);
    g_free(spec);
}

/*
 * The keys read, as one declarative table per family (sim/util/param.h):
 * types, ranges and defaults checked by hs_param_apply_open(), which skips
 * the many keys a Hugging Face config holds that hetero-sim does not read.
 * What a table cannot say (one key's bound from another, the activation's
 * name prefix) is checked after it, in spec_from_json().
 */
typedef enum {
    FAM_LLAMA, FAM_MISTRAL, FAM_QWEN2, FAM_INTERNLM2, FAM_GEMMA, FAM_CHATGLM, FAM_PHI,
    FAM_COUNT
} Family;

static const char *const family_name[] = {
    "llama", "mistral", "qwen2", "internlm2", "gemma", "chatglm", "phi",
};
G_STATIC_ASSERT(G_N_ELEMENTS(family_name) == FAM_COUNT);

typedef struct SpecKeys {
    Family family;
    MdlSpec s;                     /* the fields read as they are */
    char *hidden_act, *hidden_activation;
    uint32_t kv_heads;             /* 0: absent (as many as the query heads) */
    gboolean bias, has_bias;       /* "bias" (InternLM2), overriding attention_bias */
    gboolean multi_query_attention;
    gboolean use_sliding_window;
    gboolean add_bias_linear;      /* ChatGLM2: dense and both MLP matrices */
    gboolean mlp_bias;
    /* keys whose other value the functional engine does not compute
     * (spec_from_json: s.not_computed) */
    gboolean rmsnorm, residual_post_ln, post_layer_norm, original_rope, qk_layernorm;
    double rope_ratio;
    /* rope_scaling's members */
    char *rope_type, *rope_type_old;
} SpecKeys;

static void
spec_keys_clear(SpecKeys *k)
{
    g_free(k->s.description);
    g_free(k->hidden_act);
    g_free(k->hidden_activation);
    g_free(k->rope_type);
    g_free(k->rope_type_old);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SpecKeys, spec_keys_clear)

static const HsParam family_params[] = {
    HS_PARAM_ENUM("model_type", SpecKeys, family, Family, family_name, FAM_COUNT, HS_REQUIRED,
                  "model family (transformers' model_type)"),
    HS_PARAM_END
};

/* Upper bounds: several times the largest published model's (Llama 3.1
 * 405B: hidden 16384, FFN 53248, 126 layers, 128 heads; Gemma: vocab
 * 256000), so a typo is an error rather than hours of simulation or a
 * failed allocation.  A family's own spelling of a key (ChatGLM2:
 * THUDM/chatglm2-6b config.json; Phi-2's LayerNorm epsilon: microsoft/phi-2)
 * is the key in its table, so every message names the key in the user's
 * file.  @TIE, @BIAS, @ROT: the family's defaults (Gemma and the small Llama
 * 3.2 / Qwen2.5 tie the LM head; Qwen2 puts biases on Q/K/V without saying
 * so, Phi-2's linear layers all carry them; ChatGLM2 rotates half of each
 * head, RotaryEmbedding(kv_channels // 2) in its modeling_chatglm.py).
 * The variable arguments: entries only that family reads. */
#define SPEC_PARAMS(LAYERS, FFN, HEAD_DIM, VOCAB, MAX_POS, EPS, BIAS, KV, TIE, BIAS_DEF, ROT, \
                    ...)                                                                      \
    HS_PARAM_STR("_hetero_sim_description", SpecKeys, s.description, "", NULL,                \
                 "one line for `list models`"),                                               \
    HS_PARAM_U32("hidden_size", SpecKeys, s.hidden_size, 1, 65536, HS_REQUIRED, "d_model"),  \
    HS_PARAM_U32(FFN, SpecKeys, s.intermediate_size, 1, 262144, HS_REQUIRED, "FFN width"),   \
    HS_PARAM_U32(LAYERS, SpecKeys, s.num_hidden_layers, 1, 1024, HS_REQUIRED, "layers"),     \
    HS_PARAM_U32("num_attention_heads", SpecKeys, s.num_attention_heads, 1, 1024,            \
                 HS_REQUIRED, "query heads"),                                                 \
    HS_PARAM_U32(VOCAB, SpecKeys, s.vocab_size, 1, 1u << 20, HS_REQUIRED, "vocabulary"),     \
    HS_PARAM_U32(KV, SpecKeys, kv_heads, 1, 1024, 0, "key/value heads (GQA)"),               \
    HS_PARAM_U32(MAX_POS, SpecKeys, s.max_position_embeddings, 1, 1000000000, 2048,          \
                 "longest context"),                                                          \
    HS_PARAM_F64_POS("rope_theta", SpecKeys, s.rope_theta, DBL_MAX, 10000.0, "RoPE base"),    \
    HS_PARAM_F64_POS(EPS, SpecKeys, s.rms_norm_eps, DBL_MAX, 1e-6, "norm epsilon"),           \
    HS_PARAM_BOOL("tie_word_embeddings", SpecKeys, s.tie_word_embeddings, TIE,                \
                  "LM head shares the embedding"),                                            \
    HS_PARAM_BOOL(BIAS, SpecKeys, s.attention_bias, BIAS_DEF, "bias on Q/K/V"),               \
    HS_PARAM_BOOL("bias", SpecKeys, bias, 0, "bias on the linear layers (InternLM2)"),       \
    HS_PARAM_U32(HEAD_DIM, SpecKeys, s.head_dim, 1, 4096, 0, "head width"),                   \
    HS_PARAM_STR("hidden_act", SpecKeys, hidden_act, "silu", NULL, "silu or gelu*"),          \
    HS_PARAM_STR("hidden_activation", SpecKeys, hidden_activation, "", NULL,                 \
                 "Gemma's name for hidden_act"),                                              \
    HS_PARAM_F64_POS("partial_rotary_factor", SpecKeys, s.partial_rotary_factor, 1, ROT,      \
                     "share of head_dim rotated"),                                            \
    HS_PARAM_BOOL("use_sliding_window", SpecKeys, use_sliding_window, 1,                     \
                  "whether sliding_window applies (Qwen2)"),                                  \
    HS_PARAM_U32("sliding_window", SpecKeys, s.sliding_window, 0, 1000000000, 0,             \
                 "attention window (Mistral; 0 none)"),                                       \
    __VA_ARGS__                                                                               \
    HS_PARAM_END

#define SPEC_STD(TIE, BIAS_DEF)                                                               \
    SPEC_PARAMS("num_hidden_layers", "intermediate_size", "head_dim", "vocab_size",           \
                "max_position_embeddings", "rms_norm_eps", "attention_bias",                  \
                "num_key_value_heads", TIE, BIAS_DEF, 1.0, )

static const HsParam std_params[] = { SPEC_STD(0, 0) };
static const HsParam qwen2_params[] = { SPEC_STD(0, 1) };
static const HsParam gemma_params[] = { SPEC_STD(1, 0) };
static const HsParam chatglm_params[] = {
    SPEC_PARAMS("num_layers", "ffn_hidden_size", "kv_channels", "padded_vocab_size",
                "seq_length", "layernorm_epsilon", "add_qkv_bias", "multi_query_group_num",
                0, 0, 0.5,
                HS_PARAM_BOOL("multi_query_attention", SpecKeys, multi_query_attention, 0,
                              "grouped KV heads (multi_query_group_num) or one per head"),
                HS_PARAM_BOOL("add_bias_linear", SpecKeys, add_bias_linear, 0,
                              "biases on dense and the MLP"),
                /* the block variants of THUDM/chatglm2-6b modeling_chatglm.py */
                HS_PARAM_BOOL("rmsnorm", SpecKeys, rmsnorm, 1, "RMSNorm, else LayerNorm"),
                HS_PARAM_BOOL("apply_residual_connection_post_layernorm", SpecKeys,
                              residual_post_ln, 0, "residual taken after the norm"),
                HS_PARAM_BOOL("post_layer_norm", SpecKeys, post_layer_norm, 1,
                              "a final norm"),
                HS_PARAM_BOOL("original_rope", SpecKeys, original_rope, 1,
                              "ChatGLM's original rotary embedding"),
                HS_PARAM_F64_POS("rope_ratio", SpecKeys, rope_ratio, DBL_MAX, 1.0,
                                 "rotary base scale (ChatGLM3)"), )
};
static const HsParam phi_params[] = {
    SPEC_PARAMS("num_hidden_layers", "intermediate_size", "head_dim", "vocab_size",
                "max_position_embeddings", "layer_norm_eps", "attention_bias",
                "num_key_value_heads", 0, 1, 1.0,
                HS_PARAM_BOOL("qk_layernorm", SpecKeys, qk_layernorm, 0,
                              "LayerNorm on Q and K"), )
};

static const HsParam *const family_params_of[] = {
    std_params, std_params, qwen2_params, std_params, gemma_params, chatglm_params, phi_params,
};
G_STATIC_ASSERT(G_N_ELEMENTS(family_params_of) == FAM_COUNT);

/* rope_scaling's members: its type (transformers reads "rope_type", older
 * configs "type"); Llama 3.1/3.2's llama3 scaling with its published
 * defaults */
static const HsParam rope_scaling_params[] = {
    HS_PARAM_STR("rope_type", SpecKeys, rope_type, "", NULL, "scaling type"),
    HS_PARAM_STR("type", SpecKeys, rope_type_old, "", NULL, "scaling type (older name)"),
    HS_PARAM_F64_POS("factor", SpecKeys, s.rope_factor, DBL_MAX, 8.0, "llama3: factor"),
    HS_PARAM_F64_POS("low_freq_factor", SpecKeys, s.rope_low_freq_factor, DBL_MAX, 1.0,
                     "llama3: low-frequency factor"),
    HS_PARAM_F64_POS("high_freq_factor", SpecKeys, s.rope_high_freq_factor, DBL_MAX, 4.0,
                     "llama3: high-frequency factor"),
    HS_PARAM_F64_POS("original_max_position_embeddings", SpecKeys, s.rope_original_max_pos,
                     DBL_MAX, 8192, "llama3: context before scaling"),
    HS_PARAM_END
};

/* The first key whose value the functional engine does not compute, as
 * "$.key: expected ..." (timing is the same), or NULL. */
static char *
not_computed(const SpecKeys *k, const cJSON *root)
{
    static const struct {
        Family family;
        const char *key;
        size_t offset;
        gboolean computed;
    } keys[] = {
        { FAM_CHATGLM, "rmsnorm", offsetof(SpecKeys, rmsnorm), TRUE },
        { FAM_CHATGLM, "apply_residual_connection_post_layernorm",
          offsetof(SpecKeys, residual_post_ln), FALSE },
        { FAM_CHATGLM, "post_layer_norm", offsetof(SpecKeys, post_layer_norm), TRUE },
        { FAM_CHATGLM, "original_rope", offsetof(SpecKeys, original_rope), TRUE },
        { FAM_PHI, "qk_layernorm", offsetof(SpecKeys, qk_layernorm), FALSE },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        gboolean v = *(const gboolean *) ((const char *) k + keys[i].offset);
        if (keys[i].family == k->family && v != keys[i].computed) {
            return g_strdup_printf("$.%s: expected %s, the %s block the functional engine "
                                   "computes (got %s)", keys[i].key,
                                   keys[i].computed ? "true" : "false",
                                   family_name[k->family], v ? "true" : "false");
        }
    }
    /* Qwen2 windows only the layers from max_window_layers on
     * (modeling_qwen2.py); the engine windows every layer or none.
     * transformers' Qwen2Config defaults use_sliding_window to false. */
    if (k->family == FAM_QWEN2 && k->use_sliding_window &&
        cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window")) {
        return g_strdup("$.use_sliding_window: expected false, as the functional engine does "
                        "not window some layers and not others (max_window_layers) (got true)");
    }
    /* rope_ratio means two things under one model_type: THUDM's
     * chatglm2-6b-32k modelling code divides the positions by it (position
     * interpolation), chatglm3-6b-32k's multiplies the rotary base by it;
     * only the modelling file shipped beside config.json says which */
    if (k->family == FAM_CHATGLM && k->rope_ratio != 1) {
        return g_strdup_printf("$.rope_ratio: expected 1, the rotary frequencies the "
                               "functional engine computes (got %g: ChatGLM2-32k's modelling "
                               "code divides the positions by it, ChatGLM3's multiplies the "
                               "rotary base, and config.json does not say which)",
                               k->rope_ratio);
    }
    return NULL;
}

static MdlSpec *
spec_from_json(const cJSON *root, GError **error)
{
    g_auto(SpecKeys) k = { 0 };
    if (!hs_param_apply_open(root, "$", family_params, &k, error)) {
        return NULL;
    }
    const HsParam *table = family_params_of[k.family];
    /* absent from the table's view: "bias" given or not */
    const cJSON *bias = cJSON_GetObjectItemCaseSensitive(root, "bias");
    k.has_bias = bias != NULL && !cJSON_IsNull(bias);
    if (!hs_param_apply_open(root, "$", table, &k, error)) {
        return NULL;
    }
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    if (rs && !cJSON_IsObject(rs) && !cJSON_IsNull(rs)) {
        /* was ignored: the model then ran unscaled */
        g_autofree char *got = hs_json_describe(rs);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.rope_scaling: expected an object (its rope_type and factors) or null "
                    "(got %s)", got);
        return NULL;
    }
    if (cJSON_IsObject(rs) &&
        !hs_param_apply_open(rs, "$.rope_scaling", rope_scaling_params, &k, error)) {
        return NULL;
    }
    const cJSON *mlp_bias = cJSON_GetObjectItemCaseSensitive(root, "mlp_bias");
    if (mlp_bias && !cJSON_IsNull(mlp_bias) && !cJSON_IsBool(mlp_bias)) {
        g_autofree char *got = hs_json_describe(mlp_bias);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.mlp_bias: expected true or false (got %s)", got);
        return NULL;
    }
    g_autoptr(MdlSpec) s = g_new(MdlSpec, 1);
    *s = k.s;
    memset(&k.s, 0, sizeof(k.s));           /* its strings are s's now */
    s->model_type = g_strdup(family_name[k.family]);
    if (k.has_bias) {
        s->attention_bias = k.bias;
    }
    /* ChatGLM2 has grouped KV heads only with multi_query_attention */
    if (k.family == FAM_CHATGLM && !k.multi_query_attention) {
        k.kv_heads = 0;
    }
    s->num_key_value_heads = k.kv_heads ? k.kv_heads : s->num_attention_heads;
    if (s->head_dim == 0) {
        if (s->hidden_size % s->num_attention_heads != 0) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "$.num_attention_heads: expected a divisor of hidden_size %u "
                        "when head_dim is absent (got %u)", s->hidden_size,
                        s->num_attention_heads);
            return NULL;
        }
        s->head_dim = s->hidden_size / s->num_attention_heads;
    }
    if (s->num_attention_heads % s->num_key_value_heads != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.num_key_value_heads: expected a divisor of "
                    "num_attention_heads %u (got %u)", s->num_attention_heads,
                    s->num_key_value_heads);
        return NULL;
    }
    gboolean gemma = k.family == FAM_GEMMA, phi = k.family == FAM_PHI;
    gboolean qwen2 = k.family == FAM_QWEN2, chatglm = k.family == FAM_CHATGLM;
    /* Gemma's modelling code uses the tanh GELU when hidden_activation is
     * absent, whatever hidden_act says (transformers GemmaMLP) */
    const char *act = k.hidden_activation[0] ? k.hidden_activation : k.hidden_act;
    if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0) {
        s->act = MDL_ACT_SILU;
    } else if (strcmp(act, "gelu") == 0 && !gemma) {
        s->act = MDL_ACT_GELU;           /* transformers ACT2FN["gelu"]: erf */
    } else if (strcmp(act, "gelu") == 0 || strcmp(act, "gelu_new") == 0 ||
               strcmp(act, "gelu_pytorch_tanh") == 0 || strcmp(act, "gelu_fast") == 0) {
        s->act = MDL_ACT_GELU_TANH;
    } else {
        g_autofree char *got = hs_escape(act);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.hidden_act: expected silu, gelu, gelu_new or gelu_pytorch_tanh "
                    "(got \"%s\")", got);
        return NULL;
    }
    /* Which projections carry biases, as each family's modelling code
     * builds its nn.Linear layers: Qwen2 Q/K/V always (without saying so
     * in config.json); Phi-2 every one, LM head included; Llama, Mistral
     * and Gemma's attention_bias (Q/K/V and O) and mlp_bias; InternLM2's
     * bias (wqkv and wo); ChatGLM2's add_qkv_bias and add_bias_linear
     * (dense, both MLP matrices). */
    gboolean linear = chatglm && k.add_bias_linear;
    s->o_bias = phi || linear || (s->attention_bias && !qwen2 && !chatglm);
    s->mlp_bias = cJSON_IsBool(mlp_bias) ? cJSON_IsTrue(mlp_bias) : phi || linear;
    s->head_bias = phi;
    /* ChatGLM2 rotates half of each head in interleaved pairs
     * (apply_rotary_pos_emb: x.reshape(..., rot_dim // 2, 2)); others in
     * halves (rotate_half) */
    s->rope_interleaved = chatglm;
    s->not_computed = not_computed(&k, root);
    if (cJSON_IsObject(rs)) {
        const char *t = k.rope_type[0] ? k.rope_type : k.rope_type_old;
        s->rope_scaling = g_strdup(t[0] ? t : "unknown");
    }
    s->embed_scale = gemma;
    s->norm_plus_one = gemma;
    s->gated_mlp = !phi;
    s->layer_norm = phi;
    s->parallel_block = phi;
    /* a window only where it is used: Qwen2 configs carry one with
     * use_sliding_window false */
    if (!k.use_sliding_window ||
        (qwen2 && cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window") == NULL)) {
        s->sliding_window = 0;
    }
    return g_steal_pointer(&s);
}

MdlSpec *
mdl_spec_load(const char *name_or_path, const char *models_dir, GError **error)
{
    return mdl_spec_load_edit(name_or_path, models_dir, NULL, NULL, error);
}

MdlSpec *
mdl_spec_load_edit(const char *name_or_path, const char *models_dir, HsJsonEditFn edit,
                   void *opaque, GError **error)
{
    g_autofree char *path = NULL;
    g_autofree char *name = NULL;

    if (g_file_test(name_or_path, G_FILE_TEST_IS_DIR)) {
        path = g_build_filename(name_or_path, "config.json", NULL);
        g_autofree char *clean = g_strdup(name_or_path);
        while (strlen(clean) > 1 && g_str_has_suffix(clean, "/")) {
            clean[strlen(clean) - 1] = '\0';
        }
        name = g_path_get_basename(clean);
    } else if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".json")) {
        path = g_strdup(name_or_path);
        g_autofree char *base = g_path_get_basename(name_or_path);
        name = g_str_has_suffix(base, ".json") ? g_strndup(base, strlen(base) - 5)
                                               : g_strdup(base);
    } else {
        g_autofree char *file = g_strdup_printf("%s.json", name_or_path);
        path = g_build_filename(models_dir, file, NULL);
        name = g_strdup(name_or_path);
        if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
            g_auto(GStrv) names = mdl_spec_list(models_dir, NULL);
            g_autofree char *list = names ? g_strjoinv(", ", names) : g_strdup("none");
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND,
                        "unknown model \"%s\" (known: %s; or give a config.json "
                        "or a model directory)", name_or_path, list);
            return NULL;
        }
    }
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_CONFIG_ERROR, error);
    if (root == NULL || (edit && !edit(root, opaque, error))) {
        return NULL;
    }
    MdlSpec *spec = spec_from_json(root, error);
    if (spec == NULL) {
        g_prefix_error(error, "%s: ", path);
        return NULL;
    }
    spec->name = g_steal_pointer(&name);
    spec->path = g_steal_pointer(&path);
    return spec;
}

GStrv
mdl_spec_list(const char *models_dir, GError **error)
{
    return hs_json_list_stems(models_dir, error);
}

MdlSpec *
mdl_spec_from_json(const cJSON *root, const char *name, GError **error)
{
    MdlSpec *spec = spec_from_json(root, error);
    if (spec) {
        spec->name = g_strdup(name);
    }
    return spec;
}

/* The key a family spells a field with (its table's), for mdl_spec_to_json. */
static const char *
key_of(const char *type, const char *key)
{
    static const struct {
        const char *model_type, *key, *alias;
    } alias[] = {
        { "chatglm", "num_hidden_layers", "num_layers" },
        { "chatglm", "intermediate_size", "ffn_hidden_size" },
        { "chatglm", "head_dim", "kv_channels" },
        { "chatglm", "vocab_size", "padded_vocab_size" },
        { "chatglm", "max_position_embeddings", "seq_length" },
        { "chatglm", "rms_norm_eps", "layernorm_epsilon" },
        { "chatglm", "attention_bias", "add_qkv_bias" },
        { "phi", "rms_norm_eps", "layer_norm_eps" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(alias); i++) {
        if (strcmp(alias[i].model_type, type) == 0 && strcmp(alias[i].key, key) == 0) {
            return alias[i].alias;
        }
    }
    return key;
}

cJSON *
mdl_spec_to_json(const MdlSpec *s)
{
    cJSON *o = cJSON_CreateObject();
    /* each family's own spelling of a key, as spec_from_json reads it */
    const char *t = s->model_type;
    cJSON_AddStringToObject(o, "model_type", s->model_type);
    cJSON_AddNumberToObject(o, "hidden_size", s->hidden_size);
    cJSON_AddNumberToObject(o, key_of(t, "intermediate_size"), s->intermediate_size);
    cJSON_AddNumberToObject(o, key_of(t, "num_hidden_layers"), s->num_hidden_layers);
    cJSON_AddNumberToObject(o, "num_attention_heads", s->num_attention_heads);
    if (strcmp(t, "chatglm") == 0) {
        cJSON_AddBoolToObject(o, "multi_query_attention", TRUE);
        cJSON_AddNumberToObject(o, "multi_query_group_num", s->num_key_value_heads);
    } else {
        cJSON_AddNumberToObject(o, "num_key_value_heads", s->num_key_value_heads);
    }
    cJSON_AddNumberToObject(o, key_of(t, "head_dim"), s->head_dim);
    cJSON_AddNumberToObject(o, key_of(t, "vocab_size"), s->vocab_size);
    cJSON_AddNumberToObject(o, key_of(t, "max_position_embeddings"), s->max_position_embeddings);
    cJSON_AddNumberToObject(o, "rope_theta", s->rope_theta);
    cJSON_AddNumberToObject(o, key_of(t, "rms_norm_eps"), s->rms_norm_eps);
    cJSON_AddBoolToObject(o, "tie_word_embeddings", s->tie_word_embeddings);
    cJSON_AddBoolToObject(o, key_of(t, "attention_bias"), s->attention_bias);
    /* Gemma reads "gelu" as the tanh GELU (spec_from_json) */
    cJSON_AddStringToObject(o, "hidden_act",
                            s->act == MDL_ACT_SILU ? "silu"
                            : s->act == MDL_ACT_GELU || strcmp(s->model_type, "gemma") == 0
                            ? "gelu" : "gelu_new");
    /* the keys that change the graph or the arithmetic, where set (a
     * Llama recording's bytes stay what they were) */
    if (s->mlp_bias) {
        cJSON_AddBoolToObject(o, "mlp_bias", TRUE);
    }
    if (s->o_bias && strcmp(t, "chatglm") == 0) {
        cJSON_AddBoolToObject(o, "add_bias_linear", TRUE);
    }
    if (s->partial_rotary_factor != 1) {
        cJSON_AddNumberToObject(o, "partial_rotary_factor", s->partial_rotary_factor);
    }
    if (s->sliding_window) {
        cJSON_AddNumberToObject(o, "sliding_window", s->sliding_window);
    }
    if (s->rope_scaling) {
        cJSON *rs = cJSON_AddObjectToObject(o, "rope_scaling");
        cJSON_AddStringToObject(rs, "rope_type", s->rope_scaling);
        if (strcmp(s->rope_scaling, "llama3") == 0) {
            cJSON_AddNumberToObject(rs, "factor", s->rope_factor);
            cJSON_AddNumberToObject(rs, "low_freq_factor", s->rope_low_freq_factor);
            cJSON_AddNumberToObject(rs, "high_freq_factor", s->rope_high_freq_factor);
            cJSON_AddNumberToObject(rs, "original_max_position_embeddings",
                                    s->rope_original_max_pos);
        }
    }
    return o;
}

char *
mdl_spec_functional_gap(const MdlSpec *s, uint64_t positions)
{
    uint32_t rot = mdl_spec_rotary_dim(s);
    if (s->not_computed) {
        return g_strdup_printf("%s; --functional off runs timing only", s->not_computed);
    }
    if (s->partial_rotary_factor != 1 && (rot % 2 != 0 || rot == 0)) {
        return g_strdup_printf("$.partial_rotary_factor: expected a share of head_dim %u "
                               "that rotates an even number of dimensions (got %g: %u); "
                               "--functional off runs timing only", s->head_dim,
                               s->partial_rotary_factor, rot);
    }
    if (s->rope_scaling && strcmp(s->rope_scaling, "llama3") != 0 &&
        !(strcmp(s->rope_scaling, "dynamic") == 0 && positions <= s->max_position_embeddings)) {
        /* dynamic NTK scaling changes nothing up to max_position_embeddings
         * (transformers' dynamic rotary embedding) */
        return g_strdup_printf("$.rope_scaling: expected none, llama3, or dynamic within "
                               "max_position_embeddings %u, the rotary frequencies the "
                               "functional engine computes (got \"%s\" over %" G_GUINT64_FORMAT
                               " positions); --functional off runs timing only",
                               s->max_position_embeddings, s->rope_scaling, positions);
    }
    return NULL;
}

uint32_t
mdl_spec_rotary_dim(const MdlSpec *s)
{
    /* int(partial_rotary_factor * head_dim), as transformers' Phi does */
    return (uint32_t) (s->partial_rotary_factor * s->head_dim + 1e-9);
}

uint64_t
mdl_spec_param_count(const MdlSpec *s)
{
    uint64_t h = s->hidden_size, f = s->intermediate_size;
    uint64_t q = (uint64_t) s->num_attention_heads * s->head_dim;
    uint64_t kv = (uint64_t) s->num_key_value_heads * s->head_dim;
    uint64_t attn = h * q + 2 * h * kv + q * h;
    if (s->attention_bias) {
        attn += q + 2 * kv;
    }
    uint64_t layer = attn + (s->gated_mlp ? 3 : 2) * h * f + 2 * h;  /* two norm weights */
    uint64_t embed = (uint64_t) s->vocab_size * h;
    return embed + s->num_hidden_layers * layer + h +
           (s->tie_word_embeddings ? 0 : embed);
}
