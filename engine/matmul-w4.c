/*
 * matmul-w4.c - the W4A16 matmul, our own kernel (the format is described
 * in kernels.h).  One output element y[t, r] is, in this order and nothing
 * else:
 *   for each group g of 128 inputs:
 *     a[k][l] (k = 0..3, l = 0..7) accumulate, by fused multiply-add and
 *       in increasing input order, the products (q - 8) * x of the inputs
 *       e with (e % 32) / 8 == k and e % 8 == l;
 *     tot[l] = fma(scale_g, (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]), tot[l])
 *   y = ((tot0 + tot4) + (tot2 + tot6)) + ((tot1 + tot5) + (tot3 + tot7))
 * which is what eight-lane AVX2 registers do naturally (four independent
 * FMA chains, so the loop is not latency-bound); AVX-512 holds a[0] and
 * a[1] (a[2] and a[3]) in the two halves of one register, which performs
 * the same per-lane operations with half the instructions.  The portable,
 * AVX2 and AVX-512 paths therefore give the same bits; the fastest the CPU
 * has is used (eng_set_isa() picks one; HS_ENGINE_NO_SIMD=1 forces the
 * portable one, HS_ENGINE_ISA=avx2 the AVX2 one).  OpenMP parallelises
 * over output rows; each row takes its tokens two at a time (AVX-512:
 * four, which has the registers for it) so the INT4 weights are unpacked
 * once per pair (quad).
 */
#include "engine/matmul-w4.h"

#include <math.h>
#include <string.h>

/* One group, portable: accumulate into a[4][8] (see the header comment). */
static inline void
w4_group_scalar(const uint8_t *qg, const float *x, size_t n, float a[4][8])
{
    for (size_t e = 0; e < n; e++) {
        uint8_t b = qg[(e / 32) * 16 + (e % 16)];
        int nib = (e % 32) >= 16 ? b >> 4 : b & 0x0f;
        size_t k = (e % 32) / 8, l = e % 8;
        a[k][l] = fmaf((float) (nib - 8), x[e], a[k][l]);
    }
}

static inline void
w4_group_fold(float a[4][8], float scale, float tot[8])
{
    for (int l = 0; l < 8; l++) {
        tot[l] = fmaf(scale, (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]), tot[l]);
    }
}

static inline float
w4_reduce8(const float t[8])
{
    float s4[4], s2[2];
    for (int l = 0; l < 4; l++) {
        s4[l] = t[l] + t[l + 4];
    }
    for (int l = 0; l < 2; l++) {
        s2[l] = s4[l] + s4[l + 2];
    }
    return s2[0] + s2[1];
}

/* y for one row and one token, portable. */
static float
w4_dot_scalar(const EngMatrix *w, size_t r, const float *x)
{
    const size_t k = w->cols;
    float tot[8] = { 0 };
    for (size_t g = 0; g < w->groups; g++) {
        size_t c0 = g * ENG_W4_GROUP;
        float a[4][8] = { { 0 } };
        w4_group_scalar(w->q4 + (r * w->groups + g) * 64, x + c0, MIN(ENG_W4_GROUP, k - c0), a);
        w4_group_fold(a, eng_fp16_to_float(w->scales[r * w->groups + g]), tot);
    }
    return w4_reduce8(tot);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "engine/reduce-avx2.h"
#define HAVE_W4_AVX2 1

#define W4_TARGET __attribute__((target("avx2,fma,f16c")))

W4_TARGET static inline float
w4_reduce8_avx2(__m256 t)
{
    /* the order of w4_reduce8 */
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

/* Unpack 32 weights (16 bytes) as q - 8 into four vectors of 8 floats:
 * inputs 0-7, 8-15, 16-23, 24-31 of the chunk.  Each half's 8 bytes are
 * widened to 32-bit lanes straight from memory and both nibbles taken
 * from there: two shuffles per chunk instead of six (byte-wise masks,
 * two byte shifts and four widenings), which bounded a decode step's
 * matvec on AVX2 (Zen 3: 9.2 -> 7.0 ms for a 14336 x 4096 matrix, one
 * thread; the same values, so the same bits). */
W4_TARGET static inline void
w4_unpack32(const uint8_t *p, __m256 f[4])
{
    const __m256i m4 = _mm256_set1_epi32(0x0f), eight = _mm256_set1_epi32(8);
    __m256i b0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) p));
    __m256i b1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (p + 8)));
    f[0] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(b0, m4), eight));
    f[1] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(b1, m4), eight));
    f[2] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b0, 4), eight));
    f[3] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b1, 4), eight));
}

/* A last partial group through the portable code, folded into @tot with
 * the same operations as a full one. */
W4_TARGET static __m256
w4_tail_avx2(const uint8_t *qg, const float *x, size_t n, float scale, __m256 tot)
{
    float a[4][8] = { { 0 } }, t[8];
    w4_group_scalar(qg, x, n, a);
    _mm256_storeu_ps(t, tot);
    w4_group_fold(a, scale, t);
    return _mm256_loadu_ps(t);
}

/* Unpack 32 weights (16 bytes) as (q - 8) * 2^28, in the order of
 * w4_unpack32: the bytes XORed with 0x88 make each nibble q - 8 in
 * two's complement, a byte shuffle puts byte l at the top of lane l, and
 * a shift (low nibble) or a mask (high nibble) leaves the nibble in the
 * top four bits: 12 vector operations for 32 weights instead of 14, and
 * one load (15.5 -> 17.0 G multiply-adds a second on one Zen 3 thread,
 * weights in L2). */
W4_TARGET static inline void
w4_unpack32_s28(const uint8_t *p, __m256 f[4])
{
    const __m256i m0 = _mm256_setr_epi8(-1, -1, -1, 0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3,
                                        -1, -1, -1, 4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1, 7);
    const __m256i m1 = _mm256_setr_epi8(-1, -1, -1, 8, -1, -1, -1, 9, -1, -1, -1, 10, -1, -1, -1,
                                        11, -1, -1, -1, 12, -1, -1, -1, 13, -1, -1, -1, 14, -1, -1,
                                        -1, 15);
    const __m256i top = _mm256_set1_epi32((int) 0xf0000000u);
    __m256i b = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) p)),
                                 _mm256_set1_epi8((char) 0x88));
    __m256i v0 = _mm256_shuffle_epi8(b, m0), v1 = _mm256_shuffle_epi8(b, m1);
    f[0] = _mm256_cvtepi32_ps(_mm256_slli_epi32(v0, 4));
    f[1] = _mm256_cvtepi32_ps(_mm256_slli_epi32(v1, 4));
    f[2] = _mm256_cvtepi32_ps(_mm256_and_si256(v0, top));
    f[3] = _mm256_cvtepi32_ps(_mm256_and_si256(v1, top));
}

