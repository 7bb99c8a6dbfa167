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

void
eng_matmul_slice(const float *x, const float *w, float *y, size_t k, size_t n,
                 size_t t0, size_t t1, size_t r0, size_t r1)
{
    static gsize blas_pinned = 0;
    if (g_once_init_enter(&blas_pinned)) {
        openblas_set_num_threads(ENG_BLAS_THREADS);
        g_once_init_leave(&blas_pinned, 1);
    }
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
