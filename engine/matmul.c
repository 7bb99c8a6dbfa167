/*
 * matmul.c - Y[s0:s1, r0:r1] = X[s0:s1, :] . W[r0:r1, :]^T for every
 * weight format, computing exactly the requested slice (see kernels.h for
 * why every output element gets the same bits whatever the slice).
 *
 * W4A16 (our kernel; the format is described in kernels.h).  One output
 * element y[t, r] is, in this order and nothing else:
 *   for each group g of 128 inputs:
 *     a[k][l] (k = 0..3, l = 0..7) accumulate, by fused multiply-add and
 *       in increasing input order, the products (q - 8) * x of the inputs
 *       e with (e % 32) / 8 == k and e % 8 == l;
 *     tot[l] = fma(scale_g, (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]), tot[l])
 *   y = ((tot0 + tot4) + (tot2 + tot6)) + ((tot1 + tot5) + (tot3 + tot7))
 * which is what eight-lane AVX2 registers do naturally (four independent
 * FMA chains, so the loop is not latency-bound).  The AVX2 path (runtime
 * detected) and the portable path perform the same IEEE operations, so
 * they give the same bits (HS_ENGINE_NO_SIMD=1 forces the portable one).
 * OpenMP parallelises over output rows; each row takes its tokens two at
 * a time so the INT4 weights are unpacked once per pair.
 *
 * FP32 / FP16: OpenBLAS on a fixed tile grid, one tile per OpenMP thread
 * at a time, OpenBLAS itself single-threaded (no oversubscription, and
 * its rounding does not depend on how many threads it would use).
 */
#include "engine/kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- W4A16 ------------------------------------------------------------- */

/* One group, portable: accumulate into a[4][8] (see the header comment). */
static inline void
w4_group_scalar(const uint8_t *qg, const float *x, size_t n, float a[4][8])
{
    for (size_t e = 0; e < n; e++) {
        uint8_t b = qg[(e / 32) * 16 + (e % 16)];
        int nib = (e % 32) >= 16 ? b >> 4 : b & 0x0f;
        size_t k = (e % 32) / 8, l = e % 8;
        a[k][l] = fmaf((float) (nib - 8), x[e], a[k][l]);
    }
}

static inline void
w4_group_fold(float a[4][8], float scale, float tot[8])
{
    for (int l = 0; l < 8; l++) {
        tot[l] = fmaf(scale, (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]), tot[l]);
    }
}

static inline float
w4_reduce8(const float t[8])
{
    float s4[4], s2[2];
    for (int l = 0; l < 4; l++) {
        s4[l] = t[l] + t[l + 4];
    }
    for (int l = 0; l < 2; l++) {
        s2[l] = s4[l] + s4[l + 2];
    }
    return s2[0] + s2[1];
}

/* y for one row and one token, portable. */
static float
w4_dot_scalar(const EngMatrix *w, size_t r, const float *x)
{
    const size_t k = w->cols;
    float tot[8] = { 0 };
    for (size_t g = 0; g < w->groups; g++) {
        size_t c0 = g * ENG_W4_GROUP;
        float a[4][8] = { { 0 } };
        w4_group_scalar(w->q4 + (r * w->groups + g) * 64, x + c0, MIN(ENG_W4_GROUP, k - c0), a);
        w4_group_fold(a, eng_fp16_to_float(w->scales[r * w->groups + g]), tot);
    }
    return w4_reduce8(tot);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_W4_AVX2 1

#define W4_TARGET __attribute__((target("avx2,fma,f16c")))

W4_TARGET static inline float
w4_reduce8_avx2(__m256 t)
{
    /* the order of w4_reduce8 */
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

/* Unpack 32 weights (16 bytes) as q - 8 into four vectors of 8 floats:
 * inputs 0-7, 8-15, 16-23, 24-31 of the chunk. */
W4_TARGET static inline void
w4_unpack32(const uint8_t *p, __m256 f[4])
{
    const __m128i m4 = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    __m128i b = _mm_loadu_si128((const __m128i *) p);
    __m128i lo = _mm_sub_epi8(_mm_and_si128(b, m4), eight);
    __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), m4), eight);
    f[0] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo));
    f[1] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)));
    f[2] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi));
    f[3] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)));
}

