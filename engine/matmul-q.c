/*
 * matmul-q.c - matmuls over the formats of quant-formats.h, with the
 * fixed summation orders described there.
 *
 * A16: a block of QM_ROWS weight rows is dequantised to FP32 once, then
 * every token of the slice is dotted with each row, four tokens at a time
 * (four independent accumulators, so the loop is not bound by the add's
 * latency; each token's arithmetic is unchanged).  The 16 lanes are a GCC
 * vector: per-lane IEEE multiply and add, which every ISA (AVX-512, AVX2,
 * SSE) performs identically.
 *
 * A8: activation codes of the slice's rows are made once, then integer
 * dot products (exact, so any order and any vectorisation give the same
 * result), then the float outliers.
 */
#include "engine/quant-formats.h"

#include <math.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Rows dequantised at a time: 16 rows of a 4096-wide layer are 256 KiB,
 * about an L2 cache. */
#define QM_ROWS 16

#define QM_LANES 16

/* Lanes 0-7 and 8-15 as two 8-float GCC vectors: one AVX2 register each
 * (a 16-float vector is spilled to the stack by GCC on AVX2). */
typedef float qm_v8 __attribute__((vector_size(8 * sizeof(float))));

/* Lanes folded 8 + 8, 4 + 4, 2 + 2, 1 + 1. */
static inline float
fold16(float *l)
{
    for (int w = QM_LANES / 2; w >= 1; w /= 2) {
        for (int i = 0; i < w; i++) {
            l[i] = l[i] + l[i + w];
        }
    }
    return l[0];
}

#define QM_LOAD(v, p) memcpy(&(v), (p), sizeof(qm_v8))

/* y[j] = x_j . w for the @nt (1..4) rows x_j = x + j * k */
ENG_ISA_BODY() void
dot16_x4_body(const float *x, const float *w, size_t k, size_t nt, float *y)
{
    qm_v8 lo0 = { 0 }, lo1 = { 0 }, lo2 = { 0 }, lo3 = { 0 };
    qm_v8 hi0 = { 0 }, hi1 = { 0 }, hi2 = { 0 }, hi3 = { 0 };
    const size_t k16 = k - k % QM_LANES;
    const float *xs[4] = { x, x + k * (nt > 1), x + 2 * k * (nt > 2), x + 3 * k * (nt > 3) };
    for (size_t i = 0; i < k16; i += QM_LANES) {
        qm_v8 wl, wh, v;
        QM_LOAD(wl, w + i);
        QM_LOAD(wh, w + i + 8);
        QM_LOAD(v, xs[0] + i);
        lo0 += v * wl;
        QM_LOAD(v, xs[0] + i + 8);
        hi0 += v * wh;
        QM_LOAD(v, xs[1] + i);
        lo1 += v * wl;
        QM_LOAD(v, xs[1] + i + 8);
        hi1 += v * wh;
        QM_LOAD(v, xs[2] + i);
        lo2 += v * wl;
        QM_LOAD(v, xs[2] + i + 8);
        hi2 += v * wh;
        QM_LOAD(v, xs[3] + i);
        lo3 += v * wl;
        QM_LOAD(v, xs[3] + i + 8);
        hi3 += v * wh;
    }
    float l[4][QM_LANES];
    const qm_v8 *acc[4][2] = { { &lo0, &hi0 }, { &lo1, &hi1 }, { &lo2, &hi2 }, { &lo3, &hi3 } };
    for (size_t j = 0; j < nt; j++) {
        memcpy(l[j], acc[j][0], sizeof(qm_v8));
        memcpy(l[j] + 8, acc[j][1], sizeof(qm_v8));
        /* the tail (k % 16 inputs) goes to lanes 0.. of the same sums */
        for (size_t i = k16; i < k; i++) {
            l[j][i - k16] = l[j][i - k16] + xs[j][i] * w[i];
        }
        y[j] = fold16(l[j]);
    }
}
ENG_ISA_CLONED_VOID(, static, dot16_x4,
                    (const float *x, const float *w, size_t k, size_t nt, float *y),
                    (x, w, k, nt, y))

/* y = x . w for one token: dot16_x4's arithmetic with one accumulator. */
ENG_ISA_BODY() float
dot16_x1_body(const float *x, const float *w, size_t k)
{
    qm_v8 lo = { 0 }, hi = { 0 };
    const size_t k16 = k - k % QM_LANES;
    for (size_t i = 0; i < k16; i += QM_LANES) {
        qm_v8 wl, wh, v;
        QM_LOAD(wl, w + i);
        QM_LOAD(wh, w + i + 8);
        QM_LOAD(v, x + i);
        lo += v * wl;
        QM_LOAD(v, x + i + 8);
        hi += v * wh;
    }
    float l[QM_LANES];
    memcpy(l, &lo, sizeof(qm_v8));
    memcpy(l + 8, &hi, sizeof(qm_v8));
    for (size_t i = k16; i < k; i++) {
        l[i - k16] = l[i - k16] + x[i] * w[i];
    }
    return fold16(l);
}
ENG_ISA_CLONED(, static, float, dot16_x1, (const float *x, const float *w, size_t k), (x, w, k))

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "engine/reduce-avx2.h"
#define HAVE_QB_AVX2 1