/*
 * May one token's row @x go through the weights scaled by 2^28?  Yes when
 * every x is 0 or 2^-99 <= |x| <= 2^80.  Then every product (q - 8) x and
 * every partial sum of a group is 0 or a multiple of 2^-122 (by induction:
 * a rounded sum below 2^-99 in magnitude was exact), so none is subnormal,
 * and none scaled by 2^28 reaches 2^127: rounding commutes with the
 * scaling, each a[k] and (a0 + a1) + (a2 + a3) is exactly 2^28 times the
 * unscaled one, and fma(scale * 2^-28, that, tot) (scale * 2^-28 exact:
 * an FP16 scale is 0 or at least 2^-24) rounds the same real number as
 * fma(scale, sum, tot).  The same bits, for these inputs only; others
 * take the unscaled path.
 */
static gboolean
w4_s28_ok(const float *x, size_t n)
{
    gboolean ok = TRUE;
    for (size_t i = 0; i < n; i++) {
        float a = fabsf(x[i]);
        ok &= a == 0.0f || (a >= 0x1p-99f && a <= 0x1p80f);   /* NaN: FALSE */
    }
    return ok;
}

/* How far ahead of its group a row's weights are fetched: a decode
 * step's layer (112 MB for Llama-3-8B) comes from DRAM, and the hardware
 * prefetchers alone left it there half the time.  One token, [14336 x
 * 4096] x 8 matrices round robin, two Emerald Rapids threads: 25.1 ->
 * 37.7 G multiply-adds a second (the in-cache speed; 512 B ahead: 28.8,
 * 1 KiB: 32.8, 4 KiB: 39.1 but one thread slower). */
#define W4_PREFETCH_BYTES 2048

/* Row @r against one token: y = W[r, :] . x; @s28: the weights unpacked
 * as (q - 8) * 2^28 and the scales times 2^-28 (w4_s28_ok). */
W4_TARGET static inline __attribute__((always_inline)) float
w4_row1_body(const EngMatrix *w, size_t r, const float *x, int s28)
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP;
    const uint8_t *q = w->q4 + r * w->groups * 64;
    const uint16_t *sc = w->scales + r * w->groups;
    __m256 tot = _mm256_setzero_ps();
    for (size_t g = 0; g < full; g++) {
        const float *xg = x + g * ENG_W4_GROUP;
        const uint8_t *qg = q + g * 64;
        /* fetched ahead, as the AVX-512 path does (W4_PREFETCH_BYTES) */
        _mm_prefetch((const char *) qg + W4_PREFETCH_BYTES, _MM_HINT_T0);
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < 4; i++) {
            __m256 f[4];
            if (s28) {
                w4_unpack32_s28(qg + i * 16, f);
            } else {
                w4_unpack32(qg + i * 16, f);
            }
            a0 = _mm256_fmadd_ps(f[0], _mm256_loadu_ps(xg + 32 * i), a0);
            a1 = _mm256_fmadd_ps(f[1], _mm256_loadu_ps(xg + 32 * i + 8), a1);
            a2 = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xg + 32 * i + 16), a2);
            a3 = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xg + 32 * i + 24), a3);
        }
        float sg = _cvtsh_ss(sc[g]);
        __m256 s = _mm256_set1_ps(s28 ? sg * 0x1p-28f : sg);
        tot = _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                              tot);
    }
    if (full < w->groups) {
        size_t c0 = full * ENG_W4_GROUP;
        tot = w4_tail_avx2(q + full * 64, x + c0, k - c0, _cvtsh_ss(sc[full]), tot);
    }
    return w4_reduce8_avx2(tot);
}

W4_TARGET static float
w4_row1_avx2(const EngMatrix *w, size_t r, const float *x)
{
    return w4_row1_body(w, r, x, 0);
}

W4_TARGET static float
w4_row1_s28_avx2(const EngMatrix *w, size_t r, const float *x)
{
    return w4_row1_body(w, r, x, 1);
}

/* Row @r against two tokens at once (each with the operations of
 * w4_row1_avx2): out[0] = W[r, :] . x0, out[1] = W[r, :] . x1 */
W4_TARGET static void
w4_row2_avx2(const EngMatrix *w, size_t r, const float *x0, const float *x1, float out[2])
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP;
    const uint8_t *q = w->q4 + r * w->groups * 64;
    const uint16_t *sc = w->scales + r * w->groups;
    __m256 tot0 = _mm256_setzero_ps(), tot1 = _mm256_setzero_ps();
    for (size_t g = 0; g < full; g++) {
        const float *xa = x0 + g * ENG_W4_GROUP, *xb = x1 + g * ENG_W4_GROUP;
        const uint8_t *qg = q + g * 64;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int i = 0; i < 4; i++) {
            __m256 f[4];
            w4_unpack32(qg + i * 16, f);
            a0 = _mm256_fmadd_ps(f[0], _mm256_loadu_ps(xa + 32 * i), a0);
            a1 = _mm256_fmadd_ps(f[1], _mm256_loadu_ps(xa + 32 * i + 8), a1);
            a2 = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xa + 32 * i + 16), a2);
            a3 = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xa + 32 * i + 24), a3);
            b0 = _mm256_fmadd_ps(f[0], _mm256_loadu_ps(xb + 32 * i), b0);
            b1 = _mm256_fmadd_ps(f[1], _mm256_loadu_ps(xb + 32 * i + 8), b1);
            b2 = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xb + 32 * i + 16), b2);
            b3 = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xb + 32 * i + 24), b3);
        }
        __m256 s = _mm256_set1_ps(_cvtsh_ss(sc[g]));
        tot0 = _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                               tot0);
        tot1 = _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(b0, b1), _mm256_add_ps(b2, b3)),
                               tot1);
    }
    if (full < w->groups) {
        size_t c0 = full * ENG_W4_GROUP;
        float s = _cvtsh_ss(sc[full]);
        tot0 = w4_tail_avx2(q + full * 64, x0 + c0, k - c0, s, tot0);
        tot1 = w4_tail_avx2(q + full * 64, x1 + c0, k - c0, s, tot1);
    }
    out[0] = w4_reduce8_avx2(tot0);
    out[1] = w4_reduce8_avx2(tot1);
}

/* Row @r of y for tokens [s0, s1).  The thread loop stays outside the
 * target functions: clang 14 outlines an OpenMP region without its
 * function's target attribute and then cannot lower the AVX code in it
 * ("Do not know how to split the result of this operator"). */
W4_TARGET static void
w4_rowspan_avx2(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r)
{
    const size_t k = w->cols, n = w->rows;
    size_t t = s0;
    for (; t + 2 <= s1; t += 2) {
        float out[2];
        w4_row2_avx2(w, r, x + t * k, x + (t + 1) * k, out);
        y[t * n + r] = out[0];
        y[(t + 1) * n + r] = out[1];
    }
    if (t < s1) {
        y[t * n + r] = w4_row1_avx2(w, r, x + t * k);
    }
}

static void
w4_matmul_avx2(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1,
               size_t r0, size_t r1)
{
    const size_t k = w->cols, n = w->rows;
    /* one token (a decode step): the scaled unpack when its inputs allow */
    const gboolean s28 = s1 - s0 == 1 && w4_s28_ok(x + s0 * k, k);
    /* y [s1 - s0, r1 - r0]: one thread owns each output row r (a column
     * of y), for all its tokens */
    #pragma omp parallel for schedule(static) if ((r1 - r0) * (s1 - s0) * k >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        if (s28) {
            y[s0 * n + r] = w4_row1_s28_avx2(w, r, x + s0 * k);
        } else {
            w4_rowspan_avx2(x, w, y, s0, s1, r);
        }
    }
}

