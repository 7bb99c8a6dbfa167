/*
 * kernels.h - the functional engine's kernels: pure math on FP32 buffers,
 * each computing a *slice* of its output (a token range, and for matmuls a
 * range of output features) so a partitioned plan writes the same result
 * as the whole.  Row-major buffers; shapes in the comments.
 *
 * Determinism: every output element is computed by one thread in a fixed
 * order, so results do not depend on the thread count.  Matmuls go
 * through BLAS (cblas_sgemm); a slice of a BLAS product can differ from
 * the whole product in the last bits, which is why the simulator compares
 * partitioned runs with the reference under a stated tolerance.
 */
#ifndef ENG_KERNELS_H
#define ENG_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A weight matrix [rows, cols] as it is stored: dense FP32, or W4A16 —
 * INT4 values packed two per byte (low nibble first, stored as q + 8) with
 * one scale per group of ENG_W4_GROUP along each row (FP16 values held as
 * float).  W4A16 is what models use by default: 0.5 byte per weight.
 */
#define ENG_W4_GROUP 128

typedef struct EngMatrix {
    uint32_t rows, cols;
    float *f32;                  /* [rows, cols], or NULL */
    uint8_t *q4;                 /* [rows, cols / 2], or NULL */
    float *scales;               /* [rows, ceil(cols / group)] */
} EngMatrix;

/* Quantise @w [rows, cols] to a new W4A16 matrix (cols even). (transfer full) */
EngMatrix *eng_matrix_new_w4(const float *w, uint32_t rows, uint32_t cols);
/* An all-zero W4A16 matrix, and quantising rows [r0, r1) into it from
 * @rows_f32 [(r1 - r0), cols] (so a big matrix never exists in FP32). */
EngMatrix *eng_matrix_alloc_w4(uint32_t rows, uint32_t cols);
void eng_matrix_set_rows_w4(EngMatrix *m, uint32_t r0, uint32_t r1, const float *rows_f32);
/* Wrap @w (taken over) as a dense FP32 matrix.  (transfer full) */
EngMatrix *eng_matrix_new_f32(float *w, uint32_t rows, uint32_t cols);
void eng_matrix_free(EngMatrix *m);
/* Rows [r0, r1) as FP32 into @out [(r1 - r0), cols]. */
void eng_matrix_rows_f32(const EngMatrix *m, uint32_t r0, uint32_t r1, float *out);

/*
 * y[t, r] = sum_k x[t, k] * W[r, k] for t in [t0, t1), r in [r0, r1), with
 * W stored as @w (k = w->cols, row stride of y = w->rows).  A few tokens
 * against W4A16 run a matrix-vector kernel that reads the INT4 weights
 * directly (one thread per output row, fixed summation order); more tokens
 * dequantise blocks of rows and use BLAS.
 */
void eng_matmul_w(const float *x, const EngMatrix *w, float *y, size_t t0, size_t t1,
                  size_t r0, size_t r1);

/* y[t, r] = sum_k x[t, k] * w[r, k] for t in [t0, t1), r in [r0, r1).
 * x: [*, k] (row stride k); w: [n, k]; y: [*, n] (row stride n). */
void eng_matmul_slice(const float *x, const float *w, float *y, size_t k, size_t n,
                      size_t t0, size_t t1, size_t r0, size_t r1);

/* y[t, :] = x[t, :] / rms(x[t, :]) * (w or 1 + w), t in [t0, t1).  x, y: [*, d] */
void eng_rmsnorm_rows(const float *x, const float *w, float *y, size_t d, double eps,
                      int plus_one, size_t t0, size_t t1);

/* Rotary embedding (Hugging Face "rotate half" convention) of rows
 * [t0, t1) of x [*, heads*hd] at positions pos0 + t. */
void eng_rope_rows(const float *x, float *y, size_t heads, size_t hd, double theta,
                   size_t pos0, size_t t0, size_t t1);

/*
 * Causal attention with GQA for query rows [t0, t1) and query heads
 * [h0, h1): query row t sits at position pos0 + t and sees keys at
 * positions [0, pos0 + t].  Keys/values for positions < pos0 come from
 * k_cache/v_cache ([*, kv_heads*hd]), the rest from k/v rows (position
 * pos0 + i is row i).  y: [*, heads*hd].
 */
void eng_attention_rows(const float *q, const float *k, const float *v,
                        const float *k_cache, const float *v_cache, float *y,
                        size_t heads, size_t kv_heads, size_t hd, size_t pos0,
                        size_t t0, size_t t1, size_t h0, size_t h1);

/* y = act(gate) * up over rows [t0, t1), columns [c0, c1); gelu: tanh GELU. */
void eng_act_rows(const float *gate, const float *up, float *y, size_t d, int gelu,
                  size_t t0, size_t t1, size_t c0, size_t c1);

/* y = a + b over rows [t0, t1), columns [c0, c1).  [*, d] */
void eng_add_rows(const float *a, const float *b, float *y, size_t d, size_t t0,
                  size_t t1, size_t c0, size_t c1);

/* Quantise then dequantise in place: INT4 symmetric groups of @group along
 * each row of w [rows, cols], scales rounded to FP16 (W4A16 storage). */
void eng_quant_w4_inplace(float *w, size_t rows, size_t cols, size_t group);

/* INT8 per-tensor quantise-dequantise of rows [t0, t1) of x [*, d] into y. */
void eng_quant_act_int8(const float *x, float *y, size_t d, size_t t0, size_t t1);

/* Round to the nearest FP16 value (storage emulation). */
float eng_fp16_round(float v);

#endif /* ENG_KERNELS_H */
