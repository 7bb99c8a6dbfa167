/*
 * test-models-spec.c - shipped model configs: parameter counts against the
 * published sizes, prefill FLOPs ~ 2 x parameters per token, decode bytes
 * ~ weights + KV cache; and the loader's error messages.
 */
#include "models/graph.h"
#include "models/spec.h"
#include "sim/util/error.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static char *
models_dir(void)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, "models", NULL);
}

static MdlSpec *
load(const char *name)
{
    g_autofree char *dir = models_dir();
    g_autoptr(GError) error = NULL;
    MdlSpec *s = mdl_spec_load(name, dir, &error);
    g_assert_no_error(error);
    return s;
}

typedef struct Size {
    const char *name;
    double billions;        /* published parameter count */
} Size;

/* Published sizes (model cards / Hugging Face "Model size"). */
static const Size sizes[] = {
    { "llama-3-8b", 8.03 },     { "llama-2-7b", 6.74 },   { "llama-3.2-1b", 1.24 },
    { "llama-3.2-3b", 3.21 },   { "qwen2.5-1.5b", 1.54 }, { "qwen2.5-3b", 3.09 },
    { "gemma-2b", 2.51 },       { "mistral-7b", 7.24 },   { "qwen1.5-1.8b", 1.84 },
    { "internlm2-1.8b", 1.89 },
    /* Hugging Face "Model size" of THUDM/chatglm2-6b, microsoft/phi-2,
     * Qwen/Qwen1.5-4B, Qwen/Qwen1.5-14B, Qwen/Qwen2.5-7B */
    { "chatglm2-6b", 6.24 },    { "phi-2", 2.78 },        { "qwen1.5-4b", 3.95 },
    { "qwen1.5-14b", 14.2 },    { "qwen2.5-7b", 7.62 },
};

/* Each family's own keys read into the shared fields, and what the
 * functional engine cannot compute refused by key, before anything runs. */
