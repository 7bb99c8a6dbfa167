/*
 * kernels.h - the functional engine's kernels: pure math on FP32 buffers,
 * each computing a *slice* of its output — a token range [s0, s1) and, for
 * matmuls and element-wise ops, a feature range [r0, r1) — straight into
 * the full-size output, because each task of a simulated plan computes one
 * slice into shared buffers.  Buffers are row-major [tokens, features].
 *
 * Exactness: every kernel gives each output element the same bits whether
 * it is computed whole or in any row cut, sequence cut or both, and
 * whatever the number of OpenMP threads:
 *   - element-wise kernels, RMSNorm, RoPE and attention compute each
 *     output row (or element) alone, in a fixed order;
 *   - the W4A16 matmul is our own kernel: one fixed dot-product order per
 *     output element (see matmul.c), whatever the slice;
 *   - FP32 / FP16 matmuls go through OpenBLAS, whose rounding depends on
 *     the shape of each call (measured with OpenBLAS 0.3.21: about 90 % of
 *     random row or sequence cuts differ in the last bits from the whole).
 *     So the engine never calls it on a slice: the output is tiled on a
 *     fixed grid — tiles of ENG_TILE_M tokens (fewer when the whole tensor
 *     has fewer rows) by ENG_TILE_N features, aligned to absolute indices —
 *     and every tile a slice touches is computed whole, at the same shape,
 *     then the slice's part is copied out.  Tiles run in parallel, one per
 *     OpenMP thread, on single-threaded OpenBLAS.
 */
#ifndef ENG_KERNELS_H
#define ENG_KERNELS_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/tensor.h"

/* ---- weights ---------------------------------------------------------- */

/* W4A16 group: INT4 weights in groups of 128 along the input dimension. */
#define ENG_W4_GROUP 128
/* FP32/FP16 matmul tiles (see above). */
#define ENG_TILE_M 128
#define ENG_TILE_N 512

/*
 * Loops smaller than this many scalar operations run on the calling
 * thread: waking a team costs microseconds, and on a loaded machine its
 * spinning threads cost far more (the tiny model ran 20x slower next to a
 * busy build).  Values are the same either way: every iteration writes
 * only its own outputs.
 */
#define ENG_PAR_MIN_OPS ((size_t) 1 << 16)

/*
 * Rows per block when @n rows are cut into blocks of at most @most for
 * the OpenMP threads: the fewest blocks that is a multiple of the thread
 * count, as even as can be, so no thread gets a block more than another
 * (a slice of 448 rows in blocks of 64 gave one thread 4 and the other
 * 3).  Which rows share a block changes no value: every output row has
 * its own operations.
 */
size_t eng_block_rows(size_t n, size_t most);

typedef enum {
    ENG_WFMT_W4A16,              /* INT4 + FP16 scale per group, ~0.52 byte/weight (default) */
    ENG_WFMT_F16,                /* IEEE half storage, 2 bytes per weight */
    ENG_WFMT_F32,                /* FP32, 4 bytes per weight */
    ENG_WFMT_COUNT
} EngWFormat;

/* "w4a16", "fp16", "fp32" */
extern const char *const eng_wfmt_name[];   /* ENG_WFMT_COUNT entries: checked where defined */

/*
 * A weight matrix [rows, cols] = [out, in] (Hugging Face layout) as it is
 * stored.  W4A16 is *symmetric*: q = clamp(round(w / s), -8, 7) with
 * s = fp16(max |w| of the group / 7), stored as the nibble q + 8; the zero
 * point 8 is fixed, so a group needs only its FP16 scale.  Nibble order
 * inside each group of 128 (64 bytes): 4 chunks of 32 weights, 16 bytes
 * each; byte j of chunk i holds weight 32 i + j in its low nibble and
 * weight 32 i + 16 + j in its high nibble (what an AVX2 unpack wants).  A
 * last partial group is padded with zero weights.
 */
typedef struct EngMatrix {
    EngWFormat format;
    uint32_t rows, cols;         /* [out, in] */
    uint32_t groups;             /* W4A16: ceil(cols / 128) groups per row */
    float *f32;                  /* F32: [rows, cols] */
    uint16_t *f16;               /* F16: [rows, cols], IEEE half bits */
    uint8_t *q4;                 /* W4A16: [rows, groups * 64] packed nibbles */
    uint16_t *scales;            /* W4A16: [rows, groups], FP16 bits */
    gboolean borrowed;           /* f32 belongs to somebody else */
} EngMatrix;

/* An all-zero matrix in @format.  (transfer full) */
EngMatrix *eng_matrix_new(EngWFormat format, uint32_t rows, uint32_t cols);
/* Store rows [r0, r1) from @rows_f32 [(r1 - r0), cols], converted to the
 * matrix's format (so a big matrix never needs to exist in FP32). */
