/*
 * bench-engine.c - the functional engine's speed and memory: FP32 GEMM
 * through the engine vs OpenBLAS called directly, the W4A16 matrix-vector
 * product's weight bandwidth vs the machine's streaming read bandwidth,
 * the other weight formats' matvec and prefill speed, a decode step's
 * attention over a long KV cache, infer tokens/s on
 * the tiny model and a ~1B model, and the 1B model's peak memory vs its
 * weights plus KV cache.
 */
#include "engine/model.h"
#include "sim/forward.h"
#include "engine/kernels.h"
#include "engine/quant-formats.h"
#include "models/spec.h"
#include "sim/cli/bench.h"
#include "sim/run.h"
#include "sim/util/json.h"
#include "sim/util/mem.h"

#include <cblas.h>
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
     * (and sets that on first use); called directly, OpenBLAS gets every
     * core, as a user calling it would give it */
    eng_matmul_f32(a, n, b, n, n, c, 0, MIN(n, 8), 0, MIN(n, 8));
    openblas_set_num_threads(direct ? (int) g_get_num_processors() : 1);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = hs_bench_now_s();
        if (direct) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) n, (int) n, (int) n,
                        1.0f, a, (int) n, b, (int) n, 0.0f, c, (int) n);
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

/* Streaming read bandwidth: sum a buffer much larger than the caches. */
static double
read_gbps(size_t bytes)
{
    size_t n = bytes / sizeof(uint64_t);
    uint64_t *buf = g_new(uint64_t, n);
    for (size_t i = 0; i < n; i++) {
        buf[i] = i;
    }
    double best = 1e30;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = hs_bench_now_s();
        uint64_t s = 0;
        #pragma omp parallel for reduction(+:s) schedule(static)
        for (size_t i = 0; i < n; i++) {
            s += buf[i];
        }
        sink += s;
        best = MIN(best, hs_bench_now_s() - t0);
    }
    g_free(buf);
    (void) sink;
    return (double) bytes / best / 1e9;
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

