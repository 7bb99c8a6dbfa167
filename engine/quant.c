/*
 * quant.c - storage precisions: FP16 conversion, the W4A16 weight format
 * (construction, packing, dequantisation) and INT8 activations.  Compute
 * stays FP32; these only emulate what the device would store.
 */
#include "engine/kernels.h"
#include "engine/quant-formats.h"
#include "sim/util/mem.h"

#include <math.h>
#include <string.h>

const char *const eng_wfmt_name[] = { "w4a16", "fp16", "fp32" };
G_STATIC_ASSERT(G_N_ELEMENTS(eng_wfmt_name) == ENG_WFMT_COUNT);

uint16_t
eng_fp16_from_float(float v)
{
    uint32_t x;
    memcpy(&x, &v, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {                             /* inf or NaN */
        return (uint16_t) (sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
    }
    if (ax >= 0x477ff000u) {                             /* rounds past 65504 */
        return (uint16_t) (sign | 0x7c00u);
    }
    if (ax < 0x38800000u) {                              /* below 2^-14: subnormal */
        /* value / 2^-24 rounded to nearest even, by the FPU */
        float f;
        memcpy(&f, &ax, 4);
        return (uint16_t) (sign | (uint32_t) nearbyintf(f * 16777216.0f));
    }
    /* normal: rebias the exponent, drop 13 mantissa bits, nearest even */
    uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u);
    return (uint16_t) (sign | ((r - 0x38000000u) >> 13));
}

float
eng_fp16_to_float(uint16_t h)
{
    uint32_t s = (uint32_t) (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float f;
    if (e == 0) {
        f = ldexpf((float) m, -24);                      /* zero or subnormal */
        return s ? -f : f;
    }
    uint32_t bits = e == 31 ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112) << 23) | (m << 13));
    memcpy(&f, &bits, 4);
    return f;
}

float
eng_fp16_round(float v)
{
    return eng_fp16_to_float(eng_fp16_from_float(v));
}

void
eng_fp16_round_rows(const float *x, float *y, size_t d, size_t t0, size_t t1)
{
    #pragma omp parallel for schedule(static) if ((t1 - t0) * d >= ENG_PAR_MIN_OPS)
    for (size_t t = t0; t < t1; t++) {
        for (size_t i = 0; i < d; i++) {
            y[t * d + i] = eng_fp16_round(x[t * d + i]);
        }
    }
}

/* The W4A16 rule for one group: FP16 scale, then integers in [-8, 7]. */
static inline float
w4_scale(const float *w, size_t n)
{
    float amax = 0;
    for (size_t c = 0; c < n; c++) {
        /* what fmaxf gives (a NaN is passed over), without its library call */
        float a = fabsf(w[c]);
        amax = a > amax ? a : amax;
    }
    return eng_fp16_round(amax / 7.0f);
}

static inline int
w4_q(float w, float s)
{
    if (!(s > 0)) {
        return 0;
    }
    /* nearbyintf(w / s) clamped to [-8, 7], without the library call:
     * clamping first keeps |x| far below 2^22, where adding and taking
     * away 1.5 * 2^23 rounds to the nearest integer, ties to even, exactly
     * as nearbyintf does in the default rounding mode */
    float x = w / s;
    x = x < -9.0f ? -9.0f : (x > 8.0f ? 8.0f : x);
    x = (x + 0x1.8p23f) - 0x1.8p23f;
    return (int) (x < -8 ? -8 : (x > 7 ? 7 : x));
}

void
eng_quant_w4_inplace(float *w, size_t rows, size_t cols, size_t group)
{
    #pragma omp parallel for schedule(static) if (rows * cols * 4 >= ENG_PAR_MIN_OPS)
    for (size_t r = 0; r < rows; r++) {
        for (size_t g0 = 0; g0 < cols; g0 += group) {
            size_t n = MIN(group, cols - g0);
            float *wg = w + r * cols + g0;
            float s = w4_scale(wg, n);
            for (size_t c = 0; c < n; c++) {
                wg[c] = (float) w4_q(wg[c], s) * s;
            }
        }
    }
}

/* w4_q(w[e], s) + 8 for a whole group: a loop the compiler vectorises
 * (division, clamps and rounding are the same IEEE operations in every
 * lane; element by element it was a tenth of a checked prefill's CPU). */