void eng_matrix_set_rows(EngMatrix *m, uint32_t r0, uint32_t r1, const float *rows_f32);
/* Quantise @w [rows, cols] to a new W4A16 matrix.  (transfer full) */
EngMatrix *eng_matrix_new_w4(const float *w, uint32_t rows, uint32_t cols);
/* Wrap @w as FP32, taking it over (g_free).  (transfer full) */
EngMatrix *eng_matrix_new_f32(float *w, uint32_t rows, uint32_t cols);
/* Wrap @w as FP32 without taking it over (tied embeddings).  (transfer full) */
EngMatrix *eng_matrix_new_f32_borrowed(const float *w, uint32_t rows, uint32_t cols);
void eng_matrix_free(EngMatrix *m);                   /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EngMatrix, eng_matrix_free)
/* Rows [r0, r1) as FP32 (dequantised) into @out [(r1 - r0), cols]. */
void eng_matrix_rows_f32(const EngMatrix *m, uint32_t r0, uint32_t r1, float *out);
/* Bytes the matrix holds. */
size_t eng_matrix_bytes(const EngMatrix *m);

/* ---- matmul ----------------------------------------------------------- */

/*
 * Y[s0:s1, r0:r1] = X[s0:s1, :] . W[r0:r1, :]^T
 *   x: [T, K] (T = x->rows; only rows [s0, s1) are read), W: [N, K],
 *   y: [T', N] with T' >= s1 (only the slice is written).
 * T fixes the FP32/FP16 tile grid, so all slices of one product must be
 * computed with the same x->rows.
 */
void eng_matmul(const EngTensor *x, const EngMatrix *w, EngTensor *y, size_t s0, size_t s1,
                size_t r0, size_t r1);

/* FP32 weights given as a plain buffer w [n, k]; x [t, k]; y [t, n]. */
void eng_matmul_f32(const float *x, size_t t, const float *w, size_t k, size_t n, float *y,
                    size_t s0, size_t s1, size_t r0, size_t r1);

/* Which SIMD path the W4A16 kernel uses.  Every path gives the same bits
 * (matmul-w4.c); the choice only changes speed. */
typedef enum {
    ENG_ISA_AUTO,                /* the best this CPU has (default) */
    ENG_ISA_PORTABLE,
    ENG_ISA_AVX2,
    ENG_ISA_AVX512,
    ENG_ISA_COUNT
} EngIsa;

/* Force a path (FALSE if this CPU lacks it); ENG_ISA_AUTO undoes it. */
gboolean eng_set_isa(EngIsa isa);
/* "portable", "avx2" or "avx512": the path in use. */
const char *eng_isa_name(void);
/* The path in use (never ENG_ISA_AUTO). */
EngIsa eng_isa(void);
/* The AVX-512 path is in use and the CPU has AVX512-VNNI (INT8 dot
 * products, exact: any path gives the same integers). */
gboolean eng_isa_vnni(void);

/*
 * A padded execution, as a static-shape NPU graph runs it: rows [s0, s1)
 * of x are copied to rows [0, s1 - s0) of @xs [P, K] (P >= s1 - s0; the
 * other rows of xs are left as they are, zero or garbage), the whole
 * padded product ys[:, r0:r1] = xs . W[r0:r1]^T is computed into @ys
 * [P, N], then the real rows are cropped into Y[s0:s1, r0:r1].
 * W4A16: bit-identical to eng_matmul.  FP32/FP16: the tile grid is the
 * padded one, so the result can differ in the last bits (see tests).
 */
void eng_matmul_padded(const EngTensor *x, const EngMatrix *w, EngTensor *y, size_t s0,
                       size_t s1, size_t r0, size_t r1, EngTensor *xs, EngTensor *ys);

/* xs[0 : s1-s0, :] = x[s0:s1, :] */
void eng_pad_rows(const EngTensor *x, size_t s0, size_t s1, EngTensor *xs);
/* y[s0:s1, c0:c1] = ys[0 : s1-s0, c0:c1] */
void eng_crop_rows(const EngTensor *ys, EngTensor *y, size_t s0, size_t s1, size_t c0,
                   size_t c1);

/* ---- row-wise kernels (x, y: [*, d]; rows [t0, t1)) ------------------- */

/* y[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * g, g = w, or 1 + w with
 * @plus_one (Gemma), or 1 when w is NULL.  Sum of squares in double. */
void eng_rmsnorm_rows(const float *x, const float *w, float *y, size_t d, double eps,
                      int plus_one, size_t t0, size_t t1);

/* y[t, :] = LayerNorm(x[t, :]) * w + b (torch.nn.LayerNorm: biased
 * variance; w or b NULL: 1 or 0).  Mean and variance in double. */
void eng_layernorm_rows(const float *x, const float *w, const float *b, float *y, size_t d,
                        double eps, size_t t0, size_t t1);

/* Rotary embedding (Hugging Face "rotate half" convention) of rows
 * [t0, t1) of x [*, heads*hd]: row t sits at position pos0 + t.  x may be y. */
void eng_rope_rows(const float *x, float *y, size_t heads, size_t hd, double theta,
                   size_t pos0, size_t t0, size_t t1);
