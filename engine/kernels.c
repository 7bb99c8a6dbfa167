/*
 * kernels.c - see kernels.h.
 */
#include "engine/kernels.h"

#include <cblas.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS splits a product among its threads, and how it splits can
 * change the rounding; so it always gets the same number of threads,
 * whatever OMP_NUM_THREADS says, and results never depend on the host's
 * thread count.  2: the machines this project runs on have 2 cores. */
#define ENG_BLAS_THREADS 2

static void
pin_blas(void)
{
    static gsize blas_pinned = 0;
    if (g_once_init_enter(&blas_pinned)) {
        openblas_set_num_threads(ENG_BLAS_THREADS);
        g_once_init_leave(&blas_pinned, 1);
    }
}

void
eng_matmul_slice(const float *x, const float *w, float *y, size_t k, size_t n,
                 size_t t0, size_t t1, size_t r0, size_t r1)
{
    pin_blas();
    if (t1 <= t0 || r1 <= r0) {
        return;
    }
    /* Y[t0:t1, r0:r1] = X[t0:t1, :] . W[r0:r1, :]^T */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) (t1 - t0), (int) (r1 - r0),
                (int) k, 1.0f, x + t0 * k, (int) k, w + r0 * k, (int) k, 0.0f,
                y + t0 * n + r0, (int) n);
}

void
eng_rmsnorm_rows(const float *x, const float *w, float *y, size_t d, double eps,
                 int plus_one, size_t t0, size_t t1)
{
    #pragma omp parallel for schedule(static)
    for (size_t t = t0; t < t1; t++) {
        const float *xr = x + t * d;
        double ss = 0;
        for (size_t i = 0; i < d; i++) {
            ss += (double) xr[i] * xr[i];
        }
        float inv = (float) (1.0 / sqrt(ss / (double) d + eps));
        for (size_t i = 0; i < d; i++) {
            float g = w ? (plus_one ? 1.0f + w[i] : w[i]) : 1.0f;
            y[t * d + i] = xr[i] * inv * g;
        }
    }
}

void
eng_rope_rows(const float *x, float *y, size_t heads, size_t hd, double theta,
              size_t pos0, size_t t0, size_t t1)
{
    size_t d = heads * hd, half = hd / 2;
    #pragma omp parallel for schedule(static)
    for (size_t t = t0; t < t1; t++) {
        double pos = (double) (pos0 + t);
        for (size_t h = 0; h < heads; h++) {
            const float *xr = x + t * d + h * hd;
            float *yr = y + t * d + h * hd;
            for (size_t i = 0; i < half; i++) {
                double freq = pow(theta, -2.0 * (double) i / (double) hd);
                double c = cos(pos * freq), s = sin(pos * freq);
                float a = xr[i], b = xr[i + half];
                yr[i] = (float) (a * c - b * s);
                yr[i + half] = (float) (b * c + a * s);
            }
        }
    }
}

void
eng_attention_rows(const float *q, const float *k, const float *v, const float *k_cache,
                   const float *v_cache, float *y, size_t heads, size_t kv_heads,
                   size_t hd, size_t pos0, size_t t0, size_t t1, size_t h0, size_t h1)
{
    size_t qd = heads * hd, kd = kv_heads * hd, group = heads / kv_heads;
    double scale = 1.0 / sqrt((double) hd);
    #pragma omp parallel for collapse(2) schedule(static)
    for (size_t t = t0; t < t1; t++) {
        for (size_t h = h0; h < h1; h++) {
            size_t n = pos0 + t + 1, kvh = h / group;
            const float *qr = q + t * qd + h * hd;
            double *score = malloc(sizeof(double) * n);
            double max = -INFINITY;
            for (size_t j = 0; j < n; j++) {
                const float *kr = j < pos0 ? k_cache + j * kd + kvh * hd
                                           : k + (j - pos0) * kd + kvh * hd;
                double dot = 0;
                for (size_t i = 0; i < hd; i++) {
                    dot += (double) qr[i] * kr[i];
                }
                score[j] = dot * scale;
                max = score[j] > max ? score[j] : max;
            }
            double sum = 0;
            for (size_t j = 0; j < n; j++) {
                score[j] = exp(score[j] - max);
                sum += score[j];
            }
            float *yr = y + t * qd + h * hd;
            for (size_t i = 0; i < hd; i++) {
                double acc = 0;
                for (size_t j = 0; j < n; j++) {
                    const float *vr = j < pos0 ? v_cache + j * kd + kvh * hd
                                               : v + (j - pos0) * kd + kvh * hd;
                    acc += score[j] * vr[i];
                }
                yr[i] = (float) (acc / sum);
            }
            free(score);
        }
    }
}

