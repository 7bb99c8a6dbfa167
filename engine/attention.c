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
    g_assert(heads % kv_heads == 0 && h1 <= heads);
    if (t1 <= t0 || h1 <= h0) {
        return;
    }
    /* Work items: a token and a KV head, with the query heads of [h0, h1)
     * that share it; each K and V row is read once for all of them (a
     * decode step's attention was bound by reading the caches once per
     * query head).  Every (token, head) output is still computed alone,
     * with the operations and order of the header comment. */
    const size_t g0 = h0 / group, g1 = (h1 + group - 1) / group;
    const size_t items = (t1 - t0) * (g1 - g0);
    #pragma omp parallel if ((t1 - t0) * (h1 - h0) * (pos0 + t1) * hd * 2 >= ENG_PAR_MIN_OPS)
    {
        /* per thread: each head's scores against positions [0, pos0 + t1) */
        double *score = g_new(double, group * (pos0 + t1));
        double *acc = g_new(double, group * hd);
        double *max = g_new(double, group), *sum = g_new(double, group);
        #pragma omp for schedule(static)
        for (size_t it = 0; it < items; it++) {
            size_t t = t0 + it / (g1 - g0), kvh = g0 + it % (g1 - g0);
            size_t ha = MAX(h0, kvh * group), hb = MIN(h1, (kvh + 1) * group), nh = hb - ha;
            size_t n = pos0 + t + 1;
            /* a sliding window sees the last @window positions only */
            size_t j0 = window && n > window ? n - window : 0;
            /* score [n] = q . K[0:n]^T / sqrt(hd), softmax over n */
            for (size_t i = 0; i < nh; i++) {
                max[i] = -INFINITY;
            }
            for (size_t j = j0; j < n; j++) {
                const float *kr = j < pos0 ? k_cache + j * kd + kvh * hd
                                           : k + (j - pos0) * kd + kvh * hd;
                for (size_t i = 0; i < nh; i++) {
                    const float *qr = q + t * qd + (ha + i) * hd;
                    double sc = dot_lanes(qr, kr, hd) * scale;
                    score[i * n + j] = sc;
                    max[i] = fmax(max[i], sc);
                }
            }
            for (size_t i = 0; i < nh; i++) {
                double *si = score + i * n;
                sum[i] = 0;
                for (size_t j = j0; j < n; j++) {
                    si[j] = exp(si[j] - max[i]);
                    sum[i] += si[j];
                }
            }
            /* y [hd] = softmax . V[0:n] */
            memset(acc, 0, sizeof(double) * nh * hd);
            for (size_t j = j0; j < n; j++) {
                const float *vr = j < pos0 ? v_cache + j * kd + kvh * hd
                                           : v + (j - pos0) * kd + kvh * hd;
                for (size_t i = 0; i < nh; i++) {
                    axpy(acc + i * hd, score[i * n + j], vr, hd);
                }
            }
            for (size_t i = 0; i < nh; i++) {
                float *yr = y + t * qd + (ha + i) * hd;
                for (size_t e = 0; e < hd; e++) {
                    yr[e] = (float) (acc[i * hd + e] / sum[i]);
                }
            }
        }
        g_free(score);
        g_free(acc);
        g_free(max);
        g_free(sum);
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
