/*
 * attention.c - causal grouped-query attention over a token range and a
 * head range, reading earlier positions from the KV cache; and filing new
 * K/V rows in the cache.  Each (token, head) output is computed alone, in
 * double, with a fixed order: any token or head cut gives the same bits.
 * A score q . k sums in eight interleaved lanes (lane l takes the inputs
 * i with i % 8 == l, in increasing order), then the lanes pairwise: eight
 * independent chains the compiler can keep in vector registers, where one
 * running sum was bound by the latency of each add.
 *
 * The whole order, for query head h at position p seeing positions
 * [j0, n) (all in double; "+=" is a multiply, rounded, then an add):
 *   s[j]   = dot(q_h, k_j) * (1 / sqrt(hd))    dot as above, lanes
 *            combined ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
 *   m      = fmax over j of s[j], from -inf, j increasing
 *   e[j]   = exp(s[j] - m);  sum = sum of e[j], j increasing, from 0
 *   acc[x] = sum of e[j] * v_j[x], j increasing, from 0 (x: an element)
 *   y[x]   = (float) (acc[x] / sum)
 *
 * How it is computed: a work item is a token and a KV head with the query
 * heads sharing it (GQA), so every K and V row is read and widened to
 * double once for all of them; the query rows are widened once per item.
 * The weighted sum runs over blocks of positions (copied side by side)
 * and, inside a block, over head_dim in chunks of eight elements held in
 * registers for up to four heads while the block's positions go by (acc
 * is loaded and stored once per block and chunk, not once per position):
 * each element's chain still takes its positions in increasing order.
 * K and V rows are prefetched: a KV head's rows lie kv_heads * hd floats
 * apart (4 KiB in Llama-3-8B), where the hardware prefetchers stop.  A
 * portable path and an AVX2 path (eng_isa(): the W4A16 kernel's switch,
 * so tests and HS_ENGINE_NO_SIMD can force either) do the same multiplies
 * and adds in the same order, so they give the same bits.
 */
#include "engine/kernels.h"

#include <math.h>
#include <string.h>

/* no multiply-add contraction (GCC's -std=c11 already says so) */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define DOT_LANES 8
/* positions per block of the weighted sum: a block of a KV head's V rows,
 * copied side by side (32 x 128 floats, 16 KiB), stays in L1 while
 * head_dim is walked over it */
#define ATTN_BLOCK 32

/* Scores of @nh query rows @qd [nh, hd] (double) against @cnt K rows from
 * @kr (row stride @kd floats): score[i * stride + r] = dot * scale. */
static void
scores_portable(const double *qd, size_t nh, size_t hd, const float *kr, size_t kd,
                size_t cnt, double scale, double *score, size_t stride)
{
    for (size_t r = 0; r < cnt; r++, kr += kd) {
        for (size_t i = 0; i < nh; i++) {
            const double *q = qd + i * hd;
            double lane[DOT_LANES] = { 0 };
            size_t x = 0;
            /* blocks of eight first: a loop the compiler vectorises */
            for (; x + DOT_LANES <= hd; x += DOT_LANES) {
                for (size_t l = 0; l < DOT_LANES; l++) {
                    lane[l] += q[x + l] * kr[x + l];
                }
            }
            for (; x < hd; x++) {
                lane[x % DOT_LANES] += q[x] * kr[x];
            }
            score[i * stride + r] = (((lane[0] + lane[4]) + (lane[2] + lane[6])) +
                                     ((lane[1] + lane[5]) + (lane[3] + lane[7]))) * scale;
        }
    }
}

/* acc[i * hd + x] += score[i * stride + r] * V[r][x] for r = 0, 1, ...,
 * @cnt - 1 in turn (@vr: row 0, row stride @kd floats; @vblock: scratch
 * of ATTN_BLOCK * hd floats, which the AVX2 path uses). */