static inline float
silu(float x)
{
    return x / (1.0f + expf(-x));
}

static inline float
gelu_tanh(float x)
{
    const float c = 0.7978845608028654f;     /* sqrt(2 / pi) */
    return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}

void
eng_act_rows(const float *gate, const float *up, float *y, size_t d, int gelu,
             size_t t0, size_t t1, size_t c0, size_t c1)
{
    #pragma omp parallel for schedule(static)
    for (size_t t = t0; t < t1; t++) {
        for (size_t c = c0; c < c1; c++) {
            float g = gate[t * d + c];
            y[t * d + c] = (gelu ? gelu_tanh(g) : silu(g)) * up[t * d + c];
        }
    }
}

void
eng_add_rows(const float *a, const float *b, float *y, size_t d, size_t t0, size_t t1,
             size_t c0, size_t c1)
{
    for (size_t t = t0; t < t1; t++) {
        for (size_t c = c0; c < c1; c++) {
            y[t * d + c] = a[t * d + c] + b[t * d + c];
        }
    }
}

float
eng_fp16_round(float v)
{
    /* round to 11 significant bits, FP16 range (denormals flushed) */
    if (v == 0 || !isfinite(v)) {
        return v;
    }
    int e;
    float m = frexpf(v, &e);
    if (e > 16) {
        return copysignf(65504.0f, v);
    }
    if (e < -13) {
        return 0.0f;
    }
    return ldexpf(nearbyintf(m * 2048.0f) / 2048.0f, e);
}

void
eng_quant_w4_inplace(float *w, size_t rows, size_t cols, size_t group)
{
    #pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++) {
        for (size_t g0 = 0; g0 < cols; g0 += group) {
            size_t g1 = g0 + group < cols ? g0 + group : cols;
            float amax = 0;
            for (size_t c = g0; c < g1; c++) {
                float a = fabsf(w[r * cols + c]);
                amax = a > amax ? a : amax;
            }
            float s = eng_fp16_round(amax / 7.0f);
            for (size_t c = g0; c < g1; c++) {
                float q = s > 0 ? nearbyintf(w[r * cols + c] / s) : 0;
                q = q < -8 ? -8 : (q > 7 ? 7 : q);
                w[r * cols + c] = q * s;
            }
        }
    }
}

void
eng_quant_act_int8(const float *x, float *y, size_t d, size_t t0, size_t t1)
{
    float amax = 0;
    for (size_t i = t0 * d; i < t1 * d; i++) {
        float a = fabsf(x[i]);
        amax = a > amax ? a : amax;
    }
    float s = amax > 0 ? amax / 127.0f : 1.0f;
    for (size_t i = t0 * d; i < t1 * d; i++) {
        float q = nearbyintf(x[i] / s);
        y[i] = (q < -127 ? -127 : (q > 127 ? 127 : q)) * s;
    }
}

EngMatrix *
eng_matrix_new_f32(float *w, uint32_t rows, uint32_t cols)
{
    EngMatrix *m = g_new0(EngMatrix, 1);
    m->rows = rows;
    m->cols = cols;
    m->f32 = w;
    return m;
}

EngMatrix *
eng_matrix_new_w4(const float *w, uint32_t rows, uint32_t cols)
{
    EngMatrix *m = eng_matrix_alloc_w4(rows, cols);
    eng_matrix_set_rows_w4(m, 0, rows, w);
    return m;
}

EngMatrix *
eng_matrix_alloc_w4(uint32_t rows, uint32_t cols)
{
    g_assert(cols % 2 == 0);
    EngMatrix *m = g_new0(EngMatrix, 1);
    size_t groups = (cols + ENG_W4_GROUP - 1) / ENG_W4_GROUP;
    m->rows = rows;
    m->cols = cols;
    m->q4 = g_new0(uint8_t, (size_t) rows * cols / 2);
    m->scales = g_new(float, (size_t) rows * groups);
    return m;
}

