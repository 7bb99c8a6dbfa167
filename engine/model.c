/*
 * model.c - see model.h.  The forward pass follows the graph's order of
 * operations (models/graph.h), computed whole, with the same slice kernels
 * the simulator's tasks use.
 */
#include "engine/model.h"
#include "sim/util/error.h"
#include "engine/safetensors.h"
#include "engine/weights.h"

#include <math.h>
#include <string.h>

struct EngModel {
    EngModelConfig cfg;
    GMutex lock;                 /* lazy generation */
    EngMatrix **w;               /* [layer * ENG_W_COUNT + which] */
    EngMatrix *lm_head;
    float **norms;               /* [layer * 2 + which], [layers * 2] = final; [hidden] */
    float **bias;                /* [layer * 3 + which] or NULL entries */
    float *embed;                /* loaded models: [vocab, hidden]; NULL = synthetic */
    gboolean loaded;             /* weights from a model directory */
    uint32_t loaded_layers;      /* layers read from it (the others are never used) */
    EngSafetensors *st;          /* the directory's files, kept mapped: other
                                  * formats are quantised from their values */
    char **wname;                /* [layer * ENG_W_COUNT + which], [layers *
                                  * ENG_W_COUNT] = LM head: tensor names, NULL
                                  * where there is none (a tied head) */
    EngQMatrix **wq[ENG_QFMT_COUNT];   /* other formats: [layer * ENG_W_COUNT + which],
                                        * [layers * ENG_W_COUNT] = LM head; lazily */
};

static void
matmul_shape(const EngModelConfig *c, EngWeight which, uint32_t *rows, uint32_t *cols)
{
    uint32_t q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    static const int in_is_hidden[ENG_W_COUNT] = { 1, 1, 1, 0, 1, 1, 0 };
    switch (which) {
    case ENG_W_Q:    *rows = q;               break;
    case ENG_W_K:
    case ENG_W_V:    *rows = kv;              break;
    case ENG_W_O:
    case ENG_W_DOWN: *rows = c->hidden;       break;
    default:         *rows = c->intermediate; break;
    }
    *cols = in_is_hidden[which] ? c->hidden : (which == ENG_W_O ? q : c->intermediate);
}

static uint32_t
bias_len(const EngModelConfig *c, int which)
{
    return (which == 0 ? c->heads : c->kv_heads) * c->head_dim;
}

gboolean
eng_config_check(const EngModelConfig *cfg, GError **error)
{
    if (cfg->head_dim == 0 || cfg->head_dim % 2 != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.head_dim: expected an even integer for the functional engine's "
                    "rotary embedding, or --functional off for timing only (got %u)",
                    cfg->head_dim);
        return FALSE;
    }
    if (cfg->heads == 0 || cfg->kv_heads == 0 || cfg->heads % cfg->kv_heads != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.num_key_value_heads: expected a divisor of num_attention_heads %u "
                    "(got %u)", cfg->heads, cfg->kv_heads);
        return FALSE;
    }
    return TRUE;
}

EngModel *
eng_model_new(const EngModelConfig *cfg)
{
    g_assert(cfg->heads > 0 && cfg->kv_heads > 0 && cfg->heads % cfg->kv_heads == 0);
    g_assert(cfg->head_dim % 2 == 0 && cfg->weights < ENG_WFMT_COUNT);
    EngModel *m = g_new0(EngModel, 1);
    m->cfg = *cfg;
    g_mutex_init(&m->lock);
    m->w = g_new0(EngMatrix *, (size_t) cfg->layers * ENG_W_COUNT);
    m->norms = g_new0(float *, (size_t) cfg->layers * 2 + 1);
    m->bias = g_new0(float *, (size_t) cfg->layers * 3);
    /* synthetic norms near 1 (stored as w with 1 + w applied for Gemma) */
    for (size_t i = 0; i <= (size_t) cfg->layers * 2; i++) {
        uint64_t key = i == (size_t) cfg->layers * 2
                       ? eng_syn_key(cfg->seed, ENG_SYN_FINAL_NORM, 0)
                       : eng_syn_key(cfg->seed, i / 2, ENG_W_COUNT + i % 2);
        m->norms[i] = g_new(float, MAX(cfg->hidden, 1));
        eng_syn_fill(key, 0, cfg->hidden, 0.05f, m->norms[i]);
        for (uint32_t j = 0; j < cfg->hidden; j++) {
            m->norms[i][j] += 1.0f;
        }
        /* a few outlier channels, as real LLMs have (weights.h) */
        eng_syn_outlier_gains(cfg->seed, cfg->hidden, m->norms[i]);
        for (uint32_t j = 0; cfg->norm_plus_one && j < cfg->hidden; j++) {
            m->norms[i][j] -= 1.0f;
        }
    }
    if (cfg->attention_bias) {
        for (size_t i = 0; i < (size_t) cfg->layers * 3; i++) {
            uint32_t n = bias_len(cfg, (int) (i % 3));
            m->bias[i] = g_new(float, n);
            eng_syn_fill(eng_syn_key(cfg->seed, i / 3, ENG_W_COUNT + 2 + i % 3), 0, n, 0.1f,
                         m->bias[i]);
        }
    }
    return m;
}

