/*
 * test-engine-kernels.c - every engine kernel against the naive double
 * references of engine/ref.c on odd sizes, with explicit tolerances
 * (NMSE bounds as in ggml's test-backend-ops, or epsilons); quantisation
 * error bounds; FP16 rounding on known values.
 */
#include "engine/kernels.h"
#include "engine/ref.h"
#include "engine/weights.h"

#include <glib.h>
#include <math.h>
#include <string.h>

static float *
randv(GRand *r, size_t n, double a)
{
    float *x = g_new(float, MAX(n, 1));
    for (size_t i = 0; i < n; i++) {
        x[i] = (float) g_rand_double_range(r, -a, a);
    }
    return x;
}

/* normalised mean squared error */
static double
nmse(const float *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return num / (den > 0 ? den : 1);
}

/* FP32 GEMM through the tiled BLAS path: 37 x 257 . (129 x 257)^T */
static void
test_matmul_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(1);
    const size_t t = 37, k = 257, n = 129;
    g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
    g_autofree float *y = g_new0(float, t * n);
    g_autofree double *ref = g_new(double, t * n);
    eng_matmul_f32(x, t, w, k, n, y, 0, t, 0, n);
    eng_ref_matmul(x, w, ref, t, k, n);
    g_assert_cmpfloat(nmse(y, ref, t * n), <, 1e-12);
}

/* W4A16 and FP16 matmuls equal the reference on the dequantised weights
 * (same weights, FP32 compute: NMSE < 1e-12). */
static void
test_matmul_formats(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(2);
    const size_t ts[] = { 1, 2, 3, 37 }, k = 257 + 128, n = 129;
    for (EngWFormat f = 0; f < ENG_WFMT_COUNT; f++) {
        for (size_t i = 0; i < G_N_ELEMENTS(ts); i++) {
            size_t t = ts[i];
            g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
            g_autoptr(EngMatrix) m = eng_matrix_new(f, (uint32_t) n, (uint32_t) k);
            eng_matrix_set_rows(m, 0, (uint32_t) n, w);
            g_autofree float *wd = g_new(float, n * k), *y = g_new0(float, t * n);
            g_autofree double *ref = g_new(double, t * n);
            eng_matrix_rows_f32(m, 0, (uint32_t) n, wd);
            EngTensor xt = { x, t, k }, yt = { y, t, n };
            eng_matmul(&xt, m, &yt, 0, t, 0, n);
            eng_ref_matmul(x, wd, ref, t, k, n);
            g_assert_cmpfloat(nmse(y, ref, t * n), <, 1e-12);
        }
    }
}

/* Every SIMD path of the W4A16 kernel gives the same bits as the portable
 * one (odd sizes: a partial last group, an odd token count, row slices);
 * paths this CPU lacks are skipped, and at least one runs. */
static void
test_matmul_w4_paths(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(7);
    const size_t t = 5, k = 2 * 128 + 44, n = 37;
    g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
    g_autoptr(EngMatrix) m = eng_matrix_new_w4(w, (uint32_t) n, (uint32_t) k);
    g_autofree float *want = g_new0(float, t * n), *got = g_new0(float, t * n);
    EngTensor xt = { x, t, k }, wt = { want, t, n }, gt = { got, t, n };
    g_assert_true(eng_set_isa(ENG_ISA_PORTABLE));
    g_assert_cmpstr(eng_isa_name(), ==, "portable");
    eng_matmul(&xt, m, &wt, 0, t, 0, n);
    int ran = 0;
    for (EngIsa isa = ENG_ISA_AVX2; isa < ENG_ISA_COUNT; isa++) {
        if (!eng_set_isa(isa)) {
            continue;
        }
        memset(got, 0, sizeof(float) * t * n);
        eng_matmul(&xt, m, &gt, 0, 3, 0, 20);                /* two slices */
        eng_matmul(&xt, m, &gt, 3, t, 0, 20);
        eng_matmul(&xt, m, &gt, 0, t, 20, n);
        g_assert_cmpmem(got, sizeof(float) * t * n, want, sizeof(float) * t * n);
        ran++;
    }
    g_assert_true(eng_set_isa(ENG_ISA_AUTO));
    g_test_message("SIMD paths checked: %d (now using %s)", ran, eng_isa_name());
}

/* A long input row (k = 8236: the W4A16 kernel takes tokens in blocks of
 * 4 to keep them in L2, and AVX-512 four at a time) gives the same bits over 23 tokens at once as one
 * token at a time, on every path. */
