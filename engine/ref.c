/*
 * ref.c - see ref.h.
 */
#include "engine/ref.h"

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
