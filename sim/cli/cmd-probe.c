/*
 * cmd-probe.c - `hetero-sim probe`: the characterisation curves of the
 * papers, produced by running micro-workloads through the SoC's own models
 * (the cost estimates and the runtime with its shared DRAM), never by
 * formulas in the probe itself; and one curve of whole requests (prefill
 * speed of every policy against the prompt length).
 */
#include "hw/runtime.h"
#include "hw/soc.h"
#include "hw/sync.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "sim/cli/config.h"
#include "sim/cli/run-opts.h"
#include "sim/cli/curve.h"
#include "sim/cli/probe-ops.h"
#include "sim/run.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the probes ---------------------------------------------------------- */

typedef struct Probe {
    const HwSoc *soc;
    const HwStack *stack;        /* whose kernels the curves measure */
    const char *stack_override;  /* --stack for the policies (prefill), or NULL */
    const MdlSpec *spec;         /* for npu-shape / npu-graph */
    int m, k, n;                 /* npu-gemm / gpu-gemm breakdown */
    int dtype;                   /* --dtype (an HsProbeDtype), -1: each probe's own */
} Probe;

/* The weights @p's matmuls on @kind take: --dtype, else the GPU's INT4
 * (HeteroLLM's W4A16 linear-performance curve), the NPU's FP16. */
static HsProbeDtype
probe_dtype(const Probe *p, HwKind kind)
{
    return p->dtype >= 0 ? (HsProbeDtype) p->dtype
         : kind == HW_KIND_NPU ? HS_PROBE_DT_FP16 : HS_PROBE_DT_W4A16;
}

/* @op alone on the first @kind processor; 0 with *@error set (if it was
 * not already) when its cost lies beyond the horizon (--set rate=1e-9):
 * a probe stops at its first such point. */
static uint64_t
alone_ps(const Probe *p, HwKind kind, const HwOp *op, HwCost *cost, GError **error)
{
    HwCost c;
    const HwDev *d = hw_soc_find_kind(p->soc, kind);
    hw_dev_estimate(d, p->stack, op, cost ? cost : &c);
    if ((error == NULL || *error == NULL) && !hw_cost_check(d, cost ? cost : &c, error)) {
        return 0;
    }
    return cost ? cost->alone_ps : c.alone_ps;
}

/* The curve @c, or NULL (freed) if a point failed. */
static HsCurve *
curve_or_fail(HsCurve *c, GError **error, GError *err)
{
    if (err) {
        g_propagate_error(error, err);
        hs_curve_free(c);
        return NULL;
    }
    return c;
}

static HsCurve *
probe_gpu_gemm(const Probe *p, GError **error)
{
    /* [S, 4096] x [4096, 4096] with --dtype's weights (W4A16 unless
     * given), S growing */
    g_autofree char *title = g_strdup_printf("GPU achieved TFLOPS vs tokens ([S,4096]x[4096,4096] %s)",
                                             hs_probe_dtype_name[probe_dtype(p, HW_KIND_GPU)]);
    HsCurve *c = hs_curve_new("gpu-gemm", title,
                              (const char *const[]) { "tokens", "tflops", "time_us", NULL });
    c->plot_col = 1;                 /* the title's TFLOPS, not the time */
    c->x_title = "tokens S (powers of two)";
    c->y_title = "achieved TFLOPS";
    GError *err = NULL;
    for (uint64_t s = 1; s <= 2048 && !err; s *= 2) {
        HwOp op = hs_probe_gemm_of(HW_KIND_GPU, s, 4096, 4096, probe_dtype(p, HW_KIND_GPU));
        uint64_t t = alone_ps(p, HW_KIND_GPU, &op, NULL, &err);
        hs_curve_row(c, (double[]) { (double) s, (double) op.flops / (double) t, t / 1e6 });
    }
    return curve_or_fail(c, error, err);
}

