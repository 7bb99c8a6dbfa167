/*
 * quant-matrix.c - EngQMatrix: rows of groups in one of the formats of
 * quant-formats.h, built from FP32 rows and dequantised back.
 */
#include "engine/quant-formats.h"
#include "sim/util/mem.h"

#include <string.h>

const char *const eng_qfmt_name[] = { "w8", "fp4-e0m4", "q4_0", "q8_0", "fp16" };
G_STATIC_ASSERT(G_N_ELEMENTS(eng_qfmt_name) == ENG_QFMT_COUNT);

/* Every FP16 value as an FP32 (256 KiB, built once): the FP16 weights are
 * dequantised for every token block and every decode step, and
 * eng_fp16_to_float's branches made that the check's largest cost. */
static const float *
fp16_lut(void)
{
    static float *lut;
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        float *t = g_new(float, 65536);
        for (uint32_t h = 0; h < 65536; h++) {
            t[h] = eng_fp16_to_float((uint16_t) h);
        }
        lut = t;
        g_once_init_leave(&once, 1);
    }
    return lut;
}

EngQMatrix *
eng_qmatrix_new(EngQFormat format, uint32_t rows, uint32_t cols)
{
    g_assert(format < ENG_QFMT_COUNT);
    EngQMatrix *m = g_new0(EngQMatrix, 1);
    m->format = format;
    m->rows = rows;
    m->cols = cols;
    switch (format) {
    case ENG_QFMT_FP4:
        m->group = ENG_FP4_GROUP;
        m->group_bytes = ENG_FP4_GROUP / 2;
        break;
    case ENG_QFMT_Q4_0:
        m->group = ENG_Q_GROUP;
        m->group_bytes = ENG_Q_GROUP / 2;
        break;
    case ENG_QFMT_Q8_0:
        m->group = ENG_Q_GROUP;
        m->group_bytes = ENG_Q_GROUP;
        break;
    case ENG_QFMT_W8:
        m->group = MAX(cols, 1);
        m->group_bytes = m->group;
        break;
    default:
        m->group = MAX(cols, 1);
        m->group_bytes = 2 * (size_t) m->group;
        break;
    }
    m->groups = (cols + m->group - 1) / m->group;
    /* in huge pages when large (freed by g_free: it is free()) */
    m->codes = hs_mem_alloc0((size_t) rows * m->groups * m->group_bytes + 1);
    m->scales = g_new0(uint16_t, (size_t) rows * m->groups + 1);
    if (format == ENG_QFMT_FP4) {
        m->biases = g_new0(uint16_t, (size_t) rows * m->groups + 1);
    }
    return m;
}

void
eng_qmatrix_free(EngQMatrix *m)
{
    if (m == NULL) {
        return;
    }
    g_free(m->codes);
    g_free(m->scales);
    g_free(m->biases);
    g_free(m);
}

size_t
eng_qmatrix_bytes(const EngQMatrix *m)
{
    size_t g = (size_t) m->rows * m->groups;
    size_t side = m->format == ENG_QFMT_F16 ? 0 : m->format == ENG_QFMT_FP4 ? 4 : 2;
    return g * (m->group_bytes + side);
}

/* Group @g of row @r: its elements [c0, c0 + n) and where it is stored. */
static inline void
group_at(const EngQMatrix *m, size_t r, size_t g, size_t *c0, size_t *n, size_t *at)
{
    *c0 = g * m->group;
    *n = MIN((size_t) m->group, m->cols - *c0);
    *at = r * m->groups + g;
}

/* FP32 to FP16 codes, portable. */
static void
row_f16_encode_scalar(const float *row, size_t n, uint8_t *codes)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t h = eng_fp16_from_float(row[i]);
        memcpy(codes + 2 * i, &h, 2);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* Eight at a time with F16C: round to nearest even, overflow to infinity
 * and subnormals as eng_fp16_from_float (the same codes for every non-NaN
 * float: checked over all 2^32 when this was written, and on a sample by
 * test-engine-quant-formats); a block holding a NaN goes the portable
 * way, whose NaN code is fixed.  Encoding the FP reference's weights was
 * 5 % of a checked Llama-3-8B prefill's CPU. */
__attribute__((target("avx,f16c"))) static void
row_f16_encode_f16c(const float *row, size_t n, uint8_t *codes)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(row + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            row_f16_encode_scalar(row + i, 8, codes + 2 * i);
            continue;
        }
        _mm_storeu_si128((__m128i *) (void *) (codes + 2 * i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    row_f16_encode_scalar(row + i, n - i, codes + 2 * i);
}
#endif

static void
row_f16_encode(const float *row, size_t n, uint8_t *codes)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (eng_isa() != ENG_ISA_PORTABLE) {
        row_f16_encode_f16c(row, n, codes);
        return;
    }
#endif
    row_f16_encode_scalar(row, n, codes);
}

