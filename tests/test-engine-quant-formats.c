/*
 * test-engine-quant-formats.c - the seed systems' numeric formats
 * (engine/quant-formats.h) against references written here from the
 * formats' definitions (mllm-NPU §3, Transformer-Lite §3.3, NPU-TTS §4, ggml's Q4_0 / Q8_0), not from the
 * engine's code: FP16 rounding in double, codes compared exactly (except
 * where the value sits within 1e-4 of a rounding tie, where float and
 * double arithmetic may rightly disagree), dequantised values and matmuls
 * within float tolerances; per-tensor INT8 activations with and without
 * shadow outliers; E0M4 against INT4; and every matmul giving the same
 * bits whatever the cut and the thread count.
 */
#include "engine/quant-formats.h"

#include <glib.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* ---- references ---------------------------------------------------------- */

/* IEEE half rounding (nearest even) of a finite value in half's range. */
static double
ref_fp16(double v)
{
    if (v == 0) {
        return 0;
    }
    int e = (int) floor(log2(fabs(v)));
    e = e < -14 ? -14 : e;                          /* subnormals: fixed ulp 2^-24 */
    double ulp = ldexp(1.0, e - 10);
    return nearbyint(v / ulp) * ulp;                /* FE_TONEAREST: ties to even */
}

/* Distance of @v from a rounding tie (x.5). */
static double
tie_dist(double v)
{
    return fabs(fabs(v - floor(v)) - 0.5);
}

/* Gaussian weights of standard deviation @sd (Box-Muller on GRand). */
static float *
gauss(GRand *r, size_t n, double sd)
{
    float *x = g_new(float, MAX(n, 1));
    for (size_t i = 0; i < n; i++) {
        double u = g_rand_double_range(r, 1e-12, 1), v = g_rand_double(r);
        x[i] = (float) (sd * sqrt(-2 * log(u)) * cos(2 * G_PI * v));
    }
    return x;
}

/* One group, any format: its reference codes (as integers: W8 / Q8_0
 * signed, FP4 / Q4_0 the stored nibble), dequantised values, and whether
 * each code sits near a tie. */
/* (W8 and FP16 groups are whole rows: up to 512 here) */
typedef struct RefGroup {
    double scale, bias;
    int code[512];
    gboolean near_tie[512];
    double deq[512];
} RefGroup;

static void
ref_group(EngQFormat f, const float *w, size_t n, RefGroup *g)
{
    memset(g, 0, sizeof(*g));
    double amax = 0, lo = n ? w[0] : 0, hi = lo, maxv = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(w[i]) > amax) {
            amax = fabs(w[i]);
            maxv = w[i];                              /* the first of largest magnitude */
        }
        lo = MIN(lo, w[i]);
        hi = MAX(hi, w[i]);
    }
    switch (f) {
    case ENG_QFMT_W8:
        /* s = fp16(max |w| / 127), q = round-even(w / s) in [-127, 127] */
        g->scale = ref_fp16((float) (amax / 127));
        for (size_t i = 0; i < n; i++) {
            double v = g->scale > 0 ? w[i] / g->scale : 0;
            g->code[i] = (int) CLAMP(nearbyint(v), -127, 127);
            g->near_tie[i] = tie_dist(v) < 1e-4;
            g->deq[i] = g->code[i] * g->scale;
        }
        break;
    case ENG_QFMT_Q8_0: {
        /* ggml: d = amax / 127 (stored as FP16), q = roundf(w / d) */
        double d = (float) (amax / 127);
        g->scale = ref_fp16(d);
        for (size_t i = 0; i < n; i++) {
            double v = d > 0 ? w[i] / d : 0;
            g->code[i] = (int) round(v);
            g->near_tie[i] = tie_dist(v) < 1e-4;
            g->deq[i] = g->code[i] * g->scale;
        }
        break;
    }
    case ENG_QFMT_Q4_0: {
        /* ggml: d = max / -8 (the signed value of largest magnitude),
         * q = min(15, trunc(w / d + 8.5)), w~ = (q - 8) * d(fp16) */
        double d = (float) (maxv / -8);
        g->scale = ref_fp16(d);
        for (size_t i = 0; i < n; i++) {
            double v = d != 0 ? w[i] / d + 8.5 : 8.5;
            g->code[i] = MIN(15, (int) v);
            g->near_tie[i] = fabs(v - floor(v)) < 1e-4 || fabs(v - floor(v)) > 1 - 1e-4;
            g->deq[i] = (g->code[i] - 8) * g->scale;
        }
        break;
    }
    case ENG_QFMT_FP4:
        /* Transformer-Lite E0M4: s = fp16(max - min), b = fp16(min - s),
         * v = (w - b) / s in [1, 2]; code = top 4 fraction bits rounded
         * by the fifth, capped at 15; w~ = (1 + code / 16) s + b */
        g->scale = ref_fp16(hi - lo);
        g->bias = ref_fp16(lo - g->scale);
        for (size_t i = 0; i < n; i++) {
            double v = g->scale > 0 ? (w[i] - g->bias) / g->scale : 1;
            double c = floor(16 * (v - 1) + 0.5);
            g->code[i] = v < 1 ? 0 : (int) MIN(15, c);
            g->near_tie[i] = tie_dist(16 * (v - 1)) < 1e-4;
            g->deq[i] = (1 + g->code[i] / 16.0) * g->scale + g->bias;
        }
        break;
    case ENG_QFMT_F16:
        for (size_t i = 0; i < n; i++) {
            g->deq[i] = ref_fp16(w[i]);
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            g->deq[i] = w[i];
        }
        break;
    }
}

