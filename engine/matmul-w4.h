/*
 * matmul-w4.h - the W4A16 matmul kernel (matmul-w4.c), behind
 * eng_matmul(); private to engine/.
 */
#ifndef ENG_MATMUL_W4_H
#define ENG_MATMUL_W4_H

#include "engine/kernels.h"

/* y[s0:s1, r0:r1] = x[s0:s1, :] . W[r0:r1, :]^T, W in W4A16 */
void eng_w4_matmul(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1,
                   size_t r0, size_t r1);

#endif /* ENG_MATMUL_W4_H */