static void
test_matmul_w4_blocked(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(8);
    const size_t t = 23, k = 64 * 128 + 44, n = 19;
    g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
    g_autoptr(EngMatrix) m = eng_matrix_new_w4(w, (uint32_t) n, (uint32_t) k);
    g_autofree float *one = g_new0(float, t * n), *all = g_new0(float, t * n);
    EngTensor xt = { x, t, k }, ot = { one, t, n }, at = { all, t, n };
    for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
        if (!eng_set_isa(isa)) {
            continue;
        }
        for (size_t i = 0; i < t; i++) {
            eng_matmul(&xt, m, &ot, i, i + 1, 0, n);
        }
        eng_matmul(&xt, m, &at, 0, t, 0, n);
        g_assert_cmpmem(all, sizeof(float) * t * n, one, sizeof(float) * t * n);
    }
    g_assert_true(eng_set_isa(ENG_ISA_AUTO));
}

/* Many tokens (the blocked kernel: blocks of 64 rows x 2 groups, 64
 * tokens a call, tiles of 2 rows x 4 tokens; AVX2: chunks of at most 66
 * tokens packed, tiles of 3 rows x 3 tokens; here 70 tokens, 133 rows,
 * an odd number of full groups and a partial one, or whole groups only,
 * whose rows are reduced eight at a time) give the portable path's bits,
 * whole and cut into token and row slices that split the blocks and
 * tiles. */
static void
test_matmul_w4_many_tokens(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(9);
    const size_t t = 70, n = 133;
    for (size_t k = 5 * 128 + 44; k <= 6 * 128; k += 128 - 44) {
        g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
        g_autoptr(EngMatrix) m = eng_matrix_new_w4(w, (uint32_t) n, (uint32_t) k);
        g_autofree float *want = g_new0(float, t * n), *got = g_new0(float, t * n);
        EngTensor xt = { x, t, k }, wt = { want, t, n }, gt = { got, t, n };
        g_assert_true(eng_set_isa(ENG_ISA_PORTABLE));
        eng_matmul(&xt, m, &wt, 0, t, 0, n);
        for (EngIsa isa = ENG_ISA_AVX2; isa < ENG_ISA_COUNT; isa++) {
            if (!eng_set_isa(isa)) {
                continue;
            }
            memset(got, 0, sizeof(float) * t * n);
            eng_matmul(&xt, m, &gt, 0, t, 0, n);
            g_assert_cmpmem(got, sizeof(float) * t * n, want, sizeof(float) * t * n);
            memset(got, 0, sizeof(float) * t * n);
            eng_matmul(&xt, m, &gt, 0, 19, 0, 70);           /* 19 tokens: a tile of 3 */
            eng_matmul(&xt, m, &gt, 19, t, 0, 70);
            eng_matmul(&xt, m, &gt, 0, 30, 70, n);           /* 63 rows: a row alone */
            eng_matmul(&xt, m, &gt, 30, t, 70, n);
            g_assert_cmpmem(got, sizeof(float) * t * n, want, sizeof(float) * t * n);
        }
    }
    g_assert_true(eng_set_isa(ENG_ISA_AUTO));
}

/* One token's inputs at the ends of the AVX2 decode path's scaled unpack
 * (magnitudes 2^-99 to 2^80, which it takes) and past them (subnormal
 * products, sums past 2^127 once scaled by 2^28: which it must leave to
 * the unscaled unpack), mixed with ordinary values and zeros, give the
 * portable path's bits on every path. */
static void
test_matmul_w4_one_token_extremes(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(10);
    const size_t k = 3 * 128 + 20, n = 29;
    static const float mags[] = { 0.5f, 0x1p-99f, 0x1p79f, 0x1p-110f, 0x1p-130f, 0x1p100f };
    g_autofree float *w = randv(r, n * k, 0.1), *x = g_new(float, k);
    g_autoptr(EngMatrix) m = eng_matrix_new_w4(w, (uint32_t) n, (uint32_t) k);
    float want[29], got[29];
    for (size_t j = 0; j < G_N_ELEMENTS(mags) * 20; j++) {
        for (size_t i = 0; i < k; i++) {
            /* +-[1, 2) times the magnitude, some ordinary values, zeros */
            float u = (float) g_rand_double_range(r, 1, 2) * (g_rand_boolean(r) ? 1 : -1);
            x[i] = i % 11 == 5 ? 0.0f : u * (i % 7 == 3 ? 0.5f : mags[j % G_N_ELEMENTS(mags)]);
        }
        EngTensor xt = { x, 1, k }, wt = { want, 1, n }, gt = { got, 1, n };
        g_assert_true(eng_set_isa(ENG_ISA_PORTABLE));
        eng_matmul(&xt, m, &wt, 0, 1, 0, n);
        for (EngIsa isa = ENG_ISA_AVX2; isa < ENG_ISA_COUNT; isa++) {
            if (eng_set_isa(isa)) {
                eng_matmul(&xt, m, &gt, 0, 1, 0, n);
                g_assert_cmpmem(got, sizeof(got), want, sizeof(want));
            }
        }
    }
    g_assert_true(eng_set_isa(ENG_ISA_AUTO));
}

