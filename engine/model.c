/*
 * model.c - see model.h: a model's weights, synthetic or loaded, and its
 * KV cache.  The forward pass that uses them is sim/forward.c.
 */
#include "engine/model.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "engine/safetensors.h"
#include "engine/wcache.h"
#include "engine/weights.h"

#include <math.h>
#include <string.h>

struct EngModel {
    EngModelConfig cfg;
    GMutex lock;                 /* lazy generation */
    EngMatrix **w;               /* [layer * ENG_W_COUNT + which]; synthetic: uses of
                                  * the shared cache's entries (wcache.h), loaded: own */
    EngMatrix *lm_head;          /* as w */
    float **norms;               /* [layer * 2 + which], [layers * 2] = final; [hidden] */
    float **bias;                /* [layer * ENG_W_COUNT + which], [layers * ENG_W_COUNT]
                                  * = LM head; NULL entries: no bias */
    float **norm_bias;           /* as norms; LayerNorm only */
    float *embed;                /* loaded models: [vocab, hidden]; NULL = synthetic */
    gboolean loaded;             /* weights from a model directory */
    uint32_t loaded_layers;      /* layers read from it (the others are never used) */
    EngSafetensors *st;          /* the directory's files, kept mapped: other
                                  * formats are quantised from their values */
    char **wname;                /* [layer * ENG_W_COUNT + which], [layers *
                                  * ENG_W_COUNT] = LM head: tensor names, NULL
                                  * where there is none (a tied head, a packed
                                  * tensor: quantised from the loaded matrix) */
    EngQMatrix **wq[ENG_QFMT_COUNT];   /* other formats: [layer * ENG_W_COUNT + which],
                                        * [layers * ENG_W_COUNT] = LM head; lazily; each
                                        * a use of the shared cache's entry (wcache.h)
                                        * until eng_model_release_format() or free */
    int also;                    /* synthetic: an EngQFormat made with every
                                  * matrix (eng_model_also_make), or -1 */
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

/* Whether matmul @which (ENG_W_COUNT: the LM head) has a bias. */
static gboolean
has_bias(const EngModelConfig *c, int which)
{
    switch (which) {
    case ENG_W_Q: case ENG_W_K: case ENG_W_V: return c->attention_bias;
    case ENG_W_O:                             return c->o_bias;
    case ENG_W_COUNT:                         return c->head_bias;
    default:                                  return c->mlp_bias;
    }
}

static uint32_t
bias_len(const EngModelConfig *c, int which)
{
    uint32_t rows, cols;
    if (which == ENG_W_COUNT) {
        return c->vocab;
    }
    matmul_shape(c, (EngWeight) which, &rows, &cols);
    return rows;
}

static uint32_t
rotary_dim(const EngModelConfig *c)
{
    return c->rotary_dim ? c->rotary_dim : c->head_dim;
}

gboolean
eng_config_check(const EngModelConfig *cfg, GError **error)
{
    uint32_t rot = rotary_dim(cfg);
    if (cfg->head_dim == 0 || (rot == cfg->head_dim && cfg->head_dim % 2 != 0)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.head_dim: expected an even integer for the functional engine's "
                    "rotary embedding, or --functional off for timing only (got %u)",
                    cfg->head_dim);
        return FALSE;
    }
    if (rot % 2 != 0 || rot > cfg->head_dim) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.partial_rotary_factor: expected an even number of rotated dimensions "
                    "of head_dim %u for the functional engine's rotary embedding, or "
                    "--functional off for timing only (got %u)", cfg->head_dim, rot);
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
    g_assert(rotary_dim(cfg) % 2 == 0 && rotary_dim(cfg) <= cfg->head_dim);
    g_assert(cfg->weights < ENG_WFMT_COUNT && cfg->layout < ENG_LAYOUT_COUNT);
    EngModel *m = g_new0(EngModel, 1);
    m->cfg = *cfg;
    m->also = -1;
    g_mutex_init(&m->lock);
    m->w = g_new0(EngMatrix *, (size_t) cfg->layers * ENG_W_COUNT);
    m->norms = g_new0(float *, (size_t) cfg->layers * 2 + 1);
    m->bias = g_new0(float *, (size_t) cfg->layers * ENG_W_COUNT + 1);
    m->norm_bias = g_new0(float *, (size_t) cfg->layers * 2 + 1);
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
    /* biases U(-0.1, 0.1); Q/K/V's keys as before the other biases existed */
    for (size_t i = 0; i <= (size_t) cfg->layers * ENG_W_COUNT; i++) {
        gboolean head = i == (size_t) cfg->layers * ENG_W_COUNT;
        int which = head ? ENG_W_COUNT : (int) (i % ENG_W_COUNT);
        if (!has_bias(cfg, which) || (which == ENG_W_GATE && cfg->ungated_mlp)) {
            continue;
        }
        uint32_t n = bias_len(cfg, which);
        uint64_t key = head ? eng_syn_key(cfg->seed, ENG_SYN_LM_HEAD, 1)
                            : eng_syn_key(cfg->seed, i / ENG_W_COUNT, ENG_W_COUNT + 2 + which);
        m->bias[i] = g_new(float, n);
        eng_syn_fill(key, 0, n, 0.1f, m->bias[i]);
    }
    for (size_t i = 0; cfg->norm == ENG_NORM_LAYER && i <= (size_t) cfg->layers * 2; i++) {
        uint64_t key = i == (size_t) cfg->layers * 2
                       ? eng_syn_key(cfg->seed, ENG_SYN_FINAL_NORM, 1)
                       : eng_syn_key(cfg->seed, i / 2, 2 * ENG_W_COUNT + 2 + i % 2);
        m->norm_bias[i] = g_new(float, MAX(cfg->hidden, 1));
        eng_syn_fill(key, 0, cfg->hidden, 0.05f, m->norm_bias[i]);
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
        if (m->loaded) {
            eng_matrix_free(m->w[i]);
        } else {
            eng_wcache_release(m->w[i]);
        }
    }
    g_free(m->w);
    if (m->loaded) {
        eng_matrix_free(m->lm_head);
    } else {
        eng_wcache_release(m->lm_head);
    }
    for (size_t i = 0; i <= (size_t) m->cfg.layers * 2; i++) {
        g_free(m->norms[i]);
        g_free(m->norm_bias[i]);
    }
    g_free(m->norms);
    g_free(m->norm_bias);
    for (size_t i = 0; i <= (size_t) m->cfg.layers * ENG_W_COUNT; i++) {
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
            eng_wcache_release(m->wq[f][i]);
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

void
eng_model_also_make(EngModel *m, EngQFormat format)
{
    g_assert(format < ENG_QFMT_COUNT);
    m->also = m->loaded ? -1 : (int) format;
}

/* The cache's entry of a synthetic matrix in @format (EngWCacheKey.format). */
static EngWCacheKey
syn_cache_key(uint64_t key, uint32_t rows, uint32_t cols, uint32_t format)
{
    return (EngWCacheKey) { key, rows, cols, format };
}

typedef struct SynMake {
    EngModel *m;
    size_t idx;
} SynMake;

static gpointer
make_qmatrix(const EngWCacheKey *key, gpointer opaque, size_t *bytes)
{
    (void) opaque;
    EngQMatrix *q = eng_syn_qmatrix(key->content, key->rows, key->cols,
                                    (EngQFormat) (key->format & 0xffu));
    *bytes = eng_qmatrix_bytes(q);
    return q;
}

/* The model's own matrix (key->format: its EngWFormat) and, when the
 * model makes m->also with it and the cache holds no such matrix yet,
 * that copy from the same values, in use by the model as
 * m->wq[m->also][idx]. */
static gpointer
make_matrix(const EngWCacheKey *key, gpointer opaque, size_t *bytes)
{
    SynMake *sm = opaque;
    EngModel *m = sm->m;
    EngWFormat wf = (EngWFormat) key->format;
    EngWCacheKey also = syn_cache_key(key->content, key->rows, key->cols,
                                      ENG_WCACHE_Q(m->also));
    EngMatrix *w;
    if (m->also >= 0 && m->wq[m->also][sm->idx] == NULL && !eng_wcache_has(&also)) {
        EngQMatrix *q = NULL;
        w = eng_syn_matrix_also(key->content, key->rows, key->cols, wf, (EngQFormat) m->also,
                                &q);
        m->wq[m->also][sm->idx] = eng_wcache_offer(&also, q, eng_qmatrix_bytes(q),
                                                   (GDestroyNotify) eng_qmatrix_free);
    } else {
        w = eng_syn_matrix(key->content, key->rows, key->cols, wf);
    }
    *bytes = eng_matrix_bytes(w);
    return w;
}

/* Synthetic matrix @idx of eng_model_weight_as()'s numbering (under the
 * lock), from the shared cache, and its copy in m->also's format from the
 * same values when it is made here. */
static EngMatrix *
syn_weight(EngModel *m, uint64_t key, uint32_t rows, uint32_t cols, size_t idx)
{
    if (m->also >= 0 && m->wq[m->also] == NULL) {
        m->wq[m->also] = g_new0(EngQMatrix *, (size_t) m->cfg.layers * ENG_W_COUNT + 1);
    }
    EngWCacheKey k = syn_cache_key(key, rows, cols, ENG_WCACHE_BASE(m->cfg.weights));
    SynMake sm = { m, idx };
    return eng_wcache_acquire(&k, make_matrix, &sm, (GDestroyNotify) eng_matrix_free);
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
        m->w[idx] = syn_weight(m, eng_syn_key(c->seed, layer, which), rows, cols, idx);
    }
    g_mutex_unlock(&m->lock);
    return m->w[idx];
}

