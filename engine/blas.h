/*
 * blas.h - OpenBLAS, opened when the first product needs it.
 *
 * A timing-only run never multiplies a value, yet a linked OpenBLAS is
 * mapped and relocated into every run (~6 ms of CPU) and its constructor
 * starts a thread pool that spins in sched_yield unless
 * OPENBLAS_NUM_THREADS was set before it loaded.  So the engine opens it
 * itself, once, with OPENBLAS_NUM_THREADS=1 unless the user set it (the
 * engine calls it from its own OpenMP threads, one thread each).
 */
#ifndef ENGINE_BLAS_H
#define ENGINE_BLAS_H

#include <glib.h>

/* Open OpenBLAS if it is not open yet, or stop the program with a
 * one-line message naming the file and why (an install without its
 * OpenBLAS).  Call it outside parallel regions: opening sets an
 * environment variable. */
void eng_blas_need(void);

/* C [m, n] = A [m, k] . B [n, k]^T, row-major FP32 (cblas_sgemm with B
 * transposed), on one OpenBLAS thread unless eng_blas_set_threads said
 * otherwise.  Opens OpenBLAS first (eng_blas_need). */
void eng_blas_sgemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                       float *c, int ldc);

/* openblas_set_num_threads / openblas_get_corename, for `bench engine`. */
void eng_blas_set_threads(int n);
const char *eng_blas_corename(void);

#endif /* ENGINE_BLAS_H */
