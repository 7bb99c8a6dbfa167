/*
 * model.c - see model.h.
 */
#include "engine/model.h"
#include "engine/kernels.h"
#include "engine/safetensors.h"

#include <math.h>
#include <string.h>

struct EngModel {
    EngConfig cfg;
    GMutex lock;                 /* lazy generation */
    EngMatrix **w;               /* [layer * ENG_W_COUNT + which] */
    EngMatrix *lm_head;
    float *ones;                 /* norm weights: all 1 */
    /* loaded models only */
    float *embed;                /* [vocab, hidden] */
    float **norms;               /* [layer * 2 + which], [layers * 2] = final */
    float **bias;                /* [layer * 3 + which] or NULL */
};

/* splitmix64: a counter-based generator, one value per (key, index). */
static inline uint64_t
mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [-1, 1). */
static inline float
unit(uint64_t key, uint64_t i)
{
    return (float) ((double) (mix(key ^ mix(i)) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static uint64_t
tensor_key(const EngConfig *c, uint64_t layer, uint64_t which)
{
    return mix(c->seed * 0x100000001B3ull + layer * 64 + which + 1);
}

static EngMatrix *
gen_matrix(uint64_t key, size_t rows, size_t cols)
{
    /* generated and quantised 256 rows at a time: the FP32 matrix never
     * exists whole */
    EngMatrix *m = eng_matrix_alloc_w4((uint32_t) rows, (uint32_t) cols);
    g_autofree float *w = g_malloc(sizeof(float) * MIN(rows, 256) * cols);
    /* variance 1/fan_in: uniform in [-a, a] has variance a^2/3 */
    float a = (float) sqrt(3.0 / (double) cols);
    for (size_t r0 = 0; r0 < rows; r0 += 256) {
        size_t r1 = MIN(rows, r0 + 256);
        #pragma omp parallel for schedule(static)
        for (size_t r = r0; r < r1; r++) {
            for (size_t c = 0; c < cols; c++) {
                w[(r - r0) * cols + c] = a * unit(key, r * cols + c);
            }
        }
        eng_matrix_set_rows_w4(m, (uint32_t) r0, (uint32_t) r1, w);
    }
    return m;
}

EngModel *
eng_model_new(const EngConfig *cfg)
{
    EngModel *m = g_new0(EngModel, 1);
    m->cfg = *cfg;
    g_mutex_init(&m->lock);
    m->w = g_new0(EngMatrix *, (size_t) cfg->layers * ENG_W_COUNT);
    m->ones = g_new(float, MAX(cfg->hidden, 1));
    for (uint32_t i = 0; i < cfg->hidden; i++) {
        /* Gemma stores w with (1 + w) applied: 0 means a unit gain */
        m->ones[i] = cfg->norm_plus_one ? 0.0f : 1.0f;
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
    if (m->lm_head && m->lm_head->f32 == m->embed) {
        m->lm_head->f32 = NULL;              /* tied: the embedding owns it */
    }
    eng_matrix_free(m->lm_head);
    g_free(m->embed);
    if (m->norms) {
        for (size_t i = 0; i <= (size_t) m->cfg.layers * 2; i++) {
            g_free(m->norms[i]);
        }
        g_free(m->norms);
    }
    if (m->bias) {
        for (size_t i = 0; i < (size_t) m->cfg.layers * 3; i++) {
            g_free(m->bias[i]);
        }
        g_free(m->bias);
    }
    g_free(m->ones);
    g_mutex_clear(&m->lock);
    g_free(m);
}

const EngConfig *
eng_model_config(const EngModel *m)
{
    return &m->cfg;
}

const EngMatrix *
eng_model_weight(EngModel *m, uint32_t layer, EngWeight which)
{
    const EngConfig *c = &m->cfg;
    g_assert(layer < c->layers);
    size_t idx = (size_t) layer * ENG_W_COUNT + which;
    g_mutex_lock(&m->lock);
    if (m->w[idx] == NULL) {
        size_t q = (size_t) c->heads * c->head_dim, kv = (size_t) c->kv_heads * c->head_dim;
        size_t rows = 0, cols = 0;
        switch (which) {
        case ENG_W_Q:    rows = q;               cols = c->hidden;       break;
        case ENG_W_K:
        case ENG_W_V:    rows = kv;              cols = c->hidden;       break;
        case ENG_W_O:    rows = c->hidden;       cols = q;               break;
        case ENG_W_GATE:
        case ENG_W_UP:   rows = c->intermediate; cols = c->hidden;       break;
        case ENG_W_DOWN: rows = c->hidden;       cols = c->intermediate; break;
        default:
            g_assert_not_reached();
        }
        m->w[idx] = gen_matrix(tensor_key(c, layer, which), rows, cols);
    }
    g_mutex_unlock(&m->lock);
    return m->w[idx];
}

const EngMatrix *
eng_model_lm_head(EngModel *m)
{
    g_mutex_lock(&m->lock);
    if (m->lm_head == NULL) {
        /* synthetic weights: the head has its own table, tied or not (a
         * tied head would only rescale the synthetic embedding) */
        uint64_t key = tensor_key(&m->cfg, 1001, 0);
        m->lm_head = gen_matrix(key, m->cfg.vocab, m->cfg.hidden);
    }
    g_mutex_unlock(&m->lock);
    return m->lm_head;
}

const float *
eng_model_norm(EngModel *m, uint32_t layer, int which)
{
    if (m->norms == NULL) {
        return m->ones;
    }
    return layer >= m->cfg.layers ? m->norms[(size_t) m->cfg.layers * 2]
                                  : m->norms[(size_t) layer * 2 + which];
}

const float *
eng_model_bias(const EngModel *m, uint32_t layer, int which)
{
    return m->bias ? m->bias[(size_t) layer * 3 + which] : NULL;
}

static float *
read_tensor(const EngSafetensors *st, const char *name, uint64_t rows, uint64_t cols,
            GError **error)
{
    uint64_t shape[2] = { rows, cols };
    float *out = g_new(float, rows * (cols ? cols : 1));
    if (!eng_safetensors_read_f32(st, name, shape, cols ? 2 : 1, out, error)) {
        g_free(out);
        return NULL;
    }
    return out;
}

EngModel *
eng_model_load(const EngConfig *cfg, const char *dir, gboolean w4, GError **error)
{
    g_autoptr(EngSafetensors) st = eng_safetensors_open_dir(dir, error);
    if (st == NULL) {
        return NULL;
    }
    g_autoptr(EngModel) m = eng_model_new(cfg);
    const uint64_t h = cfg->hidden, f = cfg->intermediate;
    const uint64_t q = (uint64_t) cfg->heads * cfg->head_dim, kv = (uint64_t) cfg->kv_heads * cfg->head_dim;
    static const char *const proj[ENG_W_COUNT] = {
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
    };
    const uint64_t rows[ENG_W_COUNT] = { q, kv, kv, h, f, f, h };
    const uint64_t cols[ENG_W_COUNT] = { h, h, h, q, h, h, f };
    m->norms = g_new0(float *, (size_t) cfg->layers * 2 + 1);
    m->bias = g_new0(float *, (size_t) cfg->layers * 3);
    for (uint32_t l = 0; l < cfg->layers; l++) {
        for (int w = 0; w < ENG_W_COUNT; w++) {
            g_autofree char *name = g_strdup_printf("model.layers.%u.%s.weight", l, proj[w]);
            float *t = read_tensor(st, name, rows[w], cols[w], error);
            if (t == NULL) {
                return NULL;
            }
            if (w4) {
                m->w[(size_t) l * ENG_W_COUNT + w] =
                    eng_matrix_new_w4(t, (uint32_t) rows[w], (uint32_t) cols[w]);
                g_free(t);
            } else {
                m->w[(size_t) l * ENG_W_COUNT + w] =
                    eng_matrix_new_f32(t, (uint32_t) rows[w], (uint32_t) cols[w]);
            }
            if (w <= ENG_W_V) {
                g_autofree char *bn = g_strdup_printf("model.layers.%u.%s.bias", l, proj[w]);
                if (eng_safetensors_has(st, bn) &&
                    !(m->bias[(size_t) l * 3 + w] = read_tensor(st, bn, rows[w], 0, error))) {
                    return NULL;
                }
            }
        }
        static const char *const norm[2] = { "input_layernorm", "post_attention_layernorm" };
        for (int n = 0; n < 2; n++) {
            g_autofree char *name = g_strdup_printf("model.layers.%u.%s.weight", l, norm[n]);
            if (!(m->norms[(size_t) l * 2 + n] = read_tensor(st, name, h, 0, error))) {
                return NULL;
            }
        }
    }
    if (!(m->norms[(size_t) cfg->layers * 2] = read_tensor(st, "model.norm.weight", h, 0, error)) ||
        !(m->embed = read_tensor(st, "model.embed_tokens.weight", cfg->vocab, h, error))) {
        return NULL;
    }
    if (cfg->tie_embeddings || !eng_safetensors_has(st, "lm_head.weight")) {
        m->lm_head = eng_matrix_new_f32(m->embed, cfg->vocab, (uint32_t) h);
    } else {
        float *t = read_tensor(st, "lm_head.weight", cfg->vocab, h, error);
        if (t == NULL) {
            return NULL;
        }
        m->lm_head = w4 ? eng_matrix_new_w4(t, cfg->vocab, (uint32_t) h)
                        : eng_matrix_new_f32(t, cfg->vocab, (uint32_t) h);
        if (w4) {
            g_free(t);
        }
    }
    return g_steal_pointer(&m);
}

void
eng_model_embed(const EngModel *m, uint32_t token, float *out)
{
    const EngConfig *c = &m->cfg;
    if (m->embed) {
        /* Gemma scales the looked-up row by sqrt(hidden) */
        float scale = c->embed_scale ? (float) sqrt((double) c->hidden) : 1.0f;
        for (uint32_t i = 0; i < c->hidden; i++) {
            out[i] = m->embed[(size_t) token * c->hidden + i] * scale;
        }
        return;
    }
    uint64_t key = tensor_key(c, 1000, 0);
    /* unit-variance rows: the residual stream starts at rms ~1 (for Gemma
     * this is the table at 1/sqrt(hidden) times its sqrt(hidden) scale) */
    float a = (float) sqrt(3.0);
    for (uint32_t i = 0; i < c->hidden; i++) {
        out[i] = a * unit(key, (uint64_t) token * c->hidden + i);
    }
}
