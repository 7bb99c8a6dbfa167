/*
 * quant-formats.h - the weight formats of the seed systems beside W4A16
 * (which lives in kernels.h), per-tensor INT8 activations with and
 * without shadow outlier extraction, and the matmuls over them.
 *
 * Formats (each a row of [out, in] cut into groups along the input):
 *   ENG_QFMT_W8    INT8, one FP16 scale per row: s = fp16(max |w| / 127),
 *                  q = clamp(round_even(w / s), -127, 127), w~ = q * s
 *                  (the W8A16 / W8A8 weights; per-row scales factor out of
 *                  an integer dot product, so they cost a per-tensor NPU
 *                  matmul nothing, mllm-NPU §2.3).
 *   ENG_QFMT_FP4   E0M4 FP4, groups of 128, FP16 scale s and bias b
 *                  (Transformer-Lite §3.3): with m, M the group's
 *                  min and max, s = fp16(M - m), b = fp16(m - s), so
 *                  v = (w - b) / s lies in [1, 2] — one sign, one
 *                  exponent; the code is v's top 4 fraction bits rounded
 *                  by the next bit, capped at 15 (v < 1: 0, v >= 2: 15),
 *                  i.e. min(15, floor(16 (v - 1) + 1/2)); dequantisation
 *                  ORs the code into the mantissa of FP16 1.0
 *                  (0x3C00 | code << 6 = 1 + code / 16), then w~ = v~ * s
 *                  + b.  Codes two per byte, element 2j in the low nibble
 *                  of byte j.
 *   ENG_QFMT_Q4_0  llama.cpp Q4_0, groups of 32: d = fp16(x / -8) with x
 *                  the group's element of largest magnitude (the first
 *                  such), q = min(15, (int) (w * (1 / d) + 8.5)) stored
 *                  as a nibble, w~ = (q - 8) * d; byte j holds element j
 *                  (low nibble) and j + 16 (high), as ggml's block_q4_0.
 *   ENG_QFMT_Q8_0  llama.cpp Q8_0, groups of 32: d = fp16(max |w| / 127),
 *                  q = roundf(w * (1 / d)) (ties away from zero),
 *                  w~ = q * d.
 *   ENG_QFMT_F16   IEEE half per weight (the FP16 precision, and the FP
 *                  reference's weights); codes are the row-major halves.
 * A last partial group holds only its real elements (the others are
 * neither quantised nor read).  A group of zeros has scale 0 and codes of
 * zero.
 *
 * Exactness: as every engine kernel (kernels.h), each output element has
 * the same bits whatever the cut and the thread count: eng_qmatmul()
 * dequantises a weight row to FP32 and sums the products x * w~ in 16
 * lanes (lane = input index mod 16, increasing index, multiply then add,
 * no fused multiply-add), then folds the lanes 8 + 8, 4 + 4, 2 + 2, 1 + 1;
 * eng_qmatmul_a8() sums integers (exact in any order).
 */
#ifndef ENG_QUANT_FORMATS_H
#define ENG_QUANT_FORMATS_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/kernels.h"

/* GCC's -O2 cost model leaves the simple loops of these kernels scalar
 * (4x slower); integer and per-element loops vectorise to the same bits. */
#if defined(__GNUC__) && !defined(__clang__)
#define ENG_VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define ENG_VECTORISE
#endif