static HsCurve *
probe_npu_stage(const Probe *p, GError **error)
{
    /* HeteroLLM's prefill orientation: a W4A16 weight streamed against the
     * stationary X^T of n tokens.  Every dimension is padded to the tile,
     * and every 32-column tile of X^T is a column fold that streams (and
     * dequantises) the whole weight once more: flat inside a tile, a step
     * at 32k + 1 */
    HsCurve *c = hs_curve_new("npu-stage",
                              "NPU compute time vs tokens n (W [4096,4096] W4A16 . X^T [4096,n]; us)",
                              (const char *const[]) { "n", "compute_us", "time_us", NULL });
    c->plot_col = 1;
    c->x_title = "n (tokens: columns of the stationary X^T)";
    c->x_scale = HS_AXIS_LINEAR;     /* the steps are at tile multiples of n */
    c->y_title = "NPU compute time (µs)";
    GError *err = NULL;
    for (uint64_t n = 1; n <= 256 && !err; n++) {
        HwOp op = hs_probe_gemm(4096, 4096, n, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16);
        HwCost cost;
        uint64_t t = alone_ps(p, HW_KIND_NPU, &op, &cost, &err);
        hs_curve_row(c, (double[]) { (double) n, cost.compute_ps / 1e6, t / 1e6 });
    }
    return curve_or_fail(c, error, err);
}

static HsCurve *
probe_npu_order(const Probe *p, GError **error)
{
    HsCurve *c = hs_curve_new("npu-order",
                         "NPU order: time([K,4096]x[4096,14336]) / time([14336,4096]x[4096,K]); "
                         "array_ratio: the arrays' own cycles alone (SCALE-Sim's model)",
                         (const char *const[]) { "k", "ratio", "array_ratio", NULL });
    c->x_title = "K (tokens)";
    c->x_scale = HS_AXIS_LOG2;
    c->y_title = "time ratio, wrong order / right order (x)";
    c->plot_col = 1;                 /* ratio and array_ratio, both drawn */
    c->plot_cols = 2;
    GError *err = NULL;
    for (uint64_t k = 32; k <= 2048 && !err; k *= 2) {
        HwOp bad = hs_probe_gemm(k, 4096, 14336, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16);
        HwOp good = hs_probe_gemm(14336, 4096, k, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16);
        HwCost cb, cg;
        double r = (double) alone_ps(p, HW_KIND_NPU, &bad, &cb, &err) /
                   (double) alone_ps(p, HW_KIND_NPU, &good, &cg, &err);
        double a = (double) cb.compute_cycles / (double) cg.compute_cycles;
        hs_curve_row(c, (double[]) { (double) k, r, a });
    }
    return curve_or_fail(c, error, err);
}

static HsCurve *
probe_npu_shape(const Probe *p, GError **error)
{
    const MdlSpec *s = p->spec;
    uint64_t h = s->hidden_size, f = s->intermediate_size;
    uint64_t qkv = (uint64_t) (s->num_attention_heads + 2 * s->num_key_value_heads) * s->head_dim;
    uint64_t q = (uint64_t) s->num_attention_heads * s->head_dim;
    static const char *const names[] = { "qkv", "o", "gate_up", "down" };
    const struct { uint64_t out, in; } mm[] = { { qkv, h }, { h, q }, { 2 * f, h }, { h, f } };
    HsCurve *c = hs_curve_new("npu-shape",
                         "NPU vs GPU: the model's matmuls (NPU: W . X^T, W4A16), speed ratio",
                         (const char *const[]) { "seq", "matmul", "npu_us", "gpu_us",
                                                 "npu_over_gpu_speed", NULL });
    c->name_col = 1;
    c->names = names;
    /* three sequence lengths: bars, a group per length (lines would join
     * samples across empty ticks); 32 is the shortest prepared shape,
     * where HeteroLLM §4.1.1 cuts rows of every matmul */
    c->grouped_bars = TRUE;
    c->x_title = "tokens";
    c->y_title = "NPU speed / GPU speed (x)";
    c->extra = cJSON_CreateObject();
    cJSON_AddStringToObject(c->extra, "model", s->name);
    GError *err = NULL;
    static const uint64_t seqs[] = { 32, 256, 1024 };
    for (size_t j = 0; j < G_N_ELEMENTS(seqs) && !err; j++) {
        uint64_t seq = seqs[j];
        for (size_t i = 0; i < G_N_ELEMENTS(mm) && !err; i++) {
            HwOp npu = hs_probe_gemm(mm[i].out, mm[i].in, seq, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16);
            HwOp gpu = hs_probe_gemm(seq, mm[i].in, mm[i].out, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16);
            double tn = (double) alone_ps(p, HW_KIND_NPU, &npu, NULL, &err);
            double tg = (double) alone_ps(p, HW_KIND_GPU, &gpu, NULL, &err);
            hs_curve_row(c, (double[]) { (double) seq, (double) i, tn / 1e6, tg / 1e6, tg / tn });
        }
    }
    return curve_or_fail(c, error, err);
}