static void
test_families(void)
{
    g_autoptr(MdlSpec) glm = load("chatglm2-6b");
    g_assert_cmpuint(glm->num_hidden_layers, ==, 28);          /* num_layers */
    g_assert_cmpuint(glm->intermediate_size, ==, 13696);       /* ffn_hidden_size */
    g_assert_cmpuint(glm->num_key_value_heads, ==, 2);         /* multi_query_group_num */
    g_assert_cmpuint(glm->head_dim, ==, 128);                  /* kv_channels */
    g_assert_cmpuint(glm->vocab_size, ==, 65024);              /* padded_vocab_size */
    g_assert_cmpuint(glm->max_position_embeddings, ==, 32768); /* seq_length */
    g_assert_cmpfloat(glm->rms_norm_eps, ==, 1e-5);            /* layernorm_epsilon */
    g_assert_true(glm->attention_bias);                        /* add_qkv_bias */
    g_assert_cmpfloat(glm->partial_rotary_factor, ==, 0.5);
    g_assert_true(glm->rope_interleaved && !glm->o_bias && !glm->mlp_bias);
    g_assert_cmpuint(mdl_spec_rotary_dim(glm), ==, 64);
    g_autofree char *g1 = mdl_spec_functional_gap(glm, 64);
    g_assert_null(g1);

    g_autoptr(MdlSpec) phi = load("phi-2");
    g_assert_false(phi->gated_mlp);
    g_assert_true(phi->layer_norm && phi->parallel_block && phi->attention_bias);
    g_assert_cmpfloat(phi->partial_rotary_factor, ==, 0.4);
    g_assert_cmpfloat(phi->rms_norm_eps, ==, 1e-5);            /* layer_norm_eps */
    g_assert_cmpuint(phi->num_key_value_heads, ==, 32);
    g_assert_true(phi->o_bias && phi->mlp_bias && phi->head_bias && !phi->rope_interleaved);
    g_assert_cmpint(phi->act, ==, MDL_ACT_GELU_TANH);          /* gelu_new */
    g_assert_cmpuint(mdl_spec_rotary_dim(phi), ==, 32);        /* int(0.4 * 80) */
    g_autofree char *g2 = mdl_spec_functional_gap(phi, 64);
    g_assert_null(g2);
    /* an ungated MLP: fc1 and fc2, no gate matmul in the graph; a parallel
     * block: the MLP reads the input LayerNorm, not the attention, and
     * one add sums attention, MLP and residual */
    g_autoptr(MdlGraph) pg = mdl_graph_new_prefill(phi, 16, 0);
    uint32_t adds = 0;
    for (uint32_t i = 0; i < pg->n_nodes; i++) {
        const MdlNode *n = &pg->nodes[i];
        g_assert_false(g_str_has_suffix(n->name, "ffn_gate"));
        g_assert_false(g_str_has_suffix(n->name, "ffn_norm"));
        g_assert_false(g_str_has_suffix(n->name, "attn_add"));
        if (g_str_has_suffix(n->name, "ffn_up")) {
            g_assert_cmpint(pg->nodes[n->src[0]].op, ==, MDL_OP_LAYERNORM);
            g_assert_true(n->bias);
        }
        adds += n->op == MDL_OP_ADD;
        g_assert_true(n->op != MDL_OP_ADD || n->n_src == 3);
    }
    g_assert_cmpuint(adds, ==, 32);

    /* a sliding window counts only where it is used, and once passed */
    g_autoptr(MdlSpec) mis = load("mistral-7b");
    g_assert_cmpuint(mis->sliding_window, ==, 4096);
    g_autofree char *g3 = mdl_spec_functional_gap(mis, 100000);
    g_assert_null(g3);
    /* the window bounds attention's work: at 8192 positions, a query
     * past the window reads 4096 keys */
    g_autoptr(MdlGraph) mg = mdl_graph_new_decode(mis, 8191, 1);
    g_autoptr(MdlGraph) mg0 = mdl_graph_new_decode(mis, 4095, 1);
    for (uint32_t i = 0; i < mg->n_nodes; i++) {
        if (mg->nodes[i].op == MDL_OP_ATTENTION) {
            MdlWork w, w0;
            mdl_node_work(&mg->nodes[i], 0, 1, 0, mg->nodes[i].features, 0, MDL_PREC_W4A16,
                          &w);
            mdl_node_work(&mg0->nodes[i], 0, 1, 0, mg->nodes[i].features, 0, MDL_PREC_W4A16,
                          &w0);
            g_assert_cmpuint(w.n, ==, 4096);
            g_assert_cmpuint(w.flops, ==, w0.flops);
            g_assert_cmpuint(w.read_bytes, ==, w0.read_bytes);
        }
    }
    /* a block variant the engine does not compute is named by its key */
    g_autoptr(cJSON) groot = hs_json_load_file(glm->path, HS_CONFIG_ERROR, NULL);
    cJSON_ReplaceItemInObject(groot, "rmsnorm", cJSON_CreateFalse());
    g_autoptr(GError) gerr = NULL;
    g_autoptr(MdlSpec) glm_ln = mdl_spec_from_json(groot, "glm-ln", &gerr);
    g_assert_no_error(gerr);
    g_autofree char *g7 = mdl_spec_functional_gap(glm_ln, 64);
    g_assert_cmpstr(g7, ==, "$.rmsnorm: expected true, the chatglm block the functional "
                            "engine computes (got false); --functional off runs timing only");
    /* rope_ratio: one key, two arithmetics (ChatGLM2-32k, ChatGLM3):
     * refused with the reason, timed all the same */
    cJSON_ReplaceItemInObject(groot, "rmsnorm", cJSON_CreateTrue());
    cJSON_AddNumberToObject(groot, "rope_ratio", 50);
    g_autoptr(GError) rerr = NULL;
    g_autoptr(MdlSpec) glm3 = mdl_spec_from_json(groot, "glm-rope-ratio", &rerr);
    g_assert_no_error(rerr);
    g_autofree char *g9 = mdl_spec_functional_gap(glm3, 64);
    g_assert_true(g_str_has_prefix(g9, "$.rope_ratio: expected 1, the rotary frequencies "
                                       "the functional engine computes (got 50: "));
    g_assert_nonnull(strstr(g9, "divides the positions by it"));
    g_assert_nonnull(strstr(g9, "multiplies the rotary base"));
    g_assert_cmpuint(glm3->num_hidden_layers, ==, glm->num_hidden_layers);
    /* InternLM2's dynamic NTK scaling starts past max_position_embeddings */
    g_autoptr(MdlSpec) ilm = load("internlm2-1.8b");
    g_autofree char *g4 = mdl_spec_functional_gap(ilm, 32768);
    g_assert_null(g4);
    g_autofree char *g6 = mdl_spec_functional_gap(ilm, 32769);
    g_assert_cmpstr(g6, ==, "$.rope_scaling: expected none, llama3, or dynamic within "
                            "max_position_embeddings 32768, the rotary frequencies the "
                            "functional engine computes (got \"dynamic\" over 32769 positions); "
                            "--functional off runs timing only");
    g_autoptr(MdlSpec) qw = load("qwen2.5-7b");
    g_assert_cmpuint(qw->sliding_window, ==, 0);                /* use_sliding_window false */
    g_autofree char *g5 = mdl_spec_functional_gap(qw, 100000);
    g_assert_null(g5);
    /* Qwen2 windows some layers only: refused, not computed wrong */
    g_autoptr(cJSON) qroot = hs_json_load_file(qw->path, HS_CONFIG_ERROR, NULL);
    cJSON_ReplaceItemInObject(qroot, "use_sliding_window", cJSON_CreateTrue());
    g_autoptr(GError) qerr = NULL;
    g_autoptr(MdlSpec) qw_win = mdl_spec_from_json(qroot, "qwen-window", &qerr);
    g_assert_no_error(qerr);
    g_autofree char *g8 = mdl_spec_functional_gap(qw_win, 64);
    g_assert_true(g_str_has_prefix(g8, "$.use_sliding_window: expected false"));
}

