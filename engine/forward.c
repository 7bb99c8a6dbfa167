/*
 * forward.c - see forward.h.  The order of operations is the graph's
 * (models/graph.h), computed whole.
 */
#include "engine/forward.h"
#include "engine/kernels.h"

#include <string.h>

struct EngKV {
    uint32_t layers, max_pos, kv_dim;
    float *k, *v;                /* [layer][max_pos][kv_dim] */
};

EngKV *
eng_kv_new(const EngConfig *cfg, uint32_t max_pos)
{
    EngKV *kv = g_new0(EngKV, 1);
    kv->layers = cfg->layers;
    kv->max_pos = max_pos;
    kv->kv_dim = cfg->kv_heads * cfg->head_dim;
    size_t n = (size_t) cfg->layers * max_pos * kv->kv_dim;
    kv->k = g_new0(float, n);
    kv->v = g_new0(float, n);
    return kv;
}

void
eng_kv_free(EngKV *kv)
{
    if (kv == NULL) {
        return;
    }
    g_free(kv->k);
    g_free(kv->v);
    g_free(kv);
}

static void
add_bias(float *y, const float *b, size_t n, size_t d)
{
    if (b == NULL) {
        return;
    }
    for (size_t t = 0; t < n; t++) {
        for (size_t i = 0; i < d; i++) {
            y[t * d + i] += b[i];
        }
    }
}

void
eng_forward(EngModel *m, EngKV *kv, const uint32_t *tokens, uint32_t n, uint32_t pos0,
            float *logits)
{
    const EngConfig *c = eng_model_config(m);
    const size_t h = c->hidden, f = c->intermediate, hd = c->head_dim;
    const size_t qd = (size_t) c->heads * hd, kd = (size_t) c->kv_heads * hd;
    g_assert(pos0 + n <= kv->max_pos);

    float *x = g_new(float, n * h), *xn = g_new(float, n * h);
    float *q = g_new(float, n * qd), *k = g_new(float, n * kd), *v = g_new(float, n * kd);
    float *att = g_new(float, n * qd), *o = g_new(float, n * h);
    float *g = g_new(float, n * f), *u = g_new(float, n * f), *a = g_new(float, n * f);
    for (uint32_t t = 0; t < n; t++) {
        eng_model_embed(m, tokens[t], x + t * h);
    }
    for (uint32_t l = 0; l < c->layers; l++) {
        float *kc = kv->k + (size_t) l * kv->max_pos * kd;
        float *vc = kv->v + (size_t) l * kv->max_pos * kd;
        eng_rmsnorm_rows(x, eng_model_norm(m, l, 0), xn, h, c->rms_eps, c->norm_plus_one, 0, n);
        eng_matmul_w(xn, eng_model_weight(m, l, ENG_W_Q), q, 0, n, 0, qd);
        eng_matmul_w(xn, eng_model_weight(m, l, ENG_W_K), k, 0, n, 0, kd);
        eng_matmul_w(xn, eng_model_weight(m, l, ENG_W_V), v, 0, n, 0, kd);
        add_bias(q, eng_model_bias(m, l, 0), n, qd);
        add_bias(k, eng_model_bias(m, l, 1), n, kd);
        add_bias(v, eng_model_bias(m, l, 2), n, kd);
        eng_rope_rows(q, q, c->heads, hd, c->rope_theta, pos0, 0, n);
        eng_rope_rows(k, k, c->kv_heads, hd, c->rope_theta, pos0, 0, n);
        eng_attention_rows(q, k, v, kc, vc, att, c->heads, c->kv_heads, hd, pos0, 0, n, 0,
                           c->heads);
        memcpy(kc + (size_t) pos0 * kd, k, sizeof(float) * n * kd);
        memcpy(vc + (size_t) pos0 * kd, v, sizeof(float) * n * kd);
        eng_matmul_w(att, eng_model_weight(m, l, ENG_W_O), o, 0, n, 0, h);
        eng_add_rows(x, o, x, h, 0, n, 0, h);
        eng_rmsnorm_rows(x, eng_model_norm(m, l, 1), xn, h, c->rms_eps, c->norm_plus_one, 0, n);
        eng_matmul_w(xn, eng_model_weight(m, l, ENG_W_GATE), g, 0, n, 0, f);
        eng_matmul_w(xn, eng_model_weight(m, l, ENG_W_UP), u, 0, n, 0, f);
        eng_act_rows(g, u, a, f, c->gelu, 0, n, 0, f);
        eng_matmul_w(a, eng_model_weight(m, l, ENG_W_DOWN), o, 0, n, 0, h);
        eng_add_rows(x, o, x, h, 0, n, 0, h);
    }
    eng_rmsnorm_rows(x, eng_model_norm(m, c->layers, 0), xn, h, c->rms_eps, c->norm_plus_one,
                     0, n);
    eng_matmul_w(xn, eng_model_lm_head(m), logits, 0, n, 0, c->vocab);
    g_free(x);
    g_free(xn);
    g_free(q);
    g_free(k);
    g_free(v);
    g_free(att);
    g_free(o);
    g_free(g);
    g_free(u);
    g_free(a);
}
