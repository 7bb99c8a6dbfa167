/*
 * weights.c - see weights.h.
 */
#include "engine/weights.h"
#include "sim/util/mem.h"

#include <glib.h>
#include <math.h>

/* splitmix64 finaliser: a bijective 64-bit mixer. */
static inline uint64_t
mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t
eng_syn_key(uint64_t seed, uint64_t layer, uint64_t which)
{
    return mix(mix(seed) ^ (layer * 64 + which + 1));
}

/*
 * A 32-bit integer hash (Wellons' "lowbias32": two multiply-xorshift
 * rounds, a bijection).  Element values come from 32-bit operations only,
 * so every vector unit does eight or sixteen lanes with one multiply
 * instruction each: splitmix64's 64-bit multiplies, emulated by three
 * 32-bit ones on AVX2, made generating the weights 15 % of the default
 * compare's CPU there.
 */
static inline uint32_t
hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* The two 32-bit keys of the 2^32 elements [i >> 32 << 32, ...) of the
 * tensor with @key. */
static inline void
seg_keys(uint64_t key, uint64_t i, uint32_t *ka, uint32_t *kb)
{
    *ka = (uint32_t) key ^ hash32((uint32_t) (i >> 32) ^ 0x9E3779B9u);
    *kb = (uint32_t) (key >> 32);
}

/* Element bits: a keyed permutation of the low 32 bits of the index. */
static inline uint32_t
unit_bits(uint32_t ka, uint32_t kb, uint32_t lo)
{
    return hash32(hash32(lo ^ ka) ^ kb);
}

/* The signed 32-bit integer scaled by 2^-31 (exact), in [-1, 1]. */
static inline float
unit_float(uint32_t h)
{
    return (float) (int32_t) h * 0x1p-31f;
}

float
eng_syn_unit(uint64_t key, uint64_t i)
{
    uint32_t ka, kb;
    seg_keys(key, i, &ka, &kb);
    return unit_float(unit_bits(ka, kb, (uint32_t) i));
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_SYN_AVX2 1
#define SYN_TARGET __attribute__((target("avx2")))

SYN_TARGET static inline __m256i
hash32_avx2(__m256i x)
{
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int) 0x846ca68bu));
    return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

/* @n elements from index low bits @lo (no carry out of 32 bits), eight at
 * a time: the same integer operations, the same exact int-to-float
 * rounding and the same two products as the scalar path. */
SYN_TARGET static size_t
syn_fill_avx2(uint32_t ka, uint32_t kb, uint32_t lo, size_t n, float a, float *out)
{
    const __m256i kav = _mm256_set1_epi32((int) ka), kbv = _mm256_set1_epi32((int) kb);
    const __m256i eight = _mm256_set1_epi32(8);
    const __m256 scale = _mm256_set1_ps(0x1p-31f), av = _mm256_set1_ps(a);
    __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int) lo), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i h = hash32_avx2(_mm256_xor_si256(hash32_avx2(_mm256_xor_si256(idx, kav)), kbv));
        __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(h), scale);
        _mm256_storeu_ps(out + i, _mm256_mul_ps(av, u));
        idx = _mm256_add_epi32(idx, eight);
    }
    return i;
}

#define SYN_TARGET512 __attribute__((target("avx512f")))

SYN_TARGET512 static inline __m512i
hash32_avx512(__m512i x)
{
    x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
    x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x7feb352d));
    x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
    x = _mm512_mullo_epi32(x, _mm512_set1_epi32((int) 0x846ca68bu));
    return _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
}

/* syn_fill_avx2 sixteen at a time. */
SYN_TARGET512 static size_t
syn_fill_avx512(uint32_t ka, uint32_t kb, uint32_t lo, size_t n, float a, float *out)
{
    const __m512i kav = _mm512_set1_epi32((int) ka), kbv = _mm512_set1_epi32((int) kb);
    const __m512i sixteen = _mm512_set1_epi32(16);
    const __m512 scale = _mm512_set1_ps(0x1p-31f), av = _mm512_set1_ps(a);
    __m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int) lo),
                                   _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i h = hash32_avx512(_mm512_xor_si512(hash32_avx512(_mm512_xor_si512(idx, kav)), kbv));
        __m512 u = _mm512_mul_ps(_mm512_cvtepi32_ps(h), scale);
        _mm512_storeu_ps(out + i, _mm512_mul_ps(av, u));
        idx = _mm512_add_epi32(idx, sixteen);
    }
    return i;
}
#endif

