/*
 * bench-engine.c - the functional engine's speed and memory, each figure
 * beside this machine's limit: an FMA-throughput probe (GFLOPS peak per
 * vector width, 1 and all threads) and a read-bandwidth probe (the
 * roofline of a matvec).  The kernels are measured on every SIMD path the
 * CPU has (AVX2; AVX-512): the W4A16 prefill on one thread against
 * OpenBLAS's FP32 GEMM at the same shape, the W4A16 matvec against the
 * read probe (alternated rounds, medians: the machine is shared), the
 * batch matmul, the other weight formats' matvec and prefill; then FP32
 * GEMM through the engine vs OpenBLAS called directly, a decode step's
 * attention over a long KV cache, infer tokens/s on the tiny model and a
 * ~1B model, and the 1B model's peak memory vs its weights plus KV cache.
 */
#include "engine/model.h"
#include "sim/forward.h"
#include "engine/blas.h"
#include "engine/kernels.h"
#include "engine/quant-formats.h"
#include "models/spec.h"
#include "sim/cli/bench.h"
#include "sim/run.h"
#include "sim/util/json.h"
#include "sim/util/mem.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double
gemm_gflops(size_t n, gboolean direct, int reps)
{
    float *a = g_new(float, n * n), *b = g_new(float, n * n), *c = g_new0(float, n * n);
    for (size_t i = 0; i < n * n; i++) {
        a[i] = (float) (i % 7) * 0.1f;
        b[i] = (float) (i % 5) * 0.1f;
    }
    /* the engine runs OpenBLAS single-threaded inside its own OpenMP tiles
     * (engine/blas.c sets that when it opens it); called directly,
     * OpenBLAS gets every core, as a user calling it would give it */
    eng_matmul_f32(a, n, b, n, n, c, 0, MIN(n, 8), 0, MIN(n, 8));
    eng_blas_set_threads(direct ? (int) g_get_num_processors() : 1);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = hs_bench_now_s();
        if (direct) {
            eng_blas_sgemm_nt((int) n, (int) n, (int) n, a, (int) n, b, (int) n, c, (int) n);
        } else {
            eng_matmul_f32(a, n, b, n, n, c, 0, n, 0, n);
        }
        best = MIN(best, hs_bench_now_s() - t0);
    }
    g_free(a);
    g_free(b);
    g_free(c);
    return 2.0 * n * n * n / best / 1e9;
}

/* Best of @reps seconds for a W4A16 matmul of @t tokens against [n x k]
 * packed INT4 weights; @weight_bytes: what the weights take as stored
 * (nibbles + FP16 scales). */
static double
w4_matmul_s(size_t t, size_t n, size_t k, int reps, double *weight_bytes)
{
    float *w = g_new(float, n * k), *x = g_new(float, t * k), *y = g_new0(float, t * n);
    for (size_t i = 0; i < n * k; i++) {
        w[i] = (float) (i % 13) * 0.01f - 0.06f;
    }
    for (size_t i = 0; i < t * k; i++) {
        x[i] = (float) (i % 11) * 0.1f - 0.5f;
    }
    EngMatrix *m = eng_matrix_new_w4(w, (uint32_t) n, (uint32_t) k);
    g_free(w);
    EngTensor xt = { x, t, k }, yt = { y, t, n };
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = hs_bench_now_s();
        eng_matmul(&xt, m, &yt, 0, t, 0, n);
        best = MIN(best, hs_bench_now_s() - t0);
    }
    *weight_bytes = (double) eng_matrix_bytes(m);
    eng_matrix_free(m);
    g_free(x);
    g_free(y);
    return best;
}

/* Best of @reps seconds for a matmul of @t tokens against [n x k] weights
 * in @format (quant-formats.h); @a8: with per-tensor INT8 activations (W8
 * only; @shadow: outliers extracted, the input having 0.2 % hot channels).
 * @weight_bytes: what the weights take as stored. */
static double
q_matmul_s(EngQFormat format, gboolean a8, gboolean shadow, size_t t, size_t n, size_t k,
           int reps, double *weight_bytes)
{
    float *w = g_new(float, n * k), *x = g_new(float, t * k), *y = g_new0(float, t * n);
    for (size_t i = 0; i < n * k; i++) {
        w[i] = (float) (i % 13) * 0.01f - 0.06f;
    }
    for (size_t i = 0; i < t * k; i++) {
        x[i] = ((float) (i % 11) * 0.1f - 0.5f) * (i % k < k / 500 ? 30.0f : 1.0f);
    }
    EngQMatrix *m = eng_qmatrix_new_from(format, w, (uint32_t) n, (uint32_t) k);
    g_free(w);
    EngTensor xt = { x, t, k }, yt = { y, t, n };
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = hs_bench_now_s();
        if (a8) {
            EngActInt8 a;
            eng_act_int8_params(x, k, t, shadow, &a);
            eng_qmatmul_a8(&xt, &a, m, &yt, 0, t, 0, n);
        } else {
            eng_qmatmul(&xt, m, &yt, 0, t, 0, n);
        }
        best = MIN(best, hs_bench_now_s() - t0);
    }
    *weight_bytes = (double) eng_qmatrix_bytes(m);
    eng_qmatrix_free(m);
    g_free(x);
    g_free(y);
    return best;
}