void
eng_model_free(EngModel *m)
{
    if (m == NULL) {
        return;
    }
    for (size_t i = 0; i < (size_t) m->cfg.layers * ENG_W_COUNT; i++) {
        eng_matrix_free(m->w[i]);
    }
    g_free(m->w);
    eng_matrix_free(m->lm_head);
    for (size_t i = 0; i <= (size_t) m->cfg.layers * 2; i++) {
        g_free(m->norms[i]);
    }
    g_free(m->norms);
    for (size_t i = 0; i < (size_t) m->cfg.layers * 3; i++) {
        g_free(m->bias[i]);
    }
    g_free(m->bias);
    g_free(m->embed);
    eng_safetensors_free(m->st);
    for (size_t i = 0; m->wname && i <= (size_t) m->cfg.layers * ENG_W_COUNT; i++) {
        g_free(m->wname[i]);
    }
    g_free(m->wname);
    for (int f = 0; f < ENG_QFMT_COUNT; f++) {
        for (size_t i = 0; m->wq[f] && i <= (size_t) m->cfg.layers * ENG_W_COUNT; i++) {
            eng_qmatrix_free(m->wq[f][i]);
        }
        g_free(m->wq[f]);
    }
    g_mutex_clear(&m->lock);
    g_free(m);
}

const EngModelConfig *
eng_model_config(const EngModel *m)
{
    return &m->cfg;
}

const EngMatrix *
eng_model_weight(EngModel *m, uint32_t layer, EngWeight which)
{
    const EngModelConfig *c = &m->cfg;
    g_assert(layer < c->layers && which < ENG_W_COUNT);
    size_t idx = (size_t) layer * ENG_W_COUNT + which;
    /* a loaded model's layers beyond those read are never asked for */
    g_assert(!m->loaded || layer < m->loaded_layers);
    g_mutex_lock(&m->lock);
    if (m->w[idx] == NULL) {
        uint32_t rows, cols;
        matmul_shape(c, which, &rows, &cols);
        m->w[idx] = eng_syn_matrix(eng_syn_key(c->seed, layer, which), rows, cols, c->weights);
    }
    g_mutex_unlock(&m->lock);
    return m->w[idx];
}

const EngMatrix *
eng_model_lm_head(EngModel *m)
{
    g_mutex_lock(&m->lock);
    if (m->lm_head == NULL) {
        m->lm_head = eng_syn_matrix(eng_syn_key(m->cfg.seed, ENG_SYN_LM_HEAD, 0), m->cfg.vocab,
                                    m->cfg.hidden, m->cfg.weights);
    }
    g_mutex_unlock(&m->lock);
    return m->lm_head;
}

static float *read_tensor(const EngSafetensors *st, const char *name, uint64_t rows,
                          uint64_t cols, GError **error);

/* @src's values in @format: dequantised 256 rows at a time and quantised
 * again (exact from FP32 and FP16 storage; from W4A16, quantised twice). */