void
eng_matrix_set_rows_w4(EngMatrix *m, uint32_t r0, uint32_t r1, const float *rows_f32)
{
    const size_t cols = m->cols, groups = (cols + ENG_W4_GROUP - 1) / ENG_W4_GROUP;
    const float *w = rows_f32;
    #pragma omp parallel for schedule(static)
    for (size_t rr = r0; rr < r1; rr++) {
        size_t r = rr;
        const float *wr = w + (rr - r0) * cols;
        for (size_t g = 0; g < groups; g++) {
            size_t c0 = g * ENG_W4_GROUP, c1 = MIN(cols, c0 + ENG_W4_GROUP);
            float amax = 0;
            for (size_t c = c0; c < c1; c++) {
                amax = fmaxf(amax, fabsf(wr[c]));
            }
            /* the same rounding as eng_quant_w4_inplace, the reference */
            float sc = eng_fp16_round(amax / 7.0f);
            m->scales[r * groups + g] = sc;
            for (size_t c = c0; c < c1; c++) {
                float q = sc > 0 ? nearbyintf(wr[c] / sc) : 0;
                q = q < -8 ? -8 : (q > 7 ? 7 : q);
                uint8_t nib = (uint8_t) ((int) q + 8);
                size_t i = r * cols + c;
                uint8_t keep = (uint8_t) (i % 2 ? 0x0f : 0xf0);
                m->q4[i / 2] = (uint8_t) ((m->q4[i / 2] & keep) | (i % 2 ? nib << 4 : nib));
            }
        }
    }
}

void
eng_matrix_free(EngMatrix *m)
{
    if (m == NULL) {
        return;
    }
    g_free(m->f32);
    g_free(m->q4);
    g_free(m->scales);
    g_free(m);
}

void
eng_matrix_rows_f32(const EngMatrix *m, uint32_t r0, uint32_t r1, float *out)
{
    size_t cols = m->cols;
    if (m->f32) {
        memcpy(out, m->f32 + (size_t) r0 * cols, sizeof(float) * (r1 - r0) * cols);
        return;
    }
    size_t groups = (cols + ENG_W4_GROUP - 1) / ENG_W4_GROUP;
    #pragma omp parallel for schedule(static)
    for (size_t r = r0; r < r1; r++) {
        const uint8_t *q = m->q4 + r * cols / 2;
        const float *sc = m->scales + r * groups;
        float *o = out + (r - r0) * cols;
        for (size_t c = 0; c < cols; c += 2) {
            float s = sc[c / ENG_W4_GROUP];
            o[c] = (float) ((q[c / 2] & 0xf) - 8) * s;
            o[c + 1] = (float) ((q[c / 2] >> 4) - 8) * s;
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_W4_AVX2 1

/*
 * One row of W4A16 times one token, AVX2 + FMA: 32 weights per step
 * (16 bytes of nibbles), eight lanes of partial sums per group, reduced in
 * a fixed order — deterministic on a given machine, whatever the threads.
 */
__attribute__((target("avx2,fma"))) static float
w4_row_dot_avx2(const uint8_t *q, const float *sc, const float *x, size_t k)
{
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m256 eight = _mm256_set1_ps(8.0f);
    float acc = 0;
    for (size_t c0 = 0; c0 < k; c0 += ENG_W4_GROUP) {
        size_t c1 = MIN(k, c0 + ENG_W4_GROUP), c = c0;
        /* four independent chains: the FMAs do not wait on each other */
        __m256 g0 = _mm256_setzero_ps(), g1 = g0, g2 = g0, g3 = g0;
        for (; c + 32 <= c1; c += 32) {
            __m128i b = _mm_loadu_si128((const __m128i *) (q + c / 2));
            __m128i lo = _mm_and_si128(b, m4);
            __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), m4);
            __m128i w0 = _mm_unpacklo_epi8(lo, hi);          /* weights c .. c+15 */
            __m128i w1 = _mm_unpackhi_epi8(lo, hi);          /* weights c+16 .. c+31 */
            __m256 f0 = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(w0)), eight);
            __m256 f1 = _mm256_sub_ps(_mm256_cvtepi32_ps(
                            _mm256_cvtepu8_epi32(_mm_srli_si128(w0, 8))), eight);
            __m256 f2 = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(w1)), eight);
            __m256 f3 = _mm256_sub_ps(_mm256_cvtepi32_ps(
                            _mm256_cvtepu8_epi32(_mm_srli_si128(w1, 8))), eight);
            g0 = _mm256_fmadd_ps(f0, _mm256_loadu_ps(x + c), g0);
            g1 = _mm256_fmadd_ps(f1, _mm256_loadu_ps(x + c + 8), g1);
            g2 = _mm256_fmadd_ps(f2, _mm256_loadu_ps(x + c + 16), g2);
            g3 = _mm256_fmadd_ps(f3, _mm256_loadu_ps(x + c + 24), g3);
        }
        __m256 g = _mm256_add_ps(_mm256_add_ps(g0, g1), _mm256_add_ps(g2, g3));
        float lane[8];
        _mm256_storeu_ps(lane, g);
        float sum = ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
                    ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        for (; c < c1; c += 2) {
            sum += (float) ((q[c / 2] & 0xf) - 8) * x[c] + (float) ((q[c / 2] >> 4) - 8) * x[c + 1];
        }
        acc += sum * sc[c0 / ENG_W4_GROUP];
    }
    return acc;
}
#endif

