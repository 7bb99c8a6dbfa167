/*
 * matmul.c - Y[s0:s1, r0:r1] = X[s0:s1, :] . W[r0:r1, :]^T for every
 * weight format, computing exactly the requested slice (see kernels.h for
 * why every output element gets the same bits whatever the slice).
 *
 * W4A16: our own kernel, in matmul-w4.c.
 *
 * FP32 / FP16: OpenBLAS on a fixed tile grid, one tile per OpenMP thread
 * at a time, OpenBLAS itself single-threaded (no oversubscription, and
 * its rounding does not depend on how many threads it would use).
 */
#include "engine/blas.h"
#include "engine/kernels.h"
#include "engine/matmul-w4.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- FP32 / FP16 through OpenBLAS on a fixed tile grid ------------------ */

/*
 * @t_rows fixes the grid: tiles of tm = min(t_rows, ENG_TILE_M) rows by
 * tn = min(N, ENG_TILE_N) features.  Every tile that meets the slice is
 * computed at shape [tm, tn, K] from a copy of its rows (rows outside the
 * slice are zeros: a row of the product depends only on its own row of
 * X), then the slice's part is copied out.
 */
static void
tiled_matmul(const float *x, size_t t_rows, const EngMatrix *w, float *y, size_t s0,
             size_t s1, size_t r0, size_t r1)
{
    const size_t k = w->cols, n = w->rows;
    const size_t tm = MAX(1, MIN(t_rows, ENG_TILE_M)), tn = MIN(n, ENG_TILE_N);
    const size_t m_a = s0 / tm, m_b = (s1 - 1) / tm + 1;
    const size_t n_a = r0 / tn, n_b = (r1 - 1) / tn + 1;
    const size_t nm = m_b - m_a, tiles = nm * (n_b - n_a);
    eng_blas_need();           /* opened outside the parallel region */
    #pragma omp parallel if (tiles > 1 && tiles * tm * tn * k >= ENG_PAR_MIN_OPS)
    {
        float *xs = g_malloc(sizeof(float) * tm * k);
        float *ys = g_malloc(sizeof(float) * tm * tn);
        float *ws = NULL;
        #pragma omp for schedule(dynamic)
        for (size_t i = 0; i < tiles; i++) {
            size_t a0 = (m_a + i % nm) * tm, b0 = (n_a + i / nm) * tn;
            size_t lo = MAX(a0, s0), hi = MIN(a0 + tm, s1);
            size_t c_lo = MAX(b0, r0), c_hi = MIN(b0 + tn, r1);
            /* X tile: the slice's rows at their places, zeros elsewhere */
            memset(xs, 0, sizeof(float) * tm * k);
            memcpy(xs + (lo - a0) * k, x + lo * k, sizeof(float) * (hi - lo) * k);
            /* W tile: in place when whole FP32 rows exist, else converted */
            const float *wt;
            if (w->format == ENG_WFMT_F32 && b0 + tn <= n) {
                wt = w->f32 + b0 * k;
            } else {
                if (ws == NULL) {
                    ws = g_malloc(sizeof(float) * tn * k);
                }
                size_t b1 = MIN(b0 + tn, n);
                eng_matrix_rows_f32(w, (uint32_t) b0, (uint32_t) b1, ws);
                memset(ws + (b1 - b0) * k, 0, sizeof(float) * (b0 + tn - b1) * k);
                wt = ws;
            }
            /* ys [tm, tn] = xs [tm, K] . wt [tn, K]^T */
            eng_blas_sgemm_nt((int) tm, (int) tn, (int) k, xs, (int) k, wt, (int) k, ys,
                              (int) tn);
            for (size_t t = lo; t < hi; t++) {
                memcpy(y + t * n + c_lo, ys + (t - a0) * tn + (c_lo - b0),
                       sizeof(float) * (c_hi - c_lo));
            }
        }
        g_free(xs);
        g_free(ys);
        g_free(ws);
    }
}

static void
matmul_any(const float *x, size_t t_rows, const EngMatrix *w, float *y, size_t s0, size_t s1,
           size_t r0, size_t r1)
{
    g_assert(r1 <= w->rows);
    if (s1 <= s0 || r1 <= r0) {
        return;
    }
    if (w->format == ENG_WFMT_W4A16) {
        eng_w4_matmul(x, w, y, s0, s1, r0, r1);
    } else {
        tiled_matmul(x, t_rows, w, y, s0, s1, r0, r1);
    }
}

void
eng_matmul(const EngTensor *x, const EngMatrix *w, EngTensor *y, size_t s0, size_t s1,
           size_t r0, size_t r1)
{
    g_assert(x->cols == w->cols && y->cols == w->rows);
    g_assert(s1 <= x->rows && s1 <= y->rows);
    matmul_any(x->data, x->rows, w, y->data, s0, s1, r0, r1);
}

void
eng_matmul_f32(const float *x, size_t t, const float *w, size_t k, size_t n, float *y,
               size_t s0, size_t s1, size_t r0, size_t r1)
{
    EngMatrix m = {
        .format = ENG_WFMT_F32, .rows = (uint32_t) n, .cols = (uint32_t) k, .f32 = (float *) w,
    };
    g_assert(s1 <= t);
    matmul_any(x, t, &m, y, s0, s1, r0, r1);
}

void
eng_pad_rows(const EngTensor *x, size_t s0, size_t s1, EngTensor *xs)
{
    g_assert(xs->cols == x->cols && s1 - s0 <= xs->rows);
    memcpy(xs->data, x->data + s0 * x->cols, sizeof(float) * (s1 - s0) * x->cols);
}

void
eng_crop_rows(const EngTensor *ys, EngTensor *y, size_t s0, size_t s1, size_t c0, size_t c1)
{
    g_assert(ys->cols == y->cols && s1 - s0 <= ys->rows && c1 <= y->cols);
    for (size_t t = s0; t < s1; t++) {
        memcpy(y->data + t * y->cols + c0, ys->data + (t - s0) * ys->cols + c0,
               sizeof(float) * (c1 - c0));
    }
}

void
eng_matmul_padded(const EngTensor *x, const EngMatrix *w, EngTensor *y, size_t s0, size_t s1,
                  size_t r0, size_t r1, EngTensor *xs, EngTensor *ys)
{
    g_assert(xs->rows == ys->rows && ys->cols == w->rows);
    eng_pad_rows(x, s0, s1, xs);
    eng_matmul(xs, w, ys, 0, xs->rows, r0, r1);
    eng_crop_rows(ys, y, s0, s1, r0, r1);
}

size_t
eng_block_rows(size_t n, size_t most)
{
#ifdef _OPENMP
    const size_t threads = (size_t) MAX(omp_get_max_threads(), 1);
#else
    const size_t threads = 1;
#endif
    size_t blocks = (n + most - 1) / most;
    blocks = (blocks + threads - 1) / threads * threads;
    return MAX((n + blocks - 1) / MAX(blocks, 1), 1);
}