static EngQMatrix *
requantise(const EngMatrix *src, EngQFormat format)
{
    EngQMatrix *q = eng_qmatrix_new(format, src->rows, src->cols);
    g_autofree float *w = g_malloc(sizeof(float) * 256 * MAX(src->cols, 1));
    for (uint32_t r0 = 0; r0 < src->rows; r0 += 256) {
        uint32_t r1 = MIN(src->rows, r0 + 256);
        eng_matrix_rows_f32(src, r0, r1, w);
        eng_qmatrix_set_rows(q, r0, r1, w);
    }
    return q;
}

const EngQMatrix *
eng_model_weight_as(EngModel *m, uint32_t layer, EngWeight which, EngQFormat format)
{
    const EngModelConfig *c = &m->cfg;
    gboolean head = which == ENG_W_COUNT;
    g_assert(format < ENG_QFMT_COUNT && which <= ENG_W_COUNT && (head || layer < c->layers));
    /* the source matrix (generated or loaded), before taking the lock */
    const EngMatrix *src = head ? eng_model_lm_head(m) : eng_model_weight(m, layer, which);
    size_t idx = head ? (size_t) c->layers * ENG_W_COUNT : (size_t) layer * ENG_W_COUNT + which;
    g_mutex_lock(&m->lock);
    if (m->wq[format] == NULL) {
        m->wq[format] = g_new0(EngQMatrix *, (size_t) c->layers * ENG_W_COUNT + 1);
    }
    if (m->wq[format][idx] == NULL) {
        float *t = NULL;
        if (m->loaded && m->wname[idx]) {
            /* from the directory's own values (the file stays mapped) */
            t = read_tensor(m->st, m->wname[idx], src->rows, src->cols, NULL);
        }
        if (t || (m->loaded && head && m->embed)) {
            m->wq[format][idx] = eng_qmatrix_new_from(format, t ? t : m->embed, src->rows,
                                                      src->cols);
            g_free(t);
        } else if (m->loaded) {
            m->wq[format][idx] = requantise(src, format);
        } else {
            /* from the same FP32 values the model's own matrix was made of */
            uint64_t key = head ? eng_syn_key(c->seed, ENG_SYN_LM_HEAD, 0)
                                : eng_syn_key(c->seed, layer, which);
            m->wq[format][idx] = eng_syn_qmatrix(key, src->rows, src->cols, format);
        }
    }
    g_mutex_unlock(&m->lock);
    return m->wq[format][idx];
}

const float *
eng_model_norm(EngModel *m, uint32_t layer, int which)
{
    g_assert(layer <= m->cfg.layers && (which == 0 || which == 1));
    return layer == m->cfg.layers ? m->norms[(size_t) m->cfg.layers * 2]
                                  : m->norms[(size_t) layer * 2 + which];
}

const float *
eng_model_bias(EngModel *m, uint32_t layer, int which)
{
    g_assert(layer < m->cfg.layers && which >= 0 && which < 3);
    return m->bias[(size_t) layer * 3 + which];
}

void
eng_model_embed(const EngModel *m, uint32_t token, float *out)
{
    const EngModelConfig *c = &m->cfg;
    g_assert(token < c->vocab);
    if (m->embed) {
        /* Gemma scales the looked-up row by sqrt(hidden) */
        float scale = c->embed_scale ? (float) sqrt((double) c->hidden) : 1.0f;
        for (uint32_t i = 0; i < c->hidden; i++) {
            out[i] = m->embed[(size_t) token * c->hidden + i] * scale;
        }
        return;
    }
    /* unit-RMS rows: the residual stream starts at RMS 1 (for Gemma, a
     * table at 1/sqrt(hidden) times its sqrt(hidden) scale) */
    eng_syn_fill(eng_syn_key(c->seed, ENG_SYN_EMBED, 0), (uint64_t) token * c->hidden,
                 c->hidden, (float) sqrt(3.0), out);
}

size_t
eng_model_weight_bytes(const EngModel *m)
{
    const EngModelConfig *c = &m->cfg;
    size_t bytes = sizeof(float) * (size_t) c->hidden * (2 * c->layers + 1);
    for (size_t i = 0; i < (size_t) c->layers * ENG_W_COUNT; i++) {
        bytes += m->w[i] ? eng_matrix_bytes(m->w[i]) : 0;
    }
    if (m->lm_head && !(m->lm_head->borrowed)) {
        bytes += eng_matrix_bytes(m->lm_head);
    }
    if (m->embed) {
        bytes += sizeof(float) * (size_t) c->vocab * c->hidden;
    }
    return bytes;
}

