/*
 * matmul-q.c - matmuls over the formats of quant-formats.h, with the
 * fixed summation orders described there.
 *
 * A16: a block of QM_ROWS weight rows is dequantised to FP32 once, then
 * every token of the slice is dotted with each row, four tokens at a time
 * (four independent accumulators, so the loop is not bound by the add's
 * latency; each token's arithmetic is unchanged).  The 16 lanes are a GCC
 * vector: per-lane IEEE multiply and add, which every ISA (AVX-512, AVX2,
 * SSE) performs identically.
 *
 * A8: activation codes of the slice's rows are made once, then integer
 * dot products (exact, so any order and any vectorisation give the same
 * result), then the float outliers.
 */
#include "engine/quant-formats.h"

#include <math.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Rows dequantised at a time: 16 rows of a 4096-wide layer are 256 KiB,
 * about an L2 cache. */
#define QM_ROWS 16

#define QM_LANES 16

/* Lanes 0-7 and 8-15 as two 8-float GCC vectors: one AVX2 register each
 * (a 16-float vector is spilled to the stack by GCC on AVX2). */
typedef float qm_v8 __attribute__((vector_size(8 * sizeof(float))));

/* Lanes folded 8 + 8, 4 + 4, 2 + 2, 1 + 1. */
static inline float
fold16(float *l)
{
    for (int w = QM_LANES / 2; w >= 1; w /= 2) {
        for (int i = 0; i < w; i++) {
            l[i] = l[i] + l[i + w];
        }
    }
    return l[0];
}

#define QM_LOAD(v, p) memcpy(&(v), (p), sizeof(qm_v8))

/* y[j] = x_j . w for the @nt (1..4) rows x_j = x + j * k */
ENG_CLONES static void
dot16_x4(const float *x, const float *w, size_t k, size_t nt, float *y)
{
    qm_v8 lo0 = { 0 }, lo1 = { 0 }, lo2 = { 0 }, lo3 = { 0 };
    qm_v8 hi0 = { 0 }, hi1 = { 0 }, hi2 = { 0 }, hi3 = { 0 };
    const size_t k16 = k - k % QM_LANES;
    const float *xs[4] = { x, x + k * (nt > 1), x + 2 * k * (nt > 2), x + 3 * k * (nt > 3) };
    for (size_t i = 0; i < k16; i += QM_LANES) {
        qm_v8 wl, wh, v;
        QM_LOAD(wl, w + i);
        QM_LOAD(wh, w + i + 8);
        QM_LOAD(v, xs[0] + i);
        lo0 += v * wl;
        QM_LOAD(v, xs[0] + i + 8);
        hi0 += v * wh;
        QM_LOAD(v, xs[1] + i);
        lo1 += v * wl;
        QM_LOAD(v, xs[1] + i + 8);
        hi1 += v * wh;
        QM_LOAD(v, xs[2] + i);
        lo2 += v * wl;
        QM_LOAD(v, xs[2] + i + 8);
        hi2 += v * wh;
        QM_LOAD(v, xs[3] + i);
        lo3 += v * wl;
        QM_LOAD(v, xs[3] + i + 8);
        hi3 += v * wh;
    }
    float l[4][QM_LANES];
    const qm_v8 *acc[4][2] = { { &lo0, &hi0 }, { &lo1, &hi1 }, { &lo2, &hi2 }, { &lo3, &hi3 } };
    for (size_t j = 0; j < nt; j++) {
        memcpy(l[j], acc[j][0], sizeof(qm_v8));
        memcpy(l[j] + 8, acc[j][1], sizeof(qm_v8));
        /* the tail (k % 16 inputs) goes to lanes 0.. of the same sums */
        for (size_t i = k16; i < k; i++) {
            l[j][i - k16] = l[j][i - k16] + xs[j][i] * w[i];
        }
        y[j] = fold16(l[j]);
    }
}

/* y = x . w for one token: dot16_x4's arithmetic with one accumulator. */
ENG_CLONES static float
dot16_x1(const float *x, const float *w, size_t k)
{
    qm_v8 lo = { 0 }, hi = { 0 };
    const size_t k16 = k - k % QM_LANES;
    for (size_t i = 0; i < k16; i += QM_LANES) {
        qm_v8 wl, wh, v;
        QM_LOAD(wl, w + i);
        QM_LOAD(wh, w + i + 8);
        QM_LOAD(v, x + i);
        lo += v * wl;
        QM_LOAD(v, x + i + 8);
        hi += v * wh;
    }
    float l[QM_LANES];
    memcpy(l, &lo, sizeof(qm_v8));
    memcpy(l + 8, &hi, sizeof(qm_v8));
    for (size_t i = k16; i < k; i++) {
        l[i - k16] = l[i - k16] + x[i] * w[i];
    }
    return fold16(l);
}