static uint32_t
float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* The synthetic weights are the same bits on every path: eng_syn_fill
 * (vectorised where the CPU has AVX2) equals a * eng_syn_unit element by
 * element, for offsets whose low 32 bits carry and lengths with a tail. */
static void
test_syn_fill_paths(void)
{
    static const uint64_t i0s[] = { 0, 5, 0xfffffffdull, (1ull << 40) + 3, UINT64_MAX - 9 };
    float got[1027];
    int ran = 0;
    for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
        if (!eng_set_isa(isa)) {
            continue;
        }
        for (size_t j = 0; j < G_N_ELEMENTS(i0s); j++) {
            uint64_t key = eng_syn_key(1 + j, j, 3);
            for (size_t n = 0; n < 8; n++) {
                eng_syn_fill(key, i0s[j], n, 0.25f, got);
                for (size_t i = 0; i < n; i++) {
                    g_assert_cmpuint(float_bits(got[i]), ==,
                                     float_bits(0.25f * eng_syn_unit(key, i0s[j] + i)));
                }
            }
            eng_syn_fill(key, i0s[j], G_N_ELEMENTS(got), 0.0313f, got);
            for (size_t i = 0; i < G_N_ELEMENTS(got); i++) {
                g_assert_cmpuint(float_bits(got[i]), ==,
                                 float_bits(0.0313f * eng_syn_unit(key, i0s[j] + i)));
            }
        }
        ran++;
    }
    g_assert_true(eng_set_isa(ENG_ISA_AUTO));
    g_test_message("paths checked: %d", ran);
}

/* The packed W4A16 format dequantises to the reference quantiser's values,
 * and the INT4 error is at most half a step per weight. */
static void
test_quant_w4_bound(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(3);
    const size_t rows = 33, cols = 257;
    g_autofree float *w = randv(r, rows * cols, 0.05), *q = g_memdup2(w, sizeof(float) * rows * cols);
    g_autofree float *packed = g_new(float, rows * cols);
    eng_quant_w4_inplace(q, rows, cols, ENG_W4_GROUP);
    g_autoptr(EngMatrix) m = eng_matrix_new_w4(w, (uint32_t) rows, (uint32_t) cols);
    eng_matrix_rows_f32(m, 0, (uint32_t) rows, packed);
    g_assert_cmpmem(q, sizeof(float) * rows * cols, packed, sizeof(float) * rows * cols);
    for (size_t rr = 0; rr < rows; rr++) {
        for (size_t g0 = 0; g0 < cols; g0 += ENG_W4_GROUP) {
            size_t g1 = MIN(cols, g0 + ENG_W4_GROUP);
            float amax = 0;
            for (size_t c = g0; c < g1; c++) {
                amax = fmaxf(amax, fabsf(w[rr * cols + c]));
            }
            /* step = amax / 7 (FP16-rounded: relative 2^-11) */
            double half_step = amax / 7.0 * (1 + 1.0 / 1024) / 2 + 1e-9;
            for (size_t c = g0; c < g1; c++) {
                g_assert_cmpfloat(fabs(q[rr * cols + c] - w[rr * cols + c]), <=, half_step);
            }
        }
    }
    g_assert_cmpuint(eng_matrix_bytes(m), ==, rows * 3 * (64 + 2));
}

/* Rounding to the INT4 grid is to the nearest step, ties to even (as
 * nearbyintf), and clamps to [-8, 7]: a group whose largest magnitude is 7
 * has step 1 exactly, so each weight's code is plain to see. */
