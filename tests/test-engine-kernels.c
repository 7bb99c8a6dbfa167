/*
 * test-engine-kernels.c - engine kernels against the naive double
 * references on odd sizes; slices against the whole; quantisation bounds;
 * results independent of the thread count.
 */
#include "engine/kernels.h"
#include "engine/model.h"
#include "engine/ref.h"

#include <glib.h>
#include <math.h>
#include <omp.h>
#include <string.h>

static float *
randv(GRand *r, size_t n, double a)
{
    float *x = g_new(float, n);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float) g_rand_double_range(r, -a, a);
    }
    return x;
}

/* normalised mean squared error, as ggml's test-backend-ops */
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

static void
test_matmul_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(1);
    const size_t t = 37, k = 257, n = 129;
    g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
    g_autofree float *y = g_new0(float, t * n);
    g_autofree double *ref = g_new(double, t * n);
    eng_matmul_slice(x, w, y, k, n, 0, t, 0, n);
    eng_ref_matmul(x, w, ref, t, k, n);
    g_assert_cmpfloat(nmse(y, ref, t * n), <, 1e-10);
}

/* Row cuts, token cuts and both: the same bits as the whole product. */
static void
test_matmul_slices(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(2);
    for (int trial = 0; trial < 20; trial++) {
        size_t t = (size_t) g_rand_int_range(r, 2, 90), k = (size_t) g_rand_int_range(r, 1, 300);
        size_t n = (size_t) g_rand_int_range(r, 2, 200);
        g_autofree float *x = randv(r, t * k, 1), *w = randv(r, n * k, 0.1);
        g_autofree float *whole = g_new0(float, t * n), *cut = g_new0(float, t * n);
        eng_matmul_slice(x, w, whole, k, n, 0, t, 0, n);
        size_t ts = (size_t) g_rand_int_range(r, 1, (gint32) t);
        size_t rs = (size_t) g_rand_int_range(r, 1, (gint32) n);
        eng_matmul_slice(x, w, cut, k, n, 0, ts, 0, rs);       /* hybrid: 4 blocks */
        eng_matmul_slice(x, w, cut, k, n, 0, ts, rs, n);
        eng_matmul_slice(x, w, cut, k, n, ts, t, 0, rs);
        eng_matmul_slice(x, w, cut, k, n, ts, t, rs, n);
        /* FP32 cuts: BLAS keeps each element's summation order here; the
         * simulator still compares runs under a tolerance in case another
         * BLAS build does not */
        double maxdiff = 0;
        for (size_t i = 0; i < t * n; i++) {
            maxdiff = fmax(maxdiff, fabs((double) whole[i] - cut[i]));
        }
        g_assert_cmpfloat(maxdiff, <=, 1e-5);
    }
}

static void
test_rmsnorm_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(3);
    const size_t t = 13, d = 257;
    g_autofree float *x = randv(r, t * d, 3), *y = g_new0(float, t * d);
    g_autofree double *ref = g_new(double, t * d);
    eng_rmsnorm_rows(x, NULL, y, d, 1e-5, 0, 0, 5);
    eng_rmsnorm_rows(x, NULL, y, d, 1e-5, 0, 5, t);          /* two token slices */
    eng_ref_rmsnorm(x, ref, t, d, 1e-5);
    g_assert_cmpfloat(nmse(y, ref, t * d), <, 1e-12);
}

static void
test_attention_odd(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(4);
    const size_t t = 19, heads = 6, kvh = 2, hd = 12;
    g_autofree float *q = randv(r, t * heads * hd, 1), *k = randv(r, t * kvh * hd, 1);
    g_autofree float *v = randv(r, t * kvh * hd, 1), *y = g_new0(float, t * heads * hd);
    g_autofree double *ref = g_new(double, t * heads * hd);
    /* tokens in two slices and heads in two slices */
    eng_attention_rows(q, k, v, NULL, NULL, y, heads, kvh, hd, 0, 0, 7, 0, 4);
    eng_attention_rows(q, k, v, NULL, NULL, y, heads, kvh, hd, 0, 0, 7, 4, 6);
    eng_attention_rows(q, k, v, NULL, NULL, y, heads, kvh, hd, 0, 7, t, 0, 6);
    eng_ref_attention(q, k, v, ref, t, heads, kvh, hd);
    g_assert_cmpfloat(nmse(y, ref, t * heads * hd), <, 1e-12);

    /* the same with the first 7 positions served from a KV cache */
    g_autofree float *y2 = g_new0(float, t * heads * hd);
    eng_attention_rows(q + 7 * heads * hd, k + 7 * kvh * hd, v + 7 * kvh * hd, k, v,
                       y2 + 7 * heads * hd, heads, kvh, hd, 7, 0, t - 7, 0, heads);
    for (size_t i = 7 * heads * hd; i < t * heads * hd; i++) {
        g_assert_cmpfloat(fabs(y2[i] - y[i]), <, 1e-6);
    }
}