/* A recording keeps the model as mdl_spec_to_json writes it: read back,
 * every shipped model has the same graph, node by node, arithmetic
 * fields included (replay times and checks what was run). */
static void
test_to_json_round_trip(void)
{
    g_autofree char *dir = models_dir();
    g_auto(GStrv) names = mdl_spec_list(dir, NULL);
    g_assert_nonnull(names);
    for (char **n = names; *n; n++) {
        g_autoptr(MdlSpec) a = load(*n);
        g_autoptr(cJSON) j = mdl_spec_to_json(a);
        g_autoptr(GError) err = NULL;
        g_autoptr(MdlSpec) b = mdl_spec_from_json(j, *n, &err);
        g_assert_no_error(err);
        g_autoptr(MdlGraph) ga = mdl_graph_new_decode(a, 5000, 2);
        g_autoptr(MdlGraph) gb = mdl_graph_new_decode(b, 5000, 2);
        g_assert_cmpuint(ga->n_nodes, ==, gb->n_nodes);
        for (uint32_t i = 0; i < ga->n_nodes; i++) {
            const MdlNode *x = &ga->nodes[i], *y = &gb->nodes[i];
            g_assert_cmpstr(x->name, ==, y->name);
            g_assert_true(x->op == y->op && x->features == y->features && x->k == y->k &&
                          x->bias == y->bias && x->act == y->act && x->norm == y->norm &&
                          x->rotary_dim == y->rotary_dim && x->window == y->window &&
                          x->rope_interleaved == y->rope_interleaved &&
                          x->rope_theta == y->rope_theta &&
                          memcmp(x->rope_scale, y->rope_scale, sizeof(x->rope_scale)) == 0);
        }
        g_assert_true(a->embed_scale == b->embed_scale && a->norm_plus_one == b->norm_plus_one &&
                      a->tie_word_embeddings == b->tie_word_embeddings &&
                      a->rms_norm_eps == b->rms_norm_eps);
    }
}

static void
test_param_count(gconstpointer data)
{
    const Size *sz = data;
    g_autoptr(MdlSpec) s = load(sz->name);
    double b = (double) mdl_spec_param_count(s) / 1e9;
    if (fabs(b / sz->billions - 1) > 0.01) {
        g_error("%s: %.4f B parameters, published %.2f B (more than 1 %% off)",
                sz->name, b, sz->billions);
    }
}

static void
test_list(void)
{
    g_autofree char *dir = models_dir();
    g_auto(GStrv) names = mdl_spec_list(dir, NULL);
    g_assert_nonnull(names);
    g_assert_true(g_strv_contains((const char *const *) names, "llama-3-8b"));
    g_assert_true(g_strv_contains((const char *const *) names, "tiny"));
    for (char **n = names; *n; n++) {
        g_autoptr(MdlSpec) s = load(*n);
        g_assert_cmpuint(strlen(s->description), >, 10);
    }
}