void
eng_qmatrix_set_rows(EngQMatrix *m, uint32_t r0, uint32_t r1, const float *w)
{
    g_assert(r0 <= r1 && r1 <= m->rows);
    #pragma omp parallel for schedule(static) if ((size_t) (r1 - r0) * m->cols * 8 >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        const float *row = w + (r - r0) * m->cols;
        for (size_t g = 0; g < m->groups; g++) {
            size_t c0, n, at;
            group_at(m, r, g, &c0, &n, &at);
            uint8_t *codes = m->codes + at * m->group_bytes;
            switch (m->format) {
            case ENG_QFMT_W8:
                eng_w8_encode(row + c0, n, (int8_t *) codes, &m->scales[at]);
                break;
            case ENG_QFMT_FP4:
                eng_fp4_encode(row + c0, n, codes, &m->scales[at], &m->biases[at]);
                break;
            case ENG_QFMT_Q4_0:
                eng_q4_0_encode(row + c0, n, codes, &m->scales[at]);
                break;
            case ENG_QFMT_Q8_0:
                eng_q8_0_encode(row + c0, n, (int8_t *) codes, &m->scales[at]);
                break;
            default:
                row_f16_encode(row + c0, n, codes);
                break;
            }
        }
    }
}

/*
 * One row of Q4_0 / Q8_0 groups, each element decoded by the same
 * operations as eng_q4_0_decode / eng_q8_0_decode (so the same bits), in
 * one call: a call per 32-element group, and its FP16 scale converted
 * with branches, cost more than the arithmetic (perf of the default
 * compare: eng_qmatrix_rows_f32 + eng_q4_0_decode 15 % of the CPU).
 */
ENG_ISA_BODY(ENG_VECTORISE) void
row_q4_0_body(const uint8_t *codes, const uint16_t *scales, const float *lut, size_t cols,
         float *out)
{
    const size_t half = ENG_Q_GROUP / 2;
    for (size_t c0 = 0; c0 < cols; c0 += ENG_Q_GROUP) {
        const uint8_t *c = codes + (c0 / ENG_Q_GROUP) * half;
        const uint16_t h = scales[c0 / ENG_Q_GROUP];
        if (cols - c0 < ENG_Q_GROUP) {
            eng_q4_0_decode(c, h, cols - c0, out + c0);
            break;
        }
        const float d = lut[h];
        for (size_t j = 0; j < half; j++) {
            out[c0 + j] = (float) ((c[j] & 0x0f) - 8) * d;
            out[c0 + half + j] = (float) ((c[j] >> 4) - 8) * d;
        }
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, static, row_q4_0,
                    (const uint8_t *codes, const uint16_t *scales, const float *lut,
                     size_t cols, float *out),
                    (codes, scales, lut, cols, out))

/* FP16 codes to FP32 through the lookup table, or eight at a time with
 * F16C (an exact conversion: the same values for every non-NaN code, and
 * weights hold no NaN); the table's gathers were 15 % of the default
 * compare's CPU, on the FP reference's weights. */
static void
row_f16_lut(const uint8_t *codes, const float *lut, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, codes + 2 * i, 2);
        out[i] = lut[h];
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_ROW_F16C 1
__attribute__((target("avx,f16c"))) static void
row_f16_f16c(const uint8_t *codes, const float *lut, size_t n, float *out)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *) (const void *) (codes + 2 * i));
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    row_f16_lut(codes + 2 * i, lut, n - i, out + i);
}
#endif

void
eng_fp16_rows_f32(const uint16_t *h, size_t n, float *out)
{
#ifdef HAVE_ROW_F16C
    if (eng_isa() != ENG_ISA_PORTABLE) {
        row_f16_f16c((const uint8_t *) h, fp16_lut(), n, out);
        return;
    }
#endif
    row_f16_lut((const uint8_t *) h, fp16_lut(), n, out);
}

