/*
 * weights.h - synthetic deterministic weights (engine-internal).
 *
 * Element i of tensor (seed, layer, which) is a pure function of those
 * four numbers: splitmix64 of a per-tensor key mixed with i, mapped to a
 * uniform value in [-1, 1).  No state, so any slice is generated alone
 * and identically, in parallel or not.
 */
#ifndef ENG_WEIGHTS_H
#define ENG_WEIGHTS_H

#include <stdint.h>

#include "engine/kernels.h"

/* Tensor ids that are not per-layer matmuls (layer argument). */
#define ENG_SYN_EMBED 1000u
#define ENG_SYN_LM_HEAD 1001u
#define ENG_SYN_FINAL_NORM 1002u

/* The key of tensor @which of @layer under @seed. */
uint64_t eng_syn_key(uint64_t seed, uint64_t layer, uint64_t which);
/* Uniform in [-1, 1): element @i of the tensor with @key. */
float eng_syn_unit(uint64_t key, uint64_t i);
/* Values [n] = a * unit(key, i0 + i). */
void eng_syn_fill(uint64_t key, uint64_t i0, size_t n, float a, float *out);
/* A [rows, cols] matrix of variance 1/cols in @format, generated and
 * converted 256 rows at a time.  (transfer full) */
EngMatrix *eng_syn_matrix(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format);

#endif /* ENG_WEIGHTS_H */