/* The stored code of element @i of group @g of row @r (format layouts of
 * quant-formats.h). */
static int
stored_code(const EngQMatrix *m, size_t r, size_t g, size_t i)
{
    const uint8_t *c = m->codes + (r * m->groups + g) * m->group_bytes;
    switch (m->format) {
    case ENG_QFMT_FP4:
        return i % 2 ? c[i / 2] >> 4 : c[i / 2] & 0x0f;
    case ENG_QFMT_Q4_0:
        return i < 16 ? c[i] & 0x0f : c[i - 16] >> 4;
    default:
        return ((const int8_t *) c)[i];
    }
}

/* Codes, scales and dequantised values of every format against the
 * references, on odd sizes (partial last groups). */
static void
test_codes(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(11);
    const uint32_t rows = 7, cols = 300;             /* 300 = 2 x 128 + 44 = 9 x 32 + 12 */
    g_autofree float *w = gauss(r, (size_t) rows * cols, 0.02);
    w[5] = 0.3f;                                    /* an outlier weight */
    memset(w + cols, 0, sizeof(float) * cols);      /* an all-zero row */
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, rows, cols);
        g_autofree float *deq = g_new(float, (size_t) rows * cols);
        eng_qmatrix_rows_f32(m, 0, rows, deq);
        uint32_t checked = 0, skipped = 0;
        for (size_t row = 0; row < rows; row++) {
            for (size_t g = 0; g < m->groups; g++) {
                size_t c0 = g * m->group, n = MIN(m->group, cols - c0);
                RefGroup ref;
                ref_group(f, w + row * cols + c0, n, &ref);
                if (f < ENG_QFMT_F16) {
                    g_assert_cmpfloat(eng_fp16_to_float(m->scales[row * m->groups + g]), ==,
                                      ref.scale);
                }
                if (f == ENG_QFMT_FP4) {
                    g_assert_cmpfloat(eng_fp16_to_float(m->biases[row * m->groups + g]), ==,
                                      ref.bias);
                }
                for (size_t i = 0; i < n; i++) {
                    if (f < ENG_QFMT_F16 && !ref.near_tie[i]) {
                        g_assert_cmpint(stored_code(m, row, g, i), ==, ref.code[i]);
                        checked++;
                    } else {
                        skipped++;
                    }
                    g_assert_cmpfloat(fabs(deq[row * cols + c0 + i] - ref.deq[i]), <=,
                                      1e-6 * MAX(fabs(ref.deq[i]), 1e-3));
                }
            }
        }
        g_test_message("%s: %u codes equal, %u near a tie or float", eng_qfmt_name[f],
                       checked, skipped);
        if (f < ENG_QFMT_F16) {
            g_assert_cmpuint(skipped, <, checked / 100);
        }
        /* the all-zero row dequantises to zeros */
        for (size_t i = 0; i < cols; i++) {
            g_assert_cmpfloat(deq[cols + i], ==, 0);
        }
    }
}

/* Q4_0's scale takes the sign of the largest-magnitude element, which is
 * thus exactly -8 d (code 0); E0M4's group minimum is exactly code 0. */
