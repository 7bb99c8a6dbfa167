/*
 * quant-int8.c - per-tensor INT8 activations, plain (max-min symmetric)
 * or with shadow outlier extraction (the rule is in quant-formats.h).
 */
#include "engine/quant-formats.h"

#include <math.h>
#include <stdlib.h>

static int
cmp_desc(const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x < y) - (x > y);
}

void
eng_act_int8_params(const float *x, size_t d, size_t rows, gboolean shadow, EngActInt8 *out)
{
    g_autofree float *peak = g_new0(float, MAX(d, 1));
    for (size_t t = 0; t < rows; t++) {
        for (size_t c = 0; c < d; c++) {
            float a = fabsf(x[t * d + c]);
            peak[c] = a > peak[c] ? a : peak[c];        /* a NaN is passed over */
        }
    }
    qsort(peak, d, sizeof(float), cmp_desc);
    float top = d ? peak[0] : 0;
    float limit = top;
    if (shadow) {
        size_t n = (d * ENG_SHADOW_TOP_PER_MILLE + 999) / 1000;
        if (n < d && peak[n] > 0) {
            limit = peak[n];
        }
    }
    out->scale = limit > 0 ? limit / 127.0f : 1.0f;
    /* plain: nothing is beyond the largest value */
    out->limit = shadow && limit < top ? limit : INFINITY;
}

int8_t
eng_act_int8_code(float x, const EngActInt8 *a)
{
    if (fabsf(x) > a->limit) {
        return 0;                                    /* an outlier: computed in float */
    }
    float q = nearbyintf(x / a->scale);
    q = q > 127 ? 127 : q;
    return (int8_t) (q >= -127 ? q : -127);          /* a NaN becomes -127, not UB */
}