static void
weighted_portable(const double *score, size_t stride, size_t nh, size_t hd, const float *vr,
                  size_t kd, size_t cnt, double *acc, float *vblock)
{
    for (size_t r = 0; r < cnt; r++, vr += kd) {
        for (size_t i = 0; i < nh; i++) {
            double s = score[i * stride + r], *a = acc + i * hd;
            size_t x = 0;
            for (; x + DOT_LANES <= hd; x += DOT_LANES) {
                for (size_t l = 0; l < DOT_LANES; l++) {
                    a[x + l] += s * vr[x + l];
                }
            }
            for (; x < hd; x++) {
                a[x] += s * vr[x];
            }
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_ATTN_AVX2 1

#define ATTN_TARGET __attribute__((target("avx2")))
#define ATTN_INLINE ATTN_TARGET static inline __attribute__((always_inline))
/* the loops over a constant number of heads: unrolled, so that their
 * accumulators live in registers */
#define ATTN_UNROLL _Pragma("GCC unroll 4")

/* Scores of @m (1-4, a constant once inlined) query rows against one K
 * row: lanes 0-3 of the header comment in a[i][0], 4-7 in a[i][1]. */
ATTN_INLINE void
scores_row_avx2(const double *qd, size_t m, size_t hd, const float *k, double scale,
                double *out, size_t stride)
{
    __m256d a[4][2];
    ATTN_UNROLL
    for (size_t i = 0; i < m; i++) {
        a[i][0] = a[i][1] = _mm256_setzero_pd();
    }
    size_t x = 0;
    for (; x + DOT_LANES <= hd; x += DOT_LANES) {
        __m256d k0 = _mm256_cvtps_pd(_mm_loadu_ps(k + x));
        __m256d k1 = _mm256_cvtps_pd(_mm_loadu_ps(k + x + 4));
        ATTN_UNROLL
        for (size_t i = 0; i < m; i++) {
            a[i][0] = _mm256_add_pd(a[i][0], _mm256_mul_pd(_mm256_loadu_pd(qd + i * hd + x), k0));
            a[i][1] = _mm256_add_pd(a[i][1],
                                    _mm256_mul_pd(_mm256_loadu_pd(qd + i * hd + x + 4), k1));
        }
    }
    ATTN_UNROLL
    for (size_t i = 0; i < m; i++) {
        if (x < hd) {
            /* the last hd % 8 inputs: lanes 0.. in turn */
            double lane[DOT_LANES];
            _mm256_storeu_pd(lane, a[i][0]);
            _mm256_storeu_pd(lane + 4, a[i][1]);
            for (size_t e = x; e < hd; e++) {
                lane[e - x] += qd[i * hd + e] * k[e];
            }
            a[i][0] = _mm256_loadu_pd(lane);
            a[i][1] = _mm256_loadu_pd(lane + 4);
        }
        /* (l0 + l4, l1 + l5, l2 + l6, l3 + l7), then (c0 + c2) + (c1 + c3) */
        __m256d c = _mm256_add_pd(a[i][0], a[i][1]);
        __m128d h = _mm_add_pd(_mm256_castpd256_pd128(c), _mm256_extractf128_pd(c, 1));
        out[i * stride] = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h))) * scale;
    }
}

/* Fetch row @r (if < @cnt) of @rows ahead of use (header comment). */
ATTN_INLINE void
prefetch_row(const float *rows, size_t kd, size_t r, size_t cnt, size_t hd)
{
    if (r < cnt) {
        for (size_t x = 0; x < hd; x += 16) {
            _mm_prefetch((const char *) (rows + r * kd + x), _MM_HINT_T0);
        }
    }
}

/* rows ahead that the scores prefetch */
#define ATTN_PREFETCH_ROWS 8

ATTN_INLINE void
scores_avx2_m(const double *qd, size_t m, size_t hd, const float *kr, size_t kd, size_t cnt,
              double scale, double *score, size_t stride)
{
    for (size_t r = 0; r < cnt; r++) {
        prefetch_row(kr, kd, r + ATTN_PREFETCH_ROWS, cnt, hd);
        scores_row_avx2(qd, m, hd, kr + r * kd, scale, score + r, stride);
    }
}

ATTN_TARGET static void
scores_avx2(const double *qd, size_t nh, size_t hd, const float *kr, size_t kd, size_t cnt,
            double scale, double *score, size_t stride)
{
    /* four heads at a time (eight accumulators; Llama's GQA group) */
    for (size_t i = 0; i < nh; i += 4) {
        const double *q = qd + i * hd;
        double *s = score + i * stride;
        switch (MIN(nh - i, 4)) {
        case 4:
            scores_avx2_m(q, 4, hd, kr, kd, cnt, scale, s, stride);
            break;
        case 3:
            scores_avx2_m(q, 3, hd, kr, kd, cnt, scale, s, stride);
            break;
        case 2:
            scores_avx2_m(q, 2, hd, kr, kd, cnt, scale, s, stride);
            break;
        default:
            scores_avx2_m(q, 1, hd, kr, kd, cnt, scale, s, stride);
            break;
        }
    }
}