/*
 * Many tokens (prefill, batch decode; the FP reference's FP16 above all):
 * blocked like the W4A16 kernel (matmul-w4.c).  A block of QB_ROWS rows
 * x QB_K inputs is dequantised once; then, four tokens at a time, the
 * tokens' inputs of the block are copied into an 8 KiB buffer that stays
 * in L1 while every row of the block meets them (one load of weights for
 * four tokens), the 16 lane sums of each (row, token) kept in memory
 * between blocks.  Every lane sees the multiplies and adds of dot16_x4 in
 * the same order (AVX2 mul then add, no FMA), so the bits are the same.
 * dot16_x4 read a 16-row block of 256 KiB and four tokens' whole rows
 * from L2 for every row.  One Zen 3 thread, 64 tokens x [4096 x 4096],
 * FP16: 63 -> 39 ms (32 rows x 256 inputs: 1.11x that; 64 x 1024: 1.05x);
 * then 39.4 -> 34.9 ms with rows two at a time (qb_tile2) and eight rows'
 * sums reduced at once.
 */
#define QB_ROWS 64
#define QB_K 512
#define QB_TOK 4
#define QB_MAX_TOKENS 64
#define QB_MIN_TOKENS 16

/* A thread's scratch: 128 + 256 + 8 KiB, in L2 */
typedef struct QmBlock {
    float w[QB_ROWS][QB_K + QM_LANES];      /* the last block holds the tail too */
    /* [token / QB_TOK][row][token % QB_TOK][lane] */
    float acc[QB_MAX_TOKENS / QB_TOK][QB_ROWS][QB_TOK * QM_LANES];
    float x[QB_TOK][QB_K];
} QmBlock;

#define QB_TARGET __attribute__((target("avx2,f16c")))

/* The lane sums @acc of one row @wr (kb inputs) against @nt tokens x[j]. */
QB_TARGET static inline __attribute__((always_inline)) void
qb_tile(const float *wr, size_t kb, const float *const x[QB_TOK], int nt, float *acc)
{
    __m256 lo[QB_TOK], hi[QB_TOK];
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        lo[j] = _mm256_load_ps(acc + QM_LANES * j);
        hi[j] = _mm256_load_ps(acc + QM_LANES * j + 8);
    }
    for (size_t i = 0; i < kb; i += QM_LANES) {
        __m256 wl = _mm256_load_ps(wr + i), wh = _mm256_load_ps(wr + i + 8);
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            lo[j] = _mm256_add_ps(lo[j], _mm256_mul_ps(_mm256_load_ps(x[j] + i), wl));
            hi[j] = _mm256_add_ps(hi[j], _mm256_mul_ps(_mm256_load_ps(x[j] + i + 8), wh));
        }
    }
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        _mm256_store_ps(acc + QM_LANES * j, lo[j]);
        _mm256_store_ps(acc + QM_LANES * j + 8, hi[j]);
    }
}

/* qb_tile for two rows @w0, @w1 (sums @acc0, @acc1): the same operations
 * per (row, token, lane), in another schedule.  Lanes 0-7 of every pair,
 * then lanes 8-15 (independent sums): each weight vector meets four
 * tokens and each input vector two rows, 6 loads for 8 products where
 * qb_tile's 10 for 8 bound it. */
QB_TARGET static inline __attribute__((always_inline)) void
qb_tile2(const float *w0, const float *w1, size_t kb, const float *const x[QB_TOK], int nt,
         float *acc0, float *acc1)
{
    _Pragma("GCC unroll 2")
    for (int half = 0; half < QM_LANES; half += 8) {
        __m256 a[2][QB_TOK];
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            a[0][j] = _mm256_load_ps(acc0 + QM_LANES * j + half);
            a[1][j] = _mm256_load_ps(acc1 + QM_LANES * j + half);
        }
        for (size_t i = half; i < kb; i += QM_LANES) {
            const __m256 f0 = _mm256_load_ps(w0 + i), f1 = _mm256_load_ps(w1 + i);
            _Pragma("GCC unroll 4")
            for (int j = 0; j < nt; j++) {
                __m256 xv = _mm256_load_ps(x[j] + i);
                /* in a register: folded into both products it is loaded twice */
                __asm__("" : "+x"(xv));
                a[0][j] = _mm256_add_ps(a[0][j], _mm256_mul_ps(xv, f0));
                a[1][j] = _mm256_add_ps(a[1][j], _mm256_mul_ps(xv, f1));
            }
        }
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            _mm256_store_ps(acc0 + QM_LANES * j + half, a[0][j]);
            _mm256_store_ps(acc1 + QM_LANES * j + half, a[1][j]);
        }
    }
}

/* One pass of a block's rows over a tile of @nt (1..QB_TOK) tokens'
 * inputs @x: acc[i] (row i's lane sums, QB_TOK * QM_LANES floats) += the
 * block's @kb inputs of row i against x[j].  One function per ISA and
 * token count (the count a constant, so the tiles' loops unroll). */
