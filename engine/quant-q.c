/*
 * quant-q.c - the integer group formats: llama.cpp's Q4_0 and Q8_0
 * (ggml-quants.c, quantize_row_q4_0_ref / quantize_row_q8_0_ref: the same
 * float operations in the same order, so the codes are ggml's) and the
 * per-row INT8 of W8A16 / W8A8 (rules in quant-formats.h).
 */
#include "engine/quant-formats.h"

#include <math.h>
#include <string.h>

/* max |w[i]| with a NaN passed over (fmaxf's value): the magnitudes' bit
 * patterns compared as integers, the same order for non-negative floats,
 * in a loop that vectorises (GCC keeps a float max with a NaN rule
 * scalar: the W8 encoder spent half its time there); a NaN's pattern is
 * above every number's, and then the float loop passes it over. */
static inline float
abs_max(const float *w, size_t n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &w[i], sizeof(b));
        b &= 0x7fffffffu;
        m = b > m ? b : m;
    }
    if (m > 0x7f800000u) {
        float amax = 0;
        for (size_t i = 0; i < n; i++) {
            float a = fabsf(w[i]);
            amax = a > amax ? a : amax;
        }
        return amax;
    }
    float a;
    memcpy(&a, &m, sizeof(a));
    return a;
}

/*
 * ggml's operations, in loops that vectorise: the largest magnitude by a
 * max over the group, then the first element that has it (ggml keeps the
 * first of equal magnitudes, and its sign); the codes of a whole group
 * into a buffer, then packed.  The scalar loop with a branch per element
 * was a twentieth of the default compare's CPU, making its Q4_0 weights.
 */
ENG_ISA_BODY(ENG_VECTORISE) void
eng_q4_0_encode_body(const float *w, size_t n, uint8_t *codes, uint16_t *scale)
{
    /* a NaN is passed over, as ggml's amax < |w| does */
    const float amax = abs_max(w, n);
    float max = 0;
    for (size_t i = 0; amax > 0 && i < n; i++) {
        if (fabsf(w[i]) == amax) {
            max = w[i];
            break;
        }
    }
    const float d = max / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    *scale = eng_fp16_from_float(d);
    /* absent elements: code 8 = 0 */
    uint8_t q[ENG_Q_GROUP];
    memset(q, 8, sizeof(q));
    for (size_t i = 0; i < n; i++) {
        /* ggml: MIN(15, (int8_t) (x * id + 8.5f)), x * id in [-8, 8]; a
         * NaN (or an infinity times a zero id) is code 8, the value 0, not
         * an undefined conversion */
        float v = w[i] * id + 8.5f;
        int c = (int) (v == v ? v : 8.5f);
        q[i] = (uint8_t) (c > 15 ? 15 : c);
    }
    for (size_t j = 0; j < ENG_Q_GROUP / 2; j++) {
        codes[j] = (uint8_t) (q[j] | q[j + ENG_Q_GROUP / 2] << 4);
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_q4_0_encode,
                    (const float *w, size_t n, uint8_t *codes, uint16_t *scale),
                    (w, n, codes, scale))

ENG_ISA_BODY(ENG_VECTORISE) void
eng_q4_0_decode_body(const uint8_t *codes, uint16_t scale, size_t n, float *out)
{
    const float d = eng_fp16_to_float(scale);
    const size_t half = ENG_Q_GROUP / 2;
    for (size_t j = 0; j < MIN(n, half); j++) {
        out[j] = (float) ((codes[j] & 0x0f) - 8) * d;
    }
    for (size_t j = half; j < n; j++) {
        out[j] = (float) ((codes[j - half] >> 4) - 8) * d;
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_q4_0_decode,
                    (const uint8_t *codes, uint16_t scale, size_t n, float *out),
                    (codes, scale, n, out))

ENG_ISA_BODY(ENG_VECTORISE) void
eng_q8_0_encode_body(const float *w, size_t n, int8_t *codes, uint16_t *scale)
{
    const float d = abs_max(w, n) / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    *scale = eng_fp16_from_float(d);
    for (size_t i = 0; i < n; i++) {
        /* a NaN is 0, not an undefined conversion */
        float v = roundf(w[i] * id);
        codes[i] = (int8_t) (v == v ? v : 0);
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_q8_0_encode,
                    (const float *w, size_t n, int8_t *codes, uint16_t *scale),
                    (w, n, codes, scale))

ENG_ISA_BODY(ENG_VECTORISE) void
eng_q8_0_decode_body(const int8_t *codes, uint16_t scale, size_t n, float *out)
{
    const float d = eng_fp16_to_float(scale);
    for (size_t i = 0; i < n; i++) {
        out[i] = (float) codes[i] * d;
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_q8_0_decode,
                    (const int8_t *codes, uint16_t scale, size_t n, float *out),
                    (codes, scale, n, out))

/* Vectorised and cloned per ISA (the same operations, so the same bits):
 * it encoded every weight of the default compare's W8A8 policy with a
 * library call for each element's max and rounding (5 % of its CPU); the
 * scale's test is out of the loop and the clamps are selects, so the
 * rounding loop vectorises too. */
ENG_ISA_BODY(ENG_VECTORISE) void
eng_w8_encode_body(const float *w, size_t n, int8_t *codes, uint16_t *scale)
{
    /* as W4A16 (quant.c): the scale is rounded to FP16 first, then used */
    *scale = eng_fp16_from_float(abs_max(w, n) / 127.0f);
    const float s = eng_fp16_to_float(*scale);
    if (!(s > 0)) {
        memset(codes, 0, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        float q = nearbyintf(w[i] / s);
        q = q == q ? q : 0;              /* a NaN is 0, not an undefined conversion */
        q = q < -127 ? -127 : q;
        q = q > 127 ? 127 : q;
        codes[i] = (int8_t) (int) q;
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_w8_encode,
                    (const float *w, size_t n, int8_t *codes, uint16_t *scale),
                    (w, n, codes, scale))

ENG_ISA_BODY(ENG_VECTORISE) void
eng_w8_decode_body(const int8_t *codes, uint16_t scale, size_t n, float *out)
{
    const float s = eng_fp16_to_float(scale);
    for (size_t i = 0; i < n; i++) {
        out[i] = (float) codes[i] * s;
    }
}
ENG_ISA_CLONED_VOID(ENG_VECTORISE, , eng_w8_decode,
                    (const int8_t *codes, uint16_t scale, size_t n, float *out),
                    (codes, scale, n, out))