/* The same on the first @rot (even, <= hd) dimensions of each head, the
 * rest passed through; pairs (i, i + rot/2) ("rotate half": Llama, Phi)
 * or, with @interleaved, (2i, 2i + 1) (ChatGLM2); pair i turns by
 * pos * theta^(-2i/rot), rescaled as Llama 3.1's rope_scaling "llama3"
 * says when @scale is given (transformers _compute_llama3_parameters).
 * eng_rope_rows is rot = hd, rotate half, no scaling. */
typedef struct EngRopeScale {
    double factor;               /* 0: no scaling */
    double low_freq_factor, high_freq_factor, original_max_pos;
} EngRopeScale;
void eng_rope_rows_part(const float *x, float *y, size_t heads, size_t hd, size_t rot,
                        int interleaved, double theta, const EngRopeScale *scale,
                        size_t pos0, size_t t0, size_t t1);

/*
 * Causal attention with GQA for query rows [t0, t1) and query heads
 * [h0, h1): query row t sits at position pos0 + t and sees keys at
 * positions [0, pos0 + t].  Keys/values at positions < pos0 come from
 * k_cache/v_cache ([*, kv_heads*hd]), the rest from rows of k/v (position
 * pos0 + i is row i).  q, y: [*, heads*hd].  Scores, softmax and the
 * weighted sum in double, per (row, head) alone.
 */
void eng_attention_rows(const float *q, const float *k, const float *v,
                        const float *k_cache, const float *v_cache, float *y,
                        size_t heads, size_t kv_heads, size_t hd, size_t pos0,
                        size_t t0, size_t t1, size_t h0, size_t h1);

/* The same where query position p sees only keys at (p - @window, p]
 * (Mistral's sliding_window; 0 = every earlier position). */
void eng_attention_rows_window(const float *q, const float *k, const float *v,
                               const float *k_cache, const float *v_cache, float *y,
                               size_t heads, size_t kv_heads, size_t hd, size_t window,
                               size_t pos0, size_t t0, size_t t1, size_t h0, size_t h1);

/* File rows [t0, t1) of k, v [*, kv_dim] in the cache at positions pos0 + t. */
void eng_kv_store_rows(const float *k, const float *v, float *k_cache, float *v_cache,
                       size_t kv_dim, size_t pos0, size_t t0, size_t t1);

typedef enum {
    ENG_ACT_SILU,                /* SwiGLU: silu(gate) * up */
    ENG_ACT_GELU_TANH,           /* GeGLU, tanh approximation (Gemma; gelu_new: Phi-2) */
    ENG_ACT_GELU,                /* exact GELU through erf (HF "gelu") */
    ENG_ACT_COUNT
} EngAct;

/* y = act(gate) * up over rows [t0, t1), columns [c0, c1); @act is an
 * EngAct; @up NULL: y = act(gate) (an ungated MLP). */
void eng_act_rows(const float *gate, const float *up, float *y, size_t d, int act,
                  size_t t0, size_t t1, size_t c0, size_t c1);

/* y = a + b over rows [t0, t1), columns [c0, c1).  y may be a or b. */
void eng_add_rows(const float *a, const float *b, float *y, size_t d, size_t t0,
                  size_t t1, size_t c0, size_t c1);

/* y[t, :] = x[t, :] + b over rows [t0, t1) (QKV bias).  y may be x. */
void eng_bias_rows(const float *x, const float *b, float *y, size_t d, size_t t0, size_t t1);

/* ---- precisions (emulated storage, compute in FP32) -------------------- */

/* IEEE half: round to nearest even, subnormals kept, overflow to infinity. */
uint16_t eng_fp16_from_float(float v);
float eng_fp16_to_float(uint16_t h);
/* Round-trip through FP16 storage. */
float eng_fp16_round(float v);
/* y = fp16_round(x) over rows [t0, t1) of [*, d]. */
void eng_fp16_round_rows(const float *x, float *y, size_t d, size_t t0, size_t t1);

/* Quantise then dequantise in place with the W4A16 rule above (groups of
 * @group along each row of w [rows, cols]): the reference of the packed
 * format. */
void eng_quant_w4_inplace(float *w, size_t rows, size_t cols, size_t group);

/* INT8 per-tensor activations: scale = max |x| / 127 over rows [t0, t1)
 * of x [*, d] (1 when all are zero), then y = clamp(round(x / s)) * s.
 * For the per-tensor scale of a tensor computed in slices, take the scale
 * of the whole once (eng_quant_act_int8_scale) and apply it to each
 * slice (eng_quant_act_int8_apply). */
float eng_quant_act_int8_scale(const float *x, size_t d, size_t t0, size_t t1);
void eng_quant_act_int8_apply(const float *x, float *y, size_t d, size_t t0, size_t t1,
                              float scale);
void eng_quant_act_int8(const float *x, float *y, size_t d, size_t t0, size_t t1);

#endif /* ENG_KERNELS_H */
