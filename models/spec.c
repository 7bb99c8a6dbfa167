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
} SpecKeys;

static void
spec_keys_clear(SpecKeys *k)
{
    g_free(k->s.description);
    g_free(k->hidden_act);
    g_free(k->hidden_activation);
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
                              "grouped KV heads (multi_query_group_num) or one per head"), )
};
static const HsParam phi_params[] = {
    SPEC_PARAMS("num_hidden_layers", "intermediate_size", "head_dim", "vocab_size",
                "max_position_embeddings", "layer_norm_eps", "attention_bias",
                "num_key_value_heads", 0, 1, 1.0, )
};

static const HsParam *const family_params_of[] = {
    std_params, std_params, qwen2_params, std_params, gemma_params, chatglm_params, phi_params,
};
G_STATIC_ASSERT(G_N_ELEMENTS(family_params_of) == FAM_COUNT);

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
    const char *act = k.hidden_activation[0] ? k.hidden_activation : k.hidden_act;
    if (strcmp(act, "silu") == 0) {
        s->act = MDL_ACT_SILU;
    } else if (g_str_has_prefix(act, "gelu")) {
        /* Gemma's reference uses the tanh approximation whatever it says */
        s->act = MDL_ACT_GELU_TANH;
    } else {
        g_autofree char *got = hs_escape(act);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.hidden_act: expected silu or gelu (got \"%s\")", got);
        return NULL;
    }
    gboolean gemma = k.family == FAM_GEMMA, phi = k.family == FAM_PHI;
    s->embed_scale = gemma;
    s->norm_plus_one = gemma;
    s->gated_mlp = !phi;
    s->layer_norm = phi;
    s->parallel_block = phi;
    /* a window only where it is used: Qwen2 configs carry one with
     * use_sliding_window false */
    if (!k.use_sliding_window) {
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

cJSON *
mdl_spec_to_json(const MdlSpec *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model_type", s->model_type);
    cJSON_AddNumberToObject(o, "hidden_size", s->hidden_size);
    cJSON_AddNumberToObject(o, "intermediate_size", s->intermediate_size);
    cJSON_AddNumberToObject(o, "num_hidden_layers", s->num_hidden_layers);
    cJSON_AddNumberToObject(o, "num_attention_heads", s->num_attention_heads);
    cJSON_AddNumberToObject(o, "num_key_value_heads", s->num_key_value_heads);
    cJSON_AddNumberToObject(o, "head_dim", s->head_dim);
    cJSON_AddNumberToObject(o, "vocab_size", s->vocab_size);
    cJSON_AddNumberToObject(o, "max_position_embeddings", s->max_position_embeddings);
    cJSON_AddNumberToObject(o, "rope_theta", s->rope_theta);
    cJSON_AddNumberToObject(o, "rms_norm_eps", s->rms_norm_eps);
    cJSON_AddBoolToObject(o, "tie_word_embeddings", s->tie_word_embeddings);
    cJSON_AddBoolToObject(o, "attention_bias", s->attention_bias);
    cJSON_AddStringToObject(o, "hidden_act", s->act == MDL_ACT_SILU ? "silu" : "gelu");
    return o;
}

char *
mdl_spec_functional_gap(const MdlSpec *s, uint64_t positions)
{
    if (s->layer_norm || s->parallel_block || !s->gated_mlp) {
        return g_strdup_printf("$.model_type: expected a family the functional engine computes "
                               "(got \"%s\": LayerNorm, parallel attention and MLP, an ungated "
                               "MLP); --functional off runs timing only", s->model_type);
    }
    if (strcmp(s->model_type, "chatglm") == 0) {
        return g_strdup("$.model_type: expected a family the functional engine computes "
                        "(got \"chatglm\": rotary embedding on half of each head, its own "
                        "weight layout); --functional off runs timing only");
    }
    if (s->partial_rotary_factor != 1.0) {
        return g_strdup_printf("$.partial_rotary_factor: expected 1, the rotary embedding the "
                               "functional engine computes (got %g); --functional off runs "
                               "timing only", s->partial_rotary_factor);
    }
    if (s->sliding_window && positions > s->sliding_window) {
        return g_strdup_printf("$.sliding_window: expected a request of at most %u positions, "
                               "as the functional engine attends to every position, not to a "
                               "window (got %" G_GUINT64_FORMAT ", prompt + decode); "
                               "--functional off runs timing only", s->sliding_window,
                               positions);
    }
    return NULL;
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