typedef void QbPass(const QmBlock *b, size_t nr, size_t kb, const float *const x[QB_TOK],
                    float (*acc)[QB_TOK * QM_LANES]);

#define QB_PASS_BODY(tile2, nt)                                                               \
    {                                                                                         \
        size_t i = 0;                                                                         \
        for (; i + 2 <= nr; i += 2) {                                                         \
            tile2(b->w[i], b->w[i + 1], kb, x, nt, acc[i], acc[i + 1]);                       \
        }                                                                                     \
        for (; i < nr; i++) {                                                                 \
            qb_tile(b->w[i], kb, x, nt, acc[i]);                                              \
        }                                                                                     \
    }
#define QB_PASS_FNS(isa, target, tile2)                                                       \
    target static void qb_pass_##isa##_1(const QmBlock *b, size_t nr, size_t kb,              \
                                         const float *const x[QB_TOK],                        \
                                         float (*acc)[QB_TOK * QM_LANES])                     \
        QB_PASS_BODY(tile2, 1)                                                                \
    target static void qb_pass_##isa##_2(const QmBlock *b, size_t nr, size_t kb,              \
                                         const float *const x[QB_TOK],                        \
                                         float (*acc)[QB_TOK * QM_LANES])                     \
        QB_PASS_BODY(tile2, 2)                                                                \
    target static void qb_pass_##isa##_3(const QmBlock *b, size_t nr, size_t kb,              \
                                         const float *const x[QB_TOK],                        \
                                         float (*acc)[QB_TOK * QM_LANES])                     \
        QB_PASS_BODY(tile2, 3)                                                                \
    target static void qb_pass_##isa##_4(const QmBlock *b, size_t nr, size_t kb,              \
                                         const float *const x[QB_TOK],                        \
                                         float (*acc)[QB_TOK * QM_LANES])                     \
        QB_PASS_BODY(tile2, 4)                                                                \
    static QbPass *const qb_pass_##isa[QB_TOK] = {                                           \
        qb_pass_##isa##_1, qb_pass_##isa##_2, qb_pass_##isa##_3, qb_pass_##isa##_4,           \
    };

QB_PASS_FNS(avx2, QB_TARGET, qb_tile2)

#define QB_TARGET512 __attribute__((target("avx512f,avx2,f16c")))

/* qb_tile2 with AVX-512: a (row, token)'s 16 lanes in one register, so
 * each multiply and add does the work of two of qb_tile2's; every lane's
 * operations are qb_tile2's (the same bits).  6 loads for 8 products of
 * 16 lanes. */
QB_TARGET512 static inline __attribute__((always_inline)) void
qb_tile2_512(const float *w0, const float *w1, size_t kb, const float *const x[QB_TOK], int nt,
             float *acc0, float *acc1)
{
    __m512 a[2][QB_TOK];
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        a[0][j] = _mm512_load_ps(acc0 + QM_LANES * j);
        a[1][j] = _mm512_load_ps(acc1 + QM_LANES * j);
    }
    for (size_t i = 0; i < kb; i += QM_LANES) {
        const __m512 f0 = _mm512_load_ps(w0 + i), f1 = _mm512_load_ps(w1 + i);
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            __m512 xv = _mm512_load_ps(x[j] + i);
            __asm__("" : "+v"(xv));
            a[0][j] = _mm512_add_ps(a[0][j], _mm512_mul_ps(xv, f0));
            a[1][j] = _mm512_add_ps(a[1][j], _mm512_mul_ps(xv, f1));
        }
    }
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        _mm512_store_ps(acc0 + QM_LANES * j, a[0][j]);
        _mm512_store_ps(acc1 + QM_LANES * j, a[1][j]);
    }
}

QB_PASS_FNS(avx512, QB_TARGET512, qb_tile2_512)

/* Rows [ra, ra + nr) (nr <= QB_ROWS) of y for tokens [s0, s1) (at most
 * QB_MAX_TOKENS), with @b as scratch and @pass's tiles. */