/*
 * Many tokens (batch decode, prefill): the blocked kernel.  A block of
 * W4B_ROWS rows x W4B_GROUPS groups is unpacked once into FP32 (the values
 * q - 8 are exact, so nothing changes); then, four tokens at a time, the
 * tokens' inputs of the block are copied into a 2 KiB buffer that stays
 * in L1 while every row of the block meets them (one weight load for four
 * FMAs).  Per (row, token, group) the operations are those of
 * w4_row1_avx2, tot carried in memory between blocks.  The pair kernel
 * unpacked a row again for every two tokens and read both tokens' whole
 * input rows from L2 for every row.  One Zen 3 thread, 64 tokens x [4096
 * x 4096]: 52 -> 39 ms (the inputs read where they are, four rows 16 KiB
 * apart: 1.28x that; copied for all tokens at once per block of groups,
 * 64 KiB: 1.02x; 1 row x 3 tokens: 1.08x; 2 rows x 2 tokens: 1.2x).
 * Below 16 tokens the unpacking is not shared enough (8 tokens: 6.3 ->
 * 7.7 ms), so fewer stay with the pair kernel.  Then 39.8 -> 35.9 ms:
 * rows two at a time (w4b_tile2), the unpacked weights stored straight
 * (not through the stack), and eight rows' sums reduced at once.  With
 * AVX-512 the same tiles in 16-lane registers (w4b_tile2_512): one
 * Emerald Rapids thread, 64 tokens x [4096 x 4096], 25.6 GFLOPS (the
 * unblocked four-token kernel it used before) -> 83.5.  Blocks of 128
 * rows or 4 groups (this CPU's L2 is 2 MiB) were within the run-to-run
 * noise (+-10 %) and not kept.  One group a block: its unpacked weights
 * (64 rows, 32 KiB) stay in a 48 KiB L1 where two groups' (64 KiB) were
 * read from L2 for every tile of tokens.  One AMD EPYC (Zen 5) thread,
 * 256 tokens x [4096 x 4096], three alternated rounds: AVX2 0.85-0.88x
 * -> 0.91-0.92x the OpenBLAS sgemm of the same `bench engine` run,
 * AVX-512 164-175 -> 176-181 GFLOPS; 32 rows a block were no faster.
 */
#define W4B_ROWS 64
#define W4B_GROUPS 1
#define W4B_TOK 4
#define W4B_MAX_TOKENS 64        /* tokens a call takes at once (bounds tot) */
#define W4B_MIN_TOKENS 16

/* A thread's scratch: 32 + 128 KiB, in L2 (the weights in L1) */
typedef struct W4Block {
    float w[W4B_ROWS][W4B_GROUPS * ENG_W4_GROUP];
    float scale[W4B_ROWS][W4B_GROUPS];
    /* [token / W4B_TOK][row][token % W4B_TOK]: rows in the order a
     * tile of tokens meets them */
    float tot[W4B_MAX_TOKENS / W4B_TOK][W4B_ROWS][W4B_TOK * 8];
} W4Block;

/* tot[8 j ..] (j < nt <= 4) += the @ng groups of one unpacked row @wr
 * against x[j] (the last row of a block with an odd count; w4b_tile2
 * takes the others two at a time).  A group's four accumulators of each
 * token are taken two at a time (a0 with a1, then a2 with a3), so four
 * tokens fit the registers: 8 accumulators, the four a0 + a1, the
 * weights. */
W4_TARGET static inline __attribute__((always_inline)) void
w4b_tile(const float *wr, const float *sc, size_t ng, const float *const x[W4B_TOK], int nt,
         float *tot)
{
    __m256 t[W4B_TOK];
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        t[j] = _mm256_load_ps(tot + 8 * j);
    }
    for (size_t g = 0; g < ng; g++) {
        const size_t o = g * ENG_W4_GROUP;
        __m256 h[2][W4B_TOK];     /* [half][token]: a0 + a1, a2 + a3 */
        _Pragma("GCC unroll 2")
        for (int hf = 0; hf < 2; hf++) {
            __m256 a[W4B_TOK], c[W4B_TOK];
            _Pragma("GCC unroll 4")
            for (int j = 0; j < nt; j++) {
                a[j] = _mm256_setzero_ps();
                c[j] = _mm256_setzero_ps();
            }
            _Pragma("GCC unroll 4")
            for (int i = 0; i < 4; i++) {
                const size_t e = o + 32 * i + 16 * hf;
                __m256 f = _mm256_load_ps(wr + e);
                _Pragma("GCC unroll 4")
                for (int j = 0; j < nt; j++) {
                    a[j] = _mm256_fmadd_ps(f, _mm256_load_ps(x[j] + e), a[j]);
                }
                f = _mm256_load_ps(wr + e + 8);
                _Pragma("GCC unroll 4")
                for (int j = 0; j < nt; j++) {
                    c[j] = _mm256_fmadd_ps(f, _mm256_load_ps(x[j] + e + 8), c[j]);
                }
            }
            _Pragma("GCC unroll 4")
            for (int j = 0; j < nt; j++) {
                h[hf][j] = _mm256_add_ps(a[j], c[j]);
            }
        }
        __m256 s = _mm256_set1_ps(sc[g]);
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            t[j] = _mm256_fmadd_ps(s, _mm256_add_ps(h[0][j], h[1][j]), t[j]);
        }
    }
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        _mm256_store_ps(tot + 8 * j, t[j]);
    }
}

/* Unpack rows [ra, ra + nr) x groups [g0, g0 + ng) into @b. */
W4_TARGET static void
w4b_unpack(const EngMatrix *w, size_t ra, size_t nr, size_t g0, size_t ng,
           float (*wd)[W4B_GROUPS * ENG_W4_GROUP], float (*sd)[W4B_GROUPS])
{
    for (size_t i = 0; i < nr; i++) {
        const uint8_t *q = w->q4 + ((ra + i) * w->groups + g0) * 64;
        /* rows are 64 bytes x groups apart, a stride no hardware
         * prefetcher follows: the next block is fetched ahead */
        for (size_t l = 0; l < W4B_GROUPS; l++) {
            _mm_prefetch((const char *) q + (W4B_GROUPS + l) * 64, _MM_HINT_T0);
        }
        for (size_t g = 0; g < ng; g++) {
            for (int c = 0; c < 4; c++) {
                float *d = wd[i] + g * ENG_W4_GROUP + 32 * c;
                __m256 f[4];
                w4_unpack32(q + g * 64 + c * 16, f);
                /* one store each: GCC merged a loop of them into a copy
                 * of f through the stack, 16 bytes at a time */
                _mm256_store_ps(d, f[0]);
                _mm256_store_ps(d + 8, f[1]);
                _mm256_store_ps(d + 16, f[2]);
                _mm256_store_ps(d + 24, f[3]);
            }
            sd[i][g] = _cvtsh_ss(w->scales[(ra + i) * w->groups + g0 + g]);
        }
    }
}