/* Best of @reps milliseconds for one decode step's attention of Llama-3-8B
 * (32 query heads, 8 KV heads, head 128) over @n positions (@n - 1 in the
 * caches), on @threads OpenMP threads. */
static double
attn_decode_ms(size_t n, int threads, int reps)
{
    const size_t heads = 32, kvh = 8, hd = 128, kd = kvh * hd;
    /* in huge pages, as the values check's caches are (sim/values.c) */
    float *kc = hs_mem_alloc0(sizeof(float) * n * kd);
    float *vc = hs_mem_alloc0(sizeof(float) * n * kd);
    float *q = g_new(float, heads * hd), *y = g_new(float, heads * hd);
    guint32 x = 1;
    for (size_t i = 0; i < n * kd; i++) {
        x = x * 1664525u + 1013904223u;            /* LCG: Numerical Recipes' constants */
        kc[i] = (float) (x >> 8) / 16777216.0f - 0.5f;
        vc[i] = (float) (x & 0xffff) / 65536.0f - 0.5f;
    }
    for (size_t i = 0; i < heads * hd; i++) {
        q[i] = (float) (i % 17) * 0.05f - 0.4f;
    }
    int was = omp_get_max_threads();
    omp_set_num_threads(threads);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = hs_bench_now_s();
        /* the new token's K/V row is the cache's last one */
        eng_attention_rows(q, kc + (n - 1) * kd, vc + (n - 1) * kd, kc, vc, y, heads, kvh, hd,
                           n - 1, 0, 1, 0, heads);
        best = MIN(best, hs_bench_now_s() - t0);
    }
    omp_set_num_threads(was);
    free(kc);
    free(vc);
    g_free(q);
    g_free(y);
    return best * 1e3;
}

/* ---- this machine's limits: what each kernel's figure is a share of ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_PROBE_X86 1

/* Independent FMA chains: more than an FMA's latency (4 cycles) times
 * the FMA pipes (2) on every x86 core of the last decade, so the chains
 * never wait on each other; 12 accumulators and 2 constants fit the 16
 * registers AVX2 has. */
#define PEAK_CHAINS 12
#define PEAK_ITERS 4096

/* FLOPs of @iters rounds of PEAK_CHAINS 8-lane FMAs (2 FLOPs a lane). */
__attribute__((target("avx2,fma"))) static double
fma_rounds_avx2(size_t iters, float *sink)
{
    __m256 acc[PEAK_CHAINS];
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    for (int c = 0; c < PEAK_CHAINS; c++) {
        acc[c] = _mm256_set1_ps((float) c);
    }
    for (size_t i = 0; i < iters; i++) {
        _Pragma("GCC unroll 12")
        for (int c = 0; c < PEAK_CHAINS; c++) {
            acc[c] = _mm256_fmadd_ps(acc[c], m, a);
        }
    }
    __m256 s = acc[0];
    for (int c = 1; c < PEAK_CHAINS; c++) {
        s = _mm256_add_ps(s, acc[c]);
    }
    *sink += _mm256_cvtss_f32(s);
    return (double) iters * PEAK_CHAINS * 8 * 2;
}

/* The same with 16-lane AVX-512 FMAs (24 chains: 32 registers). */
#define PEAK_CHAINS_512 24
__attribute__((target("avx512f"))) static double
fma_rounds_avx512(size_t iters, float *sink)
{
    __m512 acc[PEAK_CHAINS_512];
    const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
    for (int c = 0; c < PEAK_CHAINS_512; c++) {
        acc[c] = _mm512_set1_ps((float) c);
    }
    for (size_t i = 0; i < iters; i++) {
        _Pragma("GCC unroll 24")
        for (int c = 0; c < PEAK_CHAINS_512; c++) {
            acc[c] = _mm512_fmadd_ps(acc[c], m, a);
        }
    }
    __m512 s = acc[0];
    for (int c = 1; c < PEAK_CHAINS_512; c++) {
        s = _mm512_add_ps(s, acc[c]);
    }
    *sink += _mm512_reduce_add_ps(s);
    return (double) iters * PEAK_CHAINS_512 * 16 * 2;
}