QB_TARGET static void
qb_rows(const EngTensor *x, const EngQMatrix *w, EngTensor *y, size_t s0, size_t s1, size_t ra,
        size_t nr, QmBlock *b, QbPass *const pass[QB_TOK])
{
    const size_t k = w->cols, n = w->rows, nt = s1 - s0, k16 = k - k % QM_LANES;
    /* only the sums this call uses (all of them are 256 KiB) */
    for (size_t t = 0; t < nt; t += QB_TOK) {
        memset(b->acc[t / QB_TOK], 0, sizeof(b->acc[0][0]) * nr);
    }
    /* blocks of QB_K inputs (whole groups of every format), the last one
     * to the row's end: its last k % 16 weights are the tail's */
    size_t c0 = 0, c1;
    for (; ; c0 = c1) {
        c1 = c0 + QB_K >= k16 ? k : c0 + QB_K;
        const size_t kb = MIN(c1, k16) - c0;
        for (size_t i = 0; i < nr; i++) {
            eng_qmatrix_cols_f32(w, (uint32_t) (ra + i), (uint32_t) c0, (uint32_t) (c1 - c0),
                                 b->w[i]);
        }
        for (size_t t = 0; t < nt && kb > 0; t += QB_TOK) {
            const size_t m = MIN(QB_TOK, nt - t);
            const float *xs[QB_TOK];
            for (size_t j = 0; j < QB_TOK; j++) {
                xs[j] = b->x[MIN(j, m - 1)];
            }
            for (size_t j = 0; j < m; j++) {
                const float *xt = x->data + (s0 + t + j) * k + c0;
                for (size_t e = 0; e < kb; e += 8) {
                    _mm256_store_ps(b->x[j] + e, _mm256_loadu_ps(xt + e));
                }
            }
            pass[m - 1](b, nr, kb, xs, b->acc[t / QB_TOK]);
        }
        if (c1 == k) {
            break;
        }
    }
    size_t i0 = 0;
    if (k16 == k) {
        /* eight rows of a token at a time (fold16's first step is lanes
         * 0-7 + 8-15, the rest eng_reduce8x8_avx2's order) */
        for (; i0 + 8 <= nr; i0 += 8) {
            for (size_t t = 0; t < nt; t++) {
                __m256 v[8];
                for (int l = 0; l < 8; l++) {
                    const float *a = b->acc[t / QB_TOK][i0 + l] + QM_LANES * (t % QB_TOK);
                    v[l] = _mm256_add_ps(_mm256_load_ps(a), _mm256_load_ps(a + 8));
                }
                _mm256_storeu_ps(y->data + (s0 + t) * n + ra + i0, eng_reduce8x8_avx2(v));
            }
        }
    }
    for (size_t i = i0; i < nr; i++) {
        const size_t r = ra + i;
        const float *tail = b->w[i] + (k16 - c0);
        for (size_t t = 0; t < nt; t++) {
            float l[QM_LANES];
            const float *xt = x->data + (s0 + t) * k;
            memcpy(l, b->acc[t / QB_TOK][i] + QM_LANES * (t % QB_TOK), sizeof(l));
            /* the tail as dot16_x4 adds it */
            for (size_t c = k16; c < k; c++) {
                l[c - k16] = l[c - k16] + xt[c] * tail[c - k16];
            }
            y->data[(s0 + t) * n + r] = fold16(l);
        }
    }
}

/* y[j] = x_j . w~ for @nt (1..4) tokens x_j = x + j * k against one FP16
 * row @h, converted eight at a time in registers (F16C: the exact values
 * eng_qmatrix_rows_f32 gives): dot16_x4's arithmetic, without writing
 * the FP32 row and reading it back (a decode step's FP16 matvec spent
 * more in that conversion than in its dot products). */
QB_TARGET static inline __attribute__((always_inline)) void
qf16_dot(const float *x, size_t k, const uint16_t *h, int nt, float *y)
{
    __m256 lo[QB_TOK], hi[QB_TOK];
    const size_t k16 = k - k % QM_LANES;
    _Pragma("GCC unroll 4")
    for (int j = 0; j < nt; j++) {
        lo[j] = _mm256_setzero_ps();
        hi[j] = _mm256_setzero_ps();
    }
    for (size_t i = 0; i < k16; i += QM_LANES) {
        __m256 wl = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (h + i)));
        __m256 wh = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (h + i + 8)));
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            lo[j] = _mm256_add_ps(lo[j], _mm256_mul_ps(_mm256_loadu_ps(x + j * k + i), wl));
            hi[j] = _mm256_add_ps(hi[j], _mm256_mul_ps(_mm256_loadu_ps(x + j * k + i + 8), wh));
        }
    }
    for (int j = 0; j < nt; j++) {
        float l[QM_LANES];
        _mm256_storeu_ps(l, lo[j]);
        _mm256_storeu_ps(l + 8, hi[j]);
        for (size_t i = k16; i < k; i++) {
            l[i - k16] = l[i - k16] + x[j * k + i] * eng_fp16_to_float(h[i]);
        }
        y[j] = fold16(l);
    }
}

/* y[s0:s1, r0:r1] for a few tokens (s1 - s0 < QB_MIN_TOKENS) and FP16
 * weights: each row converted in registers (qf16_dot), four tokens at a
 * time. */
QB_TARGET static void
qf16_rows(const EngTensor *x, const EngQMatrix *w, EngTensor *y, size_t s0, size_t s1,
          size_t r)
{
    const size_t k = w->cols, n = w->rows;
    const uint16_t *h = (const uint16_t *) (const void *) w->codes + r * k;
    for (size_t t = s0; t < s1; t += QB_TOK) {
        float out[QB_TOK];
        const size_t nt = MIN(QB_TOK, s1 - t);
        /* a constant count each, so the loops unroll */
        if (nt == 4) {
            qf16_dot(x->data + t * k, k, h, 4, out);
        } else if (nt == 3) {
            qf16_dot(x->data + t * k, k, h, 3, out);
        } else if (nt == 2) {
            qf16_dot(x->data + t * k, k, h, 2, out);
        } else {
            qf16_dot(x->data + t * k, k, h, 1, out);
        }
        for (size_t j = 0; j < nt; j++) {
            y->data[(t + j) * n + r] = out[j];
        }
    }
}