/*
 * Helpers whose loops vectorise are built for AVX-512, AVX2 and the
 * baseline: write one as NAME_body (ENG_ISA_BODY), then ENG_ISA_CLONED
 * defines NAME, which runs the copy of the path eng_isa() names, so
 * HS_ENGINE_ISA and eng_set_isa() reach these helpers as they reach the
 * hand-written kernels (GCC's target_clones chose by the CPU alone: an
 * "AVX2" run on an AVX-512 machine ran their AVX-512 copies).  Each lane
 * does the same operations on every ISA (C11 contracts no multiply-add,
 * and nothing is reassociated), so the bits do not depend on the path.
 * @attrs: ENG_VECTORISE or nothing, on the body and its copies alike.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ENG_ISA_BODY(attrs) attrs static inline __attribute__((always_inline))
#define ENG_ISA_CLONED_(attrs, storage, ret, name, params, args, RET)             \
    attrs __attribute__((target("avx512f"))) static ret name##_avx512 params       \
    {                                                                              \
        RET name##_body args;                                                      \
    }                                                                              \
    attrs __attribute__((target("avx2"))) static ret name##_avx2 params            \
    {                                                                              \
        RET name##_body args;                                                      \
    }                                                                              \
    attrs static ret name##_base params                                            \
    {                                                                              \
        RET name##_body args;                                                      \
    }                                                                              \
    storage ret name params                                                        \
    {                                                                              \
        EngIsa isa_ = eng_isa();                                                   \
        if (isa_ == ENG_ISA_AVX512) {                                              \
            RET name##_avx512 args;                                                \
        } else if (isa_ == ENG_ISA_AVX2) {                                         \
            RET name##_avx2 args;                                                  \
        } else {                                                                   \
            RET name##_base args;                                                  \
        }                                                                          \
    }
#else
#define ENG_ISA_BODY(attrs) attrs static inline
#define ENG_ISA_CLONED_(attrs, storage, ret, name, params, args, RET)             \
    storage ret name params                                                        \
    {                                                                              \
        RET name##_body args;                                                      \
    }
#endif
#define ENG_ISA_CLONED(attrs, storage, ret, name, params, args)                   \
    ENG_ISA_CLONED_(attrs, storage, ret, name, params, args, return)
#define ENG_ISA_CLONED_VOID(attrs, storage, name, params, args)                   \
    ENG_ISA_CLONED_(attrs, storage, void, name, params, args, )

typedef enum {
    ENG_QFMT_W8,
    ENG_QFMT_FP4,
    ENG_QFMT_Q4_0,
    ENG_QFMT_Q8_0,
    ENG_QFMT_F16,
    ENG_QFMT_COUNT
} EngQFormat;

/* "w8", "fp4-e0m4", "q4_0", "q8_0", "fp16" */
extern const char *const eng_qfmt_name[];   /* ENG_QFMT_COUNT entries: checked where defined */

/* Group sizes: Transformer-Lite's 128 (§3.3), ggml's QK4_0 = QK8_0
 * = 32 (as NPU-TTS §4 uses them). */
#define ENG_FP4_GROUP 128
#define ENG_Q_GROUP 32

typedef struct EngQMatrix {
    EngQFormat format;
    uint32_t rows, cols;         /* [out, in] */
    uint32_t group;              /* elements per group (W8, F16: cols) */
    uint32_t groups;             /* per row */
    size_t group_bytes;          /* bytes of codes per group */
    uint8_t *codes;              /* [rows, groups * group_bytes] */
    uint16_t *scales;            /* [rows, groups], FP16 bits (F16: unused) */
    uint16_t *biases;            /* FP4: [rows, groups], FP16 bits */
} EngQMatrix;

/* An all-zero matrix.  (transfer full) */
EngQMatrix *eng_qmatrix_new(EngQFormat format, uint32_t rows, uint32_t cols);
void eng_qmatrix_free(EngQMatrix *m);                 /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngQMatrix, eng_qmatrix_free)
/* Quantise rows [r0, r1) from @w [(r1 - r0), cols]. */
void eng_qmatrix_set_rows(EngQMatrix *m, uint32_t r0, uint32_t r1, const float *w);
/* Rows [r0, r1) dequantised into @out [(r1 - r0), cols]. */
void eng_qmatrix_rows_f32(const EngQMatrix *m, uint32_t r0, uint32_t r1, float *out);
/* Columns [c0, c0 + n) of row @r dequantised into @out [n], the same
 * values as eng_qmatrix_rows_f32's; c0 and n whole groups (n may end at
 * the row's end; W8 and FP16: any). */