/* Sum of 64-bit words [0, n) of @p, four 256-bit loads a round. */
__attribute__((target("avx2"))) static uint64_t
read_sum_avx2(const uint64_t *p, size_t n)
{
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_add_epi64(s0, _mm256_load_si256((const __m256i *) (p + i)));
        s1 = _mm256_add_epi64(s1, _mm256_load_si256((const __m256i *) (p + i + 4)));
        s2 = _mm256_add_epi64(s2, _mm256_load_si256((const __m256i *) (p + i + 8)));
        s3 = _mm256_add_epi64(s3, _mm256_load_si256((const __m256i *) (p + i + 12)));
    }
    uint64_t l[4], s = 0;
    _mm256_storeu_si256((__m256i *) l, _mm256_add_epi64(_mm256_add_epi64(s0, s1),
                                                        _mm256_add_epi64(s2, s3)));
    for (; i < n; i++) {
        s += p[i];
    }
    return s + l[0] + l[1] + l[2] + l[3];
}
#endif

/* GFLOPS of @threads threads each running FMA chains for ~@seconds
 * (@width 256: AVX2, 512: AVX-512); 0 when the CPU cannot. */
static double
fma_peak_gflops(int threads, int width, double seconds)
{
#ifdef HAVE_PROBE_X86
    if (width == 512 ? !eng_set_isa(ENG_ISA_AVX512) : !eng_set_isa(ENG_ISA_AVX2)) {
        return 0;
    }
    eng_set_isa(ENG_ISA_AUTO);
    double flops = 0;
    float sink = 0;
    double t0 = hs_bench_now_s();
    #pragma omp parallel num_threads(threads) reduction(+:flops, sink)
    {
        double start = hs_bench_now_s();
        do {
            flops += width == 512 ? fma_rounds_avx512(PEAK_ITERS, &sink)
                                  : fma_rounds_avx2(PEAK_ITERS, &sink);
        } while (hs_bench_now_s() - start < seconds);
    }
    double dt = hs_bench_now_s() - t0;
    volatile float keep = sink;
    (void) keep;
    return flops / dt / 1e9;
#else
    (void) threads, (void) width, (void) seconds;
    return 0;
#endif
}

/* Streaming read bandwidth of @threads threads: the best of 3 sums of
 * @bytes, far more than the last-level cache (the first pass also maps
 * the pages). */
static double
read_roofline_gbps(const uint64_t *buf, size_t bytes, int threads)
{
    const size_t n = bytes / sizeof(uint64_t);
    double best = 1e30;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 3; r++) {
        uint64_t s = 0;
        double t0 = hs_bench_now_s();
        #pragma omp parallel num_threads(threads) reduction(+:s)
        {
            const size_t nt = (size_t) omp_get_num_threads(), id = (size_t) omp_get_thread_num();
            /* whole 128-byte pieces per thread */
            const size_t per = (n / nt) & ~(size_t) 15;
            const size_t a = id * per, b = id + 1 == nt ? n : a + per;
#ifdef HAVE_PROBE_X86
            s += read_sum_avx2(buf + a, b - a);
#else
            for (size_t i = a; i < b; i++) {
                s += buf[i];
            }
#endif
        }
        best = MIN(best, hs_bench_now_s() - t0);
        sink += s;
    }
    (void) sink;
    return (double) bytes / best / 1e9;
}

static double
median(double *v, int n)
{
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static long
peak_rss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static gboolean
infer_tps(const char *model, uint32_t prompt, uint32_t steps, double *tps,
          double *weights_kv_bytes, GError **error)
{
    g_autofree char *dir = g_build_filename(hs_cli_data_dir(), "models", NULL);
    g_autoptr(MdlSpec) spec = mdl_spec_load(model, dir, error);
    if (spec == NULL) {
        return FALSE;
    }
    EngConfig cfg;
    sim_run_engine_config(spec, 1, &cfg);
    g_autoptr(EngModel) m = eng_model_new(&cfg);
    g_autoptr(EngKV) kv = eng_kv_new(&cfg, prompt + steps);
    g_autofree uint32_t *tok = g_new(uint32_t, prompt);
    for (uint32_t i = 0; i < prompt; i++) {
        tok[i] = (i * 7919u + 13u) % cfg.vocab;
    }
    g_autofree float *logits = g_new(float, (size_t) prompt * cfg.vocab);
    sim_forward(m, spec, kv, tok, prompt, 0, logits);        /* also builds the weights */
    double t0 = hs_bench_now_s();
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t next = tok[s % prompt];
        sim_forward(m, spec, kv, &next, 1, prompt + s, logits);
    }
    *tps = steps / (hs_bench_now_s() - t0);
    /* what the model holds: its matmul weights as stored (W4A16: nibbles +
     * FP16 scales; the synthetic embedding is generated per token, never
     * held) and the FP32 KV cache */
    *weights_kv_bytes = (double) (eng_model_weight_bytes(m) + eng_kv_bytes(kv));
    return TRUE;
}
/* The paths the kernels are measured on: AVX2 and, when the CPU has it,
 * AVX-512 (the portable path when neither). */