static HsCurve *
probe_membw(const Probe *p, GError **error)
{
    enum { C = 1u << HW_KIND_CPU, G = 1u << HW_KIND_GPU, N = 1u << HW_KIND_NPU };
    HsCurve *c = hs_curve_new("membw", "DRAM bandwidth of decode-like streaming, all streams "
                                       "running at once",
                              (const char *const[]) { "set", "cpu_gbps", "gpu_gbps",
                                                      "npu_gbps", "gbps", NULL });
    static const char *const names[] = { "cpu", "gpu", "npu", "gpu+npu", "cpu+gpu", "cpu+npu",
                                         "all" };
    static const unsigned masks[] = { C, G, N, G | N, C | G, C | N, C | G | N };
    c->name_col = 0;
    c->names = names;
    c->stack_from = 1;               /* each stream's share of the total */
    c->y_title = "achieved DRAM bandwidth (GB/s)";
    c->x_title = "processors streaming at once";
    c->extra = cJSON_CreateObject();
    cJSON *single = cJSON_AddObjectToObject(c->extra, "single_gbps");
    cJSON *pair = cJSON_AddObjectToObject(c->extra, "pair_gbps");
    for (size_t i = 0; i < G_N_ELEMENTS(masks); i++) {
        double by[HW_KIND_COUNT], g;
        if (!hs_probe_stream_gbps(p->soc, p->stack, masks[i], by, &g, error)) {
            hs_curve_free(c);
            return NULL;
        }
        hs_curve_row(c, (double[]) { (double) i, by[HW_KIND_CPU], by[HW_KIND_GPU],
                                     by[HW_KIND_NPU], g });
        if (i < 3) {
            cJSON_AddNumberToObject(single, names[i], g);
        } else if (i < 6) {
            cJSON_AddNumberToObject(pair, names[i], g);
        } else {
            cJSON_AddNumberToObject(c->extra, "all_gbps", g);
        }
    }
    cJSON_AddNumberToObject(c->extra, "peak_gbps", p->soc->mem.peak_gbps);
    return c;
}

static HsCurve *
probe_npu_graph(const Probe *p, GError **error)
{
    /* activations of every matmul of the model at a sequence length: what
     * preparing its graphs handles */
    const MdlSpec *s = p->spec;
    uint64_t h = s->hidden_size, f = s->intermediate_size;
    uint64_t q = (uint64_t) s->num_attention_heads * s->head_dim;
    uint64_t kv = (uint64_t) s->num_key_value_heads * s->head_dim;
    uint64_t per_token = (3 * h + q + 2 * h + f) + (q + 2 * kv + h + 2 * f + h);
    HsCurve *c = hs_curve_new("npu-graph", "NPU graph preparation time vs sequence length (ms)",
                         (const char *const[]) { "seq", "prepare_ms", NULL });
    c->x_title = "sequence length (tokens)";
    c->y_title = "graph preparation (ms)";
    GError *err = NULL;
    for (uint64_t seq = 32; seq <= 2048 && !err; seq += seq < 256 ? 32 : 128) {
        HwOp op = { .kind = HW_OP_PREPARE,
                    .read_bytes = per_token * 2 * seq * s->num_hidden_layers };
        uint64_t t = alone_ps(p, HW_KIND_NPU, &op, NULL, &err);
        hs_curve_row(c, (double[]) { (double) seq, t / 1e9 });
    }
    return curve_or_fail(c, error, err);
}