/* Bytes of a [rows, cols] matrix in @format (as eng_matrix_bytes). */
static uint64_t
format_bytes(EngWFormat format, uint64_t rows, uint64_t cols)
{
    switch (format) {
    case ENG_WFMT_F32:
        return rows * cols * 4;
    case ENG_WFMT_F16:
        return rows * cols * 2;
    default:
        return rows * ((cols + ENG_W4_GROUP - 1) / ENG_W4_GROUP) * (64 + 2);
    }
}

uint64_t
eng_model_bytes(const EngModelConfig *c)
{
    uint64_t per_layer = 0;
    for (int which = 0; which < ENG_W_COUNT; which++) {
        uint32_t rows, cols;
        matmul_shape(c, (EngWeight) which, &rows, &cols);
        per_layer += format_bytes(c->weights, rows, cols);
    }
    uint64_t embed = sizeof(float) * (uint64_t) c->vocab * c->hidden;
    return per_layer * c->layers + format_bytes(c->weights, c->vocab, c->hidden) + embed
           + sizeof(float) * (uint64_t) c->hidden * (2 * c->layers + 1);
}

/* ---- loading ------------------------------------------------------------ */

static float *
read_tensor(const EngSafetensors *st, const char *name, uint64_t rows, uint64_t cols,
            GError **error)
{
    uint64_t shape[2] = { rows, cols };
    g_autofree float *out = g_new(float, MAX(rows * (cols ? cols : 1), 1));
    if (!eng_safetensors_read_f32(st, name, shape, cols ? 2 : 1, out, error)) {
        return NULL;
    }
    return g_steal_pointer(&out);
}

static EngMatrix *
read_matrix(const EngSafetensors *st, const char *name, uint32_t rows, uint32_t cols,
            EngWFormat format, GError **error)
{
    float *t = read_tensor(st, name, rows, cols, error);
    if (t == NULL) {
        return NULL;
    }
    if (format == ENG_WFMT_F32) {
        return eng_matrix_new_f32(t, rows, cols);
    }
    EngMatrix *m = eng_matrix_new(format, rows, cols);
    eng_matrix_set_rows(m, 0, rows, t);
    g_free(t);
    return m;
}

EngModel *
eng_model_load(const EngModelConfig *cfg, const char *dir, GError **error)
{
    return eng_model_load_layers(cfg, dir, cfg->layers, error);
}