static int
measured_isas(EngIsa isa[2])
{
    int n = 0;
    for (EngIsa i = ENG_ISA_AVX2; i <= ENG_ISA_AVX512; i++) {
        if (eng_set_isa(i)) {
            isa[n++] = i;
        }
    }
    eng_set_isa(ENG_ISA_AUTO);
    if (n == 0) {
        isa[n++] = ENG_ISA_PORTABLE;
    }
    return n;
}

/*
 * One thread, Y [t, n] = X [t, k] . W [n, k]^T: OpenBLAS's FP32 sgemm and
 * the W4A16 kernel on each path of @isa, in @rounds alternated rounds (the
 * machine is shared: a neighbour's burst slows both sides of a round).
 * Medians of GFLOPS into @blas and @w4[i], and of each round's W4A16 /
 * OpenBLAS into @ratio[i].
 */
static void
prefill_1thread(size_t t, size_t n, size_t k, int rounds, const EngIsa *isa, int nisa,
                double *blas, double *w4, double *ratio)
{
    float *w = g_new(float, n * k), *x = g_new(float, t * k), *y = g_new0(float, t * n);
    for (size_t i = 0; i < n * k; i++) {
        w[i] = (float) (i % 13) * 0.01f - 0.06f;
    }
    for (size_t i = 0; i < t * k; i++) {
        x[i] = (float) (i % 11) * 0.1f - 0.5f;
    }
    EngMatrix *m = eng_matrix_new_w4(w, (uint32_t) n, (uint32_t) k);
    EngTensor xt = { x, t, k }, yt = { y, t, n };
    const double flop = 2.0 * t * n * k;
    int was = omp_get_max_threads();
    omp_set_num_threads(1);
    eng_blas_set_threads(1);
    double b[16], v[2][16], r[2][16];
    rounds = MIN(rounds, 16);
    for (int i = 0; i < rounds; i++) {
        double t0 = hs_bench_now_s();
        eng_blas_sgemm_nt((int) t, (int) n, (int) k, x, (int) k, w, (int) k, y, (int) n);
        b[i] = flop / (hs_bench_now_s() - t0) / 1e9;
        for (int j = 0; j < nisa; j++) {
            eng_set_isa(isa[j]);
            t0 = hs_bench_now_s();
            eng_matmul(&xt, m, &yt, 0, t, 0, n);
            v[j][i] = flop / (hs_bench_now_s() - t0) / 1e9;
            r[j][i] = v[j][i] / b[i];
        }
    }
    eng_set_isa(ENG_ISA_AUTO);
    omp_set_num_threads(was);
    *blas = median(b, rounds);
    for (int j = 0; j < nisa; j++) {
        w4[j] = median(v[j], rounds);
        ratio[j] = median(r[j], rounds);
    }
    eng_matrix_free(m);
    g_free(w);
    g_free(x);
    g_free(y);
}

/* A decode step's matmul: packed INT4 weights [rows x cols], its input
 * and output rows. */
typedef struct Matvec {
    EngMatrix *m;
    float *x, *y;
    EngTensor xt, yt;
    size_t rows;
} Matvec;

static void
matvec_init(Matvec *mv, size_t rows, size_t cols)
{
    float *w = g_new(float, rows * cols);
    for (size_t i = 0; i < rows * cols; i++) {
        w[i] = (float) (i % 13) * 0.01f - 0.06f;
    }
    mv->x = g_new(float, cols);
    for (size_t i = 0; i < cols; i++) {
        mv->x[i] = (float) (i % 11) * 0.1f - 0.5f;
    }
    mv->y = g_new0(float, rows);
    mv->m = eng_matrix_new_w4(w, (uint32_t) rows, (uint32_t) cols);
    g_free(w);
    mv->xt = (EngTensor) { mv->x, 1, cols };
    mv->yt = (EngTensor) { mv->y, 1, rows };
    mv->rows = rows;
}

/* GB/s of packed weights of the best of @reps calls on path @isa */
static double
matvec_best_gbps(Matvec *mv, EngIsa isa, int reps)
{
    eng_set_isa(isa);
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = hs_bench_now_s();
        eng_matmul(&mv->xt, mv->m, &mv->yt, 0, 1, 0, mv->rows);
        best = MIN(best, hs_bench_now_s() - t0);
    }
    eng_set_isa(ENG_ISA_AUTO);
    return (double) eng_matrix_bytes(mv->m) / best / 1e9;
}

static void
matvec_clear(Matvec *mv)
{
    eng_matrix_free(mv->m);
    g_free(mv->x);
    g_free(mv->y);
}

/*
 * The W4A16 matrix-vector product (a decode step's matmul) on all
 * threads, GB/s of packed weights, alternated with the read probe on as
 * many threads: medians of GB/s into @gbps[i] and of each round's share
 * of the roofline into @share[i].
 */
