/*
 * quant-fp4.c - Transformer-Lite's E0M4 FP4 group format (Transformer-Lite §3.3;
 * the rule is in quant-formats.h).
 */
#include "engine/quant-formats.h"

#include <string.h>

/* The code of v = (w - b) / s: top four fraction bits of the FP32 v,
 * rounded by the fifth, capped at 15; 15 from 2 up; 0 below the group's
 * floor of 1 (and for a NaN).  Selects, not branches: the loop over a
 * group vectorises. */
static inline unsigned
fp4_code(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint32_t frac = u & 0x7fffffu;                  /* 23 fraction bits */
    unsigned code = (unsigned) (frac >> 19) + (unsigned) ((frac >> 18) & 1u);
    code = code > 15 ? 15 : code;
    code = v >= 2.0f ? 15 : code;
    return v >= 1.0f ? code : 0;
}

/* Cloned per ISA and vectorised (the same operations, so the same bits):
 * FP4 encoding was 4 % of the default compare's CPU. */
ENG_ISA_BODY(ENG_VECTORISE) void
eng_fp4_encode_body(const float *w, size_t n, uint8_t *codes, uint16_t *scale, uint16_t *bias)
{
    float lo = n ? w[0] : 0, hi = lo;
    for (size_t i = 1; i < n; i++) {
        lo = w[i] < lo ? w[i] : lo;
        hi = w[i] > hi ? w[i] : hi;
    }
    *scale = eng_fp16_from_float(hi - lo);
    float s = eng_fp16_to_float(*scale);
    *bias = eng_fp16_from_float(lo - s);
    float b = eng_fp16_to_float(*bias);
    memset(codes, 0, (n + 1) / 2);
    if (!(s > 0)) {
        return;                                     /* every code 0 */
    }
    for (size_t j = 0; j < n / 2; j++) {
        codes[j] = (uint8_t) (fp4_code((w[2 * j] - b) / s) |
                              fp4_code((w[2 * j + 1] - b) / s) << 4);
    }
    if (n % 2) {
        codes[n / 2] = (uint8_t) fp4_code((w[n - 1] - b) / s);
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_fp4_encode,
                    (const float *w, size_t n, uint8_t *codes, uint16_t *scale, uint16_t *bias),
                    (w, n, codes, scale, bias))

ENG_ISA_BODY(ENG_VECTORISE) void
eng_fp4_decode_body(const uint8_t *codes, uint16_t scale, uint16_t bias, size_t n, float *out)
{
    float s = eng_fp16_to_float(scale), b = eng_fp16_to_float(bias);
    /* the shift and the OR make the FP16 0x3C00 | c << 6, which is exactly
     * 1 + c / 16; then times s plus b (computed per element rather than
     * looked up: the same operations, and the loop vectorises) */
    for (size_t j = 0; j < n / 2; j++) {
        out[2 * j] = (1.0f + (float) (codes[j] & 0x0fu) * 0.0625f) * s + b;
        out[2 * j + 1] = (1.0f + (float) (codes[j] >> 4) * 0.0625f) * s + b;
    }
    if (n % 2) {
        out[n - 1] = (1.0f + (float) (codes[n / 2] & 0x0fu) * 0.0625f) * s + b;
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_fp4_decode,
                    (const uint8_t *codes, uint16_t scale, uint16_t bias, size_t n, float *out),
                    (codes, scale, bias, n, out))