ENG_ISA_BODY() void
w4_nibbles_body(const float *w, float s, uint8_t nib[ENG_W4_GROUP])
{
    if (!(s > 0)) {
        memset(nib, 8, ENG_W4_GROUP);
        return;
    }
    for (size_t e = 0; e < ENG_W4_GROUP; e++) {
        float x = w[e] / s;
        x = x < -9.0f ? -9.0f : (x > 8.0f ? 8.0f : x);
        x = (x + 0x1.8p23f) - 0x1.8p23f;
        x = x < -8.0f ? -8.0f : (x > 7.0f ? 7.0f : x);
        nib[e] = (uint8_t) ((int) x + 8);
    }
}
ENG_ISA_CLONED_VOID(, static, w4_nibbles,
                    (const float *w, float s, uint8_t nib[ENG_W4_GROUP]),
                    (w, s, nib))

/* Byte and nibble of element @e (0..127) inside its group's 64 bytes. */
static inline size_t
w4_byte(size_t e)
{
    return (e / 32) * 16 + (e % 16);
}

static inline int
w4_high(size_t e)
{
    return (e % 32) >= 16;
}

EngMatrix *
eng_matrix_new(EngWFormat format, uint32_t rows, uint32_t cols)
{
    EngMatrix *m = g_new0(EngMatrix, 1);
    m->format = format;
    m->rows = rows;
    m->cols = cols;
    size_t n = (size_t) rows * cols;
    switch (format) {
    case ENG_WFMT_F32:
        m->f32 = g_new0(float, MAX(n, 1));
        break;
    case ENG_WFMT_F16:
        /* in huge pages when large (freed by g_free: it is free()) */
        m->f16 = hs_mem_alloc0(sizeof(uint16_t) * MAX(n, 1));
        break;
    case ENG_WFMT_W4A16:
        m->groups = (cols + ENG_W4_GROUP - 1) / ENG_W4_GROUP;
        /* nibble 8 is a zero weight */
        m->q4 = hs_mem_alloc0(MAX((size_t) rows * m->groups * 64, 1));
        memset(m->q4, 0x88, (size_t) rows * m->groups * 64);
        m->scales = g_new0(uint16_t, MAX((size_t) rows * m->groups, 1));
        break;
    default:
        g_assert_not_reached();
    }
    return m;
}

void
eng_matrix_set_rows(EngMatrix *m, uint32_t r0, uint32_t r1, const float *rows_f32)
{
    const size_t cols = m->cols;
    g_assert(r0 <= r1 && r1 <= m->rows);
    if (m->format == ENG_WFMT_F32) {
        memcpy(m->f32 + (size_t) r0 * cols, rows_f32, sizeof(float) * (r1 - r0) * cols);
        return;
    }
    #pragma omp parallel for schedule(static) if ((r1 - r0) * cols * 4 >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        const float *wr = rows_f32 + (r - r0) * cols;
        if (m->format == ENG_WFMT_F16) {
            for (size_t c = 0; c < cols; c++) {
                m->f16[r * cols + c] = eng_fp16_from_float(wr[c]);
            }
            continue;
        }
        for (size_t g = 0; g < m->groups; g++) {
            size_t c0 = g * ENG_W4_GROUP, n = MIN(ENG_W4_GROUP, cols - c0);
            /* the same rule as eng_quant_w4_inplace, the reference; past
             * the end of a last partial group the nibbles hold 8 (zero) */
            float s = w4_scale(wr + c0, n);
            uint8_t nib[ENG_W4_GROUP];
            if (n == ENG_W4_GROUP) {
                w4_nibbles(wr + c0, s, nib);
            } else {
                for (size_t e = 0; e < ENG_W4_GROUP; e++) {
                    nib[e] = (uint8_t) (e < n ? w4_q(wr[c0 + e], s) + 8 : 8);
                }
            }
            uint8_t *qg = m->q4 + (r * m->groups + g) * 64;
            m->scales[r * m->groups + g] = eng_fp16_from_float(s);
            /* per 32 weights, 16 bytes: weight j low, weight j + 16 high */
            for (size_t e = 0; e < ENG_W4_GROUP; e += 32) {
                for (size_t j = 0; j < 16; j++) {
                    qg[e / 2 + j] = (uint8_t) (nib[e + j] | (nib[e + 16 + j] << 4));
                }
            }
        }
    }
}

EngMatrix *
eng_matrix_new_w4(const float *w, uint32_t rows, uint32_t cols)
{
    EngMatrix *m = eng_matrix_new(ENG_WFMT_W4A16, rows, cols);
    eng_matrix_set_rows(m, 0, rows, w);
    return m;
}