static void
matvec_vs_read(size_t rows, size_t cols, const uint64_t *buf, size_t buf_bytes, int rounds,
               const EngIsa *isa, int nisa, double *gbps, double *share)
{
    Matvec mv;
    matvec_init(&mv, rows, cols);
    double v[2][16], s[2][16];
    rounds = MIN(rounds, 16);
    for (int i = 0; i < rounds; i++) {
        double roof = read_roofline_gbps(buf, buf_bytes, omp_get_max_threads());
        for (int j = 0; j < nisa; j++) {
            v[j][i] = matvec_best_gbps(&mv, isa[j], 2);
            s[j][i] = v[j][i] / roof;
        }
    }
    for (int j = 0; j < nisa; j++) {
        gbps[j] = median(v[j], rounds);
        share[j] = median(s[j], rounds);
    }
    matvec_clear(&mv);
}

/*
 * The same matvec on one thread, on weights that stay in its L2 ([256 x
 * 4096]: half a MiB), best of @reps calls, for each path: the kernel's own
 * speed with no DRAM in the way.  One thread, as a call this short on
 * several would time the threads' wake-up (the CLI's passive OpenMP wait
 * policy); each core has its own units, so the threads together reach
 * that times their count.  When the DRAM run reaches that, the kernel, not
 * the memory, is the limit.
 */
static void
matvec_cached(int reps, const EngIsa *isa, int nisa, double *gbps)
{
    const int nthreads = omp_get_max_threads();
    Matvec mv;
    matvec_init(&mv, 256, 4096);
    omp_set_num_threads(1);
    for (int j = 0; j < nisa; j++) {
        gbps[j] = matvec_best_gbps(&mv, isa[j], reps);
    }
    omp_set_num_threads(nthreads);
    matvec_clear(&mv);
}

/* The other weight formats plus W8 with INT8 activations (plain, shadow). */
enum { NQ = ENG_QFMT_COUNT + 2 };

/* Figures of one path (ISA). */
typedef struct PathFigures {
    EngIsa isa;
    double peak1, peak;              /* its FMA peak, 1 and all threads, GFLOPS */
    double prefill1, prefill1_ratio; /* W4A16 prefill, 1 thread: GFLOPS, / OpenBLAS */
    double prefill;                  /* the same on all threads */
    double batch1, batch;            /* W4A16 batch 64, 1 and all threads */
    double matvec_gbps, matvec_share;
    double matvec_cached_gbps;       /* the same kernel on weights in L2, 1 thread */
    double q_gbps[NQ], q_gflops[NQ];
} PathFigures;