/* One pass of a block's rows over a tile of @nt (1..W4B_TOK) tokens'
 * inputs @x: tot[i] (row i's totals, W4B_TOK * 8 floats) += the block's
 * @ng groups of row i against x[j].  One function per ISA and token
 * count (the count a constant, so the tiles' loops unroll). */
typedef void W4bPass(const W4Block *b, size_t nr, size_t ng, const float *const x[W4B_TOK],
                     float (*tot)[W4B_TOK * 8]);

#define W4B_PASS_BODY(tile2, nt)                                                              \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + 2 <= nr; i += 2) {                                                         \
            tile2(b->w[i], b->w[i + 1], b->scale[i], b->scale[i + 1], ng, x, nt, tot[i],      \
                  tot[i + 1]);                                                                \
        }                                                                                     \
        for (; i < nr; i++) {                                                                 \
            w4b_tile(b->w[i], b->scale[i], ng, x, nt, tot[i]);                                \
        }                                                                                     \
    }
#define W4B_PASS_FNS(isa, target, tile2)                                                      \
    target static void w4b_pass_##isa##_1(const W4Block *b, size_t nr, size_t ng,             \
                                          const float *const x[W4B_TOK],                      \
                                          float (*tot)[W4B_TOK * 8]) W4B_PASS_BODY(tile2, 1)  \
    target static void w4b_pass_##isa##_2(const W4Block *b, size_t nr, size_t ng,             \
                                          const float *const x[W4B_TOK],                      \
                                          float (*tot)[W4B_TOK * 8]) W4B_PASS_BODY(tile2, 2)  \
    target static void w4b_pass_##isa##_3(const W4Block *b, size_t nr, size_t ng,             \
                                          const float *const x[W4B_TOK],                      \
                                          float (*tot)[W4B_TOK * 8]) W4B_PASS_BODY(tile2, 3)  \
    target static void w4b_pass_##isa##_4(const W4Block *b, size_t nr, size_t ng,             \
                                          const float *const x[W4B_TOK],                      \
                                          float (*tot)[W4B_TOK * 8]) W4B_PASS_BODY(tile2, 4)  \
    static W4bPass *const w4b_pass_##isa[W4B_TOK] = {                                        \
        w4b_pass_##isa##_1, w4b_pass_##isa##_2, w4b_pass_##isa##_3, w4b_pass_##isa##_4,       \
    };

#define W4_TARGET512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

/* w4b_tile2 with AVX-512: one register holds a (row, token)'s a0 and a1
 * (a2 and a3) side by side, as the inputs e and e + 8 lie in memory, so
 * each FMA does the work of two of w4b_tile2's; every lane's operations
 * are w4b_tile2's (the same bits).  6 loads for 8 FMAs of 16 lanes.  Two
 * tokens' sums are folded together, 16 lanes wide: a shuffle of their
 * registers' halves gives [a0 of j | a0 of j + 1] and [a1 | a1], whose
 * sum is both tokens' a0 + a1, and their totals stay in registers over
 * the block's groups (8 vector operations a pair and group where halves
 * extracted one token at a time took 12, and 4 loads and stores). */
W4_TARGET512 static inline __attribute__((always_inline)) void
w4b_tile2_512(const float *w0, const float *w1, const float *sc0, const float *sc1, size_t ng,
              const float *const x[W4B_TOK], int nt, float *tot0, float *tot1)
{
    const int np = nt / 2;                  /* token pairs; a last odd one alone */
    __m512 tp[2][W4B_TOK / 2];              /* [row][pair]: totals of 2p | 2p + 1 */
    _Pragma("GCC unroll 2")
    for (int p = 0; p < np; p++) {
        tp[0][p] = _mm512_loadu_ps(tot0 + 16 * p);
        tp[1][p] = _mm512_loadu_ps(tot1 + 16 * p);
    }
    for (size_t g = 0; g < ng; g++) {
        __m512 sp[2][2][W4B_TOK / 2];       /* [half][row][pair]: a0 + a1, a2 + a3 */
        __m256 h[2][2];                     /* [half][row]: the odd token's */
        _Pragma("GCC unroll 2")
        for (int hf = 0; hf < 2; hf++) {
            __m512 a[2][W4B_TOK];
            _Pragma("GCC unroll 4")
            for (int j = 0; j < nt; j++) {
                a[0][j] = _mm512_setzero_ps();
                a[1][j] = _mm512_setzero_ps();
            }
            _Pragma("GCC unroll 4")
            for (int i = 0; i < 4; i++) {
                const size_t e = g * ENG_W4_GROUP + 32 * i + 16 * hf;
                const __m512 f0 = _mm512_load_ps(w0 + e), f1 = _mm512_load_ps(w1 + e);
                _Pragma("GCC unroll 4")
                for (int j = 0; j < nt; j++) {
                    __m512 xv = _mm512_load_ps(x[j] + e);
                    __asm__("" : "+v"(xv));
                    a[0][j] = _mm512_fmadd_ps(f0, xv, a[0][j]);
                    a[1][j] = _mm512_fmadd_ps(f1, xv, a[1][j]);
                }
            }
            _Pragma("GCC unroll 2")
            for (int r = 0; r < 2; r++) {
                _Pragma("GCC unroll 2")
                for (int p = 0; p < np; p++) {
                    const __m512 u = a[r][2 * p], v = a[r][2 * p + 1];
                    sp[hf][r][p] = _mm512_add_ps(_mm512_shuffle_f32x4(u, v, 0x44),
                                                 _mm512_shuffle_f32x4(u, v, 0xee));
                }
                if (nt % 2) {
                    h[hf][r] = _mm256_add_ps(_mm512_castps512_ps256(a[r][nt - 1]),
                                             _mm512_extractf32x8_ps(a[r][nt - 1], 1));
                }
            }
        }
        _Pragma("GCC unroll 2")
        for (int r = 0; r < 2; r++) {
            const float sg = r == 0 ? sc0[g] : sc1[g];
            const __m512 s = _mm512_set1_ps(sg);
            _Pragma("GCC unroll 2")
            for (int p = 0; p < np; p++) {
                tp[r][p] = _mm512_fmadd_ps(s, _mm512_add_ps(sp[0][r][p], sp[1][r][p]), tp[r][p]);
            }
            if (nt % 2) {
                float *tot = (r == 0 ? tot0 : tot1) + 8 * (nt - 1);
                _mm256_store_ps(tot, _mm256_fmadd_ps(_mm256_set1_ps(sg),
                                                     _mm256_add_ps(h[0][r], h[1][r]),
                                                     _mm256_load_ps(tot)));
            }
        }
    }
    _Pragma("GCC unroll 2")
    for (int p = 0; p < np; p++) {
        _mm512_storeu_ps(tot0 + 16 * p, tp[0][p]);
        _mm512_storeu_ps(tot1 + 16 * p, tp[1][p]);
    }
}