EngMatrix *
eng_matrix_new_f32(float *w, uint32_t rows, uint32_t cols)
{
    EngMatrix *m = g_new0(EngMatrix, 1);
    m->format = ENG_WFMT_F32;
    m->rows = rows;
    m->cols = cols;
    m->f32 = w;
    return m;
}

EngMatrix *
eng_matrix_new_f32_borrowed(const float *w, uint32_t rows, uint32_t cols)
{
    EngMatrix *m = eng_matrix_new_f32((float *) w, rows, cols);
    m->borrowed = TRUE;
    return m;
}

void
eng_matrix_free(EngMatrix *m)
{
    if (m == NULL) {
        return;
    }
    if (!m->borrowed) {
        g_free(m->f32);
    }
    g_free(m->f16);
    g_free(m->q4);
    g_free(m->scales);
    g_free(m);
}

size_t
eng_matrix_bytes(const EngMatrix *m)
{
    size_t n = (size_t) m->rows * m->cols;
    switch (m->format) {
    case ENG_WFMT_F32:
        return n * 4;
    case ENG_WFMT_F16:
        return n * 2;
    default:
        return (size_t) m->rows * m->groups * (64 + 2);
    }
}

void
eng_matrix_rows_f32(const EngMatrix *m, uint32_t r0, uint32_t r1, float *out)
{
    const size_t cols = m->cols;
    if (m->format == ENG_WFMT_F32) {
        memcpy(out, m->f32 + (size_t) r0 * cols, sizeof(float) * (r1 - r0) * cols);
        return;
    }
    for (size_t r = r0; r < r1; r++) {
        float *o = out + (r - r0) * cols;
        if (m->format == ENG_WFMT_F16) {
            eng_fp16_rows_f32(m->f16 + r * cols, cols, o);
            continue;
        }
        for (size_t g = 0; g < m->groups; g++) {
            size_t c0 = g * ENG_W4_GROUP, n = MIN(ENG_W4_GROUP, cols - c0);
            const uint8_t *qg = m->q4 + (r * m->groups + g) * 64;
            float s = eng_fp16_to_float(m->scales[r * m->groups + g]);
            for (size_t e = 0; e < n; e++) {
                uint8_t b = qg[w4_byte(e)];
                int nib = w4_high(e) ? b >> 4 : b & 0x0f;
                o[c0 + e] = (float) (nib - 8) * s;
            }
        }
    }
}

float
eng_quant_act_int8_scale(const float *x, size_t d, size_t t0, size_t t1)
{
    float amax = 0;
    for (size_t i = t0 * d; i < t1 * d; i++) {
        float a = fabsf(x[i]);            /* fmaxf, as in w4_scale */
        amax = a > amax ? a : amax;
    }
    return amax > 0 ? amax / 127.0f : 1.0f;
}

/* y = clamp(nearbyintf(x / scale), -127, 127) * scale over @n values, in
 * a loop the compiler vectorises: clamping to [-128, 128] first changes
 * no result and keeps |v| far below 2^22, where adding and taking away
 * 1.5 * 2^23 rounds to the nearest integer, ties to even, as nearbyintf
 * does in the default rounding mode; copysignf gives a value rounded to
 * zero its sign as nearbyintf does (-0.3 -> -0), and NaN stays NaN.  (It
 * was a serial library call per element: 1 % of a batch-64 check.) */
ENG_ISA_BODY() void
act_int8_run_body(const float *x, float *y, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i] / scale;
        float c = v < -128.0f ? -128.0f : (v > 128.0f ? 128.0f : v);
        float q = copysignf((c + 0x1.8p23f) - 0x1.8p23f, v);
        y[i] = (q < -127 ? -127 : (q > 127 ? 127 : q)) * scale;
    }
}
ENG_ISA_CLONED_VOID(, static, act_int8_run,
                    (const float *x, float *y, size_t n, float scale),
                    (x, y, n, scale))

void
eng_quant_act_int8_apply(const float *x, float *y, size_t d, size_t t0, size_t t1,
                         float scale)
{
    #pragma omp parallel for schedule(static) if ((t1 - t0) * d >= ENG_PAR_MIN_OPS)
    for (size_t t = t0; t < t1; t++) {
        act_int8_run(x + t * d, y + t * d, d, scale);
    }
}

void
eng_quant_act_int8(const float *x, float *y, size_t d, size_t t0, size_t t1)
{
    eng_quant_act_int8_apply(x, y, d, t0, t1, eng_quant_act_int8_scale(x, d, t0, t1));
}