static void
test_quant_w4_ties(void)
{
    const float w[] = { 7, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f, -6.5f, 6.5f, -7 };
    const float want[] = { 7, 0, 2, 2, 0, -2, -2, 3, -6, 6, -7 };
    const size_t n = G_N_ELEMENTS(w);
    float got[G_N_ELEMENTS(w)], inplace[G_N_ELEMENTS(w)];
    g_autoptr(EngMatrix) m = eng_matrix_new_w4(w, 1, (uint32_t) n);
    eng_matrix_rows_f32(m, 0, 1, got);
    memcpy(inplace, w, sizeof(w));
    eng_quant_w4_inplace(inplace, 1, n, ENG_W4_GROUP);
    for (size_t i = 0; i < n; i++) {
        g_assert_cmpfloat(got[i], ==, want[i]);
        g_assert_cmpfloat(inplace[i], ==, want[i]);
    }
    /* a whole group (its own vectorised path) and a last partial one:
     * the same codes, ties and clamps included, and the same as the
     * in-place reference on random values */
    const size_t wide = ENG_W4_GROUP + 40;
    g_autofree float *ww = g_new(float, 2 * wide), *wgot = g_new(float, 2 * wide);
    g_autofree float *wref = g_new(float, 2 * wide);
    GRand *rng = g_rand_new_with_seed(11);
    for (size_t i = 0; i < wide; i++) {
        ww[i] = w[i % n];
        ww[wide + i] = (float) g_rand_double_range(rng, -3, 3);
    }
    g_rand_free(rng);
    memcpy(wref, ww, sizeof(float) * 2 * wide);
    g_autoptr(EngMatrix) mw = eng_matrix_new_w4(ww, 2, (uint32_t) wide);
    eng_matrix_rows_f32(mw, 0, 2, wgot);
    eng_quant_w4_inplace(wref, 2, wide, ENG_W4_GROUP);
    for (size_t i = 0; i < wide; i++) {
        g_assert_cmpfloat(wgot[i], ==, want[i % n]);
    }
    g_assert_cmpmem(wgot, sizeof(float) * 2 * wide, wref, sizeof(float) * 2 * wide);
}

static void
test_fp16(void)
{
    g_assert_cmpfloat(eng_fp16_round(1.0f), ==, 1.0f);
    g_assert_cmpfloat(eng_fp16_round(1.0f + 1.0f / 4096), ==, 1.0f);          /* ties to even */
    g_assert_cmpfloat(eng_fp16_round(1.0f + 3.0f / 4096), ==, 1.0f + 1.0f / 1024);
    g_assert_cmpfloat(eng_fp16_round(65504.0f), ==, 65504.0f);
    g_assert_true(isinf(eng_fp16_round(65520.0f)));
    g_assert_cmpfloat(eng_fp16_round(5.9604645e-08f), ==, 5.9604645e-08f);    /* 2^-24 */
    g_assert_cmpfloat(eng_fp16_round(2.0e-08f), ==, 0.0f);
    g_assert_cmpfloat(eng_fp16_round(-3.14159f), ==, -3.140625f);
    /* every half converts to a float and back to itself */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if (((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff)) {
            continue;                                /* NaN payloads */
        }
        g_assert_cmpuint(eng_fp16_from_float(eng_fp16_to_float((uint16_t) h)), ==, h);
    }
}

static void
test_int8(void)
{
    float x[6] = { 0.5f, -1.27f, 0.01f, 1.0f, -0.004f, 0.0f }, y[6];
    eng_quant_act_int8(x, y, 3, 0, 2);
    for (int i = 0; i < 6; i++) {
        g_assert_cmpfloat(fabsf(y[i] - x[i]), <=, 1.27f / 127 / 2 + 1e-7f);
    }
    g_assert_cmpfloat(y[1], ==, -1.27f);
    g_assert_cmpfloat(eng_quant_act_int8_scale(x, 3, 0, 2), ==, 1.27f / 127.0f);
    /* the same values as nearbyintf's rounding, element by element: ties,
     * values rounding to -0, clamps, infinities, NaN, subnormals */
    const float odd[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -0.3f, -0.0f, 0.0f, 126.5f,
                          127.5f, -127.5f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN,
                          1e-42f, -1e-42f, 63.49999f, -64.50001f };
    const size_t n_odd = G_N_ELEMENTS(odd);
    float got[G_N_ELEMENTS(odd)];
    eng_quant_act_int8_apply(odd, got, n_odd, 0, 1, 1.0f);
    for (size_t i = 0; i < n_odd; i++) {
        float q = nearbyintf(odd[i]);
        float want = q < -127 ? -127 : (q > 127 ? 127 : q);
        g_assert_cmpint(isnan(got[i]), ==, isnan(want));
        g_assert_true(isnan(want) || memcmp(&got[i], &want, sizeof(float)) == 0);
    }
    GRand *rng = g_rand_new_with_seed(5);
    float rx[4096], ry[4096];
    for (size_t i = 0; i < G_N_ELEMENTS(rx); i++) {
        rx[i] = (float) g_rand_double_range(rng, -3, 3);
    }
    g_rand_free(rng);
    const float sc = 3.0f / 127;
    eng_quant_act_int8_apply(rx, ry, 64, 0, G_N_ELEMENTS(rx) / 64, sc);
    for (size_t i = 0; i < G_N_ELEMENTS(rx); i++) {
        float q = nearbyintf(rx[i] / sc);
        float want = (q < -127 ? -127 : (q > 127 ? 127 : q)) * sc;
        g_assert_true(memcmp(&ry[i], &want, sizeof(float)) == 0);
    }
}