void
eng_syn_fill(uint64_t key, uint64_t i0, size_t n, float a, float *out)
{
    while (n > 0) {
        /* one run of indices with the same high 32 bits */
        uint64_t left = (1ull << 32) - (uint32_t) i0;
        size_t m = (uint64_t) n < left ? n : (size_t) left;
        uint32_t ka, kb, lo = (uint32_t) i0;
        size_t i = 0;
        seg_keys(key, i0, &ka, &kb);
#ifdef HAVE_SYN_AVX2
        if (eng_isa() == ENG_ISA_AVX512) {
            i = syn_fill_avx512(ka, kb, lo, m, a, out);
        } else if (eng_isa() != ENG_ISA_PORTABLE) {
            i = syn_fill_avx2(ka, kb, lo, m, a, out);
        }
#endif
        for (; i < m; i++) {
            out[i] = a * unit_float(unit_bits(ka, kb, lo + (uint32_t) i));
        }
        i0 += m;
        out += m;
        n -= m;
    }
}

/* Rows [r0, r1) of the matrix with @key into w [(r1 - r0), cols]: variance
 * 1/fan_in (uniform in [-a, a] has variance a^2 / 3). */
static void
syn_rows(uint64_t key, size_t r0, size_t r1, uint32_t cols, float *w)
{
    const float a = (float) sqrt(3.0 / (double) cols);
    #pragma omp parallel for schedule(static) if ((r1 - r0) * cols >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        eng_syn_fill(key, (uint64_t) r * cols, cols, a, w + (r - r0) * cols);
    }
}

EngQMatrix *
eng_syn_qmatrix(uint64_t key, uint32_t rows, uint32_t cols, EngQFormat format)
{
    EngQMatrix *m = eng_qmatrix_new(format, rows, cols);
    const size_t block = 256;
    /* 14.7 MB for a 14336-wide block: in huge pages, and the same
     * buffer for the next matrix (hs_mem_alloc0, hs_mem_free) */
    const size_t w_bytes = sizeof(float) * MIN(rows, block) * MAX(cols, 1);
    float *w = hs_mem_alloc0(w_bytes);
    for (size_t r0 = 0; r0 < rows; r0 += block) {
        size_t r1 = MIN(rows, r0 + block);
        syn_rows(key, r0, r1, cols, w);
        eng_qmatrix_set_rows(m, (uint32_t) r0, (uint32_t) r1, w);
    }
    hs_mem_free(w, w_bytes);
    return m;
}

/* Outlier channel i of n: a hash of the seed (duplicates simply merge). */
static uint32_t
outlier_channel(uint64_t seed, uint32_t hidden, uint32_t i)
{
    return (uint32_t) (mix(eng_syn_key(seed, ENG_SYN_OUTLIERS, 0) ^ mix(i)) % hidden);
}

static uint32_t
outlier_count(uint32_t hidden)
{
    /* rounded: none below 250 channels (the teaching model, whose one
     * channel of 64 would be 1.6 %, far from what real models have) */
    return (hidden * ENG_SYN_OUTLIER_PER_MILLE + 500) / 1000;
}

gboolean
eng_syn_is_outlier(uint64_t seed, uint32_t hidden, uint32_t c)
{
    for (uint32_t i = 0; hidden && i < outlier_count(hidden); i++) {
        if (outlier_channel(seed, hidden, i) == c) {
            return TRUE;
        }
    }
    return FALSE;
}

void
eng_syn_outlier_gains(uint64_t seed, uint32_t hidden, float *g)
{
    for (uint32_t c = 0; c < hidden; c++) {
        if (eng_syn_is_outlier(seed, hidden, c)) {
            g[c] *= ENG_SYN_OUTLIER_GAIN;
        }
    }
}

/* The matrix with @key in @format and, if @also_out, in @also. */
static EngMatrix *
syn_matrix(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format, EngQFormat also,
           EngQMatrix **also_out)
{
    EngMatrix *m = eng_matrix_new(format, rows, cols);
    EngQMatrix *q = also_out ? eng_qmatrix_new(also, rows, cols) : NULL;
    const size_t block = 256;
    /* 14.7 MB for a 14336-wide block: in huge pages, and the same
     * buffer for the next matrix (hs_mem_alloc0, hs_mem_free) */
    const size_t w_bytes = sizeof(float) * MIN(rows, block) * MAX(cols, 1);
    float *w = hs_mem_alloc0(w_bytes);
    for (size_t r0 = 0; r0 < rows; r0 += block) {
        size_t r1 = MIN(rows, r0 + block);
        syn_rows(key, r0, r1, cols, w);
        eng_matrix_set_rows(m, (uint32_t) r0, (uint32_t) r1, w);
        if (q) {
            eng_qmatrix_set_rows(q, (uint32_t) r0, (uint32_t) r1, w);
        }
    }
    hs_mem_free(w, w_bytes);
    if (also_out) {
        *also_out = q;
    }
    return m;
}

EngMatrix *
eng_syn_matrix(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format)
{
    return syn_matrix(key, rows, cols, format, 0, NULL);
}

EngMatrix *
eng_syn_matrix_also(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format,
                    EngQFormat also, EngQMatrix **also_out)
{
    return syn_matrix(key, rows, cols, format, also, also_out);
}
