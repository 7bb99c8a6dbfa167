/*
 * rope.c - rotary position embedding on the first rot dimensions of each
 * head (all of them but for Phi-2's partial_rotary_factor and ChatGLM2's
 * half), in the Hugging Face "rotate half" layout (Llama, Qwen, Gemma,
 * Phi: the pair (i, i + rot/2)) or interleaved pairs (ChatGLM2's
 * apply_rotary_pos_emb: (2i, 2i + 1)); pair i turns by
 * pos * theta^(-2i/rot).  Angles in double, per row alone.
 */
#include "engine/kernels.h"

#include <math.h>
#include <string.h>

void
eng_rope_rows(const float *x, float *y, size_t heads, size_t hd, double theta,
              size_t pos0, size_t t0, size_t t1)
{
    eng_rope_rows_part(x, y, heads, hd, hd, FALSE, theta, NULL, pos0, t0, t1);
}

/* Llama 3.1's frequency rescaling: long wavelengths slowed by factor,
 * short ones kept, a smooth blend between. */
static double
llama3_freq(double f, const EngRopeScale *s)
{
    double wavelen = 2 * G_PI / f;
    double low_wavelen = s->original_max_pos / s->low_freq_factor;
    double high_wavelen = s->original_max_pos / s->high_freq_factor;
    if (wavelen < high_wavelen) {
        return f;
    }
    if (wavelen > low_wavelen) {
        return f / s->factor;
    }
    double smooth = (s->original_max_pos / wavelen - s->low_freq_factor) /
                    (s->high_freq_factor - s->low_freq_factor);
    return (1 - smooth) * f / s->factor + smooth * f;
}

void
eng_rope_rows_part(const float *x, float *y, size_t heads, size_t hd, size_t rot,
                   int interleaved, double theta, const EngRopeScale *scale, size_t pos0,
                   size_t t0, size_t t1)
{
    g_assert(rot % 2 == 0 && rot <= hd);
    const size_t d = heads * hd, half = rot / 2;
    /* pair i of the rotated part: (i, i + rot/2) rotate-half, (2i, 2i + 1)
     * interleaved; its frequency theta^(-2i/rot) either way */
    const size_t stride = interleaved ? 2 : 1, other = interleaved ? 1 : half;
    g_autofree double *freq = g_new(double, MAX(half, 1));
    for (size_t i = 0; i < half; i++) {
        freq[i] = pow(theta, -2.0 * (double) i / (double) rot);
        if (scale && scale->factor > 0) {
            freq[i] = llama3_freq(freq[i], scale);
        }
    }
    if (x != y && rot < hd) {
        /* the part of each head that is not rotated passes through */
        for (size_t t = t0; t < t1; t++) {
            for (size_t h = 0; h < heads; h++) {
                memcpy(y + t * d + h * hd + rot, x + t * d + h * hd + rot,
                       sizeof(float) * (hd - rot));
            }
        }
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
                size_t i0 = i * stride, i1 = i0 + other;
                float a = xr[i0], b = xr[i1];
                yr[i0] = (float) (a * c - b * s);
                yr[i1] = (float) (b * c + a * s);
            }
        }
    }
}