static void
qb_matmul(const EngTensor *x, const EngQMatrix *w, EngTensor *y, size_t s0, size_t s1,
          size_t r0, size_t r1)
{
    QbPass *const *pass = eng_isa() == ENG_ISA_AVX512 ? qb_pass_avx512 : qb_pass_avx2;
    const size_t k = w->cols, rows = eng_block_rows(r1 - r0, QB_ROWS);
    const size_t blocks = (r1 - r0 + rows - 1) / rows;
    #pragma omp parallel if (blocks > 1 && (s1 - s0) * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
    {
        /* 64-byte aligned for the loads */
        QmBlock *b = g_aligned_alloc(1, sizeof(QmBlock), 64);
        #pragma omp for schedule(static)
        for (size_t i = 0; i < blocks; i++) {
            size_t ra = r0 + i * rows;
            for (size_t t = s0; t < s1; t += QB_MAX_TOKENS) {
                qb_rows(x, w, y, t, MIN(s1, t + QB_MAX_TOKENS), ra, MIN(rows, r1 - ra), b,
                        pass);
            }
        }
        g_aligned_free(b);
    }
}
#endif

void
eng_qmatmul(const EngTensor *x, const EngQMatrix *w, EngTensor *y, size_t s0, size_t s1,
            size_t r0, size_t r1)
{
    g_assert(x->cols == w->cols && y->cols == w->rows && r1 <= w->rows);
    g_assert(s1 <= x->rows && s1 <= y->rows);
    if (s1 <= s0 || r1 <= r0) {
        return;
    }
#ifdef HAVE_QB_AVX2
    if (s1 - s0 >= QB_MIN_TOKENS && eng_isa() != ENG_ISA_PORTABLE) {
        qb_matmul(x, w, y, s0, s1, r0, r1);
        return;
    }
    if (w->format == ENG_QFMT_F16 && eng_isa() != ENG_ISA_PORTABLE) {
        const size_t k = w->cols;
        #pragma omp parallel for schedule(static) if ((s1 - s0) * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
        for (size_t r = r0; r < r1; r++) {
            qf16_rows(x, w, y, s0, s1, r);
        }
        return;
    }
#endif
    /* a few tokens (decode): one row at a time, dotted while it is in L1
     * (a block of dequantised rows is written to L2 and read back once) */
    const size_t rows = s1 - s0 <= 4 ? 1 : QM_ROWS;
    const size_t k = w->cols, n = w->rows, blocks = (r1 - r0 + rows - 1) / rows;
    #pragma omp parallel if (blocks > 1 && (s1 - s0) * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
    {
        float *wr = g_malloc(sizeof(float) * rows * MAX(k, 1));
        #pragma omp for schedule(static)
        for (size_t b = 0; b < blocks; b++) {
            size_t a0 = r0 + b * rows, a1 = MIN(a0 + rows, r1);
            eng_qmatrix_rows_f32(w, (uint32_t) a0, (uint32_t) a1, wr);
            for (size_t t = s0; t < s1; t += 4) {
                size_t nt = MIN(4, s1 - t);
                for (size_t r = a0; r < a1; r++) {
                    float out[4];
                    if (nt == 1) {
                        out[0] = dot16_x1(x->data + t * k, wr + (r - a0) * k, k);
                    } else {
                        dot16_x4(x->data + t * k, wr + (r - a0) * k, k, nt, out);
                    }
                    for (size_t j = 0; j < nt; j++) {
                        y->data[(t + j) * n + r] = out[j];
                    }
                }
            }
        }
        g_free(wr);
    }
}

/* sum of a[i] * b[i], exact in int32 (|sum| <= 127 * 127 * k < 2^31 for
 * k < 133,000 inputs) */
ENG_ISA_BODY(ENG_VECTORISE) int32_t
dot_i8_body(const int8_t *a, const int8_t *b, size_t k)
{
    int32_t acc = 0;
    for (size_t i = 0; i < k; i++) {
        acc += (int32_t) a[i] * (int32_t) b[i];
    }
    return acc;
}
ENG_ISA_CLONED(ENG_VECTORISE, static, int32_t, dot_i8,
               (const int8_t *a, const int8_t *b, size_t k),
               (a, b, k))

#ifdef HAVE_QB_AVX2
/* Inputs up to which the VNNI dot's sums of (a + 128) * b stay in int32:
 * 255 * 128 * k < 2^31. */
#define A8_VNNI_MAX_K 65536

/*
 * The AVX512-VNNI INT8 path, blocked like the AVX2 one below: VPDPBUSD
 * multiplies unsigned by signed bytes, so the activation codes come as
 * au = a + 128 (a XOR 0x80) and sum a * b = sum au * b - 128 * sum b,
 * sum b by the same instruction against ones.  Tiles of 4 rows x 4 tokens
 * (16 accumulators, eight 64-byte loads for sixteen VPDPBUSD) over blocks
 * of A8_KB inputs that stay in L1.  Integers: exactly dot_i8's sums in any
 * order.  (One row at a time, as before, each row streamed every token's
 * codes from L2: mllm-npu's W8A8 prefill spent a fifth of its run there.)
 */