W4B_PASS_FNS(avx512, W4_TARGET512, w4b_tile2_512)

/* Pack token @t (of a chunk starting at @s0) of x: its full groups, block
 * of W4B_GROUPS after block (each block's @tiles tiles of @tok tokens),
 * at tile t / tok, place t % tok: a tile's inputs contiguous, and the
 * tiles of a block of groups one after the other.  Copied per tile from
 * the rows, k floats apart (a stride no prefetcher follows), the copy
 * waited on L3 for every line (a quarter of the AVX2 kernel's time). */
W4_TARGET static void
w4_pack(const float *x, size_t k, size_t full, size_t s0, size_t t, size_t tok, size_t tiles,
        float *xp)
{
    const size_t span = W4B_GROUPS * ENG_W4_GROUP;
    const float *xt = x + (s0 + t) * k;
    for (size_t g0 = 0; g0 < full; g0 += W4B_GROUPS) {
        float *d = xp + ((g0 / W4B_GROUPS * tiles + t / tok) * tok + t % tok) * span;
        const size_t n = MIN(W4B_GROUPS, full - g0) * ENG_W4_GROUP;
        for (size_t e = 0; e < n; e += 8) {
            _mm256_store_ps(d + e, _mm256_loadu_ps(xt + g0 * ENG_W4_GROUP + e));
        }
    }
}

/* Rows [ra, ra + nr) (nr <= W4B_ROWS) of y for tokens [s0, s1) (at most
 * W4B_MAX_TOKENS, packed in @xp by w4_pack in tiles of W4B_TOK), with @b
 * as scratch and @pass's tiles. */
W4_TARGET static void
w4b_rows(const float *x, const float *xp, const EngMatrix *w, float *y, size_t s0, size_t s1,
         size_t ra, size_t nr, W4Block *b, W4bPass *const pass[W4B_TOK])
{
    const size_t k = w->cols, n = w->rows, full = k / ENG_W4_GROUP, nt = s1 - s0;
    const size_t span = W4B_GROUPS * ENG_W4_GROUP, tiles = W4B_MAX_TOKENS / W4B_TOK;
    memset(b->tot, 0, sizeof(b->tot));
    for (size_t g0 = 0; g0 < full; g0 += W4B_GROUPS) {
        const size_t ng = MIN(W4B_GROUPS, full - g0);
        const float *xg = xp + g0 / W4B_GROUPS * tiles * W4B_TOK * span;
        w4b_unpack(w, ra, nr, g0, ng, b->w, b->scale);
        for (size_t t = 0; t < nt; t += W4B_TOK) {
            const size_t m = MIN(W4B_TOK, nt - t);
            const float *xs[W4B_TOK];
            for (size_t j = 0; j < W4B_TOK; j++) {
                xs[j] = xg + (t + MIN(j, m - 1)) * span;
            }
            pass[m - 1](b, nr, ng, xs, b->tot[t / W4B_TOK]);
        }
    }
    size_t i0 = 0;
    if (full == w->groups) {
        /* eight rows of a token at a time: their y side by side */
        for (; i0 + 8 <= nr; i0 += 8) {
            for (size_t t = 0; t < nt; t++) {
                __m256 v[8];
                for (int l = 0; l < 8; l++) {
                    v[l] = _mm256_load_ps(b->tot[t / W4B_TOK][i0 + l] + 8 * (t % W4B_TOK));
                }
                _mm256_storeu_ps(y + (s0 + t) * n + ra + i0, eng_reduce8x8_avx2(v));
            }
        }
    }
    for (size_t i = i0; i < nr; i++) {
        const size_t r = ra + i;
        for (size_t t = 0; t < nt; t++) {
            __m256 tot = _mm256_load_ps(b->tot[t / W4B_TOK][i] + 8 * (t % W4B_TOK));
            if (full < w->groups) {
                size_t c0 = full * ENG_W4_GROUP;
                tot = w4_tail_avx2(w->q4 + (r * w->groups + full) * 64, x + (s0 + t) * k + c0,
                                   k - c0, _cvtsh_ss(w->scales[r * w->groups + full]), tot);
            }
            y[(s0 + t) * n + r] = w4_reduce8_avx2(tot);
        }
    }
}

/* y[s0:s1, r0:r1] by the blocked kernel; one thread owns each block of
 * rows, for all the tokens. */
static void
w4b_matmul(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r0,
           size_t r1, W4bPass *const pass[W4B_TOK])
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP, rows = eng_block_rows(r1 - r0, W4B_ROWS);
    const size_t blocks = (r1 - r0 + rows - 1) / rows;
    const size_t slots = (full + W4B_GROUPS - 1) / W4B_GROUPS;
    /* the inputs packed per chunk of tokens (w4_pack); 64-byte aligned */
    float *xp = g_aligned_alloc(MAX(slots, 1) * W4B_MAX_TOKENS * W4B_GROUPS * ENG_W4_GROUP,
                                sizeof(float), 64);
    #pragma omp parallel if (blocks > 1 && (r1 - r0) * (s1 - s0) * k >= ENG_PAR_MIN_OPS)
    {
        W4Block *b = g_aligned_alloc(1, sizeof(W4Block), 64);
        for (size_t t0 = s0; t0 < s1; t0 += W4B_MAX_TOKENS) {
            const size_t t1 = MIN(s1, t0 + W4B_MAX_TOKENS);
            #pragma omp for schedule(static)
            for (size_t t = 0; t < t1 - t0; t++) {
                w4_pack(x, k, full, t0, t, W4B_TOK, W4B_MAX_TOKENS / W4B_TOK, xp);
            }
            #pragma omp for schedule(static)
            for (size_t i = 0; i < blocks; i++) {
                size_t ra = r0 + i * rows;
                w4b_rows(x, xp, w, y, t0, t1, ra, MIN(rows, r1 - ra), b, pass);
            }
        }
        g_aligned_free(b);
    }
    g_aligned_free(xp);
}

/*
 * The AVX2 blocked kernel: w4b_rows' blocks of unpacked weights, in tiles
 * of 3 rows x 3 tokens.  Nine accumulators, the three tokens' input
 * vectors and one weight vector stay in registers (4 x 3 left GCC no
 * register and it spilled an accumulator in the loop): each step loads 6
 * vectors for 9 FMAs.  The inputs are packed first, once per call, so
 * that a tile's are contiguous (3 tokens x a group, 1.5 KiB) and the
 * tiles of a block of groups follow each other: copied per tile from the
 * rows, k floats apart (a stride no prefetcher follows), the copy waited
 * on L3 for every line (a quarter of the kernel's time).  Per (row,
 * token, group) the operations of w4_row1_avx2, in its order.
 */
#define W4C_TOK 3
#define W4C_RT 3
#define W4C_MAX_TOKENS 66        /* 22 tiles of 3 tokens: 256 tokens in 4 chunks */
#define W4C_TILES (W4C_MAX_TOKENS / W4C_TOK)
#define W4C_SPAN (W4B_GROUPS * ENG_W4_GROUP)     /* inputs of a block of groups */