/* A last partial group through the portable code, folded into @tot with
 * the same operations as a full one. */
W4_TARGET static __m256
w4_tail_avx2(const uint8_t *qg, const float *x, size_t n, float scale, __m256 tot)
{
    float a[4][8] = { { 0 } }, t[8];
    w4_group_scalar(qg, x, n, a);
    _mm256_storeu_ps(t, tot);
    w4_group_fold(a, scale, t);
    return _mm256_loadu_ps(t);
}

/* Row @r against one token: y = W[r, :] . x */
W4_TARGET static float
w4_row1_avx2(const EngMatrix *w, size_t r, const float *x)
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP;
    const uint8_t *q = w->q4 + r * w->groups * 64;
    const uint16_t *sc = w->scales + r * w->groups;
    __m256 tot = _mm256_setzero_ps();
    for (size_t g = 0; g < full; g++) {
        const float *xg = x + g * ENG_W4_GROUP;
        const uint8_t *qg = q + g * 64;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < 4; i++) {
            __m256 f[4];
            w4_unpack32(qg + i * 16, f);
            a0 = _mm256_fmadd_ps(f[0], _mm256_loadu_ps(xg + 32 * i), a0);
            a1 = _mm256_fmadd_ps(f[1], _mm256_loadu_ps(xg + 32 * i + 8), a1);
            a2 = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xg + 32 * i + 16), a2);
            a3 = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xg + 32 * i + 24), a3);
        }
        __m256 s = _mm256_set1_ps(_cvtsh_ss(sc[g]));
        tot = _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                              tot);
    }
    if (full < w->groups) {
        size_t c0 = full * ENG_W4_GROUP;
        tot = w4_tail_avx2(q + full * 64, x + c0, k - c0, _cvtsh_ss(sc[full]), tot);
    }
    return w4_reduce8_avx2(tot);
}

/* Row @r against two tokens at once (each with the operations of
 * w4_row1_avx2): out[0] = W[r, :] . x0, out[1] = W[r, :] . x1 */
W4_TARGET static void
w4_row2_avx2(const EngMatrix *w, size_t r, const float *x0, const float *x1, float out[2])
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP;
    const uint8_t *q = w->q4 + r * w->groups * 64;
    const uint16_t *sc = w->scales + r * w->groups;
    __m256 tot0 = _mm256_setzero_ps(), tot1 = _mm256_setzero_ps();
    for (size_t g = 0; g < full; g++) {
        const float *xa = x0 + g * ENG_W4_GROUP, *xb = x1 + g * ENG_W4_GROUP;
        const uint8_t *qg = q + g * 64;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int i = 0; i < 4; i++) {
            __m256 f[4];
            w4_unpack32(qg + i * 16, f);
            a0 = _mm256_fmadd_ps(f[0], _mm256_loadu_ps(xa + 32 * i), a0);
            a1 = _mm256_fmadd_ps(f[1], _mm256_loadu_ps(xa + 32 * i + 8), a1);
            a2 = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xa + 32 * i + 16), a2);
            a3 = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xa + 32 * i + 24), a3);
            b0 = _mm256_fmadd_ps(f[0], _mm256_loadu_ps(xb + 32 * i), b0);
            b1 = _mm256_fmadd_ps(f[1], _mm256_loadu_ps(xb + 32 * i + 8), b1);
            b2 = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xb + 32 * i + 16), b2);
            b3 = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xb + 32 * i + 24), b3);
        }
        __m256 s = _mm256_set1_ps(_cvtsh_ss(sc[g]));
        tot0 = _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                               tot0);
        tot1 = _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(b0, b1), _mm256_add_ps(b2, b3)),
                               tot1);
    }
    if (full < w->groups) {
        size_t c0 = full * ENG_W4_GROUP;
        float s = _cvtsh_ss(sc[full]);
        tot0 = w4_tail_avx2(q + full * 64, x0 + c0, k - c0, s, tot0);
        tot1 = w4_tail_avx2(q + full * 64, x1 + c0, k - c0, s, tot1);
    }
    out[0] = w4_reduce8_avx2(tot0);
    out[1] = w4_reduce8_avx2(tot1);
}