/* The weighted sum of @m (1-4) heads over eight elements [x, x + 8): the
 * accumulators stay in registers over the @cnt positions. */
ATTN_INLINE void
weighted_chunk_avx2(const double *score, size_t stride, size_t m, size_t hd, const float *vr,
                    size_t kd, size_t cnt, double *acc, size_t x)
{
    __m256d a[4][2];
    ATTN_UNROLL
    for (size_t i = 0; i < m; i++) {
        a[i][0] = _mm256_loadu_pd(acc + i * hd + x);
        a[i][1] = _mm256_loadu_pd(acc + i * hd + x + 4);
    }
    for (size_t r = 0; r < cnt; r++) {
        const float *v = vr + r * kd + x;
        __m256d v0 = _mm256_cvtps_pd(_mm_loadu_ps(v));
        __m256d v1 = _mm256_cvtps_pd(_mm_loadu_ps(v + 4));
        ATTN_UNROLL
        for (size_t i = 0; i < m; i++) {
            __m256d s = _mm256_broadcast_sd(score + i * stride + r);
            a[i][0] = _mm256_add_pd(a[i][0], _mm256_mul_pd(s, v0));
            a[i][1] = _mm256_add_pd(a[i][1], _mm256_mul_pd(s, v1));
        }
    }
    ATTN_UNROLL
    for (size_t i = 0; i < m; i++) {
        _mm256_storeu_pd(acc + i * hd + x, a[i][0]);
        _mm256_storeu_pd(acc + i * hd + x + 4, a[i][1]);
    }
}

ATTN_INLINE void
weighted_avx2_m(const double *score, size_t stride, size_t m, size_t hd, const float *vr,
                size_t kd, size_t cnt, double *acc)
{
    size_t x = 0;
    for (; x + 8 <= hd; x += 8) {
        weighted_chunk_avx2(score, stride, m, hd, vr, kd, cnt, acc, x);
    }
    if (x < hd) {
        /* the last hd % 8 elements, each its own chain */
        ATTN_UNROLL
        for (size_t i = 0; i < m; i++) {
            for (size_t r = 0; r < cnt; r++) {
                double s = score[i * stride + r];
                for (size_t e = x; e < hd; e++) {
                    acc[i * hd + e] += s * vr[r * kd + e];
                }
            }
        }
    }
}

ATTN_TARGET static void
weighted_avx2(const double *score, size_t stride, size_t nh, size_t hd, const float *vr,
              size_t kd, size_t cnt, double *acc, float *vblock)
{
    /* blocks of positions in turn, four heads at a time inside a block */
    for (size_t b = 0; b < cnt; b += ATTN_BLOCK) {
        size_t bn = MIN(cnt - b, ATTN_BLOCK);
        for (size_t r = b + ATTN_BLOCK; r < b + 2 * ATTN_BLOCK; r++) {
            prefetch_row(vr, kd, r, cnt, hd);       /* the next block */
        }
        /* the block's rows side by side: 4 KiB apart, they all fell in
         * the same few L1 sets and missed on every pass over head_dim */
        for (size_t r = 0; r < bn; r++) {
            memcpy(vblock + r * hd, vr + (b + r) * kd, sizeof(float) * hd);
        }
        for (size_t i = 0; i < nh; i += 4) {
            const double *s = score + i * stride + b;
            const float *v = vblock;
            double *a = acc + i * hd;
            switch (MIN(nh - i, 4)) {
            case 4:
                weighted_avx2_m(s, stride, 4, hd, v, hd, bn, a);
                break;
            case 3:
                weighted_avx2_m(s, stride, 3, hd, v, hd, bn, a);
                break;
            case 2:
                weighted_avx2_m(s, stride, 2, hd, v, hd, bn, a);
                break;
            default:
                weighted_avx2_m(s, stride, 1, hd, v, hd, bn, a);
                break;
            }
        }
    }
}
#endif

