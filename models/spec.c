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

/* An integer key in [1, @max]; @def 0 means required. */
static gboolean
get_uint(const cJSON *root, const char *key, uint32_t def, uint32_t max, uint32_t *out,
         GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL || cJSON_IsNull(v)) {
        if (def == 0) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                        "$: missing required key \"%s\"", key);
            return FALSE;
        }
        *out = def;
        return TRUE;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > max ||
        v->valuedouble != floor(v->valuedouble)) {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.%s: expected an integer in [1, %u] (got %s)", key, max, got);
        return FALSE;
    }
    *out = (uint32_t) v->valuedouble;
    return TRUE;
}

static gboolean
get_double(const cJSON *root, const char *key, double def, double *out,
           GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL || cJSON_IsNull(v)) {
        *out = def;
        return TRUE;
    }
    /* finite: 1e999 parses as inf and would reach the engine as NaN */
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble)) {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.%s: expected a finite positive number (got %s)", key, got);
        return FALSE;
    }
    *out = v->valuedouble;
    return TRUE;
}

static gboolean
get_bool(const cJSON *root, const char *key, gboolean def, gboolean *out,
         GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL || cJSON_IsNull(v)) {
        *out = def;
        return TRUE;
    }
    if (!cJSON_IsBool(v)) {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.%s: expected true or false (got %s)", key, got);
        return FALSE;
    }
    *out = cJSON_IsTrue(v);
    return TRUE;
}

/*
 * The key a family spells a field with: ChatGLM2 (THUDM/chatglm2-6b
 * config.json) names its fields its own way; Phi-2 (microsoft/phi-2) its
 * LayerNorm epsilon.  Reading through the alias keeps the JSON path of
 * every message the one in the user's file.
 */
static const struct {
    const char *model_type, *key, *alias;
} family_keys[] = {
    { "chatglm", "num_hidden_layers", "num_layers" },
    { "chatglm", "intermediate_size", "ffn_hidden_size" },
    { "chatglm", "head_dim", "kv_channels" },
    { "chatglm", "vocab_size", "padded_vocab_size" },
    { "chatglm", "max_position_embeddings", "seq_length" },
    { "chatglm", "rms_norm_eps", "layernorm_epsilon" },
    { "chatglm", "attention_bias", "add_qkv_bias" },
    { "phi", "rms_norm_eps", "layer_norm_eps" },
};

static const char *
key_of(const char *type, const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(family_keys); i++) {
        if (strcmp(family_keys[i].model_type, type) == 0 &&
            strcmp(family_keys[i].key, key) == 0) {
            return family_keys[i].alias;
        }
    }
    return key;
}

/*
 * Keys whose other value changes the arithmetic in a way the functional
 * engine does not compute (timing is the same): the check refuses such a
 * model by the key (mdl_spec_functional_gap).  ChatGLM2's variants of its
 * block (modeling_chatglm.py: LayerNorm instead of RMSNorm, the residual
 * taken after the norm, no final norm, the non-original rotary); Phi's
 * LayerNorm on Q and K.
 */
static const struct {
    const char *model_type, *key;
    gboolean computed;              /* the value the engine computes */
} arith_keys[] = {
    { "chatglm", "rmsnorm", TRUE },
    { "chatglm", "apply_residual_connection_post_layernorm", FALSE },
    { "chatglm", "post_layer_norm", TRUE },
    { "chatglm", "original_rope", TRUE },
    { "phi", "qk_layernorm", FALSE },
};

static gboolean
check_arith_keys(const cJSON *root, const char *type, MdlSpec *s, GError **error)
{
    for (size_t i = 0; i < G_N_ELEMENTS(arith_keys); i++) {
        gboolean v;
        if (strcmp(arith_keys[i].model_type, type) != 0) {
            continue;
        }
        if (!get_bool(root, arith_keys[i].key, arith_keys[i].computed, &v, error)) {
            return FALSE;
        }
        if (v != arith_keys[i].computed && s->not_computed == NULL) {
            s->not_computed = g_strdup_printf("$.%s: expected %s, the %s block the functional "
                                              "engine computes (got %s)", arith_keys[i].key,
                                              arith_keys[i].computed ? "true" : "false", type,
                                              v ? "true" : "false");
        }
    }
    /* Qwen2 windows only the layers from max_window_layers on
     * (modeling_qwen2.py); the engine windows every layer or none */
    gboolean qwen_window = FALSE;
    if (strcmp(type, "qwen2") == 0 &&
        !get_bool(root, "use_sliding_window", FALSE, &qwen_window, error)) {
        return FALSE;
    }
    if (qwen_window && s->not_computed == NULL) {
        s->not_computed = g_strdup("$.use_sliding_window: expected false, as the functional "
                                   "engine does not window some layers and not others "
                                   "(max_window_layers) (got true)");
    }
    /* ChatGLM3's rope_ratio scales the rotary base; ChatGLM2 has none */
    double ratio = 1;
    if (strcmp(type, "chatglm") == 0 && !get_double(root, "rope_ratio", 1, &ratio, error)) {
        return FALSE;
    }
    if (ratio != 1 && s->not_computed == NULL) {
        s->not_computed = g_strdup_printf("$.rope_ratio: expected 1, the rotary base the "
                                          "functional engine computes (got %g)", ratio);
    }
    return TRUE;
}