W4_TARGET static void
w4_matmul_avx2(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1,
               size_t r0, size_t r1)
{
    const size_t k = w->cols, n = w->rows;
    /* y [s1 - s0, r1 - r0]: one thread owns each output row r (a column
     * of y), for all its tokens */
    #pragma omp parallel for schedule(static)
    for (size_t r = r0; r < r1; r++) {
        size_t t = s0;
        for (; t + 2 <= s1; t += 2) {
            float out[2];
            w4_row2_avx2(w, r, x + t * k, x + (t + 1) * k, out);
            y[t * n + r] = out[0];
            y[(t + 1) * n + r] = out[1];
        }
        if (t < s1) {
            y[t * n + r] = w4_row1_avx2(w, r, x + t * k);
        }
    }
}

static gboolean
have_avx2(void)
{
    static gsize once = 0;
    static gboolean yes;
    if (g_once_init_enter(&once)) {
        __builtin_cpu_init();
        yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("f16c") && g_getenv("HS_ENGINE_NO_SIMD") == NULL;
        g_once_init_leave(&once, 1);
    }
    return yes;
}
#endif

static void
w4_matmul(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r0,
          size_t r1)
{
#ifdef HAVE_W4_AVX2
    if (have_avx2()) {
        w4_matmul_avx2(x, w, y, s0, s1, r0, r1);
        return;
    }
#endif
    const size_t k = w->cols, n = w->rows;
    #pragma omp parallel for schedule(static)
    for (size_t r = r0; r < r1; r++) {
        for (size_t t = s0; t < s1; t++) {
            y[t * n + r] = w4_dot_scalar(w, r, x + t * k);
        }
    }
}

/* ---- FP32 / FP16 through OpenBLAS on a fixed tile grid ------------------ */

static void
blas_single_thread(void)
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        openblas_set_num_threads(1);
        g_once_init_leave(&once, 1);
    }
}

/*
 * @t_rows fixes the grid: tiles of tm = min(t_rows, ENG_TILE_M) rows by
 * tn = min(N, ENG_TILE_N) features.  Every tile that meets the slice is
 * computed at shape [tm, tn, K] from a copy of its rows (rows outside the
 * slice are zeros: a row of the product depends only on its own row of
 * X), then the slice's part is copied out.
 */
static void
tiled_matmul(const float *x, size_t t_rows, const EngMatrix *w, float *y, size_t s0,
             size_t s1, size_t r0, size_t r1)
{
    const size_t k = w->cols, n = w->rows;
    const size_t tm = MAX(1, MIN(t_rows, ENG_TILE_M)), tn = MIN(n, ENG_TILE_N);
    const size_t m_a = s0 / tm, m_b = (s1 - 1) / tm + 1;
    const size_t n_a = r0 / tn, n_b = (r1 - 1) / tn + 1;
    const size_t nm = m_b - m_a, tiles = nm * (n_b - n_a);
    blas_single_thread();
    #pragma omp parallel
    {
        float *xs = g_malloc(sizeof(float) * tm * k);
        float *ys = g_malloc(sizeof(float) * tm * tn);
        float *ws = NULL;
        #pragma omp for schedule(dynamic)
        for (size_t i = 0; i < tiles; i++) {
            size_t a0 = (m_a + i % nm) * tm, b0 = (n_a + i / nm) * tn;
            size_t lo = MAX(a0, s0), hi = MIN(a0 + tm, s1);
            size_t c_lo = MAX(b0, r0), c_hi = MIN(b0 + tn, r1);
            /* X tile: the slice's rows at their places, zeros elsewhere */
            memset(xs, 0, sizeof(float) * tm * k);
            memcpy(xs + (lo - a0) * k, x + lo * k, sizeof(float) * (hi - lo) * k);
            /* W tile: in place when whole FP32 rows exist, else converted */
            const float *wt;
            if (w->format == ENG_WFMT_F32 && b0 + tn <= n) {
                wt = w->f32 + b0 * k;
            } else {
                if (ws == NULL) {
                    ws = g_malloc(sizeof(float) * tn * k);
                }
                size_t b1 = MIN(b0 + tn, n);
                eng_matrix_rows_f32(w, (uint32_t) b0, (uint32_t) b1, ws);
                memset(ws + (b1 - b0) * k, 0, sizeof(float) * (b0 + tn - b1) * k);
                wt = ws;
            }
            /* ys [tm, tn] = xs [tm, K] . wt [tn, K]^T */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) tm, (int) tn, (int) k,
                        1.0f, xs, (int) k, wt, (int) k, 0.0f, ys, (int) tn);
            for (size_t t = lo; t < hi; t++) {
                memcpy(y + t * n + c_lo, ys + (t - a0) * tn + (c_lo - b0),
                       sizeof(float) * (c_hi - c_lo));
            }
        }
        g_free(xs);
        g_free(ys);
        g_free(ws);
    }
}