static void
test_rmsnorm_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(4);
    const size_t t = 13, d = 257;
    g_autofree float *x = randv(r, t * d, 3), *w = randv(r, d, 1), *y = g_new(float, t * d);
    g_autofree double *ref = g_new(double, t * d);
    for (int plus = 0; plus < 2; plus++) {
        eng_rmsnorm_rows(x, w, y, d, 1e-5, plus, 0, t);
        eng_ref_rmsnorm_w(x, w, ref, t, d, 1e-5, plus);
        g_assert_cmpfloat(nmse(y, ref, t * d), <, 1e-13);
    }
}

static void
test_rope_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(5);
    const size_t t = 11, heads = 3, hd = 34;
    g_autofree float *x = randv(r, t * heads * hd, 1), *y = g_new(float, t * heads * hd);
    g_autofree double *ref = g_new(double, t * heads * hd);
    eng_rope_rows(x, y, heads, hd, 500000.0, 1000, 0, t);
    eng_ref_rope(x, ref, t, heads, hd, 500000.0, 1000);
    for (size_t i = 0; i < t * heads * hd; i++) {
        g_assert_cmpfloat_with_epsilon(y[i], ref[i], 1e-5);
    }
}

/* Attention of 19 tokens (GQA 6/2, head 17) equals the reference, whole
 * or as 7 cached positions + 12 new ones. */
static void
test_attention_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(6);
    const size_t t = 19, heads = 6, kvh = 2, hd = 17, qd = heads * hd, kd = kvh * hd, c = 7;
    g_autofree float *q = randv(r, t * qd, 1), *k = randv(r, t * kd, 1), *v = randv(r, t * kd, 1);
    g_autofree float *y = g_new0(float, t * qd), *y2 = g_new0(float, t * qd);
    g_autofree float *kc = g_new0(float, t * kd), *vc = g_new0(float, t * kd);
    g_autofree double *ref = g_new(double, t * qd);
    eng_ref_attention(q, k, v, ref, t, heads, kvh, hd);
    eng_attention_rows(q, k, v, NULL, NULL, y, heads, kvh, hd, 0, 0, t, 0, heads);
    g_assert_cmpfloat(nmse(y, ref, t * qd), <, 1e-13);
    eng_kv_store_rows(k, v, kc, vc, kd, 0, 0, c);
    eng_attention_rows(q + c * qd, k + c * kd, v + c * kd, kc, vc, y2 + c * qd, heads, kvh, hd,
                       c, 0, t - c, 0, heads);
    g_assert_cmpmem(y + c * qd, sizeof(float) * (t - c) * qd, y2 + c * qd,
                    sizeof(float) * (t - c) * qd);
}

/* Attention in the order attention.c's header comment defines, written
 * out plainly: one (token, head) at a time, scores in eight lanes. */