EngModel *
eng_model_load_layers(const EngModelConfig *cfg, const char *dir, uint32_t layers,
                      GError **error)
{
    g_autoptr(EngSafetensors) st = eng_safetensors_open_dir(dir, error);
    if (st == NULL) {
        return NULL;
    }
    g_autoptr(EngModel) m = eng_model_new(cfg);
    m->loaded = TRUE;
    m->loaded_layers = MIN(layers, cfg->layers);
    m->wname = g_new0(char *, (size_t) cfg->layers * ENG_W_COUNT + 1);
    const uint32_t h = cfg->hidden;
    static const char *const proj[ENG_W_COUNT] = {
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
    };
    static const char *const norm[2] = { "input_layernorm", "post_attention_layernorm" };
    for (uint32_t l = 0; l < m->loaded_layers; l++) {
        for (int w = 0; w < ENG_W_COUNT; w++) {
            uint32_t rows, cols;
            matmul_shape(cfg, (EngWeight) w, &rows, &cols);
            g_autofree char *name = g_strdup_printf("model.layers.%u.%s.weight", l, proj[w]);
            EngMatrix *mat = read_matrix(st, name, rows, cols, cfg->weights, error);
            if (mat == NULL) {
                return NULL;
            }
            m->w[(size_t) l * ENG_W_COUNT + w] = mat;
            m->wname[(size_t) l * ENG_W_COUNT + w] = g_strdup(name);
            if (w <= ENG_W_V) {
                /* biases: required when the config says so (Qwen2), read
                 * when present otherwise */
                g_autofree char *bn = g_strdup_printf("model.layers.%u.%s.bias", l, proj[w]);
                float **slot = &m->bias[(size_t) l * 3 + w];
                g_clear_pointer(slot, g_free);
                if ((cfg->attention_bias || eng_safetensors_has(st, bn)) &&
                    !(*slot = read_tensor(st, bn, bias_len(cfg, w), 0, error))) {
                    return NULL;
                }
            }
        }
        for (int n = 0; n < 2; n++) {
            g_autofree char *name = g_strdup_printf("model.layers.%u.%s.weight", l, norm[n]);
            float **slot = &m->norms[(size_t) l * 2 + n];
            g_free(*slot);
            if (!(*slot = read_tensor(st, name, h, 0, error))) {
                return NULL;
            }
        }
    }
    float **fin = &m->norms[(size_t) cfg->layers * 2];
    g_free(*fin);
    if (!(*fin = read_tensor(st, "model.norm.weight", h, 0, error)) ||
        !(m->embed = read_tensor(st, "model.embed_tokens.weight", cfg->vocab, h, error))) {
        return NULL;
    }
    if (cfg->tie_embeddings || !eng_safetensors_has(st, "lm_head.weight")) {
        if (cfg->weights == ENG_WFMT_F32) {
            m->lm_head = eng_matrix_new_f32_borrowed(m->embed, cfg->vocab, h);
        } else {
            m->lm_head = eng_matrix_new(cfg->weights, cfg->vocab, h);
            eng_matrix_set_rows(m->lm_head, 0, cfg->vocab, m->embed);
        }
    } else if (!(m->lm_head = read_matrix(st, "lm_head.weight", cfg->vocab, h, cfg->weights,
                                          error))) {
        return NULL;
    } else {
        m->wname[(size_t) cfg->layers * ENG_W_COUNT] = g_strdup("lm_head.weight");
    }
    m->st = g_steal_pointer(&st);
    return g_steal_pointer(&m);
}

/* ---- KV cache ------------------------------------------------------------ */

struct EngKV {
    uint32_t layers, max_pos, len;
    size_t kv_dim;               /* kv_heads * head_dim */
    EngCtx *ctx;                 /* owns k and v */
    float *k, *v;                /* [layer][max_pos][kv_dim] */
};

EngKV *
eng_kv_new(const EngModelConfig *cfg, uint32_t max_pos)
{
    EngKV *kv = g_new0(EngKV, 1);
    kv->layers = cfg->layers;
    kv->max_pos = max_pos;
    kv->kv_dim = (size_t) cfg->kv_heads * cfg->head_dim;
    kv->ctx = eng_ctx_new();
    size_t n = (size_t) cfg->layers * max_pos * kv->kv_dim;
    kv->k = eng_ctx_alloc(kv->ctx, sizeof(float) * n);
    kv->v = eng_ctx_alloc(kv->ctx, sizeof(float) * n);
    return kv;
}

void
eng_kv_free(EngKV *kv)
{
    if (kv == NULL) {
        return;
    }
    eng_ctx_free(kv->ctx);
    g_free(kv);
}

uint32_t
eng_kv_len(const EngKV *kv)
{
    return kv->len;
}

float *
eng_kv_k(EngKV *kv, uint32_t layer)
{
    g_assert(layer < kv->layers);
    return kv->k + (size_t) layer * kv->max_pos * kv->kv_dim;
}

float *
eng_kv_v(EngKV *kv, uint32_t layer)
{
    g_assert(layer < kv->layers);
    return kv->v + (size_t) layer * kv->max_pos * kv->kv_dim;
}

size_t
eng_kv_bytes(const EngKV *kv)
{
    return eng_ctx_bytes(kv->ctx);
}

/* ---- forward --------------------------------------------------------------- */

