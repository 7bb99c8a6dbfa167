/*
 * norm.c - RMSNorm and LayerNorm over token rows, and the element-wise row kernels that
 * go with it in a layer (residual add, QKV bias).  Each output row is
 * computed alone, so any token cut gives the same bits.
 */
#include "engine/kernels.h"

#include <math.h>

void
eng_rmsnorm_rows(const float *x, const float *w, float *y, size_t d, double eps,
                 int plus_one, size_t t0, size_t t1)
{
    /* y [t, d] = x [t, d] * inv_rms(x[t]) * g [d] */
    #pragma omp parallel for schedule(static) if ((t1 - t0) * d * 2 >= ENG_PAR_MIN_OPS)
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
eng_layernorm_rows(const float *x, const float *w, const float *b, float *y, size_t d,
                   double eps, size_t t0, size_t t1)
{
    /* y [t, d] = (x [t, d] - mean) / sqrt(var + eps) * w [d] + b [d], as
     * torch.nn.LayerNorm (biased variance) */
    #pragma omp parallel for schedule(static) if ((t1 - t0) * d * 3 >= ENG_PAR_MIN_OPS)
    for (size_t t = t0; t < t1; t++) {
        const float *xr = x + t * d;
        double sum = 0, ss = 0;
        for (size_t i = 0; i < d; i++) {
            sum += xr[i];
        }
        double mean = sum / (double) d;
        for (size_t i = 0; i < d; i++) {
            ss += ((double) xr[i] - mean) * ((double) xr[i] - mean);
        }
        double inv = 1.0 / sqrt(ss / (double) d + eps);
        for (size_t i = 0; i < d; i++) {
            float v = (float) (((double) xr[i] - mean) * inv);
            y[t * d + i] = v * (w ? w[i] : 1.0f) + (b ? b[i] : 0.0f);
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

void
eng_bias_rows(const float *x, const float *b, float *y, size_t d, size_t t0, size_t t1)
{
    for (size_t t = t0; t < t1; t++) {
        for (size_t c = 0; c < d; c++) {
            y[t * d + c] = x[t * d + c] + b[c];
        }
    }
}
