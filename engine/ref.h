/*
 * ref.h - naive double-precision references of the engine's kernels, for
 * tests: one obvious loop nest each, no slicing, no BLAS, no threads.
 */
#ifndef ENG_REF_H
#define ENG_REF_H

#include <stddef.h>

/* y [t, n] = x [t, k] . w [n, k]^T */
void eng_ref_matmul(const float *x, const float *w, double *y, size_t t, size_t k, size_t n);
/* y [t, d] = x / rms(x) (no gain) */
void eng_ref_rmsnorm(const float *x, double *y, size_t t, size_t d, double eps);
/* y [t, d] = x / rms(x) * w (or 1 + w) */
void eng_ref_rmsnorm_w(const float *x, const float *w, double *y, size_t t, size_t d,
                       double eps, int plus_one);
/* rotate-half RoPE of x [t, heads * hd], row i at position pos0 + i */
void eng_ref_rope(const float *x, double *y, size_t t, size_t heads, size_t hd, double theta,
                  size_t pos0);
/* causal self-attention of t tokens from position 0, GQA */
void eng_ref_attention(const float *q, const float *k, const float *v, double *y,
                       size_t t, size_t heads, size_t kv_heads, size_t hd);
/* y [n] = act(gate) * up, act an EngAct: silu, tanh-GELU or exact GELU */
void eng_ref_act(const float *gate, const float *up, double *y, size_t n, int act);

#endif /* ENG_REF_H */
