/*
 * attention.c - causal grouped-query attention over a token range and a
 * head range, reading earlier positions from the KV cache; and filing new
 * K/V rows in the cache.  Each (token, head) output is computed alone, in
 * double, with a fixed order: any token or head cut gives the same bits.
 * A score q . k sums in eight interleaved lanes (lane l takes the inputs
 * i with i % 8 == l, in increasing order), then the lanes pairwise: eight
 * independent chains the compiler can keep in vector registers, where one
 * running sum was bound by the latency of each add.
 */
#include "engine/kernels.h"

#include <math.h>
#include <string.h>

#define DOT_LANES 8

/* q . k over @n inputs in double, in the order of the header comment. */
ENG_CLONES static double
dot_lanes(const float *restrict q, const float *restrict k, size_t n)
{
    double lane[DOT_LANES] = { 0 };
    size_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES) {
        for (size_t l = 0; l < DOT_LANES; l++) {
            lane[l] += (double) q[i + l] * k[i + l];
        }
    }
    for (; i < n; i++) {
        lane[i % DOT_LANES] += (double) q[i] * k[i];
    }
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

/* acc[i] += s * v[i]: every element its own chain (in blocks of eight,
 * which the compiler vectorises without a runtime trip count) */
ENG_CLONES static void
axpy(double *restrict acc, double s, const float *restrict v, size_t n)
{
    size_t i = 0;
    for (; i + DOT_LANES <= n; i += DOT_LANES) {
        for (size_t l = 0; l < DOT_LANES; l++) {
            acc[i + l] += s * v[i + l];
        }
    }
    for (; i < n; i++) {
        acc[i] += s * v[i];
    }
}

void
eng_attention_rows(const float *q, const float *k, const float *v, const float *k_cache,
                   const float *v_cache, float *y, size_t heads, size_t kv_heads,
                   size_t hd, size_t pos0, size_t t0, size_t t1, size_t h0, size_t h1)
{
    eng_attention_rows_window(q, k, v, k_cache, v_cache, y, heads, kv_heads, hd, 0, pos0, t0,
                              t1, h0, h1);
}

void
eng_attention_rows_window(const float *q, const float *k, const float *v,
                          const float *k_cache, const float *v_cache, float *y, size_t heads,
                          size_t kv_heads, size_t hd, size_t window, size_t pos0, size_t t0,
                          size_t t1, size_t h0, size_t h1)
{
    const size_t qd = heads * hd, kd = kv_heads * hd, group = heads / kv_heads;
    const double scale = 1.0 / sqrt((double) hd);
    const size_t pairs = (t1 - t0) * (h1 - h0);
    g_assert(heads % kv_heads == 0 && h1 <= heads);
    #pragma omp parallel if (pairs * (pos0 + t1) * hd * 2 >= ENG_PAR_MIN_OPS)
    {
        /* per thread: scores of one query against positions [0, pos0 + t1) */
        double *score = g_new(double, pos0 + t1);
        double *acc = g_new(double, hd);
        #pragma omp for schedule(static)
        for (size_t pi = 0; pi < pairs; pi++) {
            size_t t = t0 + pi / (h1 - h0), h = h0 + pi % (h1 - h0);
            size_t n = pos0 + t + 1, kvh = h / group;
            /* a sliding window sees the last @window positions only */
            size_t j0 = window && n > window ? n - window : 0;
            const float *qr = q + t * qd + h * hd;
            /* score [n] = q . K[0:n]^T / sqrt(hd), softmax over n */
            double max = -INFINITY;
            for (size_t j = j0; j < n; j++) {
                const float *kr = j < pos0 ? k_cache + j * kd + kvh * hd
                                           : k + (j - pos0) * kd + kvh * hd;
                score[j] = dot_lanes(qr, kr, hd) * scale;
                max = fmax(max, score[j]);
            }
            double sum = 0;
            for (size_t j = j0; j < n; j++) {
                score[j] = exp(score[j] - max);
                sum += score[j];
            }
            /* y [hd] = softmax . V[0:n] */
            memset(acc, 0, sizeof(double) * hd);
            for (size_t j = j0; j < n; j++) {
                const float *vr = j < pos0 ? v_cache + j * kd + kvh * hd
                                           : v + (j - pos0) * kd + kvh * hd;
                axpy(acc, score[j], vr, hd);
            }
            float *yr = y + t * qd + h * hd;
            for (size_t i = 0; i < hd; i++) {
                yr[i] = (float) (acc[i] / sum);
            }
        }
        g_free(score);
        g_free(acc);
    }
}

void
eng_kv_store_rows(const float *k, const float *v, float *k_cache, float *v_cache,
                  size_t kv_dim, size_t pos0, size_t t0, size_t t1)
{
    if (t1 <= t0) {
        return;
    }
    memcpy(k_cache + (pos0 + t0) * kv_dim, k + t0 * kv_dim, sizeof(float) * (t1 - t0) * kv_dim);
    memcpy(v_cache + (pos0 + t0) * kv_dim, v + t0 * kv_dim, sizeof(float) * (t1 - t0) * kv_dim);
}