/* Prefill: FLOPs per token ~ 2 x (parameters used per token); attention
 * adds a little at short sequences. */
static void
test_prefill_flops(void)
{
    g_autoptr(MdlSpec) s = load("llama-3-8b");
    const uint32_t S = 64;
    g_autoptr(MdlGraph) g = mdl_graph_new_prefill(s, S, 0);
    MdlWork w;
    mdl_graph_total(g, MDL_PREC_W4A16, &w);
    /* per token the layers' matmul weights; the LM head once per prefill */
    uint64_t embed = (uint64_t) s->vocab_size * s->hidden_size;
    double layer_params = (double) (mdl_spec_param_count(s) - 2 * embed);
    double want = 2.0 * layer_params * S + 2.0 * (double) embed;
    double ratio = (double) w.flops / want;
    g_assert_cmpfloat(ratio, >, 1.0);
    g_assert_cmpfloat(ratio, <, 1.02);      /* attention + elementwise < 2 % at S=64 */
}

/* Decode: bytes per step ~ W4A16 weight bytes + KV cache read. */
static void
test_decode_bytes(void)
{
    g_autoptr(MdlSpec) s = load("llama-3-8b");
    const uint32_t ctx = 1024;
    g_autoptr(MdlGraph) g = mdl_graph_new_decode(s, ctx, 1);
    MdlWork w;
    mdl_graph_total(g, MDL_PREC_W4A16, &w);
    uint64_t embed = (uint64_t) s->vocab_size * s->hidden_size;
    double weights = (double) (mdl_spec_param_count(s) - embed) *
                     mdl_prec_weight_bytes(MDL_PREC_W4A16);
    double kv = 2.0 * s->num_hidden_layers * s->num_key_value_heads * s->head_dim *
                (ctx + 1) * 2.0;
    double ratio = (double) (w.read_bytes + w.write_bytes) / (weights + kv);
    g_assert_cmpfloat(fabs(ratio - 1), <, 0.02);
}

static void
test_graph_structure(void)
{
    g_autoptr(MdlSpec) s = load("tiny");
    g_autoptr(MdlGraph) g = mdl_graph_new_prefill(s, 10, 0);
    /* embed + 15 per layer + final norm + head */
    g_assert_cmpuint(g->n_nodes, ==, 1 + 15 * s->num_hidden_layers + 2);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        for (uint32_t j = 0; j < g->nodes[i].n_src; j++) {
            g_assert_cmpuint(g->nodes[i].src[j], <, i);        /* topological */
        }
    }
    const MdlNode *head = &g->nodes[g->n_nodes - 1];
    g_assert_cmpstr(head->name, ==, "lm_head");
    g_assert_cmpuint(head->tokens, ==, 1);       /* prefill: last token only */
    g_assert_cmpuint(head->features, ==, s->vocab_size);
    g_autoptr(MdlGraph) d = mdl_graph_new_decode(s, 10, 3);
    g_assert_cmpuint(d->nodes[d->n_nodes - 1].tokens, ==, 3);
}

typedef struct BadSpec {
    const char *name;
    const char *json;
    const char *message;       /* after "FILE: " */
} BadSpec;