static const char *
isa_label(EngIsa isa)
{
    return isa == ENG_ISA_AVX512 ? "avx512" : isa == ENG_ISA_AVX2 ? "avx2" : "portable";
}

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    const int nthreads = omp_get_max_threads();
    EngIsa isa[2];
    const int nisa = measured_isas(isa);
    PathFigures path[2] = { { 0 } };

    /* infer first: the process's peak RSS read right after it is infer's,
     * before the probes' buffers (512 MiB of read probe) raise it */
    double tiny_tps, tiny_bytes, big_tps = 0, big_bytes = 0;
    if (!infer_tps("tiny", 16, quick ? 8 : 64, &tiny_tps, &tiny_bytes, error)) {
        return FALSE;
    }
    if (!quick && !infer_tps("llama-3.2-1b", 16, 8, &big_tps, &big_bytes, error)) {
        return FALSE;
    }
    long rss = peak_rss_kib();

    /* the limits: FMA throughput per vector width (1 and all threads, 50
     * ms each) and the read bandwidth of 512 MiB (1 and all threads) */
    const double probe_s = quick ? 0.01 : 0.05;
    const double peak256[2] = { fma_peak_gflops(1, 256, probe_s),
                                fma_peak_gflops(nthreads, 256, probe_s) };
    const double peak512[2] = { fma_peak_gflops(1, 512, probe_s),
                                fma_peak_gflops(nthreads, 512, probe_s) };
    const size_t buf_bytes = quick ? (64u << 20) : (512u << 20);
    uint64_t *buf = g_aligned_alloc(buf_bytes / sizeof(uint64_t), sizeof(uint64_t), 64);
    for (size_t i = 0; i < buf_bytes / sizeof(uint64_t); i++) {
        buf[i] = i;
    }
    const double read1 = read_roofline_gbps(buf, buf_bytes, 1);
    const double read_all = read_roofline_gbps(buf, buf_bytes, nthreads);
    for (int j = 0; j < nisa; j++) {
        path[j].isa = isa[j];
        const double *pk = isa[j] == ENG_ISA_AVX512 ? peak512 : peak256;
        path[j].peak1 = pk[0];
        /* each core's FMA units are its own: an all-thread probe below
         * the threads times one thread's ran on a shared machine (another
         * process had a core), and the limit is the sum */
        path[j].peak = MAX(pk[1], nthreads * pk[0]);
    }

    double mvc[2];
    matvec_cached(quick ? 20 : 400, isa, nisa, mvc);
    /* W4A16 prefill, one thread, against OpenBLAS's FP32 GEMM at the same
     * shape: 256 tokens x [4096 x 4096] (Llama-3-8B's attention output);
     * first, before OpenBLAS's own threads exist (see gemm_gflops) */
    const size_t pt = quick ? 32 : 256, pn = quick ? 1024 : 4096, pk = pn;
    double blas1, w4v[2], w4r[2];
    prefill_1thread(pt, pn, pk, quick ? 1 : 5, isa, nisa, &blas1, w4v, w4r);
    for (int j = 0; j < nisa; j++) {
        path[j].prefill1 = w4v[j];
        path[j].prefill1_ratio = w4r[j];
    }
    /* a decode step's matvec on packed INT4 weights, [32768 x 4096]: 66
     * MB, beside the read probe */
    const size_t rows = quick ? 4096 : 32768, cols = 4096;
    double mv[2], mvs[2];
    matvec_vs_read(rows, cols, buf, buf_bytes, quick ? 1 : 5, isa, nisa, mv, mvs);
    g_free(buf);
    for (int j = 0; j < nisa; j++) {
        path[j].matvec_gbps = mv[j];
        path[j].matvec_share = mvs[j];
        path[j].matvec_cached_gbps = mvc[j];
    }

    /* a decode step's attention (the functional check's cost that grows
     * with the step) at two cache lengths, one thread and all of them */
    const size_t attn_n[2] = { quick ? 256 : 1024, quick ? 1024 : 4096 };
    double attn_ms[2][2];
    for (int i = 0; i < 2; i++) {
        attn_ms[i][0] = attn_decode_ms(attn_n[i], 1, quick ? 2 : 10);
        attn_ms[i][1] = attn_decode_ms(attn_n[i], nthreads, quick ? 2 : 10);
    }

    /* per path: the prefill on all threads, a batch-64 decode step's
     * matmul (Llama-3-8B's attention output) on one thread and all, and
     * the other formats: matvec on 32-64 MiB of weights, prefill 64 tokens
     * x [4096 x 4096]; W8 also with INT8 activations, plain and shadow */
    const size_t bt = quick ? 16 : 64, bk = quick ? 1024 : 4096;
    const char *q_name[NQ];
    const size_t qn = quick ? 1024 : 8192, qk = 4096, qt = quick ? 8 : 64;
    double unused_bytes;
    for (int j = 0; j < nisa; j++) {
        PathFigures *f = &path[j];
        eng_set_isa(isa[j]);
        f->prefill = 2.0 * pt * pn * pk / w4_matmul_s(pt, pn, pk, quick ? 1 : 3,
                                                      &unused_bytes) / 1e9;
        omp_set_num_threads(1);
        f->batch1 = 2.0 * bt * bk * bk / w4_matmul_s(bt, bk, bk, 3, &unused_bytes) / 1e9;
        omp_set_num_threads(nthreads);
        f->batch = 2.0 * bt * bk * bk / w4_matmul_s(bt, bk, bk, 3, &unused_bytes) / 1e9;
        for (int i = 0; i < NQ; i++) {
            EngQFormat qf = i < ENG_QFMT_COUNT ? (EngQFormat) i : ENG_QFMT_W8;
            gboolean a8 = i >= ENG_QFMT_COUNT, shadow = i == ENG_QFMT_COUNT + 1;
            q_name[i] = !a8 ? eng_qfmt_name[qf] : shadow ? "w8a8-shadow" : "w8a8";
            double bytes, t_mv = q_matmul_s(qf, a8, shadow, 1, qn, qk, 3, &bytes);
            f->q_gbps[i] = bytes / t_mv / 1e9;
            double t_pf = q_matmul_s(qf, a8, shadow, qt, qk, qk, quick ? 1 : 2, &bytes);
            f->q_gflops[i] = 2.0 * qt * qk * qk / t_pf / 1e9;
        }
    }
    eng_set_isa(ENG_ISA_AUTO);

    size_t sizes[] = { 1024, 2048 };
    double eng[2], blas[2];
    for (int i = 0; i < 2; i++) {
        size_t n = quick ? sizes[i] / 4 : sizes[i];
        /* the engine first: OpenBLAS's own pool keeps spinning for a while
         * after a multi-threaded call and would steal a core from it */
        eng[i] = gemm_gflops(n, FALSE, quick ? 1 : 3);
        blas[i] = gemm_gflops(n, TRUE, quick ? 1 : 3);
    }

    double load[3] = { 0 };
    if (getloadavg(load, 3) < 1) {
        load[0] = -1;
    }
    const char *blas_core = eng_blas_corename();
    /* the best path (what runs by default) for the figures without a path */
    const PathFigures *best = &path[nisa - 1];

    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "bench", "engine");
        cJSON_AddNumberToObject(j, "threads", nthreads);
        cJSON_AddNumberToObject(j, "loadavg_1min", load[0]);
        cJSON_AddNumberToObject(j, "fma_peak_gflops_256_1_thread", peak256[0]);
        cJSON_AddNumberToObject(j, "fma_peak_gflops_256", peak256[1]);
        cJSON_AddNumberToObject(j, "fma_peak_gflops_512_1_thread", peak512[0]);
        cJSON_AddNumberToObject(j, "fma_peak_gflops_512", peak512[1]);
        cJSON_AddNumberToObject(j, "read_gbps_1_thread", read1);
        cJSON_AddNumberToObject(j, "read_gbps", read_all);
        cJSON_AddStringToObject(j, "openblas_core", blas_core ? blas_core : "");
        cJSON_AddNumberToObject(j, "sgemm_prefill_gflops_1_thread", blas1);
        cJSON_AddNumberToObject(j, "gemm1024_engine_over_blas", eng[0] / blas[0]);
        cJSON_AddNumberToObject(j, "gemm2048_engine_over_blas", eng[1] / blas[1]);
        cJSON_AddStringToObject(j, "w4a16_isa", isa_label(best->isa));
        cJSON_AddNumberToObject(j, "w4a16_matvec_gbps", best->matvec_gbps);
        cJSON_AddNumberToObject(j, "w4a16_prefill_gflops", best->prefill);
        cJSON_AddNumberToObject(j, "w4a16_batch_gflops_1_thread", best->batch1);
        cJSON_AddNumberToObject(j, "w4a16_batch_gflops", best->batch);
        cJSON *pj = cJSON_AddObjectToObject(j, "paths");
        for (int p = 0; p < nisa; p++) {
            const PathFigures *f = &path[p];
            cJSON *o = cJSON_AddObjectToObject(pj, isa_label(f->isa));
            cJSON_AddNumberToObject(o, "fma_peak_gflops_1_thread", f->peak1);
            cJSON_AddNumberToObject(o, "fma_peak_gflops", f->peak);
            cJSON_AddNumberToObject(o, "w4a16_prefill_gflops_1_thread", f->prefill1);
            cJSON_AddNumberToObject(o, "w4a16_prefill_over_sgemm_1_thread", f->prefill1_ratio);
            cJSON_AddNumberToObject(o, "w4a16_prefill_gflops", f->prefill);
            cJSON_AddNumberToObject(o, "w4a16_batch_gflops_1_thread", f->batch1);
            cJSON_AddNumberToObject(o, "w4a16_batch_gflops", f->batch);
            cJSON_AddNumberToObject(o, "w4a16_matvec_gbps", f->matvec_gbps);
            cJSON_AddNumberToObject(o, "w4a16_matvec_over_read", f->matvec_share);
            cJSON_AddNumberToObject(o, "w4a16_matvec_in_l2_gbps_1_thread", f->matvec_cached_gbps);
            cJSON *qj = cJSON_AddObjectToObject(o, "formats");
            for (int i = 0; i < NQ; i++) {
                cJSON *q = cJSON_AddObjectToObject(qj, q_name[i]);
                cJSON_AddNumberToObject(q, "matvec_gbps", f->q_gbps[i]);
                cJSON_AddNumberToObject(q, "prefill_gflops", f->q_gflops[i]);
            }
        }
        cJSON *aj = cJSON_AddArrayToObject(j, "attention_decode");
        for (int i = 0; i < 2; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "positions", (double) attn_n[i]);
            cJSON_AddNumberToObject(o, "ms_1_thread", attn_ms[i][0]);
            cJSON_AddNumberToObject(o, "ms_all_threads", attn_ms[i][1]);
            cJSON_AddItemToArray(aj, o);
        }
        cJSON_AddNumberToObject(j, "tiny_tokens_per_s", tiny_tps);
        cJSON_AddNumberToObject(j, "llama_3_2_1b_tokens_per_s", big_tps);
        cJSON_AddNumberToObject(j, "peak_rss_over_weights_kv",
                                big_bytes > 0 ? rss * 1024.0 / big_bytes : 0);
        g_autofree char *s = hs_json_print(j, FALSE);
        printf("%s\n", s);
        return TRUE;
    }
    printf("engine%s (%d threads, load %.2f)\n",
           quick ? " (--quick: small sizes, figures not meaningful)" : "", nthreads, load[0]);
    printf("  limits: FMA peak (256-bit) %.1f GFLOPS on 1 thread, %.1f on %d (shares on %d "
           "threads: of at least %d x 1 thread's)", peak256[0], peak256[1], nthreads, nthreads,
           nthreads);
    if (peak512[0] > 0) {
        printf("; 512-bit %.1f, %.1f", peak512[0], peak512[1]);
    }
    printf("\n          read bandwidth (%zu MiB) %.1f GB/s on 1 thread, %.1f on %d\n",
           buf_bytes >> 20, read1, read_all, nthreads);
    printf("  W4A16 prefill [%zu x %zu] x [%zu x %zu]^T, 1 thread, median of %d rounds against "
           "OpenBLAS sgemm (%s core): %.1f GFLOPS = %.0f %% of the 256-bit peak\n", pt, pk, pn,
           pk, quick ? 1 : 5, blas_core ? blas_core : "?", blas1, 100 * blas1 / peak256[0]);
    for (int p = 0; p < nisa; p++) {
        const PathFigures *f = &path[p];
        printf("    %-8s %6.1f GFLOPS = %3.0f %% of its %.1f peak -> %.2fx sgemm (target >= 0.9)\n",
               isa_label(f->isa), f->prefill1, 100 * f->prefill1 / f->peak1, f->peak1,
               f->prefill1_ratio);
    }
    printf("  W4A16 matvec [%zu x %zu] on %d threads, median of %d rounds beside the read "
           "probe:\n", rows, cols, nthreads, quick ? 1 : 5);
    for (int p = 0; p < nisa; p++) {
        const PathFigures *f = &path[p];
        printf("    %-8s %6.1f GB/s of packed INT4 weights = %.2f of the read roofline "
               "(target >= 0.8)\n", isa_label(f->isa), f->matvec_gbps, f->matvec_share);
    }
    printf("    the same kernel on one thread, [256 x %zu] (in L2), best of %d calls:\n", cols,
           quick ? 20 : 400);
    for (int p = 0; p < nisa; p++) {
        const PathFigures *f = &path[p];
        /* within 10 % of that speed from DRAM: the kernel is the limit */
        const double all = nthreads * f->matvec_cached_gbps;
        printf("    %-8s %6.1f GB/s, x %d threads = %.1f: the DRAM run reaches %.2f of it (%s)\n",
               isa_label(f->isa), f->matvec_cached_gbps, nthreads, all, f->matvec_gbps / all,
               f->matvec_gbps >= 0.9 * all ? "compute-bound" : "below the kernel's speed");
    }
    for (int p = 0; p < nisa; p++) {
        const PathFigures *f = &path[p];
        printf("  %s path (peak %.1f GFLOPS on 1 thread, %.1f on %d):\n", isa_label(f->isa),
               f->peak1, f->peak, nthreads);
        printf("    W4A16 prefill %zu x [%zu x %zu] on %d threads: %.1f GFLOPS = %.0f %%\n", pt,
               pn, pk, nthreads, f->prefill, 100 * f->prefill / f->peak);
        printf("    W4A16 batch %zu x [%zu x %zu]: %.1f GFLOPS = %.0f %% on 1 thread, %.1f = "
               "%.0f %% on %d\n", bt, bk, bk, f->batch1, 100 * f->batch1 / f->peak1, f->batch,
               100 * f->batch / f->peak, nthreads);
        printf("    formats: matvec [%zu x %zu] GB/s of stored weights (share of the %.1f GB/s "
               "roofline) / prefill %zu x [%zu x %zu] GFLOPS (share of the peak), %d threads\n",
               qn, qk, read_all, qt, qk, qk, nthreads);
        for (int i = 0; i < NQ; i++) {
            /* W8A8 multiplies integers: VPMADDWD does 16 multiply-adds a
             * 256-bit instruction, twice an FMA's, so its limit is twice
             * the FMA peak */
            const double lim = i >= ENG_QFMT_COUNT ? 2 * f->peak : f->peak;
            printf("      %-12s %6.1f GB/s %4.0f %%  %6.1f GFLOPS %4.0f %%%s\n", q_name[i],
                   f->q_gbps[i], 100 * f->q_gbps[i] / read_all, f->q_gflops[i],
                   100 * f->q_gflops[i] / lim, i >= ENG_QFMT_COUNT ? " (of 2x: integer)" : "");
        }
    }
    for (int i = 0; i < 2; i++) {
        printf("  FP32 GEMM %4zu: engine %7.1f GFLOPS, OpenBLAS direct %7.1f  -> %.2f "
               "(target >= 0.9)\n", quick ? sizes[i] / 4 : sizes[i], eng[i], blas[i],
               eng[i] / blas[i]);
    }
    for (int i = 0; i < 2; i++) {
        printf("  attention decode: 32 heads x %zu positions (GQA 32/8, head 128): %.2f ms "
               "on 1 thread, %.2f ms on %d\n", attn_n[i], attn_ms[i][0], attn_ms[i][1],
               nthreads);
    }
    printf("  infer tiny: %.0f tokens/s\n", tiny_tps);
    if (!quick) {
        printf("  infer llama-3.2-1b (synthetic): %.2f tokens/s; peak RSS %.2f GiB = %.2fx "
               "its W4A16 weights + KV (%.2f GiB; target <= 1.2x)\n", big_tps,
               rss / 1048576.0, rss * 1024.0 / big_bytes, big_bytes / 1073741824.0);
    }
    return TRUE;
}

const HsBench hs_bench_engine = {
    /* the kernels' shares of the FMA peak and the read roofline are in its output */
    "engine", "functional engine: GEMM vs OpenBLAS, W4A16 GB/s, infer tokens/s, memory", run,
};
