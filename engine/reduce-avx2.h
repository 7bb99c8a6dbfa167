/*
 * reduce-avx2.h - horizontal sums of eight AVX2 vectors at once, for the
 * blocked matmul kernels (matmul-w4.c, matmul-q.c); private to engine/.
 * Include after <immintrin.h>, inside the kernels' AVX2 section.
 */
#ifndef ENG_REDUCE_AVX2_H
#define ENG_REDUCE_AVX2_H

/* Lane r of the result is v[r] summed in the kernels' order
 *   ((t0 + t4) + (t2 + t6)) + ((t1 + t5) + (t3 + t7)):
 * the same additions as one vector at a time, the lanes moved around
 * them, so the same bits, one store for eight outputs. */
__attribute__((target("avx2"))) static inline __m256
eng_reduce8x8_avx2(const __m256 v[8])
{
    __m256 s[4], t[2];
    for (int r = 0; r < 4; r++) {
        /* [t0..t3 of v[r], of v[r + 4]] + [t4..t7 of each] */
        s[r] = _mm256_add_ps(_mm256_permute2f128_ps(v[r], v[r + 4], 0x20),
                             _mm256_permute2f128_ps(v[r], v[r + 4], 0x31));
    }
    for (int r = 0; r < 2; r++) {
        /* lanes 0-1 + lanes 2-3 of vectors 2r, 2r + 1 (2r + 4, 2r + 5) */
        t[r] = _mm256_add_ps(_mm256_shuffle_ps(s[2 * r], s[2 * r + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(s[2 * r], s[2 * r + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    }
    /* lane 0 + lane 1 of vectors 0-3 (4-7) */
    return _mm256_add_ps(_mm256_shuffle_ps(t[0], t[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm256_shuffle_ps(t[0], t[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

#endif /* ENG_REDUCE_AVX2_H */
