/*
 * model.c - see model.h.
 */
#include "engine/model.h"
#include "engine/kernels.h"

#include <math.h>
#include <string.h>

struct EngModel {
    EngConfig cfg;
    GMutex lock;                 /* lazy generation */
    float **w;                   /* [layer * ENG_W_COUNT + which] */
    float *lm_head;
    float *ones;                 /* norm weights: all 1 */
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

static float *
gen_matrix(uint64_t key, size_t rows, size_t cols)
{
    float *w = g_malloc(sizeof(float) * rows * cols);
    /* variance 1/fan_in: uniform in [-a, a] has variance a^2/3 */
    float a = (float) sqrt(3.0 / (double) cols);
    #pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < cols; c++) {
            w[r * cols + c] = a * unit(key, r * cols + c);
        }
    }
    eng_quant_w4_inplace(w, rows, cols, 128);
    return w;
}

EngModel *
eng_model_new(const EngConfig *cfg)
{
    EngModel *m = g_new0(EngModel, 1);
    m->cfg = *cfg;
    g_mutex_init(&m->lock);
    m->w = g_new0(float *, (size_t) cfg->layers * ENG_W_COUNT);
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
        g_free(m->w[i]);
    }
    g_free(m->w);
    g_free(m->lm_head);
    g_free(m->ones);
    g_mutex_clear(&m->lock);
    g_free(m);
}

const EngConfig *
eng_model_config(const EngModel *m)
{
    return &m->cfg;
}

const float *
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

const float *
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
    return m->ones;
}

void
eng_model_embed(const EngModel *m, uint32_t token, float *out)
{
    const EngConfig *c = &m->cfg;
    uint64_t key = tensor_key(c, 1000, 0);
    /* unit-variance rows: the residual stream starts at rms ~1 (for Gemma
     * this is the table at 1/sqrt(hidden) times its sqrt(hidden) scale) */
    float a = (float) sqrt(3.0);
    for (uint32_t i = 0; i < c->hidden; i++) {
        out[i] = a * unit(key, (uint64_t) token * c->hidden + i);
    }
}