/* A thread's scratch: 32 + 132 KiB, in L2 with a block of groups' packed
 * inputs (33 KiB) */
typedef struct W4cBlock {
    float w[W4B_ROWS][W4C_SPAN];
    float scale[W4B_ROWS][W4B_GROUPS];
    float tot[W4B_ROWS][W4C_MAX_TOKENS][8];       /* [row][token]: lane totals */
} W4cBlock;

/* Rows i0 .. i0 + nr of the block against the @nt tokens of the packed
 * tile @xp (token j at xp + j * W4C_SPAN; token t0 + j of the block), the
 * block's @ng groups, into tot[row][t0 + j]. */
W4_TARGET static inline __attribute__((always_inline)) void
w4c_tile(W4cBlock *b, const float *xp, size_t i0, int nr, size_t t0, int nt, size_t ng)
{
    __m256 sp[3][W4C_RT][W4C_TOK];      /* a0, a0 + a1, a2 */
    for (size_t g = 0; g < ng; g++) {
        _Pragma("GCC unroll 4")
        for (int k = 0; k < 4; k++) {
            __m256 a[W4C_RT][W4C_TOK];
            _Pragma("GCC unroll 4")
            for (int r = 0; r < nr; r++) {
                _Pragma("GCC unroll 3")
                for (int j = 0; j < nt; j++) {
                    a[r][j] = _mm256_setzero_ps();
                }
            }
            _Pragma("GCC unroll 4")
            for (int i = 0; i < 4; i++) {
                const size_t e = g * ENG_W4_GROUP + 32 * i + 8 * k;
                __m256 xv[W4C_TOK];
                _Pragma("GCC unroll 3")
                for (int j = 0; j < nt; j++) {
                    xv[j] = _mm256_load_ps(xp + j * W4C_SPAN + e);
                    /* in registers: folded into the FMAs they are loaded per row */
                    __asm__("" : "+x"(xv[j]));
                }
                _Pragma("GCC unroll 4")
                for (int r = 0; r < nr; r++) {
                    __m256 f = _mm256_load_ps(b->w[i0 + r] + e);
                    __asm__("" : "+x"(f));
                    _Pragma("GCC unroll 3")
                    for (int j = 0; j < nt; j++) {
                        a[r][j] = _mm256_fmadd_ps(f, xv[j], a[r][j]);
                    }
                }
            }
            _Pragma("GCC unroll 4")
            for (int r = 0; r < nr; r++) {
                _Pragma("GCC unroll 3")
                for (int j = 0; j < nt; j++) {
                    if (k == 0) {
                        sp[0][r][j] = a[r][j];
                    } else if (k == 1) {
                        sp[1][r][j] = _mm256_add_ps(sp[0][r][j], a[r][j]);
                    } else if (k == 2) {
                        sp[2][r][j] = a[r][j];
                    } else {
                        float *tot = b->tot[i0 + r][t0 + j];
                        const __m256 s = _mm256_set1_ps(b->scale[i0 + r][g]);
                        const __m256 h = _mm256_add_ps(sp[1][r][j],
                                                       _mm256_add_ps(sp[2][r][j], a[r][j]));
                        _mm256_store_ps(tot, _mm256_fmadd_ps(s, h, _mm256_load_ps(tot)));
                    }
                }
            }
        }
    }
}

/* w4c_tile with constant counts (so its loops unroll), rows in threes. */
#define W4C_PASS(nt)                                                                          \
    W4_TARGET static void w4c_pass_##nt(W4cBlock *b, const float *xp, size_t nr, size_t t0,  \
                                        size_t ng)                                            \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + W4C_RT <= nr; i += W4C_RT) {                                               \
            w4c_tile(b, xp, i, W4C_RT, t0, nt, ng);                                           \
        }                                                                                     \
        for (; i < nr; i++) {                                                                 \
            w4c_tile(b, xp, i, 1, t0, nt, ng);                                                \
        }                                                                                     \
    }
W4C_PASS(1)
W4C_PASS(2)
W4C_PASS(3)

/* Rows [ra, ra + nr) (nr <= W4B_ROWS) of y for tokens [s0, s1) (at most
 * W4C_MAX_TOKENS, packed in @xp by w4_pack), with @b as scratch. */
W4_TARGET static void
w4c_rows(const float *x, const float *xp, const EngMatrix *w, float *y, size_t s0, size_t s1,
         size_t ra, size_t nr, W4cBlock *b)
{
    const size_t k = w->cols, n = w->rows, full = k / ENG_W4_GROUP, nt = s1 - s0;
    for (size_t i = 0; i < nr; i++) {
        memset(b->tot[i], 0, sizeof(b->tot[i][0]) * nt);
    }
    for (size_t g0 = 0; g0 < full; g0 += W4B_GROUPS) {
        const size_t ng = MIN(W4B_GROUPS, full - g0);
        const float *xg = xp + g0 / W4B_GROUPS * W4C_TILES * W4C_TOK * W4C_SPAN;
        w4b_unpack(w, ra, nr, g0, ng, b->w, b->scale);
        for (size_t t = 0; t < nt; t += W4C_TOK) {
            const size_t m = MIN(W4C_TOK, nt - t);
            const float *xt = xg + t * W4C_SPAN;
            if (m == 3) {
                w4c_pass_3(b, xt, nr, t, ng);
            } else if (m == 2) {
                w4c_pass_2(b, xt, nr, t, ng);
            } else {
                w4c_pass_1(b, xt, nr, t, ng);
            }
        }
    }
    size_t i0 = 0;
    if (full == w->groups) {
        /* eight rows of a token at a time: their y side by side */
        for (; i0 + 8 <= nr; i0 += 8) {
            for (size_t t = 0; t < nt; t++) {
                __m256 v[8];
                for (int l = 0; l < 8; l++) {
                    v[l] = _mm256_load_ps(b->tot[i0 + l][t]);
                }
                _mm256_storeu_ps(y + (s0 + t) * n + ra + i0, eng_reduce8x8_avx2(v));
            }
        }
    }
    for (size_t i = i0; i < nr; i++) {
        const size_t r = ra + i;
        for (size_t t = 0; t < nt; t++) {
            __m256 tot = _mm256_load_ps(b->tot[i][t]);
            if (full < w->groups) {
                size_t c0 = full * ENG_W4_GROUP;
                tot = w4_tail_avx2(w->q4 + (r * w->groups + full) * 64, x + (s0 + t) * k + c0,
                                   k - c0, _cvtsh_ss(w->scales[r * w->groups + full]), tot);
            }
            y[(s0 + t) * n + r] = w4_reduce8_avx2(tot);
        }
    }
}

/* y[s0:s1, r0:r1] by the AVX2 blocked kernel: for each chunk of at most
 * W4C_MAX_TOKENS tokens, its inputs packed (the threads sharing the
 * tokens), then one thread owns each block of rows. */