static void
test_known_values(void)
{
    float w[32];
    for (int i = 0; i < 32; i++) {
        w[i] = (float) (i - 10) / 16.0f;            /* -0.625 .. 1.3125 */
    }
    uint8_t q[16];
    uint16_t d;
    eng_q4_0_encode(w, 32, q, &d);
    g_assert_cmpfloat(eng_fp16_to_float(d), ==, -1.3125 / 8);
    g_assert_cmpint(q[15] >> 4, ==, 0);             /* element 31: 1.3125 = -8 d */
    float back[32];
    eng_q4_0_decode(q, d, 32, back);
    g_assert_cmpfloat(back[31], ==, 1.3125);
    /* of two largest magnitudes, the first one's sign (ggml's strict <) */
    for (int first = 0; first < 2; first++) {
        float v[32] = { 0 };
        v[3] = first ? 1.5f : -1.5f;
        v[20] = -v[3];
        eng_q4_0_encode(v, 32, q, &d);
        g_assert_cmpfloat(eng_fp16_to_float(d), ==, v[3] / -8);
    }
    float zeros[32] = { -0.0f };
    eng_q4_0_encode(zeros, 32, q, &d);
    g_assert_cmphex(d, ==, 0x8000);                 /* 0 / -8: ggml's -0 scale */
    /* a NaN is passed over by the largest magnitude (fmaxf's rule), in the
     * vectorised search as in the scalar one, and encodes as 0 (a defined
     * conversion, which the sanitizers check); an infinity is not passed
     * over */
    for (int inf = 0; inf < 2; inf++) {
        float v[40];
        for (int i = 0; i < 40; i++) {
            v[i] = (float) (i - 20) / 8.0f;          /* largest: -2.5 */
        }
        v[7] = inf ? -INFINITY : NAN;
        int8_t c8[40];
        uint16_t s8;
        eng_w8_encode(v, 40, c8, &s8);
        g_assert_cmphex(s8, ==, eng_fp16_from_float((inf ? INFINITY : 2.5f) / 127.0f));
        if (!inf) {
            g_assert_cmpint(c8[7], ==, 0);
            g_assert_cmpint(c8[0], ==, -127);           /* -2.5 */
        }
        eng_q8_0_encode(v + 8, 32, c8, &s8);          /* no NaN: -1.5 .. 2.375 */
        g_assert_cmphex(s8, ==, eng_fp16_from_float(2.375f / 127));
        eng_q8_0_encode(v, 32, c8, &s8);
        g_assert_cmphex(s8, ==, eng_fp16_from_float((inf ? INFINITY : 2.5f) / 127));
        g_assert_cmpint(c8[7], ==, 0);
        eng_q4_0_encode(v, 32, q, &d);
        g_assert_cmphex(d, ==, eng_fp16_from_float((inf ? -INFINITY : -2.5f) / -8));
        g_assert_cmpint(q[7] & 0x0f, ==, 8);
    }
    uint8_t c[64];
    uint16_t s, b;
    eng_fp4_encode(w, 32, c, &s, &b);
    eng_fp4_decode(c, s, b, 32, back);
    g_assert_cmpint(c[0] & 0x0f, ==, 0);
    g_assert_cmpfloat(back[0], ==, -0.625);         /* 1 * s + (min - s) */
    /* range 1.9375 = 31/16: every step is 31/256, so the maximum, 16
     * steps up, is capped at code 15 */
    g_assert_cmpint(c[15] >> 4, ==, 15);
    /* the dequantisation's shift and OR: FP16 1.0 with the code as the top
     * four mantissa bits is 1 + code / 16 */
    for (uint16_t code = 0; code < 16; code++) {
        g_assert_cmpfloat(eng_fp16_to_float((uint16_t) (0x3C00 | code << 6)), ==,
                          1 + code / 16.0);
    }
}

/* ---- matmuls ------------------------------------------------------------- */

/* Y = X . W~^T in double on the dequantised weights. */
static void
ref_matmul(const float *x, const float *w, double *y, size_t t, size_t k, size_t n)
{
    for (size_t i = 0; i < t; i++) {
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t l = 0; l < k; l++) {
                acc += (double) x[i * k + l] * w[j * k + l];
            }
            y[i * n + j] = acc;
        }
    }
}

/* The matrix's row decoder gives each element the bits of its group's
 * decoder (the one-call-per-row Q4_0 / Q8_0 loops included), on a row
 * length with a partial last group. */