void
eng_forward(EngModel *m, EngKV *kv, const uint32_t *tokens, uint32_t n, uint32_t pos0,
            float *logits)
{
    const EngModelConfig *c = &m->cfg;
    const size_t h = c->hidden, f = c->intermediate, hd = c->head_dim;
    const size_t qd = (size_t) c->heads * hd, kd = (size_t) c->kv_heads * hd;
    g_assert(pos0 <= kv->len && pos0 + n <= kv->max_pos);

    g_autoptr(EngCtx) ctx = eng_ctx_new();
    EngTensor x = eng_ctx_tensor(ctx, n, h), xn = eng_ctx_tensor(ctx, n, h);
    EngTensor q = eng_ctx_tensor(ctx, n, qd), k = eng_ctx_tensor(ctx, n, kd);
    EngTensor v = eng_ctx_tensor(ctx, n, kd), att = eng_ctx_tensor(ctx, n, qd);
    EngTensor o = eng_ctx_tensor(ctx, n, h), g = eng_ctx_tensor(ctx, n, f);
    EngTensor u = eng_ctx_tensor(ctx, n, f), a = eng_ctx_tensor(ctx, n, f);
    EngTensor out = eng_tensor_wrap(logits, n, c->vocab);
    for (uint32_t t = 0; t < n; t++) {
        eng_model_embed(m, tokens[t], x.data + t * h);
    }
    for (uint32_t l = 0; l < c->layers; l++) {
        float *kc = eng_kv_k(kv, l), *vc = eng_kv_v(kv, l);
        eng_rmsnorm_rows(x.data, eng_model_norm(m, l, 0), xn.data, h, c->rms_eps,
                         c->norm_plus_one, 0, n);
        eng_matmul(&xn, eng_model_weight(m, l, ENG_W_Q), &q, 0, n, 0, qd);
        eng_matmul(&xn, eng_model_weight(m, l, ENG_W_K), &k, 0, n, 0, kd);
        eng_matmul(&xn, eng_model_weight(m, l, ENG_W_V), &v, 0, n, 0, kd);
        EngTensor *qkv[3] = { &q, &k, &v };
        for (int i = 0; i < 3; i++) {
            const float *b = eng_model_bias(m, l, i);
            if (b) {
                eng_bias_rows(qkv[i]->data, b, qkv[i]->data, qkv[i]->cols, 0, n);
            }
        }
        eng_rope_rows(q.data, q.data, c->heads, hd, c->rope_theta, pos0, 0, n);
        eng_rope_rows(k.data, k.data, c->kv_heads, hd, c->rope_theta, pos0, 0, n);
        eng_attention_rows(q.data, k.data, v.data, kc, vc, att.data, c->heads, c->kv_heads, hd,
                           pos0, 0, n, 0, c->heads);
        eng_kv_store_rows(k.data, v.data, kc, vc, kd, pos0, 0, n);
        eng_matmul(&att, eng_model_weight(m, l, ENG_W_O), &o, 0, n, 0, h);
        eng_add_rows(x.data, o.data, x.data, h, 0, n, 0, h);
        eng_rmsnorm_rows(x.data, eng_model_norm(m, l, 1), xn.data, h, c->rms_eps,
                         c->norm_plus_one, 0, n);
        eng_matmul(&xn, eng_model_weight(m, l, ENG_W_GATE), &g, 0, n, 0, f);
        eng_matmul(&xn, eng_model_weight(m, l, ENG_W_UP), &u, 0, n, 0, f);
        eng_act_rows(g.data, u.data, a.data, f, c->act, 0, n, 0, f);
        eng_matmul(&a, eng_model_weight(m, l, ENG_W_DOWN), &o, 0, n, 0, h);
        eng_add_rows(x.data, o.data, x.data, h, 0, n, 0, h);
    }
    eng_rmsnorm_rows(x.data, eng_model_norm(m, c->layers, 0), xn.data, h, c->rms_eps,
                     c->norm_plus_one, 0, n);
    eng_matmul(&xn, eng_model_lm_head(m), &out, 0, n, 0, c->vocab);
    kv->len = MAX(kv->len, pos0 + n);
}

void
eng_model_prefill(EngModel *m, EngKV *kv, const uint32_t *tokens, uint32_t n, float *logits)
{
    eng_forward(m, kv, tokens, n, kv->len, logits);
}

void
eng_model_decode(EngModel *m, EngKV *kv, uint32_t token, float *logits)
{
    eng_forward(m, kv, &token, 1, kv->len, logits);
}