const EngMatrix *
eng_model_lm_head(EngModel *m)
{
    g_mutex_lock(&m->lock);
    if (m->lm_head == NULL) {
        m->lm_head = syn_weight(m, eng_syn_key(m->cfg.seed, ENG_SYN_LM_HEAD, 0), m->cfg.vocab,
                                m->cfg.hidden, (size_t) m->cfg.layers * ENG_W_COUNT);
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
        EngQMatrix *q = NULL;
        if (t || (m->loaded && head && m->embed && m->wname[idx] == NULL)) {
            q = eng_qmatrix_new_from(format, t ? t : m->embed, src->rows, src->cols);
            g_free(t);
        } else if (m->loaded) {
            q = requantise(src, format);
        }
        if (q) {
            /* a loaded model's values: its own, never shared */
            m->wq[format][idx] = eng_wcache_offer(NULL, q, eng_qmatrix_bytes(q),
                                                  (GDestroyNotify) eng_qmatrix_free);
        } else {
            /* from the same FP32 values the model's own matrix was made of:
             * the shared entry of those values in @format */
            uint64_t key = head ? eng_syn_key(c->seed, ENG_SYN_LM_HEAD, 0)
                                : eng_syn_key(c->seed, layer, which);
            EngWCacheKey k = syn_cache_key(key, src->rows, src->cols, ENG_WCACHE_Q(format));
            m->wq[format][idx] = eng_wcache_acquire(&k, make_qmatrix, NULL,
                                                    (GDestroyNotify) eng_qmatrix_free);
        }
    }
    g_mutex_unlock(&m->lock);
    return m->wq[format][idx];
}