void eng_qmatrix_cols_f32(const EngQMatrix *m, uint32_t r, uint32_t c0, uint32_t n, float *out);
/* Bytes the matrix holds. */
size_t eng_qmatrix_bytes(const EngQMatrix *m);
/* @n FP16 values (IEEE half bits) as FP32: eng_fp16_to_float's values for
 * every non-NaN code, eight at a time by F16C when the CPU has it. */
void eng_fp16_rows_f32(const uint16_t *h, size_t n, float *out);
/* Quantise @w [rows, cols] into a new matrix.  (transfer full) */
EngQMatrix *eng_qmatrix_new_from(EngQFormat format, const float *w, uint32_t rows,
                                 uint32_t cols);

/* One group of each format (n <= its group size), for the matrix and the
 * tests.  Codes are laid out as described above. */
void eng_fp4_encode(const float *w, size_t n, uint8_t *codes, uint16_t *scale,
                    uint16_t *bias);
void eng_fp4_decode(const uint8_t *codes, uint16_t scale, uint16_t bias, size_t n,
                    float *out);
void eng_q4_0_encode(const float *w, size_t n, uint8_t *codes, uint16_t *scale);
void eng_q4_0_decode(const uint8_t *codes, uint16_t scale, size_t n, float *out);
void eng_q8_0_encode(const float *w, size_t n, int8_t *codes, uint16_t *scale);
void eng_q8_0_decode(const int8_t *codes, uint16_t scale, size_t n, float *out);
void eng_w8_encode(const float *w, size_t n, int8_t *codes, uint16_t *scale);
void eng_w8_decode(const int8_t *codes, uint16_t scale, size_t n, float *out);

/* Y[s0:s1, r0:r1] = X[s0:s1, :] . W~[r0:r1, :]^T with FP32 activations
 * (the A16 formats: activations stay FP32 as in the W4A16 kernel). */
void eng_qmatmul(const EngTensor *x, const EngQMatrix *w, EngTensor *y, size_t s0, size_t s1,
                 size_t r0, size_t r1);

/* ---- per-tensor INT8 activations --------------------------------------- */

/*
 * Shadow outlier execution (mllm-NPU §3.3): the per-tensor scale comes
 * from the tensor without its top channels, and the values it cannot
 * hold are computed in float.  Precisely, for an input x [T, d]:
 *   m_c = max over all T rows of |x[t, c]|  (the channel's peak);
 *   n   = ceil(d * ENG_SHADOW_TOP_PER_MILLE / 1000) channels are set
 *         aside: the n largest m_c;
 *   L   = the largest remaining m_c (the (n+1)-th largest; with fewer
 *         than n + 1 channels, or L = 0, the largest);
 *   scale = L / 127; every value with |x| > L is an outlier: its INT8
 *   code is 0 and its product with the (dequantised INT8) weight is
 *   summed in float and added to the integer result.
 * Without shadow: L = max |x| (nothing is an outlier), the plain
 * max-min symmetric per-tensor scale.  All zeros: scale 1.
 */
#define ENG_SHADOW_TOP_PER_MILLE 3      /* 0.3 %: mllm-NPU §3.3 finds outliers in 0.1-0.3 % of channels */

typedef struct EngActInt8 {
    float scale;                 /* x ~ q * scale */
    float limit;                 /* |x| > limit: an outlier (INFINITY: none) */
} EngActInt8;

/* The per-tensor parameters of x [rows, d], whole. */
void eng_act_int8_params(const float *x, size_t d, size_t rows, gboolean shadow,
                         EngActInt8 *out);
/* The INT8 code of one value (0 for an outlier). */
int8_t eng_act_int8_code(float x, const EngActInt8 *a);

/*
 * Y[s0:s1, r0:r1] with INT8 activations (@a, from the whole X) and W8
 * weights: y = (float) (sum of q_x * q_w, int32) * (a->scale * s_w), then
 * plus the float sum, in increasing input index, of x * w~ over the row's
 * outliers (when it has any).
 */
void eng_qmatmul_a8(const EngTensor *x, const EngActInt8 *a, const EngQMatrix *w,
                    EngTensor *y, size_t s0, size_t s1, size_t r0, size_t r1);

#endif /* ENG_QUANT_FORMATS_H */