static const BadSpec bad[] = {
    { "wrong-type", "{\"model_type\":\"llama\",\"hidden_size\":\"big\"}",
      "$.hidden_size: expected an integer in [1, 65536] (got \"big\")" },
    { "too-many-layers", "{\"model_type\":\"llama\",\"hidden_size\":64,"
      "\"intermediate_size\":128,\"num_hidden_layers\":100000}",
      "$.num_hidden_layers: expected an integer in [1, 1024] (got 100000)" },
    { "missing-key", "{\"model_type\":\"llama\",\"hidden_size\":64}",
      "$: missing required key \"intermediate_size\" (an integer in [1, 262144], FFN width)" },
    /* read by one table (models/spec.c): every key it reads is type-checked,
     * a family's own spelling named, null taken as absent */
    { "act-not-string",
      "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":8,"
      "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":8,"
      "\"sliding_window\":null,\"hidden_act\":5}",
      "$.hidden_act: expected a string (got 5)" },
    { "glm-alias", "{\"model_type\":\"chatglm\",\"hidden_size\":64,\"ffn_hidden_size\":8,"
      "\"num_layers\":0}",
      "$.num_layers: expected an integer in [1, 1024] (got 0)" },
    { "rotary-zero",
      "{\"model_type\":\"phi\",\"hidden_size\":64,\"intermediate_size\":8,"
      "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":8,"
      "\"partial_rotary_factor\":0}",
      "$.partial_rotary_factor: expected a number in (0, 1] (got 0)" },
    { "type-not-string", "{\"model_type\":7}",
      "$.model_type: expected one of llama, mistral, qwen2, internlm2, gemma, chatglm, phi "
      "(got 7)" },
    { "unknown-type", "{\"model_type\":\"rwkv\"}",
      "$.model_type: expected one of llama, mistral, qwen2, internlm2, gemma, chatglm, phi "
      "(got \"rwkv\")" },
    { "heads-not-divisor",
      "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":8,"
      "\"num_hidden_layers\":1,\"num_attention_heads\":6,\"vocab_size\":8}",
      "$.num_attention_heads: expected a divisor of hidden_size 64 when head_dim is "
      "absent (got 6)" },
    { "kv-heads",
      "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":8,"
      "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"num_key_value_heads\":3,"
      "\"vocab_size\":8}",
      "$.num_key_value_heads: expected a divisor of num_attention_heads 4 (got 3)" },
    { "not-json", "{\"model_type\": llama}", "invalid JSON at line 1, column 16" },
};

static void
test_bad(gconstpointer data)
{
    const BadSpec *b = data;
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-model-XXXXXX", &error);
    g_autofree char *file = g_build_filename(dir, "config.json", NULL);
    g_assert_true(g_file_set_contents(file, b->json, -1, NULL));
    /* through the directory form, as a Hugging Face model directory */
    g_autoptr(MdlSpec) s = mdl_spec_load(dir, "/nonexistent", &error);
    g_assert_null(s);
    g_autofree char *want = g_strdup_printf("%s: %s", file, b->message);
    g_assert_cmpstr(error->message, ==, want);
    g_unlink(file);
    g_rmdir(dir);
}

static void
test_unknown_name(void)
{
    g_autofree char *dir = models_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(MdlSpec) s = mdl_spec_load("llama-9", dir, &error);
    g_assert_null(s);
    g_assert_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND);
    g_assert_true(g_str_has_prefix(error->message, "unknown model \"llama-9\" (known: "));
}

static void
test_directory_form(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-model-XXXXXX", &error);
    g_autofree char *file = g_build_filename(dir, "config.json", NULL);
    g_autofree char *src = g_build_filename(HS_SOURCE_ROOT, "models", "qwen2.5-1.5b.json", NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(src, &text, NULL, NULL));
    g_assert_true(g_file_set_contents(file, text, -1, NULL));
    g_autoptr(MdlSpec) s = mdl_spec_load(dir, "/nonexistent", &error);
    g_assert_no_error(error);
    g_assert_true(s->attention_bias);           /* Qwen2: implied QKV bias */
    g_assert_true(s->tie_word_embeddings);
    g_assert_cmpuint(s->head_dim, ==, 128);
    g_unlink(file);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/models/spec/families", test_families);
    g_test_add_func("/models/spec/to-json-round-trip", test_to_json_round_trip);
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        g_autofree char *p = g_strdup_printf("/models/spec/param-count/%s", sizes[i].name);
        g_test_add_data_func(p, &sizes[i], test_param_count);
    }
    g_test_add_func("/models/spec/list", test_list);
    g_test_add_func("/models/spec/unknown-name", test_unknown_name);
    g_test_add_func("/models/spec/directory-form", test_directory_form);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *p = g_strdup_printf("/models/spec/bad/%s", bad[i].name);
        g_test_add_data_func(p, &bad[i], test_bad);
    }
    g_test_add_func("/models/graph/prefill-flops", test_prefill_flops);
    g_test_add_func("/models/graph/decode-bytes", test_decode_bytes);
    g_test_add_func("/models/graph/structure", test_graph_structure);
    return g_test_run();
}