/* The two kernels of one path. */
typedef struct {
    void (*scores)(const double *qd, size_t nh, size_t hd, const float *kr, size_t kd,
                   size_t cnt, double scale, double *score, size_t stride);
    void (*weighted)(const double *score, size_t stride, size_t nh, size_t hd,
                     const float *vr, size_t kd, size_t cnt, double *acc, float *vblock);
} AttnPath;

static AttnPath
attn_path(void)
{
#ifdef HAVE_ATTN_AVX2
    /* eng_isa() is AVX2 or better unless forced portable */
    if (eng_isa() != ENG_ISA_PORTABLE) {
        return (AttnPath) { scores_avx2, weighted_avx2 };
    }
#endif
    return (AttnPath) { scores_portable, weighted_portable };
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
    const AttnPath path = attn_path();
    /* Work items: a token and a KV head, with the query heads of [h0, h1)
     * that share it (see the header comment).  Interleaved over threads:
     * a prefill's later tokens see more positions. */
    const size_t g0 = h0 / group, g1 = (h1 + group - 1) / group;
    const size_t items = (t1 - t0) * (g1 - g0);
    #pragma omp parallel if ((t1 - t0) * (h1 - h0) * (pos0 + t1) * hd * 2 >= ENG_PAR_MIN_OPS)
    {
        /* per thread: each head's scores against positions [0, pos0 + t1) */
        double *score = g_new(double, group * (pos0 + t1));
        double *acc = g_new(double, group * hd), *qrow = g_new(double, group * hd);
        float *vblock = g_new(float, ATTN_BLOCK * hd);
        double *max = g_new(double, group), *sum = g_new(double, group);
        #pragma omp for schedule(static, 1)
        for (size_t it = 0; it < items; it++) {
            size_t t = t0 + it / (g1 - g0), kvh = g0 + it % (g1 - g0);
            size_t ha = MAX(h0, kvh * group), hb = MIN(h1, (kvh + 1) * group), nh = hb - ha;
            size_t n = pos0 + t + 1;
            /* a sliding window sees the last @window positions only */
            size_t j0 = window && n > window ? n - window : 0;
            /* positions [j0, jc) from the caches, [jc, n) from k and v */
            size_t jc = MAX(j0, MIN(n, pos0));
            for (size_t x = 0; x < nh * hd; x++) {
                qrow[x] = q[t * qd + ha * hd + x];
            }
            /* score [n] = q . K[0:n]^T / sqrt(hd), softmax over n */
            if (jc > j0) {
                path.scores(qrow, nh, hd, k_cache + j0 * kd + kvh * hd, kd, jc - j0, scale,
                            score + j0, n);
            }
            path.scores(qrow, nh, hd, k + (jc - pos0) * kd + kvh * hd, kd, n - jc, scale,
                        score + jc, n);
            for (size_t i = 0; i < nh; i++) {
                double *si = score + i * n;
                max[i] = -INFINITY;
                for (size_t j = j0; j < n; j++) {
                    /* fmax (NaN skipped) but inline; of two zeros it may
                     * keep either, and s - (+0) == s - (-0) but for s = 0,
                     * where exp gives 1 either way */
                    max[i] = si[j] > max[i] ? si[j] : max[i];
                }
                sum[i] = 0;
                for (size_t j = j0; j < n; j++) {
                    si[j] = exp(si[j] - max[i]);
                    sum[i] += si[j];
                }
            }
            /* y [hd] = softmax . V[0:n] */
            memset(acc, 0, sizeof(double) * nh * hd);
            if (jc > j0) {
                path.weighted(score + j0, n, nh, hd, v_cache + j0 * kd + kvh * hd, kd, jc - j0,
                              acc, vblock);
            }
            path.weighted(score + jc, n, nh, hd, v + (jc - pos0) * kd + kvh * hd, kd, n - jc,
                          acc, vblock);
            for (size_t i = 0; i < nh; i++) {
                float *yr = y + t * qd + (ha + i) * hd;
                for (size_t e = 0; e < hd; e++) {
                    yr[e] = (float) (acc[i * hd + e] / sum[i]);
                }
            }
        }
        g_free(score);
        g_free(acc);
        g_free(qrow);
        g_free(vblock);
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