static HsCurve *
probe_gemm_breakdown(const Probe *p, HwKind kind, GError **error)
{
    /* 2 m k n FLOPs must fit the op's 64-bit count (m, k, n < 2^31 each:
     * m k n may not) */
    if (2.0 * (double) p->m * (double) p->k * (double) p->n >= 18446744073709551616.0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "probe %s: a [%d x %d] x [%d x %d] matmul is %.3g FLOPs, beyond the 2^64 "
                    "an op counts", kind == HW_KIND_NPU ? "npu-gemm" : "gpu-gemm", p->m, p->k,
                    p->k, p->n, 2.0 * (double) p->m * (double) p->k * (double) p->n);
        return NULL;
    }
    HwOp op = hs_probe_gemm_of(kind, p->m, p->k, p->n, probe_dtype(p, kind));
    HwCost cost;
    GError *err = NULL;
    alone_ps(p, kind, &op, &cost, &err);
    if (err) {
        g_propagate_error(error, err);
        return NULL;
    }
    HsCurve *c = hs_curve_new(kind == HW_KIND_NPU ? "npu-gemm" : "gpu-gemm",
                         kind == HW_KIND_NPU ? "NPU model breakdown of one matmul"
                                             : "GPU model breakdown of one matmul",
                         (const char *const[]) { "m", "k", "n", "cycles", "compute_cycles",
                                                 "weight_loads", "passes", "dram_bytes",
                                                 "compute_us", "time_us", "tflops", NULL });
    hs_curve_row(c, (double[]) { p->m, p->k, p->n, (double) cost.cycles,
                              (double) cost.compute_cycles, (double) cost.weight_loads,
                              (double) cost.passes, (double) cost.dram_bytes,
                              cost.compute_ps / 1e6, cost.alone_ps / 1e6,
                              (double) op.flops / (double) cost.alone_ps });
    return c;
}

static HsCurve *
probe_sync(const Probe *p, GError **error)
{
    static const char *const names[] = { "driver", "fast" };
    HsCurve *c = hs_curve_new("sync", "one GPU -> NPU -> GPU hand-off (us)",
                              (const char *const[]) { "mechanism", "gpu_to_npu_us",
                                                      "npu_to_gpu_us", "round_trip_us", NULL });
    c->name_col = 0;
    c->names = names;
    c->x_title = "sync mechanism";
    c->y_title = "round trip GPU -> NPU -> GPU (µs)";
    /* the fast path is ~100x quicker than the driver's: on a linear axis
     * its bar was a sliver */
    c->y_scale = HS_AXIS_LOG10;
    const uint32_t gpu = hw_soc_find_kind(p->soc, HW_KIND_GPU)->index;
    const uint32_t npu = hw_soc_find_kind(p->soc, HW_KIND_NPU)->index;
    for (int m = 0; m < 2; m++) {
        HwSyncMech mech = m ? HW_SYNC_FAST : HW_SYNC_DRIVER;
        /* a small hand-off (the per-call parts; a driver sync's per-byte
         * parts come on top: sync.driver.copy_gbps, maint_gbps) */
        double one = sim_time_to_us(hw_sync_handoff_ps(p->soc, p->stack, mech, npu, 0));
        /* back on the GPU after a blocking sync, its queue restarts */
        double back = sim_time_to_us(hw_sync_handoff_ps(p->soc, p->stack, mech, gpu, 0));
        hs_curve_row(c, (double[]) { m, one, back, one + back });
    }
    return c;
}

/* Prefill speed of every built-in policy against the prompt length, at
 * prepared and misaligned lengths (HeteroLLM §5.2's figures): the policies
 * through the whole simulator, timing only. */
static HsCurve *
probe_prefill(const Probe *p, GError **error)
{
    static const char *names[64];
    static const uint32_t seqs[] = { 32, 64, 96, 128, 192, 256, 300, 384, 512, 525, 600, 768,
                                     1024 };
    HsCurve *c = hs_curve_new("prefill", "prefill tokens/s vs prompt length, every policy",
                              (const char *const[]) { "seq", "policy", "tokens_per_s", NULL });
    c->name_col = 1;
    c->names = names;
    c->x_title = "prompt length (tokens)";
    c->y_title = "prefill tokens/s";
    c->extra = cJSON_CreateObject();
    cJSON_AddStringToObject(c->extra, "model", p->spec->name);
    guint n = 0;
    for (const SimPolicy *const *pol = sim_policy_list(); *pol && n < G_N_ELEMENTS(names);
         pol++) {
        names[n++] = (*pol)->name;
    }
    SimWorkload w;
    sim_workload_init(&w);
    w.decode = 0;
    w.check_layers = -1;
    w.stack = p->stack_override;
    for (size_t i = 0; i < G_N_ELEMENTS(seqs); i++) {
        w.prompt = seqs[i];
        for (guint k = 0; k < n; k++) {
            SimRunReport r = { 0 };
            if (!sim_run(p->soc, p->spec, sim_policy_list()[k], &w, NULL, &r, NULL, NULL,
                         error)) {
                hs_curve_free(c);
                return NULL;
            }
            hs_curve_row(c, (double[]) { seqs[i], k, r.prefill.tokens_per_s });
            sim_run_report_clear(&r);
        }
    }
    return c;
}