static void
test_rows_decode(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(15);
    const uint32_t rows = 5, cols = 300;
    g_autofree float *w = gauss(r, (size_t) rows * cols, 0.02);
    for (EngQFormat f = 0; f < ENG_QFMT_F16; f++) {
        g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, rows, cols);
        g_autofree float *deq = g_new(float, (size_t) rows * cols);
        g_autofree float *one = g_new(float, m->group);
        eng_qmatrix_rows_f32(m, 1, rows, deq);
        for (size_t row = 1; row < rows; row++) {
            for (size_t g = 0; g < m->groups; g++) {
                size_t c0 = g * m->group, n = MIN(m->group, cols - c0), at = row * m->groups + g;
                const uint8_t *c = m->codes + at * m->group_bytes;
                switch (f) {
                case ENG_QFMT_W8:
                    eng_w8_decode((const int8_t *) c, m->scales[at], n, one);
                    break;
                case ENG_QFMT_FP4:
                    eng_fp4_decode(c, m->scales[at], m->biases[at], n, one);
                    break;
                case ENG_QFMT_Q4_0:
                    eng_q4_0_decode(c, m->scales[at], n, one);
                    break;
                default:
                    eng_q8_0_decode((const int8_t *) c, m->scales[at], n, one);
                    break;
                }
                g_assert_cmpmem(deq + (row - 1) * cols + c0, sizeof(float) * n, one,
                                sizeof(float) * n);
            }
        }
    }
}

/* FP16 rows decode every non-NaN code to the value eng_fp16_to_float
 * gives, on every ISA path (F16C and the table). */
static void
test_rows_f16(void)
{
    g_autoptr(EngQMatrix) m = eng_qmatrix_new(ENG_QFMT_F16, 1, 65536 + 3);
    for (uint32_t h = 0; h < 65536 + 3; h++) {
        uint16_t v = (uint16_t) h;
        memcpy(m->codes + 2 * h, &v, 2);
    }
    g_autofree float *out = g_new(float, 65536 + 3);
    for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
        if (!eng_set_isa(isa)) {
            continue;
        }
        memset(out, 0xff, sizeof(float) * (65536 + 3));
        eng_qmatrix_rows_f32(m, 0, 1, out);
        for (uint32_t h = 0; h < 65536 + 3; h++) {
            float want = eng_fp16_to_float((uint16_t) h);
            if (!isnan(want)) {
                g_assert_cmpmem(&out[h], 4, &want, 4);
            }
        }
    }
    eng_set_isa(ENG_ISA_AUTO);
}

/* FP32 rows encode to the codes eng_fp16_from_float gives on every ISA
 * path (F16C and portable): every 65537th float bit pattern (all exponents,
 * subnormals and overflow among them), the edges of rounding and range, and
 * a NaN (its block goes the portable way). */
static void
test_encode_f16(void)
{
    static const uint32_t edges[] = {
        0x00000000, 0x80000000, 0x33000000, 0x33000001, 0x387fe000, 0x387ff000, 0x38800000,
        0x477fe000, 0x477fefff, 0x477ff000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
        0x3f801000, 0x3f803000, 0x3f800fff, 0xbf801001,
    };
    const size_t n = 65536 + G_N_ELEMENTS(edges) + 1;
    g_autofree float *w = g_new(float, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t b = i < 65536 ? (uint32_t) (i * 65537u) : i < n - 1 ? edges[i - 65536] : 0x3f800000;
        memcpy(&w[i], &b, 4);
    }
    for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
        if (!eng_set_isa(isa)) {
            continue;
        }
        g_autoptr(EngQMatrix) m = eng_qmatrix_new(ENG_QFMT_F16, 1, (uint32_t) n);
        eng_qmatrix_set_rows(m, 0, 1, w);
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, m->codes + 2 * i, 2);
            g_assert_cmphex(h, ==, eng_fp16_from_float(w[i]));
        }
    }
    eng_set_isa(ENG_ISA_AUTO);
}

/* Every format's encoder and decoder give the same bytes on every ISA
 * path eng_set_isa() selects (the vectorised helpers' AVX-512, AVX2 and
 * baseline copies, and the hand-written row kernels): rows with a tail
 * past their last whole group, large and tiny magnitudes, zeros and a NaN
 * among the weights. */