static void
matmul_any(const float *x, size_t t_rows, const EngMatrix *w, float *y, size_t s0, size_t s1,
           size_t r0, size_t r1)
{
    g_assert(r1 <= w->rows);
    if (s1 <= s0 || r1 <= r0) {
        return;
    }
    if (w->format == ENG_WFMT_W4A16) {
        w4_matmul(x, w, y, s0, s1, r0, r1);
    } else {
        tiled_matmul(x, t_rows, w, y, s0, s1, r0, r1);
    }
}

void
eng_matmul(const EngTensor *x, const EngMatrix *w, EngTensor *y, size_t s0, size_t s1,
           size_t r0, size_t r1)
{
    g_assert(x->cols == w->cols && y->cols == w->rows);
    g_assert(s1 <= x->rows && s1 <= y->rows);
    matmul_any(x->data, x->rows, w, y->data, s0, s1, r0, r1);
}

void
eng_matmul_w(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r0,
             size_t r1)
{
    matmul_any(x, ENG_TILE_M, w, y, s0, s1, r0, r1);
}

void
eng_matmul_f32(const float *x, size_t t, const float *w, size_t k, size_t n, float *y,
               size_t s0, size_t s1, size_t r0, size_t r1)
{
    EngMatrix m = {
        .format = ENG_WFMT_F32, .rows = (uint32_t) n, .cols = (uint32_t) k, .f32 = (float *) w,
    };
    g_assert(s1 <= t);
    matmul_any(x, t, &m, y, s0, s1, r0, r1);
}

void
eng_pad_rows(const EngTensor *x, size_t s0, size_t s1, EngTensor *xs)
{
    g_assert(xs->cols == x->cols && s1 - s0 <= xs->rows);
    memcpy(xs->data, x->data + s0 * x->cols, sizeof(float) * (s1 - s0) * x->cols);
}

void
eng_crop_rows(const EngTensor *ys, EngTensor *y, size_t s0, size_t s1, size_t c0, size_t c1)
{
    g_assert(ys->cols == y->cols && s1 - s0 <= ys->rows && c1 <= y->cols);
    for (size_t t = s0; t < s1; t++) {
        memcpy(y->data + t * y->cols + c0, ys->data + (t - s0) * ys->cols + c0,
               sizeof(float) * (c1 - c0));
    }
}

void
eng_matmul_padded(const EngTensor *x, const EngMatrix *w, EngTensor *y, size_t s0, size_t s1,
                  size_t r0, size_t r1, EngTensor *xs, EngTensor *ys)
{
    g_assert(xs->rows == ys->rows && ys->cols == w->rows);
    eng_pad_rows(x, s0, s1, xs);
    eng_matmul(xs, w, ys, 0, xs->rows, r0, r1);
    eng_crop_rows(ys, y, s0, s1, r0, r1);
}