static void
attention_scalar(const float *q, const float *k, const float *v, const float *kc,
                 const float *vc, float *y, size_t heads, size_t kvh, size_t hd, size_t window,
                 size_t pos0, size_t t0, size_t t1, size_t h0, size_t h1)
{
    const size_t qd = heads * hd, kd = kvh * hd;
    const double scale = 1.0 / sqrt((double) hd);
    g_autofree double *s = g_new(double, pos0 + t1);
    for (size_t t = t0; t < t1; t++) {
        for (size_t h = h0; h < h1; h++) {
            size_t g = h / (heads / kvh), n = pos0 + t + 1;
            size_t j0 = window && n > window ? n - window : 0;
            double max = -INFINITY, sum = 0;
            for (size_t j = j0; j < n; j++) {
                const float *kr = j < pos0 ? kc + j * kd + g * hd : k + (j - pos0) * kd + g * hd;
                double l[8] = { 0 };
                for (size_t x = 0; x < hd; x++) {
                    l[x % 8] += (double) q[t * qd + h * hd + x] * kr[x];
                }
                s[j] = (((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))) * scale;
                max = fmax(max, s[j]);
            }
            for (size_t j = j0; j < n; j++) {
                s[j] = exp(s[j] - max);
                sum += s[j];
            }
            for (size_t x = 0; x < hd; x++) {
                double acc = 0;
                for (size_t j = j0; j < n; j++) {
                    acc += s[j] * (j < pos0 ? vc + j * kd : v + (j - pos0) * kd)[g * hd + x];
                }
                y[t * qd + h * hd + x] = (float) (acc / sum);
            }
        }
    }
}

/*
 * Rows for test_attention_paths where the order of operations shows in
 * FP32 outputs (double rounding otherwise hides in the last cast): the
 * query's inputs 0 and 1 are equal and a K row's are +-B, B up to 2^30,
 * so two lanes cancel; rows 2i and 2i + 1 have the same K, and even
 * elements of their V rows are +-B, so an element's chain cancels.  What
 * is left is the rounding of the big terms, at about 2^-24.
 */
static void
attention_hostile(GRand *r, float *q, size_t qrows, float *k, float *v, size_t rows, size_t hd,
                  size_t nh)
{
    for (size_t i = 0; i < qrows * nh; i++) {
        q[i * hd + 1] = q[i * hd];
    }
    for (size_t j = 0; j < rows; j++) {
        for (size_t h = 0; h < nh; h++) {
            float *kr = k + (j * nh + h) * hd, *vr = v + (j * nh + h) * hd;
            if (j % 2 == 1) {
                /* row j - 1's (an index x - nh * hd would wrap: UBSan) */
                const float *kp = kr - nh * hd, *vp = vr - nh * hd;
                memcpy(kr, kp, sizeof(float) * hd);
                for (size_t x = 0; x < hd; x += 2) {
                    vr[x] = -vp[x];
                }
                continue;
            }
            kr[0] = (float) g_rand_double_range(r, -0x1p30, 0x1p30);
            kr[1] = -kr[0];
            for (size_t x = 0; x < hd; x += 2) {
                vr[x] = (float) g_rand_double_range(r, -0x1p30, 0x1p30);
            }
        }
    }
}

/*
 * The attention kernel gives the bits of attention_scalar on every SIMD
 * path: head sizes 128, 100, 72 and 17 (not multiples of 8), GQA groups
 * 4, 1, 3 and 10 (the AVX2 path takes heads four at a time), no window or
 * one that starts in the cache, at the cache's end or in the new rows,
 * tokens after 0 or 37 cached positions (more than one block of 32
 * positions, the cache ending inside a block), cut in tokens and heads;
 * on random rows and on rows where the order shows (attention_hostile).
 */
