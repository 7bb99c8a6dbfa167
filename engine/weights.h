/*
 * weights.h - synthetic deterministic weights (engine-internal).
 *
 * Element i of tensor (seed, layer, which) is a pure function of those
 * four numbers: a per-tensor key (splitmix64 of the three) keys a 32-bit
 * hash of i, read as a uniform value in [-1, 1].  No state, so any slice
 * is generated alone and identically, in parallel or not.
 */
#ifndef ENG_WEIGHTS_H
#define ENG_WEIGHTS_H

#include <stdint.h>

#include "engine/kernels.h"
#include "engine/quant-formats.h"

/* Tensor ids that are not per-layer matmuls (layer argument). */
#define ENG_SYN_EMBED 1000u
#define ENG_SYN_LM_HEAD 1001u
#define ENG_SYN_FINAL_NORM 1002u
#define ENG_SYN_OUTLIERS 1003u

/* The key of tensor @which of @layer under @seed. */
uint64_t eng_syn_key(uint64_t seed, uint64_t layer, uint64_t which);
/* Uniform in [-1, 1]: element @i of the tensor with @key. */
float eng_syn_unit(uint64_t key, uint64_t i);
/* Values [n] = a * unit(key, i0 + i). */
void eng_syn_fill(uint64_t key, uint64_t i0, size_t n, float a, float *out);
/* A [rows, cols] matrix of variance 1/cols in @format, generated and
 * converted 256 rows at a time.  (transfer full) */
EngMatrix *eng_syn_matrix(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format);
/* The same FP32 values as eng_syn_matrix's, stored in @format.  (transfer full) */
EngQMatrix *eng_syn_qmatrix(uint64_t key, uint32_t rows, uint32_t cols, EngQFormat format);
/* eng_syn_matrix(), and from the same FP32 rows, in the same pass, the
 * matrix in @also (*also_out; what eng_syn_qmatrix() would make): values
 * generated once where two calls generate them twice.  (transfer full) */
EngMatrix *eng_syn_matrix_also(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format,
                               EngQFormat also, EngQMatrix **also_out);

/*
 * Outlier channels, as real LLMs have them: a few hidden channels (0.2 %,
 * rounded: 4 of 2048, none below 250) whose RMSNorm gain is ENG_SYN_OUTLIER_GAIN times the
 * others', the same channels in every norm of the model (outlier features
 * sit in the same dimensions across layers: LLM.int8(), Dettmers et al.
 * 2022).  So every matmul that reads a norm's output (Q, K, V, gate, up,
 * LM head) sees a few channels far larger than the rest, which a
 * per-tensor INT8 scale cannot hold without crushing the others.
 */
#define ENG_SYN_OUTLIER_PER_MILLE 2     /* mllm-NPU §3.3: outliers in 0.1-0.3 % of channels */
#define ENG_SYN_OUTLIER_GAIN 20.0f      /* LLM.int8(): outlier features up to ~20x the others */

/* Multiply the outlier channels of gains @g [hidden] (the full gain, not
 * Gemma's w of 1 + w) by the outlier gain.  Channels depend on @seed only. */
void eng_syn_outlier_gains(uint64_t seed, uint32_t hidden, float *g);
/* Whether channel @c of @hidden is an outlier channel under @seed. */
gboolean eng_syn_is_outlier(uint64_t seed, uint32_t hidden, uint32_t c);

#endif /* ENG_WEIGHTS_H */