#define A8V_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* out[r][j] = sum over inputs [c0, c1) (and the masked @tail past c1) of
 * au[j] * w[r]: 4 rows x 4 tokens (callers repeat a pointer to fill a
 * partial tile and drop its sums). */
A8V_TARGET static void
a8v_tile(const int8_t *const w[4], const uint8_t *const a[4], size_t c0, size_t c1,
         __mmask64 tail, int32_t out[4][4])
{
    __m512i acc[4][4], wv[4];
    _Pragma("GCC unroll 4")
    for (int r = 0; r < 4; r++) {
        _Pragma("GCC unroll 4")
        for (int j = 0; j < 4; j++) {
            acc[r][j] = _mm512_setzero_si512();
        }
    }
    for (size_t c = c0; c < c1; c += 64) {
        _Pragma("GCC unroll 4")
        for (int r = 0; r < 4; r++) {
            wv[r] = _mm512_loadu_si512(w[r] + c);
        }
        _Pragma("GCC unroll 4")
        for (int j = 0; j < 4; j++) {
            const __m512i av = _mm512_loadu_si512(a[j] + c);
            _Pragma("GCC unroll 4")
            for (int r = 0; r < 4; r++) {
                acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], av, wv[r]);
            }
        }
    }
    if (tail) {
        _Pragma("GCC unroll 4")
        for (int r = 0; r < 4; r++) {
            wv[r] = _mm512_maskz_loadu_epi8(tail, w[r] + c1);
        }
        _Pragma("GCC unroll 4")
        for (int j = 0; j < 4; j++) {
            const __m512i av = _mm512_maskz_loadu_epi8(tail, a[j] + c1);
            _Pragma("GCC unroll 4")
            for (int r = 0; r < 4; r++) {
                acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], av, wv[r]);
            }
        }
    }
    _Pragma("GCC unroll 4")
    for (int r = 0; r < 4; r++) {
        _Pragma("GCC unroll 4")
        for (int j = 0; j < 4; j++) {
            out[r][j] = _mm512_reduce_add_epi32(acc[r][j]);
        }
    }
}

/* The sum of a weight row's @k codes. */
A8V_TARGET static int64_t
a8v_row_sum(const int8_t *b, size_t k)
{
    const __m512i ones = _mm512_set1_epi8(1);
    const size_t k64 = k - k % 64;
    const __mmask64 tail = k % 64 ? ((__mmask64) 1 << (k % 64)) - 1 : 0;
    __m512i bs = _mm512_setzero_si512();
    for (size_t i = 0; i < k64; i += 64) {
        bs = _mm512_dpbusd_epi32(bs, ones, _mm512_loadu_si512(b + i));
    }
    bs = _mm512_dpbusd_epi32(bs, ones, _mm512_maskz_loadu_epi8(tail, b + k64));
    return _mm512_reduce_add_epi32(bs);
}

/*
 * The AVX2 INT8 path, blocked over rows and tokens: the activation codes
 * widened to int16 once per call, each weight row widened as it is read
 * (VPMOVSXBW), and VPMADDWD multiplying 16 pairs and adding neighbours
 * into 8 int32 lanes, in tiles of 2 rows x 4 tokens (six loads for eight
 * VPMADDWD) over blocks of A8_KB inputs that stay in L1.  Integers:
 * exactly dot_i8's sums (|a|, |w| <= 127, so no product or pair sum
 * saturates).  VPMADDUBSW would take the bytes as they are but needs one
 * operand unsigned: |a| and w with a's sign, a VPSIGNB per (row, token)
 * pair, and a VPMADDWD to widen its int16 sums anyway (the same count of
 * multiplies for twice the other operations).  dot_i8 (GCC's
 * vectorisation, one row and one token at a time) ran the W8A8 prefill
 * at 12 GFLOPS on two AVX2 threads.
 */
#define A8_ROWS 16
#define A8_TOK 64
#define A8_KB 512

#define A8_TARGET __attribute__((target("avx2")))

/* dots[r][j] += the inputs [c0, c0 + kb) (kb a multiple of 16) of the @nr
 * (1, 2) weight rows @w[r] against the @nt (1..4) tokens' int16 codes
 * @a[j]. */
A8_TARGET static inline __attribute__((always_inline)) void
a8_tile(const int8_t *const w[2], int nr, const int16_t *const a[4], int nt, size_t c0,
        size_t kb, int32_t *const dots[2])
{
    __m256i acc[2][4];
    _Pragma("GCC unroll 2")
    for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            acc[r][j] = _mm256_setzero_si256();
        }
    }
    for (size_t c = c0; c < c0 + kb; c += 16) {
        __m256i wv[2];
        _Pragma("GCC unroll 2")
        for (int r = 0; r < nr; r++) {
            wv[r] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (const void *) (w[r] + c)));
        }
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            const __m256i av = _mm256_loadu_si256((const __m256i *) (const void *) (a[j] + c));
            _Pragma("GCC unroll 2")
            for (int r = 0; r < nr; r++) {
                acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(wv[r], av));
            }
        }
    }
    _Pragma("GCC unroll 2")
    for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4")
        for (int j = 0; j < nt; j++) {
            /* the eight lanes' sum (integers: any order) */
            __m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc[r][j]),
                                      _mm256_extracti128_si256(acc[r][j], 1));
            h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
            h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
            dots[r][j] += _mm_cvtsi128_si32(h);
        }
    }
}

