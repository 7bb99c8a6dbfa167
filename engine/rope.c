/*
 * rope.c - rotary position embedding, Hugging Face "rotate half"
 * convention (Llama, Qwen, Gemma): in each head the pair (i, i + hd/2)
 * turns by pos * theta^(-2i/hd).  Angles in double, per row alone.
 */
#include "engine/kernels.h"

#include <math.h>

void
eng_rope_rows(const float *x, float *y, size_t heads, size_t hd, double theta,
              size_t pos0, size_t t0, size_t t1)
{
    const size_t d = heads * hd, half = hd / 2;
    g_autofree double *freq = g_new(double, MAX(half, 1));
    for (size_t i = 0; i < half; i++) {
        freq[i] = pow(theta, -2.0 * (double) i / (double) hd);
    }
    /* y [t, heads * hd] = rotate(x [t, heads * hd], pos0 + t) */
    #pragma omp parallel for schedule(static) if ((t1 - t0) * half * (heads + 16) >= ENG_PAR_MIN_OPS)
    for (size_t t = t0; t < t1; t++) {
        double pos = (double) (pos0 + t);
        for (size_t i = 0; i < half; i++) {
            double c = cos(pos * freq[i]), s = sin(pos * freq[i]);
            for (size_t h = 0; h < heads; h++) {
                const float *xr = x + t * d + h * hd;
                float *yr = y + t * d + h * hd;
                float a = xr[i], b = xr[i + half];
                yr[i] = (float) (a * c - b * s);
                yr[i + half] = (float) (b * c + a * s);
            }
        }
    }
}