void
eng_model_release_format(EngModel *m, EngQFormat format)
{
    g_assert(format < ENG_QFMT_COUNT);
    g_mutex_lock(&m->lock);
    for (size_t i = 0; m->wq[format] && i <= (size_t) m->cfg.layers * ENG_W_COUNT; i++) {
        eng_wcache_release(m->wq[format][i]);
        m->wq[format][i] = NULL;
    }
    g_mutex_unlock(&m->lock);
}

const float *
eng_model_norm(EngModel *m, uint32_t layer, int which)
{
    g_assert(layer <= m->cfg.layers && (which == 0 || which == 1));
    return layer == m->cfg.layers ? m->norms[(size_t) m->cfg.layers * 2]
                                  : m->norms[(size_t) layer * 2 + which];
}

const float *
eng_model_norm_bias(EngModel *m, uint32_t layer, int which)
{
    g_assert(layer <= m->cfg.layers && (which == 0 || which == 1));
    return layer == m->cfg.layers ? m->norm_bias[(size_t) m->cfg.layers * 2]
                                  : m->norm_bias[(size_t) layer * 2 + which];
}

const float *
eng_model_bias(EngModel *m, uint32_t layer, int which)
{
    g_assert(which >= 0 && which <= ENG_W_COUNT);
    if (which == ENG_W_COUNT) {
        return m->bias[(size_t) m->cfg.layers * ENG_W_COUNT];
    }
    g_assert(layer < m->cfg.layers);
    return m->bias[(size_t) layer * ENG_W_COUNT + which];
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
        if (!(which == ENG_W_GATE && c->ungated_mlp)) {
            per_layer += format_bytes(c->weights, rows, cols);
        }
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

/* @t (rows x cols FP32, taken) as a matrix in @format. */
static EngMatrix *
matrix_from(float *t, uint32_t rows, uint32_t cols, EngWFormat format)
{
    if (format == ENG_WFMT_F32) {
        return eng_matrix_new_f32(t, rows, cols);
    }
    EngMatrix *m = eng_matrix_new(format, rows, cols);
    eng_matrix_set_rows(m, 0, rows, t);
    g_free(t);
    return m;
}

static EngMatrix *
read_matrix(const EngSafetensors *st, const char *name, uint32_t rows, uint32_t cols,
            EngWFormat format, GError **error)
{
    float *t = read_tensor(st, name, rows, cols, error);
    return t ? matrix_from(t, rows, cols, format) : NULL;
}

/* The names a layout gives its tensors (see EngLayout). */
typedef struct Layout {
    const char *layer;               /* a layer's prefix, %u = the layer */
    const char *proj[ENG_W_COUNT];   /* NULL: packed or absent */
    const char *qkv;                 /* packed Q/K/V, or NULL */
    gboolean qkv_grouped;            /* per KV head: its query heads, K, V (InternLM2) */
    const char *gate_up;             /* packed [gate; up], or NULL */
    const char *norm[2];             /* input and post-attention norms */
    const char *final_norm, *embed, *head;
} Layout;

static const Layout layouts[ENG_LAYOUT_COUNT] = {
    /* transformers modeling_llama.py (and Mistral, Qwen2, Gemma) */
    [ENG_LAYOUT_LLAMA] = {
        "model.layers.%u.",
        { "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
          "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj" },
        NULL, FALSE, NULL, { "input_layernorm", "post_attention_layernorm" },
        "model.norm", "model.embed_tokens", "lm_head",
    },
    /* transformers modeling_phi.py: fc1 -> act -> fc2, one input LayerNorm */
    [ENG_LAYOUT_PHI] = {
        "model.layers.%u.",
        { "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.dense",
          NULL, "mlp.fc1", "mlp.fc2" },
        NULL, FALSE, NULL, { "input_layernorm", NULL },
        "model.final_layernorm", "model.embed_tokens", "lm_head",
    },
    /* internlm/internlm2-1_8b modeling_internlm2.py: wqkv rearranged
     * "(h gs d)" with gs = heads / kv_heads + 2; w1 gate, w3 up, w2 down */
    [ENG_LAYOUT_INTERNLM2] = {
        "model.layers.%u.",
        { NULL, NULL, NULL, "attention.wo", "feed_forward.w1", "feed_forward.w3",
          "feed_forward.w2" },
        "attention.wqkv", TRUE, NULL, { "attention_norm", "ffn_norm" },
        "model.norm", "model.tok_embeddings", "output",
    },
    /* THUDM/chatglm2-6b modeling_chatglm.py: query_key_value split
     * [q | k | v]; dense_h_to_4h chunked in two, silu(first) * second */
    [ENG_LAYOUT_CHATGLM] = {
        "transformer.encoder.layers.%u.",
        { NULL, NULL, NULL, "self_attention.dense", NULL, NULL, "mlp.dense_4h_to_h" },
        "self_attention.query_key_value", FALSE, "mlp.dense_h_to_4h",
        { "input_layernorm", "post_attention_layernorm" },
        "transformer.encoder.final_layernorm", "transformer.embedding.word_embeddings",
        "transformer.output_layer",
    },
};

/* Rows of packed Q/K/V @src [q + 2 kv, cols] into @out[3] (cols 1: a
 * bias): [q; k; v], or grouped per KV head (its queries, K, V). */
static void
split_qkv(const EngModelConfig *c, const float *src, size_t cols, gboolean grouped,
          float *out[3])
{
    const size_t hd = c->head_dim, group = c->heads / c->kv_heads;
    const size_t row = hd * cols;
    for (size_t g = 0; g < c->kv_heads; g++) {
        for (size_t j = 0; j < group; j++) {
            size_t from = grouped ? (g * (group + 2) + j) : g * group + j;
            memcpy(out[0] + (g * group + j) * row, src + from * row, sizeof(float) * row);
        }
        for (int kv = 0; kv < 2; kv++) {
            size_t from = grouped ? g * (group + 2) + group + kv
                                  : c->heads + kv * c->kv_heads + g;
            memcpy(out[1 + kv] + g * row, src + from * row, sizeof(float) * row);
        }
    }
}

/* Layer @l's Q, K, V weights (and biases) from the packed tensor. */
static gboolean
load_qkv(EngModel *m, const EngSafetensors *st, const Layout *lo, uint32_t l, GError **error)
{
    const EngModelConfig *c = &m->cfg;
    const uint32_t qd = c->heads * c->head_dim, kd = c->kv_heads * c->head_dim;
    const uint32_t rows = qd + 2 * kd;
    g_autofree char *base = g_strdup_printf(lo->layer, l);
    for (int bias = 0; bias < (c->attention_bias ? 2 : 1); bias++) {
        g_autofree char *name = g_strdup_printf("%s%s.%s", base, lo->qkv,
                                                bias ? "bias" : "weight");
        g_autofree float *t = read_tensor(st, name, rows, bias ? 0 : c->hidden, error);
        if (t == NULL) {
            return FALSE;
        }
        size_t cols = bias ? 1 : c->hidden;
        float *part[3] = { g_new(float, qd * cols), g_new(float, kd * cols),
                           g_new(float, kd * cols) };
        split_qkv(c, t, cols, lo->qkv_grouped, part);
        for (int w = 0; w < 3; w++) {
            if (bias) {
                g_free(m->bias[(size_t) l * ENG_W_COUNT + w]);
                m->bias[(size_t) l * ENG_W_COUNT + w] = part[w];
            } else {
                m->w[(size_t) l * ENG_W_COUNT + w] =
                    matrix_from(part[w], w == 0 ? qd : kd, c->hidden, c->weights);
            }
        }
    }
    return TRUE;
}

/* Matmul @w of layer @l (and its bias) by its own name. */
static gboolean
load_proj(EngModel *m, const EngSafetensors *st, const Layout *lo, uint32_t l, int w,
          GError **error)
{
    const EngModelConfig *c = &m->cfg;
    uint32_t rows, cols;
    matmul_shape(c, (EngWeight) w, &rows, &cols);
    g_autofree char *base = g_strdup_printf(lo->layer, l);
    g_autofree char *name = g_strdup_printf("%s%s.weight", base, lo->proj[w]);
    float *t = read_tensor(st, name, rows, cols, error);
    if (t == NULL) {
        return FALSE;
    }
    m->w[(size_t) l * ENG_W_COUNT + w] = matrix_from(t, rows, cols, c->weights);
    m->wname[(size_t) l * ENG_W_COUNT + w] = g_strdup(name);
    if (has_bias(c, w)) {
        g_autofree char *bn = g_strdup_printf("%s%s.bias", base, lo->proj[w]);
        float **slot = &m->bias[(size_t) l * ENG_W_COUNT + w];
        g_clear_pointer(slot, g_free);
        if (!(*slot = read_tensor(st, bn, rows, 0, error))) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Layer @l's gate and up weights from the packed [gate; up] tensor. */
static gboolean
load_gate_up(EngModel *m, const EngSafetensors *st, const Layout *lo, uint32_t l,
             GError **error)
{
    const EngModelConfig *c = &m->cfg;
    const size_t f = c->intermediate, h = c->hidden;
    g_autofree char *base = g_strdup_printf(lo->layer, l);
    g_autofree char *name = g_strdup_printf("%s%s.weight", base, lo->gate_up);
    g_autofree float *t = read_tensor(st, name, 2 * f, h, error);
    if (t == NULL) {
        return FALSE;
    }
    m->w[(size_t) l * ENG_W_COUNT + ENG_W_GATE] =
        matrix_from(g_memdup2(t, sizeof(float) * f * h), (uint32_t) f, (uint32_t) h, c->weights);
    m->w[(size_t) l * ENG_W_COUNT + ENG_W_UP] =
        matrix_from(g_memdup2(t + f * h, sizeof(float) * f * h), (uint32_t) f, (uint32_t) h,
                    c->weights);
    if (c->mlp_bias) {
        /* ChatGLM's add_bias_linear: the packed bias, split alike */
        g_autofree char *bn = g_strdup_printf("%s%s.bias", base, lo->gate_up);
        g_autofree float *b = read_tensor(st, bn, 2 * f, 0, error);
        if (b == NULL) {
            return FALSE;
        }
        for (int i = 0; i < 2; i++) {
            float **slot = &m->bias[(size_t) l * ENG_W_COUNT + (i ? ENG_W_UP : ENG_W_GATE)];
            g_free(*slot);
            *slot = g_memdup2(b + i * f, sizeof(float) * f);
        }
    }
    return TRUE;
}

/* Norm @slot's gain (and, for LayerNorm, bias) named @name. */
static gboolean
load_norm(EngModel *m, const EngSafetensors *st, const char *name, size_t slot,
          GError **error)
{
    const uint32_t h = m->cfg.hidden;
    g_autofree char *wn = g_strdup_printf("%s.weight", name);
    g_free(m->norms[slot]);
    if (!(m->norms[slot] = read_tensor(st, wn, h, 0, error))) {
        return FALSE;
    }
    if (m->cfg.norm == ENG_NORM_LAYER) {
        g_autofree char *bn = g_strdup_printf("%s.bias", name);
        g_free(m->norm_bias[slot]);
        if (!(m->norm_bias[slot] = read_tensor(st, bn, h, 0, error))) {
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * Every tensor of the directory is one the config says the model has: each
 * was read (its shape checked against the config's) or is of a layer past
 * the @loaded ones (--functional layers=N), a rotary table transformers
 * recomputes (rotary_emb.inv_freq), or a tied head's copy of the
 * embedding (transformers ties it).  Anything else is an option the
 * config does not declare (a bias, more layers): its values would be
 * silently left out.
 */
static gboolean
check_unread(const EngSafetensors *st, const EngModelConfig *cfg, const Layout *lo,
             uint32_t loaded, const char *dir, GError **error)
{
    g_auto(GStrv) unread = eng_safetensors_unread(st);
    g_autofree char *head = g_strdup_printf("%s.weight", lo->head);
    /* "model.layers.%u." -> "model.layers." */
    g_autofree char *prefix = g_strndup(lo->layer, strcspn(lo->layer, "%"));
    for (char **n = unread; *n; n++) {
        if (g_str_has_suffix(*n, ".inv_freq") || (cfg->tie_embeddings && !strcmp(*n, head))) {
            continue;
        }
        g_autofree char *why = NULL;
        if (g_str_has_prefix(*n, prefix) && g_ascii_isdigit((*n)[strlen(prefix)])) {
            guint64 l = g_ascii_strtoull(*n + strlen(prefix), NULL, 10);
            if (l < cfg->layers && l >= loaded) {
                continue;
            }
            why = l >= cfg->layers
                  ? g_strdup_printf("layer %" G_GUINT64_FORMAT ", past num_hidden_layers %u",
                                    l, cfg->layers)
                  : g_strdup(g_str_has_suffix(*n, ".bias")
                             ? "a bias none of its options declares: attention_bias, mlp_bias"
                             : "no weight of its layers");
        } else {
            why = g_strdup(g_str_has_suffix(*n, ".bias") ? "a bias none of its options declares"
                                                         : "no weight of its model");
        }
        g_autofree char *name = hs_escape(*n);
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                    "%s: tensor %s: not a tensor of the model config.json describes (%s)", dir,
                    name, why);
        return FALSE;
    }
    return TRUE;
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
    const Layout *lo = &layouts[cfg->layout];
    for (uint32_t l = 0; l < m->loaded_layers; l++) {
        if (lo->qkv && !load_qkv(m, st, lo, l, error)) {
            return NULL;
        }
        if (lo->gate_up && !load_gate_up(m, st, lo, l, error)) {
            return NULL;
        }
        for (int w = 0; w < ENG_W_COUNT; w++) {
            if (lo->proj[w] && !load_proj(m, st, lo, l, w, error)) {
                return NULL;
            }
        }
        for (int n = 0; n < (cfg->parallel_block ? 1 : 2); n++) {
            g_autofree char *base = g_strdup_printf(lo->layer, l);
            g_autofree char *name = g_strdup_printf("%s%s", base, lo->norm[n]);
            if (!load_norm(m, st, name, (size_t) l * 2 + n, error)) {
                return NULL;
            }
        }
    }
    g_autofree char *embed = g_strdup_printf("%s.weight", lo->embed);
    g_autofree char *head = g_strdup_printf("%s.weight", lo->head);
    if (!load_norm(m, st, lo->final_norm, (size_t) cfg->layers * 2, error) ||
        !(m->embed = read_tensor(st, embed, cfg->vocab, h, error))) {
        return NULL;
    }
    if (!cfg->tie_embeddings && !eng_safetensors_has(st, head)) {
        /* was: the embedding used as the head, silently */
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_MISSING_TENSOR,
                    "%s: tensor %s: not found, and config.json's tie_word_embeddings is false "
                    "(the model has an LM head of its own, not the embedding)", dir, head);
        return NULL;
    }
    if (cfg->tie_embeddings) {
        if (cfg->weights == ENG_WFMT_F32) {
            m->lm_head = eng_matrix_new_f32_borrowed(m->embed, cfg->vocab, h);
        } else {
            m->lm_head = eng_matrix_new(cfg->weights, cfg->vocab, h);
            eng_matrix_set_rows(m->lm_head, 0, cfg->vocab, m->embed);
        }
    } else if (!(m->lm_head = read_matrix(st, head, cfg->vocab, h, cfg->weights, error))) {
        return NULL;
    } else {
        m->wname[(size_t) cfg->layers * ENG_W_COUNT] = g_strdup(head);
    }
    if (cfg->head_bias) {
        g_autofree char *bn = g_strdup_printf("%s.bias", lo->head);
        float **slot = &m->bias[(size_t) cfg->layers * ENG_W_COUNT];
        g_clear_pointer(slot, g_free);
        if (!(*slot = read_tensor(st, bn, cfg->vocab, 0, error))) {
            return NULL;
        }
    }
    if (!check_unread(st, cfg, lo, m->loaded_layers, dir, error)) {
        return NULL;
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

void
eng_kv_set_len(EngKV *kv, uint32_t len)
{
    g_assert(len <= kv->max_pos);
    kv->len = len;
}

uint32_t
eng_kv_max_pos(const EngKV *kv)
{
    return kv->max_pos;
}