#define A8_PASS(nr, nt)                                                                      \
    A8_TARGET static void a8_pass_##nr##_##nt(const int8_t *const w[2],                      \
                                              const int16_t *const a[4], size_t c0,          \
                                              size_t kb, int32_t *const dots[2])             \
    {                                                                                        \
        a8_tile(w, nr, a, nt, c0, kb, dots);                                                 \
    }
A8_PASS(1, 1) A8_PASS(1, 2) A8_PASS(1, 3) A8_PASS(1, 4)
A8_PASS(2, 1) A8_PASS(2, 2) A8_PASS(2, 3) A8_PASS(2, 4)

typedef void A8Pass(const int8_t *const w[2], const int16_t *const a[4], size_t c0, size_t kb,
                    int32_t *const dots[2]);
static A8Pass *const a8_pass[2][4] = {
    { a8_pass_1_1, a8_pass_1_2, a8_pass_1_3, a8_pass_1_4 },
    { a8_pass_2_1, a8_pass_2_2, a8_pass_2_3, a8_pass_2_4 },
};

/* dots[i][j] = the dot product of weight row @w + i * k (i < nr <=
 * A8_ROWS) and token j's codes @a16 + j * k (j < nt <= A8_TOK), exactly. */
static void
a8_dots(const int8_t *w, size_t nr, const int16_t *a16, const int8_t *a8, size_t nt, size_t k,
        int32_t dots[A8_ROWS][A8_TOK])
{
    const size_t k16 = k - k % 16;
    for (size_t i = 0; i < nr; i++) {
        memset(dots[i], 0, sizeof(int32_t) * nt);
    }
    for (size_t c0 = 0; c0 < k16; c0 += A8_KB) {
        const size_t kb = MIN(A8_KB, k16 - c0);
        for (size_t t = 0; t < nt; t += 4) {
            const size_t m = MIN(4, nt - t);
            const int16_t *a[4];
            for (size_t j = 0; j < 4; j++) {
                a[j] = a16 + (t + MIN(j, m - 1)) * k;
            }
            for (size_t i = 0; i < nr; i += 2) {
                const size_t q = MIN(2, nr - i);
                const int8_t *wr[2] = { w + i * k, w + (i + q - 1) * k };
                int32_t *d[2] = { dots[i] + t, dots[i + q - 1] + t };
                a8_pass[q - 1][m - 1](wr, a, c0, kb, d);
            }
        }
    }
    for (size_t i = 0; i < nr && k16 < k; i++) {
        for (size_t t = 0; t < nt; t++) {
            for (size_t c = k16; c < k; c++) {
                dots[i][t] += (int32_t) w[i * k + c] * (int32_t) a8[t * k + c];
            }
        }
    }
}

/* a8_dots by VNNI, from the codes plus 128 @au (k < A8_VNNI_MAX_K: every
 * partial sum of au * w fits in int32). */
static void
a8_dots_vnni(const int8_t *w, size_t nr, const uint8_t *au, size_t nt, size_t k,
             int32_t dots[A8_ROWS][A8_TOK])
{
    const size_t k64 = k - k % 64;
    const __mmask64 tail = k % 64 ? ((__mmask64) 1 << (k % 64)) - 1 : 0;
    for (size_t i = 0; i < nr; i++) {
        memset(dots[i], 0, sizeof(int32_t) * nt);
    }
    for (size_t c0 = 0;; c0 += A8_KB) {
        const size_t c1 = MIN(c0 + A8_KB, k64);
        const gboolean last = c1 == k64;
        for (size_t t = 0; t < nt; t += 4) {
            const size_t m = MIN(4, nt - t);
            const uint8_t *a[4];
            for (size_t j = 0; j < 4; j++) {
                a[j] = au + (t + MIN(j, m - 1)) * k;
            }
            for (size_t i = 0; i < nr; i += 4) {
                const size_t q = MIN(4, nr - i);
                const int8_t *wr[4];
                for (size_t r = 0; r < 4; r++) {
                    wr[r] = w + (i + MIN(r, q - 1)) * k;
                }
                int32_t o[4][4];
                a8v_tile(wr, a, c0, c1, last ? tail : 0, o);
                for (size_t r = 0; r < q; r++) {
                    for (size_t j = 0; j < m; j++) {
                        dots[i + r][t + j] += o[r][j];
                    }
                }
            }
        }
        if (last) {
            break;
        }
    }
    for (size_t i = 0; i < nr; i++) {
        const int32_t fix = (int32_t) (128 * a8v_row_sum(w + i * k, k));
        for (size_t t = 0; t < nt; t++) {
            dots[i][t] -= fix;
        }
    }
}
#endif