static void
test_formats_every_path(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(29);
    const uint32_t rows = 5, cols = 2 * 128 + 37;
    g_autofree float *w = gauss(r, (size_t) rows * cols, 0.05);
    w[3] = 0;
    w[cols + 7] = 1e-30f;
    w[2 * cols + 1] = 3e4f;
    w[3 * cols + 200] = NAN;
    for (uint32_t c = 0; c < 64; c++) {
        w[4 * cols + c] = 0;                       /* an all-zero group */
    }
    const size_t n = (size_t) rows * cols;
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        g_assert_true(eng_set_isa(ENG_ISA_PORTABLE));
        g_autoptr(EngQMatrix) ref = eng_qmatrix_new_from(f, w, rows, cols);
        g_autofree float *ref_out = g_new(float, n);
        eng_qmatrix_rows_f32(ref, 0, rows, ref_out);
        int paths = 0;
        for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
            if (!eng_set_isa(isa)) {
                continue;
            }
            paths++;
            g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, rows, cols);
            g_assert_cmpuint(eng_qmatrix_bytes(m), ==, eng_qmatrix_bytes(ref));
            g_assert_cmpmem(m->codes, (size_t) rows * m->groups * m->group_bytes, ref->codes,
                            (size_t) rows * ref->groups * ref->group_bytes);
            if (m->scales) {
                g_assert_cmpmem(m->scales, sizeof(uint16_t) * rows * m->groups, ref->scales,
                                sizeof(uint16_t) * rows * ref->groups);
            }
            if (m->biases) {
                g_assert_cmpmem(m->biases, sizeof(uint16_t) * rows * m->groups, ref->biases,
                                sizeof(uint16_t) * rows * ref->groups);
            }
            g_autofree float *out = g_new(float, n);
            eng_qmatrix_rows_f32(m, 0, rows, out);
            g_assert_cmpmem(out, sizeof(float) * n, ref_out, sizeof(float) * n);
        }
        g_assert_cmpint(paths, >=, 1);
    }
    eng_set_isa(ENG_ISA_AUTO);
}

/* Every A16 format: the matmul is the product with the dequantised
 * weights (FP32 sums: relative error ~1e-6). */
static void
test_matmul_a16(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(12);
    const size_t t = 13, k = 300, n = 37;
    g_autofree float *x = gauss(r, t * k, 1), *w = gauss(r, n * k, 0.05);
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, n, k);
        g_autofree float *wd = g_new(float, n * k), *y = g_new0(float, t * n);
        g_autofree double *ref = g_new(double, t * n);
        eng_qmatrix_rows_f32(m, 0, n, wd);
        EngTensor xt = { x, t, k }, yt = { y, t, n };
        eng_qmatmul(&xt, m, &yt, 0, t, 0, n);
        ref_matmul(x, wd, ref, t, k, n);
        for (size_t i = 0; i < t * n; i++) {
            g_assert_cmpfloat(fabs(y[i] - ref[i]), <, 1e-5);
        }
    }
}

/* Slices of @m's product, cut at random, equal the whole, bit for bit,
 * on 1 and 2 threads.  @a: INT8 activations (W8 only), or NULL. */
static void
check_cuts(GRand *r, const EngQMatrix *m, const EngActInt8 *a, const float *x, size_t t)
{
    const size_t k = m->cols, n = m->rows;
    g_autofree float *whole = g_new0(float, t * n), *cut = g_new0(float, t * n);
    EngTensor xt = { (float *) x, t, k }, yw = { whole, t, n }, yc = { cut, t, n };
    omp_set_num_threads(2);
    if (a) {
        eng_qmatmul_a8(&xt, a, m, &yw, 0, t, 0, n);
    } else {
        eng_qmatmul(&xt, m, &yw, 0, t, 0, n);
    }
    omp_set_num_threads(1);
    for (int trial = 0; trial < 4; trial++) {
        size_t ts = (size_t) g_rand_int_range(r, 1, (gint32) t);
        size_t rs = (size_t) g_rand_int_range(r, 1, (gint32) n);
        memset(cut, 0xff, sizeof(float) * t * n);
        const size_t bt[3] = { 0, ts, t }, br[3] = { 0, rs, n };
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 2; j++) {
                if (a) {
                    eng_qmatmul_a8(&xt, a, m, &yc, bt[i], bt[i + 1], br[j], br[j + 1]);
                } else {
                    eng_qmatmul(&xt, m, &yc, bt[i], bt[i + 1], br[j], br[j + 1]);
                }
            }
        }
        g_assert_cmpmem(whole, sizeof(float) * t * n, cut, sizeof(float) * t * n);
    }
    omp_set_num_threads(2);
}

