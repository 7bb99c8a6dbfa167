/*
 * weights.c - see weights.h.
 */
#include "engine/weights.h"

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

void
eng_syn_fill(uint64_t key, uint64_t i0, size_t n, float a, float *out)
{
    for (size_t i = 0; i < n; i++) {
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
    g_autofree float *w = g_malloc(sizeof(float) * MIN(rows, block) * MAX(cols, 1));
    for (size_t r0 = 0; r0 < rows; r0 += block) {
        size_t r1 = MIN(rows, r0 + block);
        syn_rows(key, r0, r1, cols, w);
        eng_qmatrix_set_rows(m, (uint32_t) r0, (uint32_t) r1, w);
    }
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

EngMatrix *
eng_syn_matrix(uint64_t key, uint32_t rows, uint32_t cols, EngWFormat format)
{
    EngMatrix *m = eng_matrix_new(format, rows, cols);
    const size_t block = 256;
    g_autofree float *w = g_malloc(sizeof(float) * MIN(rows, block) * MAX(cols, 1));
    for (size_t r0 = 0; r0 < rows; r0 += block) {
        size_t r1 = MIN(rows, r0 + block);
        syn_rows(key, r0, r1, cols, w);
        eng_matrix_set_rows(m, (uint32_t) r0, (uint32_t) r1, w);
    }
    return m;
}