static void
test_attention_paths(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(9);
    const size_t hds[] = { 128, 100, 72, 17 }, windows[] = { 0, 33, 2 }, pos0s[] = { 0, 37 };
    const size_t shapes[][2] = { { 8, 2 }, { 4, 4 }, { 6, 2 }, { 10, 1 } };
    const size_t t = 5, c = pos0s[1];
    int ran = 0;
    for (EngIsa isa = ENG_ISA_PORTABLE; isa < ENG_ISA_COUNT; isa++) {
        if (!eng_set_isa(isa)) {
            continue;
        }
        ran++;
        for (size_t a = 0; a < G_N_ELEMENTS(hds) * 2; a++) {
            for (size_t b = 0; b < G_N_ELEMENTS(shapes); b++) {
                const size_t hd = hds[a / 2], heads = shapes[b][0], kvh = shapes[b][1];
                const size_t qd = heads * hd, kd = kvh * hd;
                /* scores spread over a few units, so exp() varies; K and
                 * V of positions [0, c + t): the cache, then t new rows */
                g_autofree float *q = randv(r, t * qd, 4), *kall = randv(r, (c + t) * kd, 1);
                g_autofree float *vall = randv(r, (c + t) * kd, 1);
                g_autofree float *want = g_new0(float, t * qd), *got = g_new0(float, t * qd);
                if (a % 2 == 1) {
                    attention_hostile(r, q, t * heads / kvh, kall, vall, c + t, hd, kvh);
                }
                for (size_t w = 0; w < G_N_ELEMENTS(windows); w++) {
                    for (size_t p = 0; p < G_N_ELEMENTS(pos0s); p++) {
                        size_t pos0 = pos0s[p];
                        const float *k = kall + pos0 * kd, *v = vall + pos0 * kd;
                        attention_scalar(q, k, v, kall, vall, want, heads, kvh, hd, windows[w],
                                         pos0, 0, t, 0, heads);
                        memset(got, 0, sizeof(float) * t * qd);
                        /* whole, and as tokens [2, t) + heads cut at 1 and heads - 1 */
                        eng_attention_rows_window(q, k, v, kall, vall, got, heads, kvh, hd,
                                                  windows[w], pos0, 2, t, 0, heads);
                        eng_attention_rows_window(q, k, v, kall, vall, got, heads, kvh, hd,
                                                  windows[w], pos0, 0, 2, 0, 1);
                        eng_attention_rows_window(q, k, v, kall, vall, got, heads, kvh, hd,
                                                  windows[w], pos0, 0, 2, 1, heads - 1);
                        eng_attention_rows_window(q, k, v, kall, vall, got, heads, kvh, hd,
                                                  windows[w], pos0, 0, 2, heads - 1, heads);
                        g_assert_cmpmem(got, sizeof(float) * t * qd, want,
                                        sizeof(float) * t * qd);
                        eng_attention_rows_window(q, k, v, kall, vall, got, heads, kvh, hd,
                                                  windows[w], pos0, 0, t, 0, heads);
                        g_assert_cmpmem(got, sizeof(float) * t * qd, want,
                                        sizeof(float) * t * qd);
                    }
                }
            }
        }
    }
    g_assert_true(eng_set_isa(ENG_ISA_AUTO));
    g_assert_cmpint(ran, >=, 1);
    g_test_message("attention paths checked: %d (now using %s)", ran, eng_isa_name());
}

static void
test_act_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(7);
    const size_t t = 5, d = 129;
    g_autofree float *g = randv(r, t * d, 6), *u = randv(r, t * d, 2), *y = g_new(float, t * d);
    g_autofree double *ref = g_new(double, t * d);
    for (int act = 0; act < ENG_ACT_COUNT; act++) {
        eng_act_rows(g, u, y, d, act, 0, t, 0, d);
        eng_ref_act(g, u, ref, t * d, act);
        for (size_t i = 0; i < t * d; i++) {
            g_assert_cmpfloat_with_epsilon(y[i], ref[i], 1e-5 * (1 + fabs(ref[i])));
        }
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/engine/matmul/odd-sizes", test_matmul_odd);
    g_test_add_func("/engine/matmul/formats-vs-dequantised", test_matmul_formats);
    g_test_add_func("/engine/matmul/w4-paths-same-bits", test_matmul_w4_paths);
    g_test_add_func("/engine/matmul/w4-token-blocks-same-bits", test_matmul_w4_blocked);
    g_test_add_func("/engine/matmul/w4-many-tokens-same-bits", test_matmul_w4_many_tokens);
    g_test_add_func("/engine/matmul/w4-one-token-extremes-same-bits",
                    test_matmul_w4_one_token_extremes);
    g_test_add_func("/engine/weights/syn-fill-paths-same-bits", test_syn_fill_paths);
    g_test_add_func("/engine/quant/w4-error-bound", test_quant_w4_bound);
    g_test_add_func("/engine/quant/w4-ties-to-even", test_quant_w4_ties);
    g_test_add_func("/engine/quant/fp16-round", test_fp16);
    g_test_add_func("/engine/quant/int8", test_int8);
    g_test_add_func("/engine/rmsnorm/odd-sizes", test_rmsnorm_odd);
    g_test_add_func("/engine/rope/odd-sizes", test_rope_odd);
    g_test_add_func("/engine/attention/odd-sizes-and-cache", test_attention_odd);
    g_test_add_func("/engine/attention/paths-same-bits", test_attention_paths);
    g_test_add_func("/engine/act/odd-sizes", test_act_odd);
    return g_test_run();
}