/* Every A16 format with many tokens (the blocked AVX2 kernel: 64 rows x
 * 512 inputs, 64 tokens a call, tiles of 2 rows x 4 tokens; here 70
 * tokens, 70 rows, two blocks of inputs, a partial one and a tail of 5,
 * or no tail, when the rows are reduced eight at a time) gives the bits
 * of one token at a time and of the portable path, whole and in slices
 * (3 tokens: the few-token path, FP16 converted in registers). */
static void
test_matmul_a16_many_tokens(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(14);
    const size_t t = 70, n = 70;
    for (size_t k = 2 * 512 + 3 * 16 + 5; k >= 2 * 512 + 3 * 16; k -= 5) {
        g_autofree float *x = gauss(r, t * k, 1), *w = gauss(r, n * k, 0.05);
        g_autofree float *one = g_new0(float, t * n), *all = g_new0(float, t * n);
        EngTensor xt = { x, t, k }, ot = { one, t, n }, at = { all, t, n };
        for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
            g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, n, k);
            for (size_t i = 0; i < t; i++) {
                eng_qmatmul(&xt, m, &ot, i, i + 1, 0, n);
            }
            for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
                if (!eng_set_isa(isa)) {
                    continue;
                }
                memset(all, 0, sizeof(float) * t * n);
                eng_qmatmul(&xt, m, &at, 0, t, 0, n);
                g_assert_cmpmem(all, sizeof(float) * t * n, one, sizeof(float) * t * n);
                memset(all, 0, sizeof(float) * t * n);
                eng_qmatmul(&xt, m, &at, 0, 3, 0, 40);    /* 3 tokens: a decode's path */
                eng_qmatmul(&xt, m, &at, 3, 19, 0, 40);
                eng_qmatmul(&xt, m, &at, 19, t, 0, 40);   /* 51 tokens: a tile of 3 */
                eng_qmatmul(&xt, m, &at, 0, 30, 40, n);   /* 30 rows: 15 a thread */
                eng_qmatmul(&xt, m, &at, 30, t, 40, n);
                g_assert_cmpmem(all, sizeof(float) * t * n, one, sizeof(float) * t * n);
            }
            eng_set_isa(ENG_ISA_AUTO);
        }
    }
}

/* W8 with INT8 activations gives the portable path's bits on every path
 * (AVX-512 with VNNI: unsigned codes a + 128 against signed weights):
 * 70 tokens (past the 64 a row's dots are taken for at once), inputs with
 * and without a tail past 64, outliers set aside; and at 65535 inputs,
 * every code +-127 with signs that make the unsigned sums largest (the
 * bound the VNNI path's int32 sums are kept under). */
static void
test_matmul_a8_paths(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(16);
    const size_t ks[] = { 3 * 64, 3 * 64 + 37, 65535 };
    for (size_t i = 0; i < G_N_ELEMENTS(ks); i++) {
        const size_t k = ks[i], extreme = k > 1000, t = extreme ? 5 : 70, n = extreme ? 3 : 21;
        g_autofree float *x = gauss(r, t * k, 1), *w = gauss(r, n * k, 0.05);
        if (extreme) {
            for (size_t e = 0; e < t * k; e++) {
                /* token 0: codes -127 and 127 in turn; the others 127:
                 * against a row of -127, 255 * -127 * 65535 unsigned */
                x[e] = e >= k || e % 2 ? 1.0f : -1.0f;
            }
            for (size_t e = 0; e < n * k; e++) {
                w[e] = (e / k) % 2 ? 0.5f : -0.5f;    /* a row of -127, one of 127 */
            }
        }
        EngActInt8 a;
        eng_act_int8_params(x, k, t, !extreme, &a);
        g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(ENG_QFMT_W8, w, n, k);
        g_autofree float *want = g_new0(float, t * n), *got = g_new0(float, t * n);
        EngTensor xt = { x, t, k }, wt = { want, t, n }, gt = { got, t, n };
        g_assert_true(eng_set_isa(ENG_ISA_PORTABLE));
        g_assert_false(eng_isa_vnni());
        eng_qmatmul_a8(&xt, &a, m, &wt, 0, t, 0, n);
        if (extreme) {
            /* sum of +-127 * +-127 over k inputs, exactly */
            const float sw = eng_fp16_to_float(m->scales[0]);
            g_assert_cmpfloat(fabsf(want[0]), ==, (float) (127 * 127 * (k % 2)) * (a.scale * sw));
        }
        for (EngIsa isa = ENG_ISA_AVX2; isa < ENG_ISA_COUNT; isa++) {
            if (!eng_set_isa(isa)) {
                continue;
            }
            g_test_message("k %zu, %s%s", k, eng_isa_name(), eng_isa_vnni() ? " + VNNI" : "");
            memset(got, 0xff, sizeof(float) * t * n);
            eng_qmatmul_a8(&xt, &a, m, &gt, 0, t, 0, n);
            g_assert_cmpmem(got, sizeof(float) * t * n, want, sizeof(float) * t * n);
        }
        eng_set_isa(ENG_ISA_AUTO);
    }
}

