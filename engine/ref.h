/*
 * ref.h - naive double-precision references of the engine's kernels, for
 * tests: one obvious loop nest each, no slicing, no BLAS, no threads.
 */
#ifndef ENG_REF_H
#define ENG_REF_H

#include <stddef.h>

/* y [t, n] = x [t, k] . w [n, k]^T */
void eng_ref_matmul(const float *x, const float *w, double *y, size_t t, size_t k, size_t n);
void eng_ref_rmsnorm(const float *x, double *y, size_t t, size_t d, double eps);
/* causal self-attention of t tokens from position 0, GQA */
void eng_ref_attention(const float *q, const float *k, const float *v, double *y,
                       size_t t, size_t heads, size_t kv_heads, size_t hd);

#endif /* ENG_REF_H */