static void
w4c_matmul(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r0,
           size_t r1)
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP, rows = eng_block_rows(r1 - r0, W4B_ROWS);
    const size_t blocks = (r1 - r0 + rows - 1) / rows;
    const size_t slots = (full + W4B_GROUPS - 1) / W4B_GROUPS;
    /* 64-byte aligned for the loads */
    float *xp = g_aligned_alloc(MAX(slots, 1) * W4C_MAX_TOKENS * W4C_SPAN, sizeof(float), 64);
    #pragma omp parallel if (blocks > 1 && (r1 - r0) * (s1 - s0) * k >= ENG_PAR_MIN_OPS)
    {
        W4cBlock *b = g_aligned_alloc(1, sizeof(W4cBlock), 64);
        /* chunks as even as can be: each unpacks the weights again */
        const size_t chunks = (s1 - s0 + W4C_MAX_TOKENS - 1) / W4C_MAX_TOKENS;
        const size_t per = (s1 - s0 + chunks - 1) / chunks;
        for (size_t t0 = s0; t0 < s1; t0 += per) {
            const size_t t1 = MIN(s1, t0 + per);
            #pragma omp for schedule(static)
            for (size_t t = 0; t < t1 - t0; t++) {
                w4_pack(x, k, full, t0, t, W4C_TOK, W4C_TILES, xp);
            }
            #pragma omp for schedule(static)
            for (size_t i = 0; i < blocks; i++) {
                size_t ra = r0 + i * rows;
                w4c_rows(x, xp, w, y, t0, t1, ra, MIN(rows, r1 - ra), b);
            }
        }
        g_aligned_free(b);
    }
    g_aligned_free(xp);
}

/* Unpack 32 weights (16 bytes) as q - 8: inputs 0-15 of the chunk (a[0]
 * in the low half, a[1] in the high) and 16-31 (a[2], a[3]). */
W4_TARGET512 static inline void
w4_unpack32_512(const uint8_t *p, __m512 *f01, __m512 *f23)
{
    /* q - 8 by table lookup (the same exact values as a subtract and a
     * conversion): VPERMPS reads only bits 3:0 of each index lane, so
     * byte l widened to lane l indexes its low nibble as it is and its
     * high nibble shifted down, no mask.  Three shuffles and a shift for
     * 32 weights (were two masks, a shift and four shuffles): one token,
     * one Emerald Rapids thread, [14336 x 4096] in L3: 15.0 -> 19.4 G
     * multiply-adds a second. */
    const __m512 qm8 = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
    __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) p));
    *f01 = _mm512_permutexvar_ps(b, qm8);
    *f23 = _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), qm8);
}

/* tot = fma(s, (a0 + a1) + (a2 + a3), tot) with a0|a1 = A01, a2|a3 = A23 */
W4_TARGET512 static inline __m256
w4_fold512(__m512 a01, __m512 a23, __m256 s, __m256 tot)
{
    __m256 a0 = _mm512_castps512_ps256(a01), a1 = _mm512_extractf32x8_ps(a01, 1);
    __m256 a2 = _mm512_castps512_ps256(a23), a3 = _mm512_extractf32x8_ps(a23, 1);
    return _mm256_fmadd_ps(s, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           tot);
}

/* Row @r against @nt (1..W4_TOK_512) tokens x[t]: out[t] = W[r, :] . x[t] */
#define W4_TOK_512 4
W4_TARGET512 static inline __attribute__((always_inline)) void
w4_row_avx512(const EngMatrix *w, size_t r, const float *const x[W4_TOK_512], int nt,
              float out[W4_TOK_512])
{
    const size_t k = w->cols, full = k / ENG_W4_GROUP;
    const uint8_t *q = w->q4 + r * w->groups * 64;
    const uint16_t *sc = w->scales + r * w->groups;
    __m256 tot[W4_TOK_512];
    _Pragma("GCC unroll 4")
    for (int t = 0; t < nt; t++) {
        tot[t] = _mm256_setzero_ps();
    }
    for (size_t g = 0; g < full; g++) {
        const uint8_t *qg = q + g * 64;
        _mm_prefetch((const char *) qg + W4_PREFETCH_BYTES, _MM_HINT_T0);
        __m512 a01[W4_TOK_512], a23[W4_TOK_512];
        _Pragma("GCC unroll 4")
        for (int t = 0; t < nt; t++) {
            a01[t] = _mm512_setzero_ps();
            a23[t] = _mm512_setzero_ps();
        }
        for (int i = 0; i < 4; i++) {
            __m512 f01, f23;
            w4_unpack32_512(qg + i * 16, &f01, &f23);
            _Pragma("GCC unroll 4")
            for (int t = 0; t < nt; t++) {
                const float *xg = x[t] + g * ENG_W4_GROUP + 32 * i;
                a01[t] = _mm512_fmadd_ps(f01, _mm512_loadu_ps(xg), a01[t]);
                a23[t] = _mm512_fmadd_ps(f23, _mm512_loadu_ps(xg + 16), a23[t]);
            }
        }
        __m256 s = _mm256_set1_ps(_cvtsh_ss(sc[g]));
        _Pragma("GCC unroll 4")
        for (int t = 0; t < nt; t++) {
            tot[t] = w4_fold512(a01[t], a23[t], s, tot[t]);
        }
    }
    for (int t = 0; t < nt; t++) {
        if (full < w->groups) {
            size_t c0 = full * ENG_W4_GROUP;
            tot[t] = w4_tail_avx2(q + full * 64, x[t] + c0, k - c0, _cvtsh_ss(sc[full]), tot[t]);
        }
        out[t] = w4_reduce8_avx2(tot[t]);
    }
}

/* Row @r of y for tokens [s0, s1) (see w4_rowspan_avx2 for the split). */
W4_TARGET512 static void
w4_rowspan_avx512(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r)
{
    const size_t k = w->cols, n = w->rows;
    size_t t = s0;
    for (; t + W4_TOK_512 <= s1; t += W4_TOK_512) {
        const float *xs[W4_TOK_512];
        float out[W4_TOK_512];
        for (int i = 0; i < W4_TOK_512; i++) {
            xs[i] = x + (t + i) * k;
        }
        w4_row_avx512(w, r, xs, W4_TOK_512, out);  /* inlined: nt is constant */
        for (int i = 0; i < W4_TOK_512; i++) {
            y[(t + i) * n + r] = out[i];
        }
    }
    for (; t < s1; t++) {
        const float *xs[W4_TOK_512] = { x + t * k };
        float out[W4_TOK_512];
        w4_row_avx512(w, r, xs, 1, out);
        y[t * n + r] = out[0];
    }
}

static void
w4_matmul_avx512(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1,
                 size_t r0, size_t r1)
{
    const size_t k = w->cols;
    #pragma omp parallel for schedule(static) if ((r1 - r0) * (s1 - s0) * k >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        w4_rowspan_avx512(x, w, y, s0, s1, r);
    }
}
#endif

static const char *const isa_name[] = { "auto", "portable", "avx2", "avx512" };
G_STATIC_ASSERT(G_N_ELEMENTS(isa_name) == ENG_ISA_COUNT);
static int isa_forced = ENG_ISA_AUTO;

#ifdef HAVE_W4_AVX2
#include <cpuid.h>