static void
test_quant_w4_bound(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(5);
    const size_t rows = 9, cols = 300;
    g_autofree float *w = randv(r, rows * cols, 0.05);
    g_autofree float *q = g_memdup2(w, sizeof(float) * rows * cols);
    eng_quant_w4_inplace(q, rows, cols, 128);
    for (size_t i = 0; i < rows; i++) {
        for (size_t g0 = 0; g0 < cols; g0 += 128) {
            float amax = 0;
            for (size_t c = g0; c < MIN(cols, g0 + 128); c++) {
                amax = fmaxf(amax, fabsf(w[i * cols + c]));
            }
            /* error at most half a step (+ FP16 scale rounding) */
            for (size_t c = g0; c < MIN(cols, g0 + 128); c++) {
                g_assert_cmpfloat(fabs(q[i * cols + c] - w[i * cols + c]), <=,
                                  amax / 7 * 0.5 * 1.01 + 1e-7);
            }
        }
    }
    /* at most 16 distinct levels per group */
    GHashTable *levels = g_hash_table_new(g_int_hash, g_int_equal);
    for (size_t c = 0; c < 128; c++) {
        g_hash_table_add(levels, &q[c]);
    }
    g_assert_cmpuint(g_hash_table_size(levels), <=, 16);
    g_hash_table_destroy(levels);
}

static void
test_fp16_round(void)
{
    g_assert_cmpfloat(eng_fp16_round(1.0f), ==, 1.0f);
    g_assert_cmpfloat(eng_fp16_round(1.0f + 1.0f / 4096), ==, 1.0f);   /* below half ulp */
    g_assert_cmpfloat(eng_fp16_round(1e6f), ==, 65504.0f);
    g_assert_cmpfloat(fabsf(eng_fp16_round(0.1f) - 0.1f), <, 0.1f / 2048);
}

/* Synthetic weights do not depend on the thread count or the order in
 * which tensors are asked for. */
static void
test_weights_deterministic(void)
{
    EngConfig cfg = { .hidden = 64, .intermediate = 176, .layers = 2, .heads = 4,
                      .kv_heads = 2, .head_dim = 16, .vocab = 256, .rope_theta = 1e4,
                      .rms_eps = 1e-5, .seed = 9 };
    omp_set_num_threads(1);
    g_autoptr(EngModel) a = eng_model_new(&cfg);
    const EngMatrix *wa = eng_model_weight(a, 1, ENG_W_DOWN);
    omp_set_num_threads(4);
    g_autoptr(EngModel) b = eng_model_new(&cfg);
    eng_model_weight(b, 0, ENG_W_Q);                 /* another order */
    const EngMatrix *wb = eng_model_weight(b, 1, ENG_W_DOWN);
    g_assert_cmpint(memcmp(wa->q4, wb->q4, 64 * 176 / 2), ==, 0);
    g_assert_cmpint(memcmp(wa->scales, wb->scales, sizeof(float) * 64 * 2), ==, 0);
    cfg.seed = 10;
    g_autoptr(EngModel) c = eng_model_new(&cfg);
    g_assert_cmpint(memcmp(wa->q4, eng_model_weight(c, 1, ENG_W_DOWN)->q4, 64), !=, 0);
    omp_set_num_threads(2);
}

/* Packed W4A16: dequantises to exactly what the reference quantiser gives,
 * and both matmul paths (INT4 matrix-vector for few tokens, dequantised
 * blocks + BLAS for more) compute the product of those values. */
static void
test_w4_matrix(void)
{
    g_autoptr(GRand) r = g_rand_new_with_seed(6);
    const uint32_t rows = 600, cols = 300;          /* 3 groups, the last partial */
    g_autofree float *w = randv(r, (size_t) rows * cols, 0.05);
    g_autofree float *ref = g_memdup2(w, sizeof(float) * rows * cols);
    eng_quant_w4_inplace(ref, rows, cols, 128);
    EngMatrix *m = eng_matrix_new_w4(w, rows, cols);
    g_autofree float *deq = g_new(float, (size_t) rows * cols);
    eng_matrix_rows_f32(m, 0, rows, deq);
    for (size_t i = 0; i < (size_t) rows * cols; i++) {
        g_assert_cmpfloat(deq[i], ==, ref[i]);          /* -0 == +0 */
    }
    g_assert_cmpuint(rows * cols / 2, ==, 90000);       /* half a byte per weight */

    for (size_t tokens = 1; tokens <= 20; tokens += 19) {
        g_autofree float *x = randv(r, tokens * cols, 1);
        g_autofree float *y = g_new0(float, tokens * rows);
        g_autofree double *want = g_new(double, tokens * rows);
        eng_matmul_w(x, m, y, 0, tokens, 0, 300);
        eng_matmul_w(x, m, y, 0, tokens, 300, rows);
        eng_ref_matmul(x, ref, want, tokens, cols, rows);
        g_assert_cmpfloat(nmse(y, want, tokens * rows), <, 1e-10);
    }
    eng_matrix_free(m);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/engine/matmul/odd-sizes", test_matmul_odd);
    g_test_add_func("/engine/matmul/slices", test_matmul_slices);
    g_test_add_func("/engine/rmsnorm/odd-sizes", test_rmsnorm_odd);
    g_test_add_func("/engine/attention/odd-sizes-and-cache", test_attention_odd);
    g_test_add_func("/engine/quant/w4-error-bound", test_quant_w4_bound);
    g_test_add_func("/engine/quant/fp16-round", test_fp16_round);
    g_test_add_func("/engine/weights/deterministic", test_weights_deterministic);
    g_test_add_func("/engine/matmul/w4-packed", test_w4_matrix);
    return g_test_run();
}