/* y[s0 + t, r] from the integer dot product @dot of token t's codes and
 * row r's (codes @wq, scale @sw): times both scales, plus the token's
 * outliers (@oi[first[t] .. first[t] + n_out[t]): their columns) in
 * float. */
static inline void
a8_out(const EngTensor *x, const EngActInt8 *a, const int8_t *wq, float sw, EngTensor *y,
       size_t s0, size_t r, size_t t, int32_t dot, const uint32_t *n_out, const uint32_t *first,
       const uint32_t *oi)
{
    const size_t k = x->cols, n = y->cols;
    const float sxw = a->scale * sw;
    float v = (float) dot * sxw;
    if (n_out[t]) {
        const float *xr = x->data + (s0 + t) * k;
        float sh = 0;
        for (uint32_t j = first[t]; j < first[t] + n_out[t]; j++) {
            sh = sh + xr[oi[j]] * ((float) wq[oi[j]] * sw);
        }
        v = v + sh;
    }
    y->data[(s0 + t) * n + r] = v;
}

void
eng_qmatmul_a8(const EngTensor *x, const EngActInt8 *a, const EngQMatrix *w, EngTensor *y,
               size_t s0, size_t s1, size_t r0, size_t r1)
{
    g_assert(w->format == ENG_QFMT_W8 && w->cols < 133000);
    g_assert(x->cols == w->cols && y->cols == w->rows && r1 <= w->rows);
    g_assert(s1 <= x->rows && s1 <= y->rows);
    if (s1 <= s0 || r1 <= r0) {
        return;
    }
    const size_t k = w->cols, nt = s1 - s0;
    /* codes of the slice's rows; outliers listed per row (index order) */
    g_autofree int8_t *q = g_new(int8_t, nt * k);
    g_autofree uint32_t *n_out = g_new0(uint32_t, nt);
    g_autoptr(GArray) outl = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_autofree uint32_t *first = g_new0(uint32_t, nt);
    for (size_t t = 0; t < nt; t++) {
        const float *xr = x->data + (s0 + t) * k;
        first[t] = outl->len;
        for (size_t c = 0; c < k; c++) {
            q[t * k + c] = eng_act_int8_code(xr[c], a);
            if (fabsf(xr[c]) > a->limit) {
                uint32_t c32 = (uint32_t) c;
                g_array_append_val(outl, c32);
                n_out[t]++;
            }
        }
    }
    const uint32_t *oi = (const uint32_t *) outl->data;
#ifdef HAVE_QB_AVX2
    if (eng_isa() != ENG_ISA_PORTABLE) {
        /* rows in blocks: by VNNI from the codes plus 128, else (a8_dots)
         * from the codes widened to int16 once */
        const gboolean vnni = k < A8_VNNI_MAX_K && eng_isa_vnni();
        g_autofree int16_t *a16 = vnni ? NULL : g_new(int16_t, nt * k);
        g_autofree uint8_t *qu = vnni ? g_new(uint8_t, nt * k) : NULL;
        for (size_t i = 0; vnni && i < nt * k; i++) {
            qu[i] = (uint8_t) q[i] ^ 0x80u;
        }
        for (size_t i = 0; !vnni && i < nt * k; i++) {
            a16[i] = q[i];
        }
        const size_t blocks = (r1 - r0 + A8_ROWS - 1) / A8_ROWS;
        #pragma omp parallel for schedule(static) if (blocks > 1 && nt * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
        for (size_t b = 0; b < blocks; b++) {
            const size_t ra = r0 + b * A8_ROWS, nr = MIN(A8_ROWS, r1 - ra);
            const int8_t *wb = (const int8_t *) w->codes + ra * w->group_bytes;
            int32_t dots[A8_ROWS][A8_TOK];
            for (size_t t0 = 0; t0 < nt; t0 += A8_TOK) {
                const size_t m = MIN(A8_TOK, nt - t0);
                if (vnni) {
                    a8_dots_vnni(wb, nr, qu + t0 * k, m, k, dots);
                } else {
                    a8_dots(wb, nr, a16 + t0 * k, q + t0 * k, m, k, dots);
                }
                for (size_t i = 0; i < nr; i++) {
                    const int8_t *wq = wb + i * w->group_bytes;
                    const float sw = eng_fp16_to_float(w->scales[ra + i]);
                    for (size_t t = t0; t < t0 + m; t++) {
                        a8_out(x, a, wq, sw, y, s0, ra + i, t, dots[i][t - t0], n_out, first,
                               oi);
                    }
                }
            }
        }
        return;
    }
#endif
    #pragma omp parallel for schedule(static) if (nt * (r1 - r0) * k >= ENG_PAR_MIN_OPS)
    for (size_t r = r0; r < r1; r++) {
        const int8_t *wq = (const int8_t *) w->codes + r * w->group_bytes;
        const float sw = eng_fp16_to_float(w->scales[r]);
        for (size_t t = 0; t < nt; t++) {
            a8_out(x, a, wq, sw, y, s0, r, t, dot_i8(q + t * k, wq, k), n_out, first, oi);
        }
    }
}