/* Columns of a row dequantised in pieces of whole groups are the row's
 * values, in every format. */
static void
test_cols_decode(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(15);
    const size_t k = 3 * 128 + 37, n = 3;
    g_autofree float *w = gauss(r, n * k, 0.05), *whole = g_new(float, n * k);
    g_autofree float *part = g_new(float, k);
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, n, k);
        eng_qmatrix_rows_f32(m, 0, n, whole);
        for (uint32_t row = 0; row < n; row++) {
            memset(part, 0xff, sizeof(float) * k);
            eng_qmatrix_cols_f32(m, row, 0, 128, part);
            eng_qmatrix_cols_f32(m, row, 128, 256, part + 128);
            eng_qmatrix_cols_f32(m, row, 384, k - 384, part + 384);
            g_assert_cmpmem(part, sizeof(float) * k, whole + row * k, sizeof(float) * k);
        }
    }
}

static void
test_slices(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(13);
    const size_t t = 21, k = 333, n = 70;
    g_autofree float *x = gauss(r, t * k, 1), *w = gauss(r, n * k, 0.05);
    for (size_t i = 0; i < t; i++) {
        x[i * k + 17] *= 40;                        /* an outlier channel */
    }
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(f, w, n, k);
        check_cuts(r, m, NULL, x, t);
        if (f == ENG_QFMT_W8) {
            for (int shadow = 0; shadow < 2; shadow++) {
                EngActInt8 a;
                eng_act_int8_params(x, k, t, shadow, &a);
                check_cuts(r, m, &a, x, t);
            }
        }
    }
}

/* ---- per-tensor INT8 activations ----------------------------------------- */

/*
 * The shadow rule from its definition: with 2 of 512 channels set aside
 * (ceil(512 x 0.3 %)), the limit is the third-largest channel peak (here
 * the largest ordinary channel's); an
 * INT8 matmul equals the integer reference; and extracting the outliers
 * cuts the error against the FP product many times.
 */
static void
test_int8_shadow(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(14);
    const size_t t = 16, k = 512, n = 64;
    g_autofree float *x = gauss(r, t * k, 1), *w = gauss(r, n * k, 0.05);
    const size_t hot[2] = { 3, 511 };               /* 0.4 %, as many as are set aside */
    for (size_t i = 0; i < t; i++) {
        for (size_t h = 0; h < 2; h++) {
            x[i * k + hot[h]] *= 30;
        }
    }
    /* channel peaks, sorted: the reference of the limit */
    g_autofree double *peak = g_new0(double, k);
    double amax = 0;
    for (size_t i = 0; i < t * k; i++) {
        peak[i % k] = MAX(peak[i % k], fabs(x[i]));
        amax = MAX(amax, fabs(x[i]));
    }
    double p1 = 0, p2 = 0, p3 = 0;                  /* three largest */
    for (size_t c = 0; c < k; c++) {
        double v = peak[c];
        if (v > p1) {
            p3 = p2, p2 = p1, p1 = v;
        } else if (v > p2) {
            p3 = p2, p2 = v;
        } else if (v > p3) {
            p3 = v;
        }
    }
    EngActInt8 plain, shadow;
    eng_act_int8_params(x, k, t, FALSE, &plain);
    eng_act_int8_params(x, k, t, TRUE, &shadow);
    g_assert_cmpfloat(plain.scale, ==, (float) amax / 127.0f);
    g_assert_true(isinf(plain.limit));
    g_assert_cmpfloat(shadow.limit, ==, p3);
    g_assert_cmpfloat(shadow.scale, ==, (float) p3 / 127.0f);

    g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(ENG_QFMT_W8, w, n, k);
    g_autofree float *wd = g_new(float, n * k);
    eng_qmatrix_rows_f32(m, 0, n, wd);
    g_autofree double *fp = g_new(double, t * n);
    ref_matmul(x, wd, fp, t, k, n);                 /* FP activations, the same weights */
    double err[2] = { 0, 0 }, den = 0;
    for (int s = 0; s < 2; s++) {
        const EngActInt8 *a = s ? &shadow : &plain;
        g_autofree float *y = g_new0(float, t * n);
        EngTensor xt = { x, t, k }, yt = { y, t, n };
        eng_qmatmul_a8(&xt, a, m, &yt, 0, t, 0, n);
        for (size_t i = 0; i < t; i++) {
            for (size_t j = 0; j < n; j++) {
                /* integer reference: codes from the rule, outliers in double */
                double acc = 0, extra = 0;
                for (size_t c = 0; c < k; c++) {
                    double v = x[i * k + c];
                    int8_t qw = ((const int8_t *) m->codes)[j * k + c];
                    if (fabs(v) > a->limit) {
                        extra += v * wd[j * k + c];
                    } else {
                        double q = CLAMP(nearbyint(v / a->scale), -127, 127);
                        acc += q * qw;
                    }
                }
                double want = acc * a->scale * eng_fp16_to_float(m->scales[j]) + extra;
                g_assert_cmpfloat(fabs(y[i * n + j] - want), <, 1e-4 * MAX(1, fabs(want)));
                err[s] += (y[i * n + j] - fp[i * n + j]) * (y[i * n + j] - fp[i * n + j]);
                den += s ? 0 : fp[i * n + j] * fp[i * n + j];
            }
        }
    }
    g_test_message("per-tensor INT8 NMSE: plain %.3g, shadow %.3g", err[0] / den, err[1] / den);
    g_assert_cmpfloat(err[1], <, err[0] / 20);
}