static gboolean
run(gboolean quick, HsFormat format, GError **error)
{
    /* FFN-down of Llama-3-8B over 256 tokens; first, before OpenBLAS's
     * own threads exist (see below) */
    const size_t pt = quick ? 16 : 256, pn = quick ? 1024 : 4096, pk = quick ? 1024 : 14336;
    double unused_bytes, w4_gemm_s = w4_matmul_s(pt, pn, pk, quick ? 1 : 3, &unused_bytes);
    double w4_gemm = 2.0 * pt * pn * pk / w4_gemm_s / 1e9;
    /* a decode step's attention (the functional check's cost that grows
     * with the step) at two cache lengths, one thread and all of them; before
     * OpenBLAS's threads too */
    const size_t attn_n[2] = { quick ? 256 : 1024, quick ? 1024 : 4096 };
    const int nthreads = omp_get_max_threads();
    double attn_ms[2][2];
    for (int i = 0; i < 2; i++) {
        attn_ms[i][0] = attn_decode_ms(attn_n[i], 1, quick ? 2 : 10);
        attn_ms[i][1] = attn_decode_ms(attn_n[i], nthreads, quick ? 2 : 10);
    }

    /* a batch-64 decode step's matmul (Llama-3-8B's attention output):
     * one thread, then all of them */
    const size_t bt = quick ? 16 : 64, bk = quick ? 1024 : 4096;
    omp_set_num_threads(1);
    double w4_batch1 = 2.0 * bt * bk * bk / w4_matmul_s(bt, bk, bk, 3, &unused_bytes) / 1e9;
    omp_set_num_threads(nthreads);
    double w4_batch = 2.0 * bt * bk * bk / w4_matmul_s(bt, bk, bk, 3, &unused_bytes) / 1e9;
    size_t sizes[] = { 1024, 2048 };
    double eng[2], blas[2];
    for (int i = 0; i < 2; i++) {
        size_t n = quick ? sizes[i] / 4 : sizes[i];
        /* the engine first: OpenBLAS's own pool keeps spinning for a while
         * after a multi-threaded call and would steal a core from it */
        eng[i] = gemm_gflops(n, FALSE, quick ? 1 : 3);
        blas[i] = gemm_gflops(n, TRUE, quick ? 1 : 3);
    }
    /* W4A16 matrix-vector on packed INT4 weights (a decode step's matmul);
     * 64 MiB of weights, far more than the caches */
    size_t rows = quick ? 4096 : 32768, cols = 4096;
    double int4_bytes, w4_s = w4_matmul_s(1, rows, cols, 5, &int4_bytes);
    double w4_gbps = int4_bytes / w4_s / 1e9;
    double mem_gbps = read_gbps(quick ? (64u << 20) : (512u << 20));
    /* the other formats: matvec on 32-64 MiB of weights, prefill 64 tokens
     * x [4096 x 4096]; W8 also with INT8 activations, plain and shadow */
    enum { NQ = ENG_QFMT_COUNT + 2 };
    const char *q_name[NQ];
    double q_gbps[NQ], q_gflops[NQ];
    const size_t qn = quick ? 1024 : 8192, qk = 4096, qt = quick ? 8 : 64;
    for (int i = 0; i < NQ; i++) {
        EngQFormat f = i < ENG_QFMT_COUNT ? (EngQFormat) i : ENG_QFMT_W8;
        gboolean a8 = i >= ENG_QFMT_COUNT, shadow = i == ENG_QFMT_COUNT + 1;
        q_name[i] = !a8 ? eng_qfmt_name[f] : shadow ? "w8a8-shadow" : "w8a8";
        double bytes, mv = q_matmul_s(f, a8, shadow, 1, qn, qk, 3, &bytes);
        q_gbps[i] = bytes / mv / 1e9;
        double pf = q_matmul_s(f, a8, shadow, qt, qk, qk, quick ? 1 : 2, &bytes);
        q_gflops[i] = 2.0 * qt * qk * qk / pf / 1e9;
    }

    double tiny_tps, tiny_bytes, big_tps = 0, big_bytes = 0;
    if (!infer_tps("tiny", 16, quick ? 8 : 64, &tiny_tps, &tiny_bytes, error)) {
        return FALSE;
    }
    long rss0 = peak_rss_kib();
    if (!quick && !infer_tps("llama-3.2-1b", 16, 8, &big_tps, &big_bytes, error)) {
        return FALSE;
    }
    long rss = peak_rss_kib();

    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "bench", "engine");
        cJSON_AddNumberToObject(j, "gemm1024_engine_over_blas", eng[0] / blas[0]);
        cJSON_AddNumberToObject(j, "gemm2048_engine_over_blas", eng[1] / blas[1]);
        cJSON_AddNumberToObject(j, "w4a16_matvec_gbps", w4_gbps);
        cJSON_AddStringToObject(j, "w4a16_isa", eng_isa_name());
        cJSON_AddNumberToObject(j, "w4a16_prefill_gflops", w4_gemm);
        cJSON_AddNumberToObject(j, "w4a16_batch_gflops_1_thread", w4_batch1);
        cJSON_AddNumberToObject(j, "w4a16_batch_gflops", w4_batch);
        cJSON_AddNumberToObject(j, "read_gbps", mem_gbps);
        cJSON *qj = cJSON_AddObjectToObject(j, "formats");
        for (int i = 0; i < NQ; i++) {
            cJSON *o = cJSON_AddObjectToObject(qj, q_name[i]);
            cJSON_AddNumberToObject(o, "matvec_gbps", q_gbps[i]);
            cJSON_AddNumberToObject(o, "prefill_gflops", q_gflops[i]);
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
    printf("engine%s\n", quick ? " (--quick: small sizes, figures not meaningful)" : "");
    for (int i = 0; i < 2; i++) {
        printf("  FP32 GEMM %4zu: engine %7.1f GFLOPS, OpenBLAS direct %7.1f  -> %.2f "
               "(target >= 0.9)\n", quick ? sizes[i] / 4 : sizes[i], eng[i], blas[i],
               eng[i] / blas[i]);
    }
    printf("  W4A16 matvec [%zu x %zu] (%s): %.1f GB/s of packed INT4 weights; read "
           "bandwidth %.1f GB/s -> %.2f (target >= 0.6)\n", rows, cols, eng_isa_name(), w4_gbps,
           mem_gbps, w4_gbps / mem_gbps);
    printf("  W4A16 prefill matmul [%zu x %zu] x [%zu x %zu]^T (%s): %.1f GFLOPS\n", pt, pk, pn,
           pk, eng_isa_name(), w4_gemm);
    printf("  W4A16 batch %zu matmul [%zu x %zu] x [%zu x %zu]^T (%s): %.1f GFLOPS on 1 thread, "
           "%.1f on %d\n", bt, bt, bk, bk, bk, eng_isa_name(), w4_batch1, w4_batch, nthreads);
    printf("  other formats (engine/quant-formats.h): matvec [%zu x %zu] GB/s of stored "
           "weights / prefill [%zu x %zu] x [%zu x %zu]^T GFLOPS\n", qn, qk, qt, qk, qk, qk);
    for (int i = 0; i < NQ; i++) {
        printf("    %-12s %6.1f GB/s  %6.1f GFLOPS\n", q_name[i], q_gbps[i], q_gflops[i]);
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
        (void) rss0;
    }
    return TRUE;
}

const HsBench hs_bench_engine = {
    "engine", "functional engine: GEMM vs OpenBLAS, W4A16 GB/s, infer tokens/s, memory", run,
};