/*
 * CPU features from CPUID and XGETBV, the same with gcc and clang (clang 14's
 * __builtin_cpu_supports knows no "f16c").  Bits from the Intel SDM vol. 2A,
 * CPUID leaf 1 ECX and leaf 7 EBX; a feature counts only when the OS saves
 * its registers (XCR0: SSE|AVX = 0x6, plus opmask|ZMM = 0xe0 for AVX-512).
 */
enum {
    CPUID1_ECX_FMA = 1u << 12, CPUID1_ECX_OSXSAVE = 1u << 27, CPUID1_ECX_AVX = 1u << 28,
    CPUID1_ECX_F16C = 1u << 29,
    CPUID7_EBX_AVX2 = 1u << 5, CPUID7_EBX_AVX512F = 1u << 16, CPUID7_EBX_AVX512DQ = 1u << 17,
    CPUID7_EBX_AVX512BW = 1u << 30, CPUID7_EBX_AVX512VL = 1u << 31,
    CPUID7_ECX_AVX512VNNI = 1u << 11,
    XCR0_AVX = 0x6, XCR0_AVX512 = 0xe0,
};

static void
cpu_features(gboolean *avx2, gboolean *avx512, gboolean *vnni)
{
    unsigned a, b, c, d;
    *avx2 = *avx512 = *vnni = FALSE;
    if (!__get_cpuid(1, &a, &b, &c, &d)) {
        return;
    }
    unsigned c1 = c;
    unsigned need1 = CPUID1_ECX_FMA | CPUID1_ECX_OSXSAVE | CPUID1_ECX_AVX | CPUID1_ECX_F16C;
    if ((c1 & need1) != need1 || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        return;
    }
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & XCR0_AVX) != XCR0_AVX) {
        return;
    }
    *avx2 = (b & CPUID7_EBX_AVX2) != 0;
    unsigned need7 = CPUID7_EBX_AVX512F | CPUID7_EBX_AVX512DQ | CPUID7_EBX_AVX512BW |
                     CPUID7_EBX_AVX512VL;
    *avx512 = *avx2 && (b & need7) == need7 && (lo & XCR0_AVX512) == XCR0_AVX512;
    *vnni = *avx512 && (c & CPUID7_ECX_AVX512VNNI) != 0;
}
#endif

static gboolean
isa_supported(EngIsa isa)
{
    switch (isa) {
    case ENG_ISA_AUTO:
    case ENG_ISA_PORTABLE:
        return TRUE;
#ifdef HAVE_W4_AVX2
    case ENG_ISA_AVX2:
    case ENG_ISA_AVX512: {
        gboolean avx2, avx512, vnni;
        cpu_features(&avx2, &avx512, &vnni);
        return isa == ENG_ISA_AVX2 ? avx2 : avx512;
    }
#endif
    default:
        return FALSE;
    }
}

/* The path in use: forced, or the best this CPU has (once). */
static EngIsa
isa_current(void)
{
    static gsize once = 0;
    static EngIsa best;
    if (g_once_init_enter(&once)) {
        best = g_getenv("HS_ENGINE_NO_SIMD") ? ENG_ISA_PORTABLE
               : isa_supported(ENG_ISA_AVX512) ? ENG_ISA_AVX512
               : isa_supported(ENG_ISA_AVX2) ? ENG_ISA_AVX2 : ENG_ISA_PORTABLE;
        /* HS_ENGINE_ISA=avx2 (or portable): a narrower path than the CPU
         * has, to time the AVX2 kernels on an AVX-512 machine (the same
         * bits either way); a path the CPU lacks, or a name it does not
         * know, changes nothing */
        const char *want = g_getenv("HS_ENGINE_ISA");
        for (EngIsa i = ENG_ISA_PORTABLE; want != NULL && i < best; i++) {
            if (g_ascii_strcasecmp(want, isa_name[i]) == 0 && isa_supported(i)) {
                best = i;
            }
        }
        g_once_init_leave(&once, 1);
    }
    int forced = g_atomic_int_get(&isa_forced);
    return forced != ENG_ISA_AUTO ? (EngIsa) forced : best;
}

gboolean
eng_set_isa(EngIsa isa)
{
    if (!isa_supported(isa)) {
        return FALSE;
    }
    g_atomic_int_set(&isa_forced, (int) isa);
    return TRUE;
}

EngIsa
eng_isa(void)
{
    return isa_current();
}

gboolean
eng_isa_vnni(void)
{
#ifdef HAVE_W4_AVX2
    static gsize once = 0;
    static gboolean vnni;
    if (g_once_init_enter(&once)) {
        gboolean avx2, avx512;
        cpu_features(&avx2, &avx512, &vnni);
        g_once_init_leave(&once, 1);
    }
    return vnni && isa_current() == ENG_ISA_AVX512;
#else
    return FALSE;
#endif
}

const char *
eng_isa_name(void)
{
    return isa_name[isa_current()];
}

static void
w4_matmul_block(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r0,
                size_t r1)
{
    switch (isa_current()) {
#ifdef HAVE_W4_AVX2
    case ENG_ISA_AVX512:
        w4_matmul_avx512(x, w, y, s0, s1, r0, r1);
        return;
    case ENG_ISA_AVX2:
        w4_matmul_avx2(x, w, y, s0, s1, r0, r1);
        return;
#endif
    default:
        break;
    }
    const size_t k = w->cols, n = w->rows;
    #pragma omp parallel for schedule(static) if ((r1 - r0) * (s1 - s0) * k >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        for (size_t t = s0; t < s1; t++) {
            y[t * n + r] = w4_dot_scalar(w, r, x + t * k);
        }
    }
}

/* Bytes of input tokens a block keeps in a core's L2 while every row of
 * the weight passes over it. */
#define W4_X_BLOCK_BYTES (256 * 1024)

void
eng_w4_matmul(const float *x, const EngMatrix *w, float *y, size_t s0, size_t s1, size_t r0,
              size_t r1)
{
    /* Tokens in blocks: a row meets every token of the block before the
     * next row, so the inputs come from L2 instead of being streamed
     * from memory once per weight row (a 1024-token prefill re-read 16 MB
     * of inputs for each of 14336 rows).  Every y[t, r] is still the
     * same operations in the same order: the bits do not change. */
#ifdef HAVE_W4_AVX2
    if (s1 - s0 >= W4B_MIN_TOKENS && isa_current() == ENG_ISA_AVX2) {
        w4c_matmul(x, w, y, s0, s1, r0, r1);
        return;
    }
    if (s1 - s0 >= W4B_MIN_TOKENS && isa_current() == ENG_ISA_AVX512) {
        w4b_matmul(x, w, y, s0, s1, r0, r1, w4b_pass_avx512);
        return;
    }
#endif
    size_t tb = MAX(4, W4_X_BLOCK_BYTES / (sizeof(float) * MAX(w->cols, 1))) & ~(size_t) 3;
    for (size_t t = s0; t < s1; t += tb) {
        w4_matmul_block(x, w, y, t, MIN(s1, t + tb), r0, r1);
    }
}