/* ---- E0M4 against INT4 ---------------------------------------------------- */

/* Transformer-Lite: E0M4's dequantised weights err less than INT4's on a
 * real layer (MAE ratio 0.955, Qwen1.5-4B, Transformer-Lite §3.3).  On Gaussian
 * weights (what trained layers look like to a group of 128), against
 * W4A16's symmetric INT4 at the same group size: below 1 too. */
static void
test_fp4_vs_int4(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(15);
    const size_t rows = 64, cols = 2048;
    g_autofree float *w = gauss(r, rows * cols, 0.02);
    g_autofree float *i4 = g_memdup2(w, sizeof(float) * rows * cols);
    eng_quant_w4_inplace(i4, rows, cols, 128);
    g_autoptr(EngQMatrix) m = eng_qmatrix_new_from(ENG_QFMT_FP4, w, rows, cols);
    g_autofree float *f4 = g_new(float, rows * cols);
    eng_qmatrix_rows_f32(m, 0, rows, f4);
    double mae4 = 0, maef = 0;
    for (size_t i = 0; i < rows * cols; i++) {
        mae4 += fabs(i4[i] - w[i]);
        maef += fabs(f4[i] - w[i]);
    }
    g_test_message("MAE E0M4 / INT4 = %.3f (Transformer-Lite: 0.955)", maef / mae4);
    g_assert_cmpfloat(maef, <, mae4);
    /* and not by a miracle: both are 16-level formats */
    g_assert_cmpfloat(maef, >, 0.7 * mae4);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/engine/quant-formats/codes", test_codes);
    g_test_add_func("/engine/quant-formats/known-values", test_known_values);
    g_test_add_func("/engine/quant-formats/rows-decode", test_rows_decode);
    g_test_add_func("/engine/quant-formats/rows-f16", test_rows_f16);
    g_test_add_func("/engine/quant-formats/encode-f16", test_encode_f16);
    g_test_add_func("/engine/quant-formats/every-path", test_formats_every_path);
    g_test_add_func("/engine/quant-formats/matmul-a16", test_matmul_a16);
    g_test_add_func("/engine/quant-formats/slices", test_slices);
    g_test_add_func("/engine/quant-formats/a16-many-tokens", test_matmul_a16_many_tokens);
    g_test_add_func("/engine/quant-formats/cols-decode", test_cols_decode);
    g_test_add_func("/engine/quant-formats/int8-shadow", test_int8_shadow);
    g_test_add_func("/engine/quant-formats/a8-paths-same-bits", test_matmul_a8_paths);
    g_test_add_func("/engine/quant-formats/fp4-vs-int4", test_fp4_vs_int4);
    return g_test_run();
}