void
eng_qmatmul(const EngTensor *x, const EngQMatrix *w, EngTensor *y, size_t s0, size_t s1,
            size_t r0, size_t r1)
{
    g_assert(x->cols == w->cols && y->cols == w->rows && r1 <= w->rows);
    g_assert(s1 <= x->rows && s1 <= y->rows);
    if (s1 <= s0 || r1 <= r0) {
        return;
    }
    /* a few tokens (decode): one row at a time, dotted while it is in L1
     * (a block of dequantised rows is written to L2 and read back once) */
    const size_t rows = s1 - s0 <= 4 ? 1 : QM_ROWS;
    const size_t k = w->cols, n = w->rows, blocks = (r1 - r0 + rows - 1) / rows;
    #pragma omp parallel if (blocks > 1 && (s1 - s0) * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
    {
        float *wr = g_malloc(sizeof(float) * rows * MAX(k, 1));
        #pragma omp for schedule(static)
        for (size_t b = 0; b < blocks; b++) {
            size_t a0 = r0 + b * rows, a1 = MIN(a0 + rows, r1);
            eng_qmatrix_rows_f32(w, (uint32_t) a0, (uint32_t) a1, wr);
            for (size_t t = s0; t < s1; t += 4) {
                size_t nt = MIN(4, s1 - t);
                for (size_t r = a0; r < a1; r++) {
                    float out[4];
                    if (nt == 1) {
                        out[0] = dot16_x1(x->data + t * k, wr + (r - a0) * k, k);
                    } else {
                        dot16_x4(x->data + t * k, wr + (r - a0) * k, k, nt, out);
                    }
                    for (size_t j = 0; j < nt; j++) {
                        y->data[(t + j) * n + r] = out[j];
                    }
                }
            }
        }
        g_free(wr);
    }
}

/* sum of a[i] * b[i], exact in int32 (|sum| <= 127 * 127 * k < 2^31 for
 * k < 133,000 inputs) */
ENG_VECTORISE ENG_CLONES static int32_t
dot_i8(const int8_t *a, const int8_t *b, size_t k)
{
    int32_t acc = 0;
    for (size_t i = 0; i < k; i++) {
        acc += (int32_t) a[i] * (int32_t) b[i];
    }
    return acc;
}

void
eng_qmatmul_a8(const EngTensor *x, const EngActInt8 *a, const EngQMatrix *w, EngTensor *y,
               size_t s0, size_t s1, size_t r0, size_t r1)
{
    g_assert(w->format == ENG_QFMT_W8 && w->cols < 133000);
    g_assert(x->cols == w->cols && y->cols == w->rows && r1 <= w->rows);
    g_assert(s1 <= x->rows && s1 <= y->rows);
    if (s1 <= s0 || r1 <= r0) {
        return;
    }
    const size_t k = w->cols, n = w->rows, nt = s1 - s0;
    /* codes of the slice's rows; outliers listed per row (index order) */
    g_autofree int8_t *q = g_new(int8_t, nt * k);
    g_autofree uint32_t *n_out = g_new0(uint32_t, nt);
    g_autoptr(GArray) outl = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_autofree uint32_t *first = g_new0(uint32_t, nt);
    for (size_t t = 0; t < nt; t++) {
        const float *xr = x->data + (s0 + t) * k;
        first[t] = outl->len;
        for (size_t c = 0; c < k; c++) {
            q[t * k + c] = eng_act_int8_code(xr[c], a);
            if (fabsf(xr[c]) > a->limit) {
                uint32_t c32 = (uint32_t) c;
                g_array_append_val(outl, c32);
                n_out[t]++;
            }
        }
    }
    const uint32_t *oi = (const uint32_t *) outl->data;
    #pragma omp parallel for schedule(static) if (nt * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        const int8_t *wq = (const int8_t *) w->codes + r * w->group_bytes;
        const float sw = eng_fp16_to_float(w->scales[r]);
        const float sxw = a->scale * sw;
        for (size_t t = 0; t < nt; t++) {
            float v = (float) dot_i8(q + t * k, wq, k) * sxw;
            if (n_out[t]) {
                const float *xr = x->data + (s0 + t) * k;
                float sh = 0;
                for (uint32_t j = first[t]; j < first[t] + n_out[t]; j++) {
                    sh = sh + xr[oi[j]] * ((float) wq[oi[j]] * sw);
                }
                v = v + sh;
            }
            y->data[(s0 + t) * n + r] = v;
        }
    }
}
