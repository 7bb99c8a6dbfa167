/*
 * ref.c - see ref.h.
 */
#include "engine/ref.h"
#include "engine/kernels.h"

#include <math.h>
#include <stdlib.h>

void
eng_ref_matmul(const float *x, const float *w, double *y, size_t t, size_t k, size_t n)
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

void
eng_ref_rmsnorm(const float *x, double *y, size_t t, size_t d, double eps)
{
    for (size_t i = 0; i < t; i++) {
        double ss = 0;
        for (size_t j = 0; j < d; j++) {
            ss += (double) x[i * d + j] * x[i * d + j];
        }
        double inv = 1.0 / sqrt(ss / (double) d + eps);
        for (size_t j = 0; j < d; j++) {
            y[i * d + j] = x[i * d + j] * inv;
        }
    }
}

void
eng_ref_attention(const float *q, const float *k, const float *v, double *y, size_t t,
                  size_t heads, size_t kv_heads, size_t hd)
{
    size_t qd = heads * hd, kd = kv_heads * hd;
    double *p = malloc(sizeof(double) * t);
    for (size_t i = 0; i < t; i++) {
        for (size_t h = 0; h < heads; h++) {
            size_t g = h / (heads / kv_heads);
            double max = -INFINITY, sum = 0;
            for (size_t j = 0; j <= i; j++) {
                double s = 0;
                for (size_t c = 0; c < hd; c++) {
                    s += (double) q[i * qd + h * hd + c] * k[j * kd + g * hd + c];
                }
                p[j] = s / sqrt((double) hd);
                max = fmax(max, p[j]);
            }
            for (size_t j = 0; j <= i; j++) {
                p[j] = exp(p[j] - max);
                sum += p[j];
            }
            for (size_t c = 0; c < hd; c++) {
                double acc = 0;
                for (size_t j = 0; j <= i; j++) {
                    acc += p[j] * v[j * kd + g * hd + c];
                }
                y[i * qd + h * hd + c] = acc / sum;
            }
        }
    }
    free(p);
}

void
eng_ref_rmsnorm_w(const float *x, const float *w, double *y, size_t t, size_t d, double eps,
                  int plus_one)
{
    eng_ref_rmsnorm(x, y, t, d, eps);
    for (size_t i = 0; i < t; i++) {
        for (size_t j = 0; j < d; j++) {
            y[i * d + j] *= plus_one ? 1.0 + w[j] : w[j];
        }
    }
}

void
eng_ref_rope(const float *x, double *y, size_t t, size_t heads, size_t hd, double theta,
             size_t pos0)
{
    for (size_t i = 0; i < t; i++) {
        for (size_t h = 0; h < heads; h++) {
            for (size_t j = 0; j < hd / 2; j++) {
                double ang = (double) (pos0 + i) / pow(theta, 2.0 * (double) j / (double) hd);
                const float *xr = x + i * heads * hd + h * hd;
                double *yr = y + i * heads * hd + h * hd;
                yr[j] = xr[j] * cos(ang) - xr[j + hd / 2] * sin(ang);
                yr[j + hd / 2] = xr[j + hd / 2] * cos(ang) + xr[j] * sin(ang);
            }
        }
    }
}

void
eng_ref_act(const float *gate, const float *up, double *y, size_t n, int act)
{
    for (size_t i = 0; i < n; i++) {
        double g = gate[i];
        double a = act == ENG_ACT_GELU_TANH
                   ? 0.5 * g * (1.0 + tanh(sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)))
                   : act == ENG_ACT_GELU ? 0.5 * g * (1.0 + erf(g / sqrt(2.0)))
                   : g / (1.0 + exp(-g));
        y[i] = a * up[i];
    }
}
