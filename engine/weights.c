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

float
eng_syn_unit(uint64_t key, uint64_t i)
{
    /* 53 random bits -> [0, 2) -> [-1, 1) */
    return (float) ((double) (mix(key ^ mix(i)) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_SYN_AVX2 1
#define SYN_TARGET __attribute__((target("avx2")))

/* x * c mod 2^64 in each lane, from 32-bit products (AVX2 has no 64-bit
 * multiply): lo(x)lo(c) + ((hi(x)lo(c) + lo(x)hi(c)) << 32). */
SYN_TARGET static inline __m256i
mul64_avx2(__m256i x, uint64_t c)
{
    const __m256i clo = _mm256_set1_epi64x((long long) (c & 0xffffffffu));
    const __m256i chi = _mm256_set1_epi64x((long long) (c >> 32));
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), clo),
                                     _mm256_mul_epu32(x, chi));
    return _mm256_add_epi64(_mm256_mul_epu32(x, clo), _mm256_slli_epi64(cross, 32));
}

/* mix() in four lanes: the same integer operations, so the same bits. */
SYN_TARGET static inline __m256i
mix_avx2(__m256i x)
{
    x = _mm256_add_epi64(x, _mm256_set1_epi64x((long long) 0x9E3779B97F4A7C15ull));
    x = mul64_avx2(_mm256_xor_si256(x, _mm256_srli_epi64(x, 30)), 0xBF58476D1CE4E5B9ull);
    x = mul64_avx2(_mm256_xor_si256(x, _mm256_srli_epi64(x, 27)), 0x94D049BB133111EBull);
    return _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
}

/*
 * eng_syn_fill four elements at a time.  The 53-bit integer goes to double
 * exactly through its two halves (each ORed into the mantissa of 2^52 and
 * 2^52 subtracted; hi * 2^32 + lo < 2^53 is exact), then the operations
 * of eng_syn_unit in the same order and precision: an exact scaling by
 * 2^-52, the subtraction of 1, rounding to float, the product with @a.
 * Generating the synthetic weights was 16 % of a checked Llama-3-8B
 * prefill's CPU (scalar: two splitmix64 rounds an element).
 */
SYN_TARGET static size_t
syn_fill_avx2(uint64_t key, uint64_t i0, size_t n, float a, float *out)
{
    const __m256i k = _mm256_set1_epi64x((long long) key), four = _mm256_set1_epi64x(4);
    const __m256i lo32 = _mm256_set1_epi64x(0xffffffffll);
    const __m256i two52 = _mm256_set1_epi64x(0x4330000000000000ll);
    const __m256d two52d = _mm256_set1_pd(4503599627370496.0), two32 = _mm256_set1_pd(4294967296.0);
    const __m256d scale = _mm256_set1_pd(2.0 / 9007199254740992.0), one = _mm256_set1_pd(1.0);
    const __m128 av = _mm_set1_ps(a);
    __m256i idx = _mm256_add_epi64(_mm256_set1_epi64x((long long) i0), _mm256_setr_epi64x(0, 1, 2, 3));
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i v = _mm256_srli_epi64(mix_avx2(_mm256_xor_si256(k, mix_avx2(idx))), 11);
        __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(v, 32),
                                                                       two52)), two52d);
        __m256d lo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(v, lo32),
                                                                       two52)), two52d);
        __m256d d = _mm256_add_pd(_mm256_mul_pd(hi, two32), lo);
        __m128 u = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_mul_pd(d, scale), one));
        _mm_storeu_ps(out + i, _mm_mul_ps(av, u));
        idx = _mm256_add_epi64(idx, four);
    }
    return i;
}

#define SYN_TARGET512 __attribute__((target("avx512f,avx512dq,avx512vl")))

/* mix() in eight lanes with AVX-512DQ's 64-bit multiply. */
SYN_TARGET512 static inline __m512i
mix_avx512(__m512i x)
{
    x = _mm512_add_epi64(x, _mm512_set1_epi64((long long) 0x9E3779B97F4A7C15ull));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 30)),
                           _mm512_set1_epi64((long long) 0xBF58476D1CE4E5B9ull));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)),
                           _mm512_set1_epi64((long long) 0x94D049BB133111EBull));
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

/*
 * eng_syn_fill eight elements at a time: the integer operations of mix(),
 * the 53-bit integer to double exactly (vcvtuqq2pd: below 2^53), then
 * eng_syn_unit's operations in the same order and precision.  Generating
 * the weights was 10 % of the default compare's CPU on an AVX-512 host
 * with the AVX2 path, which emulates each 64-bit multiply by three 32-bit
 * ones.
 */
SYN_TARGET512 static size_t
syn_fill_avx512(uint64_t key, uint64_t i0, size_t n, float a, float *out)
{
    const __m512i k = _mm512_set1_epi64((long long) key), eight = _mm512_set1_epi64(8);
    const __m512d scale = _mm512_set1_pd(2.0 / 9007199254740992.0), one = _mm512_set1_pd(1.0);
    const __m256 av = _mm256_set1_ps(a);
    __m512i idx = _mm512_add_epi64(_mm512_set1_epi64((long long) i0),
                                   _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i v = _mm512_srli_epi64(mix_avx512(_mm512_xor_si512(k, mix_avx512(idx))), 11);
        __m512d d = _mm512_cvtepu64_pd(v);
        __m256 u = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_mul_pd(d, scale), one));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(av, u));
        idx = _mm512_add_epi64(idx, eight);
    }
    return i;
}
#endif

void
eng_syn_fill(uint64_t key, uint64_t i0, size_t n, float a, float *out)
{
    size_t i = 0;
#ifdef HAVE_SYN_AVX2
    if (eng_isa() == ENG_ISA_AVX512) {
        i = syn_fill_avx512(key, i0, n, a, out);
    } else if (eng_isa() != ENG_ISA_PORTABLE) {
        i = syn_fill_avx2(key, i0, n, a, out);
    }
#endif
    for (; i < n; i++) {
        out[i] = a * eng_syn_unit(key, i0 + i);
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