typedef HsCurve *(*ProbeFn)(const Probe *p, GError **error);

static const struct {
    const char *name;
    ProbeFn fn;
} probes[] = {
    { "gpu-gemm", probe_gpu_gemm },
    { "npu-stage", probe_npu_stage },
    { "npu-order", probe_npu_order },
    { "npu-shape", probe_npu_shape },
    { "membw", probe_membw },
    { "npu-graph", probe_npu_graph },
    { "sync", probe_sync },
    { "prefill", probe_prefill },
};

/* @c printed or written; as JSON it says what computed it, as every
 * output does */
static gboolean
emit(HsCurve *c, HsFormat format, const char *out_dir, HsOutGroup *group, GError **error)
{
    if (format == HS_FORMAT_JSON && out_dir == NULL) {
        if (c->extra == NULL) {
            c->extra = cJSON_CreateObject();
        }
        cJSON_AddItemToObject(c->extra, "provenance", hs_provenance_json());
    }
    return hs_curve_emit(c, format, out_dir, group, error);
}

static gboolean
run(int argc, char **argv, GError **error)
{
    hs_provenance_command(argc, argv);          /* before GOption takes it apart */
    gboolean help = FALSE;
    g_autofree char *what = NULL, *soc_name = NULL, *model = NULL, *format_name = NULL;
    g_autofree char *out_dir = NULL, *dtype = NULL, *stack_name = NULL;
    g_auto(GStrv) set = NULL;
    g_autofree char *governor = NULL;
    int m = 0, k = 0, n = 0;
    GOptionEntry entries[] = {
        { "what", 'w', 0, G_OPTION_ARG_STRING, &what,
          "gpu-gemm, npu-stage, npu-order, npu-shape, membw, npu-graph, npu-gemm, sync, prefill, all",
          "NAME" },
        { "soc", 's', 0, G_OPTION_ARG_STRING, &soc_name, "SoC (default sd8gen3)", "SOC" },
        { "stack", 0, 0, G_OPTION_ARG_STRING, &stack_name,
          "Software stack whose kernels the curves measure: a name from 'list stacks' or "
          "a JSON file (default " SIM_DEFAULT_STACK "; prefill: each policy's own)", "STACK" },
        { "model", 0, 0, G_OPTION_ARG_STRING, &model,
          "Model for npu-shape, npu-graph and prefill (default llama-3-8b)", "MODEL" },
        { "m", 0, 0, G_OPTION_ARG_INT, &m, "npu-gemm / gpu-gemm: rows of the left operand", "M" },
        { "k", 0, 0, G_OPTION_ARG_INT, &k, "npu-gemm / gpu-gemm: reduction length", "K" },
        { "n", 0, 0, G_OPTION_ARG_INT, &n, "npu-gemm / gpu-gemm: columns of the right operand", "N" },
        { "dtype", 0, 0, G_OPTION_ARG_STRING, &dtype, "npu-gemm / gpu-gemm: fp16, int8 (= w8a8, the INT8 datapath), w4a16, fp4a16 or q8_0 (an INT4, E0M4 FP4 or INT8 group-32 weight on the FP16 datapath; the weight is the left operand on the NPU, as W . X^T, the right one on the GPU); default fp16 for npu-gemm, w4a16 for gpu-gemm and its curve", "T" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "text, csv or json", "FMT" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
          "Write each curve as DIR/NAME.csv plus an SVG plot", "DIR" },
        { "governor", 0, 0, G_OPTION_ARG_STRING, &governor, HS_GOVERNOR_HELP, "GOV" },
        HS_SET_OPTION(&set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("probe", NULL, "Characterisation curves of the SoC's models.",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_no_extra_args(argc, argv, 0, error) ||
        !hs_cli_format(format_name, HS_FORMATS_ALL, &format, error)) {
        return FALSE;
    }
    if (what == NULL) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "probe: missing --what (see 'hetero-sim probe --help')");
        return FALSE;
    }
    Probe p = { .m = m, .k = k, .n = n, .dtype = -1 };
    gboolean breakdown = strcmp(what, "npu-gemm") == 0 ||
                         (strcmp(what, "gpu-gemm") == 0 && (m || k || n));
    if (breakdown && (m <= 0 || k <= 0 || n <= 0)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "probe %s: expected --m, --k and --n, each a positive integer", what);
        return FALSE;
    }
    if (dtype && strcmp(what, "npu-gemm") != 0 && strcmp(what, "gpu-gemm") != 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--dtype: only npu-gemm and gpu-gemm take it (got --what %s)", what);
        return FALSE;
    }
    for (int i = 0; dtype && hs_probe_dtype_name[i]; i++) {
        p.dtype = strcmp(dtype, hs_probe_dtype_name[i]) == 0 ? i : p.dtype;
    }
    if (dtype && p.dtype < 0) {
        /* the names from the table: "fp16, int8, ... or fp4a16" */
        g_autofree char *all = g_strjoinv(", ", (char **) hs_probe_dtype_name);
        char *last = strrchr(all, ',');
        g_autofree char *e = hs_escape(dtype);
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--dtype: expected %.*s or %s (got \"%s\")", (int) (last - all), all,
                    last + 2, e);
        return FALSE;
    }
    if (out_dir && !hs_outdir_make(out_dir, error)) {
        return FALSE;
    }
    if (!hs_cli_governor(governor, &set, error)) {
        return FALSE;
    }
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL) {
        return FALSE;
    }
    g_autoptr(HwSoc) soc = hs_config_load_soc(soc_name ? soc_name : "sd8gen3", ovr, error);
    if (soc == NULL) {
        return FALSE;
    }
    g_autoptr(MdlSpec) spec = hs_config_load_model(model ? model : "llama-3-8b", ovr, error);
    if (spec == NULL) {
        return FALSE;
    }
    p.soc = soc;
    p.spec = spec;
    p.stack = hw_soc_stack(soc, stack_name ? stack_name : SIM_DEFAULT_STACK, error);
    if (p.stack == NULL) {
        return FALSE;
    }
    p.stack_override = stack_name;
    /* every curve's files appear together once all are written, or none */
    g_autoptr(HsOutGroup) group = hs_outgroup_new();
    g_autoptr(GPtrArray) wrote = g_ptr_array_new_with_free_func(g_free);
    if (breakdown) {
        g_autoptr(HsCurve) c = probe_gemm_breakdown(&p, strcmp(what, "npu-gemm") == 0
                                                      ? HW_KIND_NPU : HW_KIND_GPU, error);
        if (c == NULL || !emit(c, format, out_dir, group, error)) {
            return FALSE;
        }
        g_ptr_array_add(wrote, g_strdup(c->name));
    }
    gboolean all = strcmp(what, "all") == 0, found = breakdown;
    for (size_t i = 0; i < G_N_ELEMENTS(probes) && !breakdown; i++) {
        if (all || strcmp(what, probes[i].name) == 0) {
            found = TRUE;
            g_autoptr(HsCurve) c = probes[i].fn(&p, error);
            if (c == NULL || !emit(c, format, out_dir, group, error)) {
                return FALSE;
            }
            g_ptr_array_add(wrote, g_strdup(c->name));
        }
    }
    if (!found) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--what: expected one of gpu-gemm, npu-stage, npu-order, npu-shape, "
                    "membw, npu-graph, npu-gemm, sync, prefill, all (got \"%s\")", what);
        return FALSE;
    }
    if (out_dir == NULL) {
        if (format == HS_FORMAT_TEXT) {
            printf("%s\n", hs_provenance_line());
        }
        return TRUE;
    }
    /* what computed the curves, beside them */
    g_autoptr(cJSON) prov = hs_provenance_json();
    g_autofree char *prov_text = hs_json_print(prov, TRUE);
    g_autofree char *prov_file = g_build_filename(out_dir, "provenance.json", NULL);
    g_autofree char *prov_nl = g_strconcat(prov_text, "\n", NULL);
    if (!hs_outgroup_write(group, prov_file, prov_nl, strlen(prov_nl), error) ||
        !hs_outgroup_commit(g_steal_pointer(&group), error)) {
        return FALSE;
    }
    for (guint i = 0; i < wrote->len; i++) {
        printf("wrote %s/%s.csv\n", out_dir, (const char *) wrote->pdata[i]);
    }
    return TRUE;
}

const HsCommand hs_cmd_probe = {
    "probe", "--what NAME [options]", "characterisation curves of the SoC's models", run,
};