static const char *
get_string(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static MdlSpec *
spec_from_json(const cJSON *root, GError **error)
{
    if (!cJSON_IsObject(root)) {
        g_autofree char *got = hs_json_describe(root);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$: expected an object (got %s)", got);
        return NULL;
    }
    g_autoptr(MdlSpec) s = g_new0(MdlSpec, 1);

    const char *type = get_string(root, "model_type");
    if (type == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "$: missing required key \"model_type\"");
        return NULL;
    }
    static const char *const known[] = {
        "llama", "mistral", "qwen2", "internlm2", "gemma", "chatglm", "phi", NULL,
    };
    if (!g_strv_contains(known, type)) {
        g_autofree char *list = g_strjoinv(", ", (char **) known);
        g_autofree char *got = hs_escape(type);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.model_type: expected one of %s (got \"%s\")", list, got);
        return NULL;
    }
    s->model_type = g_strdup(type);
    const char *desc = get_string(root, "_hetero_sim_description");
    s->description = g_strdup(desc ? desc : "");

    /* Upper bounds: several times the largest published model's (Llama 3.1
     * 405B: hidden 16384, FFN 53248, 126 layers, 128 heads; Gemma: vocab
     * 256000), so a typo is an error rather than hours of simulation or a
     * failed allocation. */
    /* ChatGLM2 has grouped KV heads only with multi_query_attention */
    gboolean chatglm = strcmp(type, "chatglm") == 0;
    gboolean mqa = FALSE;
    if (chatglm && !get_bool(root, "multi_query_attention", FALSE, &mqa, error)) {
        return NULL;
    }
    const char *kv_key = chatglm ? (mqa ? "multi_query_group_num" : "num_attention_heads")
                                 : "num_key_value_heads";
    if (!get_uint(root, "hidden_size", 0, 65536, &s->hidden_size, error) ||
        !get_uint(root, key_of(type, "intermediate_size"), 0, 262144, &s->intermediate_size,
                  error) ||
        !get_uint(root, key_of(type, "num_hidden_layers"), 0, 1024, &s->num_hidden_layers,
                  error) ||
        !get_uint(root, "num_attention_heads", 0, 1024, &s->num_attention_heads, error) ||
        !get_uint(root, key_of(type, "vocab_size"), 0, 1u << 20, &s->vocab_size, error) ||
        !get_uint(root, kv_key, s->num_attention_heads, 1024, &s->num_key_value_heads,
                  error) ||
        !get_uint(root, key_of(type, "max_position_embeddings"), 2048, 1000000000,
                  &s->max_position_embeddings, error) ||
        !get_double(root, "rope_theta", 10000.0, &s->rope_theta, error) ||
        !get_double(root, key_of(type, "rms_norm_eps"), 1e-6, &s->rms_norm_eps, error)) {
        return NULL;
    }
    gboolean gemma = strcmp(type, "gemma") == 0;
    gboolean qwen2 = strcmp(type, "qwen2") == 0;
    /* Gemma and the small Llama 3.2 / Qwen2.5 models tie the LM head */
    if (!get_bool(root, "tie_word_embeddings", gemma, &s->tie_word_embeddings, error)) {
        return NULL;
    }
    /* Which projections carry biases, as each family's modelling code
     * builds its nn.Linear layers: Qwen2 Q/K/V always (without saying so
     * in config.json); Phi-2 every one, LM head included; Llama, Mistral
     * and Gemma's attention_bias (Q/K/V and O) and mlp_bias; InternLM2's
     * bias (wqkv and wo); ChatGLM2's add_qkv_bias and add_bias_linear
     * (dense, both MLP matrices). */
    gboolean phi = strcmp(type, "phi") == 0;
    if (!get_bool(root, key_of(type, "attention_bias"), qwen2 || phi, &s->attention_bias,
                  error) ||
        !get_bool(root, "bias", s->attention_bias, &s->attention_bias, error)) {
        return NULL;
    }
    gboolean linear = FALSE;
    if (chatglm && !get_bool(root, "add_bias_linear", FALSE, &linear, error)) {
        return NULL;
    }
    s->o_bias = phi || linear || (s->attention_bias && !qwen2 && !chatglm);
    if (!get_bool(root, "mlp_bias", phi || linear, &s->mlp_bias, error)) {
        return NULL;
    }
    s->head_bias = phi;
    if (s->hidden_size % s->num_attention_heads != 0 &&
        cJSON_GetObjectItemCaseSensitive(root, key_of(type, "head_dim")) == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.num_attention_heads: expected a divisor of hidden_size %u "
                    "when head_dim is absent (got %u)", s->hidden_size,
                    s->num_attention_heads);
        return NULL;
    }
    if (!get_uint(root, key_of(type, "head_dim"), s->hidden_size / s->num_attention_heads, 4096,
                  &s->head_dim, error)) {
        return NULL;
    }
    if (s->num_attention_heads % s->num_key_value_heads != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.num_key_value_heads: expected a divisor of "
                    "num_attention_heads %u (got %u)", s->num_attention_heads,
                    s->num_key_value_heads);
        return NULL;
    }
    /* Gemma's modelling code uses the tanh GELU when hidden_activation is
     * absent, whatever hidden_act says (transformers GemmaMLP) */
    const char *act = get_string(root, "hidden_activation");
    if (act == NULL) {
        act = get_string(root, "hidden_act");
    }
    if (act == NULL || strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0) {
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
    s->embed_scale = gemma;
    s->norm_plus_one = gemma;
    s->gated_mlp = !phi;
    s->layer_norm = phi;
    s->parallel_block = phi;
    /* ChatGLM2 rotates half of each head (RotaryEmbedding(kv_channels // 2)
     * in THUDM/chatglm2-6b modeling_chatglm.py), in interleaved pairs
     * (apply_rotary_pos_emb: x.reshape(..., rot_dim // 2, 2)); others say
     * so, or all, in halves (rotate_half) */
    s->rope_interleaved = chatglm;
    if (!get_double(root, "partial_rotary_factor", chatglm ? 0.5 : 1.0,
                    &s->partial_rotary_factor, error)) {
        return NULL;
    }
    if (s->partial_rotary_factor > 1) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.partial_rotary_factor: expected a number in (0, 1] (got %g)",
                    s->partial_rotary_factor);
        return NULL;
    }
    /* a window only where it is used: Qwen2 configs carry one with
     * use_sliding_window false */
    gboolean use_window = TRUE;
    if (!get_bool(root, "use_sliding_window", TRUE, &use_window, error)) {
        return NULL;
    }
    const cJSON *win = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
    if (use_window && win && !cJSON_IsNull(win) &&
        !get_uint(root, "sliding_window", 0, 1000000000, &s->sliding_window, error)) {
        return NULL;
    }
    if (!use_window) {
        s->sliding_window = 0;
    }
    if (!check_arith_keys(root, type, s, error)) {
        return NULL;
    }
    /* rope_scaling: its type ("type" or "rope_type"); Llama 3.1/3.2's
     * llama3 scaling with its published parameters */
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    if (cJSON_IsObject(rs)) {
        const char *t = get_string(rs, "rope_type");
        t = t ? t : get_string(rs, "type");
        s->rope_scaling = g_strdup(t ? t : "unknown");
        if (strcmp(s->rope_scaling, "llama3") == 0 &&
            (!get_double(rs, "factor", 8.0, &s->rope_factor, error) ||
             !get_double(rs, "low_freq_factor", 1.0, &s->rope_low_freq_factor, error) ||
             !get_double(rs, "high_freq_factor", 4.0, &s->rope_high_freq_factor, error) ||
             !get_double(rs, "original_max_position_embeddings", 8192,
                         &s->rope_original_max_pos, error))) {
            /* the key's path inside rope_scaling */
            char *msg = (*error)->message;
            (*error)->message = g_strdup_printf("$.rope_scaling%s", msg + 1);
            g_free(msg);
            return NULL;
        }
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