/* Tokens at or below this run the INT4 matrix-vector kernel. */
#define W4_MATVEC_TOKENS 8
/* Rows dequantised per BLAS call otherwise. */
#define W4_BLOCK_ROWS 512

void
eng_matmul_w(const float *x, const EngMatrix *w, float *y, size_t t0, size_t t1,
             size_t r0, size_t r1)
{
    const size_t k = w->cols, n = w->rows;
    if (t1 <= t0 || r1 <= r0) {
        return;
    }
    if (w->f32) {
        eng_matmul_slice(x, w->f32, y, k, n, t0, t1, r0, r1);
        return;
    }
    const size_t groups = (k + ENG_W4_GROUP - 1) / ENG_W4_GROUP;
#ifdef HAVE_W4_AVX2
    static int avx2 = -1;
    if (avx2 < 0) {
        avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    if (avx2 && t1 - t0 <= W4_MATVEC_TOKENS) {
        #pragma omp parallel for schedule(static)
        for (size_t r = r0; r < r1; r++) {
            for (size_t t = t0; t < t1; t++) {
                y[t * n + r] = w4_row_dot_avx2(w->q4 + r * k / 2, w->scales + r * groups,
                                               x + t * k, k);
            }
        }
        return;
    }
#endif
    if (t1 - t0 <= W4_MATVEC_TOKENS) {
        /* y[t, r] = sum over groups of scale * sum (q - 8) * x: the INT4
         * bytes are read once per row, for every token.  Eight partial
         * sums per group in a fixed order, so the compiler can keep them
         * in one vector register and the result never depends on threads. */
        #pragma omp parallel for schedule(static)
        for (size_t r = r0; r < r1; r++) {
            const uint8_t *q = w->q4 + r * k / 2;
            const float *sc = w->scales + r * groups;
            for (size_t t = t0; t < t1; t++) {
                const float *xt = x + t * k;
                float acc = 0;
                for (size_t g = 0; g < groups; g++) {
                    size_t c0 = g * ENG_W4_GROUP, c1 = MIN(k, c0 + ENG_W4_GROUP);
                    float part[8] = { 0 };
                    size_t c = c0;
                    for (; c + 8 <= c1; c += 8) {
                        const uint8_t *b = q + c / 2;
                        float wv[8] = {
                            (float) ((b[0] & 0xf) - 8), (float) ((b[0] >> 4) - 8),
                            (float) ((b[1] & 0xf) - 8), (float) ((b[1] >> 4) - 8),
                            (float) ((b[2] & 0xf) - 8), (float) ((b[2] >> 4) - 8),
                            (float) ((b[3] & 0xf) - 8), (float) ((b[3] >> 4) - 8),
                        };
                        for (int j = 0; j < 8; j++) {
                            part[j] += wv[j] * xt[c + j];
                        }
                    }
                    for (; c < c1; c += 2) {
                        part[0] += (float) ((q[c / 2] & 0xf) - 8) * xt[c] +
                                   (float) ((q[c / 2] >> 4) - 8) * xt[c + 1];
                    }
                    float sum = ((part[0] + part[1]) + (part[2] + part[3])) +
                                ((part[4] + part[5]) + (part[6] + part[7]));
                    acc += sum * sc[g];
                }
                y[t * n + r] = acc;
            }
        }
        return;
    }
    float *buf = g_new(float, (size_t) MIN(W4_BLOCK_ROWS, r1 - r0) * k);
    for (size_t a = r0; a < r1; a += W4_BLOCK_ROWS) {
        size_t e = MIN(r1, a + W4_BLOCK_ROWS);
        eng_matrix_rows_f32(w, (uint32_t) a, (uint32_t) e, buf);
        /* Y[t0:t1, a:e] = X[t0:t1, :] . buf^T, buf = W[a:e, :] */
        pin_blas();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) (t1 - t0), (int) (e - a),
                    (int) k, 1.0f, x + t0 * k, (int) k, buf, (int) k, 0.0f, y + t0 * n + a,
                    (int) n);
    }
    g_free(buf);
}