ENG_ISA_BODY(ENG_VECTORISE) void
row_q8_0_body(const int8_t *codes, const uint16_t *scales, const float *lut, size_t cols,
         float *out)
{
    for (size_t c0 = 0; c0 < cols; c0 += ENG_Q_GROUP) {
        const size_t n = MIN((size_t) ENG_Q_GROUP, cols - c0);
        const float d = lut[scales[c0 / ENG_Q_GROUP]];
        for (size_t i = 0; i < n; i++) {
            out[c0 + i] = (float) codes[c0 + i] * d;
        }
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, static, row_q8_0,
                    (const int8_t *codes, const uint16_t *scales, const float *lut,
                     size_t cols, float *out),
                    (codes, scales, lut, cols, out))

#ifdef HAVE_ROW_F16C
/*
 * One FP4 group decoded by table lookup: its 16 values (1 + c / 16) * s
 * + b are computed once, by the operations eng_fp4_decode performs per
 * element (the same bits), then every code picks its value.  VPERMPS
 * looks up 32-bit lanes, eight a register: two registers and a blend on
 * the code's bit 3 make the 16 entries.  (VPSHUFB looks up bytes: an
 * FP32 entry would take four lookups and two rounds of interleaving.)
 * Each code comes to its lane by a variable shift of the four bytes of
 * eight codes, lane i by 4 i: element 2j is byte j's low nibble, 2j + 1
 * its high one.  Per eight weights: a load, a shift, two lookups, a shift
 * and a blend, where the arithmetic took a conversion, two multiplies,
 * two adds and the nibbles' masks and shifts; the FP4 matvec spent three
 * times as long decoding its rows as in its dot products.
 */
__attribute__((target("avx2"))) static void
fp4_group_avx2(const uint8_t *codes, uint16_t scale, uint16_t bias, size_t n, float *out)
{
    const float s = eng_fp16_to_float(scale), b = eng_fp16_to_float(bias);
    const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
    const __m256 c16 = _mm256_set1_ps(0.0625f), one = _mm256_set1_ps(1.0f);
    const __m256 c_lo = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 c_hi = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
    /* (1.0f + c * 0.0625f) * s + b, each operation rounded as in C */
    const __m256 t_lo = _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(one, _mm256_mul_ps(c_lo, c16)),
                                                    vs), vb);
    const __m256 t_hi = _mm256_add_ps(_mm256_mul_ps(_mm256_add_ps(one, _mm256_mul_ps(c_hi, c16)),
                                                    vs), vb);
    const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32_t u;
        memcpy(&u, codes + i / 2, 4);
        const __m256i idx = _mm256_srlv_epi32(_mm256_set1_epi32((int) u), shifts);
        const __m256 lo = _mm256_permutevar8x32_ps(t_lo, idx);
        const __m256 hi = _mm256_permutevar8x32_ps(t_hi, idx);
        /* bit 3 of the code at the sign */
        _mm256_storeu_ps(out + i, _mm256_blendv_ps(lo, hi,
                                                   _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28))));
    }
    if (i < n) {
        eng_fp4_decode(codes + i / 2, scale, bias, n - i, out + i);
    }
}
#endif

void
eng_qmatrix_cols_f32(const EngQMatrix *m, uint32_t r, uint32_t c0, uint32_t n, float *out)
{
    g_assert(r < m->rows && c0 <= m->cols && n <= m->cols - c0);
    g_assert(m->format == ENG_QFMT_W8 || m->format == ENG_QFMT_F16 ||
             (c0 % m->group == 0 && (n % m->group == 0 || c0 + n == m->cols)));
    const float *lut = fp16_lut();
    const uint8_t *codes = m->codes + (size_t) r * m->groups * m->group_bytes;
    const uint16_t *scales = m->scales + (size_t) r * m->groups;
    switch (m->format) {
    case ENG_QFMT_Q4_0:
        row_q4_0(codes + (c0 / ENG_Q_GROUP) * m->group_bytes, scales + c0 / ENG_Q_GROUP, lut, n,
                 out);
        return;
    case ENG_QFMT_Q8_0:
        row_q8_0((const int8_t *) codes + c0, scales + c0 / ENG_Q_GROUP, lut, n, out);
        return;
    case ENG_QFMT_F16:
#ifdef HAVE_ROW_F16C
        /* the W4A16 kernel's AVX2 path needs F16C too (eng_isa) */
        if (eng_isa() != ENG_ISA_PORTABLE) {
            row_f16_f16c(codes + 2 * (size_t) c0, lut, n, out);
            return;
        }
#endif
        row_f16_lut(codes + 2 * (size_t) c0, lut, n, out);
        return;
    case ENG_QFMT_W8:
        eng_w8_decode((const int8_t *) codes + c0, scales[0], n, out);
        return;
    case ENG_QFMT_FP4:
        for (size_t g = c0 / m->group; g * m->group < (size_t) c0 + n; g++) {
            size_t gc0, gn, at;
            group_at(m, r, g, &gc0, &gn, &at);
#ifdef HAVE_ROW_F16C
            if (eng_isa() != ENG_ISA_PORTABLE) {
                fp4_group_avx2(m->codes + at * m->group_bytes, m->scales[at], m->biases[at],
                               MIN(gn, c0 + n - gc0), out + (gc0 - c0));
                continue;
            }
#endif
            eng_fp4_decode(m->codes + at * m->group_bytes, m->scales[at], m->biases[at],
                           MIN(gn, c0 + n - gc0), out + (gc0 - c0));
        }
        return;
    default:
        g_assert_not_reached();
    }
}

void
eng_qmatrix_rows_f32(const EngQMatrix *m, uint32_t r0, uint32_t r1, float *out)
{
    g_assert(r0 <= r1 && r1 <= m->rows);
    for (size_t r = r0; r < r1; r++) {
        eng_qmatrix_cols_f32(m, (uint32_t) r, 0, m->cols, out + (r - r0) * m->cols);
    }
}

EngQMatrix *
eng_qmatrix_new_from(EngQFormat format, const float *w, uint32_t rows, uint32_t cols)
{
    EngQMatrix *m = eng_qmatrix_new(format, rows, cols);
    eng_qmatrix_set_rows(m, 0, rows, w);
    return m;
}
