/*
 * cmd-probe.c - `hetero-sim probe`: the characterisation curves of the
 * papers, produced by running micro-workloads through the SoC's own models
 * (the cost estimates and the runtime with its shared DRAM), never by
 * formulas in the probe itself.
 */
#include "hw/gpu.h"
#include "hw/npu.h"
#include "hw/runtime.h"
#include "hw/soc.h"
#include "hw/sync.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A curve: named columns of numbers, printed as text, CSV or JSON. */
typedef struct Curve {
    char *name;                  /* probe name */
    char *title;
    GPtrArray *cols;             /* of char* */
    GArray *vals;                /* of double, row-major */
    cJSON *extra;                /* JSON-only members (may be NULL) */
    int name_col;                /* column whose values index @names, or -1 */
    const char *const *names;
} Curve;

static Curve *
curve_new(const char *name, const char *title, const char *const *cols)
{
    Curve *c = g_new0(Curve, 1);
    c->name = g_strdup(name);
    c->title = g_strdup(title);
    c->cols = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *p = cols; *p; p++) {
        g_ptr_array_add(c->cols, g_strdup(*p));
    }
    c->vals = g_array_new(FALSE, FALSE, sizeof(double));
    c->name_col = -1;
    return c;
}

static void
curve_free(Curve *c)
{
    g_free(c->name);
    g_free(c->title);
    g_ptr_array_unref(c->cols);
    g_array_free(c->vals, TRUE);
    if (c->extra) {
        cJSON_Delete(c->extra);
    }
    g_free(c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Curve, curve_free)

static void
curve_row(Curve *c, const double *v)
{
    g_array_append_vals(c->vals, v, c->cols->len);
}

static guint
curve_rows(const Curve *c)
{
    return c->vals->len / c->cols->len;
}

static double
curve_at(const Curve *c, guint row, guint col)
{
    return g_array_index(c->vals, double, row * c->cols->len + col);
}

/* Cell (@row, @col) as text: a name for the named column, else %.6g. */
static const char *
curve_cell(const Curve *c, guint row, guint col, char buf[32])
{
    if ((int) col == c->name_col) {
        return c->names[(int) curve_at(c, row, col)];
    }
    g_snprintf(buf, 32, "%.6g", curve_at(c, row, col));
    return buf;
}

static void
curve_print(const Curve *c, HsFormat f, FILE *out)
{
    guint nc = c->cols->len;
    if (f == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "probe", c->name);
        cJSON *rows = cJSON_AddArrayToObject(root, "rows");
        for (guint r = 0; r < curve_rows(c); r++) {
            cJSON *o = cJSON_CreateObject();
            for (guint k = 0; k < nc; k++) {
                if ((int) k == c->name_col) {
                    cJSON_AddStringToObject(o, c->cols->pdata[k], c->names[(int) curve_at(c, r, k)]);
                } else {
                    cJSON_AddNumberToObject(o, c->cols->pdata[k], curve_at(c, r, k));
                }
            }
            cJSON_AddItemToArray(rows, o);
        }
        if (c->extra) {
            cJSON *it = c->extra->child;
            while (it) {
                cJSON *next = it->next;
                cJSON_AddItemToObject(root, it->string, cJSON_Duplicate(it, TRUE));
                it = next;
            }
        }
        g_autofree char *s = hs_json_print(root, FALSE);
        fprintf(out, "%s\n", s);
        return;
    }
    if (f == HS_FORMAT_TEXT) {
        fprintf(out, "%s\n", c->title);
    }
    for (guint k = 0; k < nc; k++) {
        int w = (int) MAX(12, strlen(c->cols->pdata[k]) + 2);
        if (f == HS_FORMAT_CSV) {
            fprintf(out, "%s%s", k ? "," : "", (char *) c->cols->pdata[k]);
        } else {
            fprintf(out, "%*s", w, (char *) c->cols->pdata[k]);
        }
    }
    fprintf(out, "\n");
    for (guint r = 0; r < curve_rows(c); r++) {
        for (guint k = 0; k < nc; k++) {
            int w = (int) MAX(12, strlen(c->cols->pdata[k]) + 2);
            char buf[32];
            const char *cell = curve_cell(c, r, k, buf);
            if (f == HS_FORMAT_CSV) {
                fprintf(out, "%s%s", k ? "," : "", cell);
            } else {
                fprintf(out, "%*s", w, cell);
            }
        }
        fprintf(out, "\n");
    }
}

/* An SVG line plot of column @y against column 0. */
static char *
curve_svg(const Curve *c, guint y)
{
    const double W = 640, H = 400, L = 70, B = 50, T = 40, R = 20;
    guint n = curve_rows(c);
    double x0 = INFINITY, x1 = -INFINITY, y0 = 0, y1 = -INFINITY;
    for (guint r = 0; r < n; r++) {
        x0 = fmin(x0, curve_at(c, r, 0));
        x1 = fmax(x1, curve_at(c, r, 0));
        y1 = fmax(y1, curve_at(c, r, y));
        y0 = fmin(y0, curve_at(c, r, y));
    }
    if (x1 <= x0) {
        x1 = x0 + 1;
    }
    if (y1 <= y0) {
        y1 = y0 + 1;
    }
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                              "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
                              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    g_string_append_printf(s, "<text x=\"%.0f\" y=\"24\" font-size=\"14\">%s</text>\n", L, c->title);
    g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
                           L, H - B, W - R, H - B);
    g_string_append_printf(s, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
                           L, T, L, H - B);
    g_string_append_printf(s, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", (W + L) / 2 - 30, H - 12,
                           (char *) c->cols->pdata[0]);
    g_string_append_printf(s, "<text x=\"12\" y=\"%.0f\" transform=\"rotate(-90 12 %.0f)\">%s</text>\n",
                           (H - B + T) / 2, (H - B + T) / 2, (char *) c->cols->pdata[y]);
    for (int i = 0; i <= 4; i++) {
        double yv = y0 + (y1 - y0) * i / 4, xv = x0 + (x1 - x0) * i / 4;
        double py = H - B - (H - B - T) * i / 4, px = L + (W - L - R) * i / 4;
        g_string_append_printf(s, "<text x=\"4\" y=\"%.0f\">%.3g</text>\n", py + 4, yv);
        g_string_append_printf(s, "<text x=\"%.0f\" y=\"%.0f\">%.3g</text>\n", px - 10, H - B + 16, xv);
    }
    g_string_append(s, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
    for (guint r = 0; r < n; r++) {
        double px = L + (W - L - R) * (curve_at(c, r, 0) - x0) / (x1 - x0);
        double py = H - B - (H - B - T) * (curve_at(c, r, y) - y0) / (y1 - y0);
        g_string_append_printf(s, "%.1f,%.1f ", px, py);
    }
    g_string_append(s, "\"/>\n</svg>\n");
    return g_string_free(s, FALSE);
}

/* ---- the probes ---------------------------------------------------------- */

typedef struct Probe {
    const HwSoc *soc;
    const MdlSpec *spec;         /* for npu-shape / npu-graph */
    int m, k, n;                 /* npu-gemm / gpu-gemm breakdown */
    HwDtype dtype;
    gboolean w4a16;              /* npu-gemm: INT4 left operand, FP16 datapath */
} Probe;

static HwOp
gemm(uint64_t m, uint64_t k, uint64_t n, HwDtype a, HwDtype b, HwDtype compute)
{
    double ab = a == HW_DTYPE_FP16 ? 2 : a == HW_DTYPE_INT8 ? 1 : 0.5;
    double bb = b == HW_DTYPE_FP16 ? 2 : b == HW_DTYPE_INT8 ? 1 : 0.5;
    return (HwOp) {
        .kind = HW_OP_MATMUL, .m = m, .k = k, .n = n, .a_dtype = a, .b_dtype = b,
        .compute = compute, .flops = 2 * m * k * n,
        .read_bytes = (uint64_t) (m * k * ab + k * n * bb), .write_bytes = m * n * 2,
    };
}

static uint64_t
alone_ps(const HwSoc *soc, HwKind kind, const HwOp *op, HwCost *cost)
{
    HwCost c;
    hw_dev_estimate(hw_soc_find_kind(soc, kind), op, cost ? cost : &c);
    return cost ? cost->alone_ps : c.alone_ps;
}

static Curve *
probe_gpu_gemm(const Probe *p)
{
    /* [S, 4096] x [4096, 4096] with W4A16 weights, S growing */
    Curve *c = curve_new("gpu-gemm", "GPU achieved TFLOPS vs tokens ([S,4096]x[4096,4096] W4A16)",
                         (const char *const[]) { "tokens", "tflops", "time_us", NULL });
    for (uint64_t s = 1; s <= 2048; s *= 2) {
        HwOp op = gemm(s, 4096, 4096, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16);
        uint64_t t = alone_ps(p->soc, HW_KIND_GPU, &op, NULL);
        curve_row(c, (double[]) { (double) s, (double) op.flops / (double) t, t / 1e6 });
    }
    return c;
}

static Curve *
probe_npu_stage(const Probe *p)
{
    Curve *c = curve_new("npu-stage", "NPU latency vs n ([1024,1024]x[1024,n] FP16)",
                         (const char *const[]) { "n", "time_us", NULL });
    for (uint64_t n = 1; n <= 256; n++) {
        HwOp op = gemm(1024, 1024, n, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16);
        uint64_t t = alone_ps(p->soc, HW_KIND_NPU, &op, NULL);
        curve_row(c, (double[]) { (double) n, t / 1e6 });
    }
    return c;
}

static Curve *
probe_npu_order(const Probe *p)
{
    Curve *c = curve_new("npu-order",
                         "NPU order: time([K,4096]x[4096,14336]) / time([14336,4096]x[4096,K])",
                         (const char *const[]) { "k", "ratio", NULL });
    for (uint64_t k = 32; k <= 2048; k *= 2) {
        HwOp bad = gemm(k, 4096, 14336, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16);
        HwOp good = gemm(14336, 4096, k, HW_DTYPE_FP16, HW_DTYPE_FP16, HW_DTYPE_FP16);
        double r = (double) alone_ps(p->soc, HW_KIND_NPU, &bad, NULL) /
                   (double) alone_ps(p->soc, HW_KIND_NPU, &good, NULL);
        curve_row(c, (double[]) { (double) k, r });
    }
    return c;
}

static Curve *
probe_npu_shape(const Probe *p)
{
    const MdlSpec *s = p->spec;
    uint64_t h = s->hidden_size, f = s->intermediate_size;
    uint64_t qkv = (uint64_t) (s->num_attention_heads + 2 * s->num_key_value_heads) * s->head_dim;
    uint64_t q = (uint64_t) s->num_attention_heads * s->head_dim;
    static const char *const names[] = { "qkv", "o", "gate_up", "down" };
    const struct { uint64_t out, in; } mm[] = { { qkv, h }, { h, q }, { 2 * f, h }, { h, f } };
    Curve *c = curve_new("npu-shape",
                         "NPU vs GPU: the model's matmuls (NPU: W . X^T, W4A16), speed ratio",
                         (const char *const[]) { "seq", "matmul", "npu_us", "gpu_us",
                                                 "npu_over_gpu_speed", NULL });
    c->name_col = 1;
    c->names = names;
    c->extra = cJSON_CreateObject();
    cJSON_AddStringToObject(c->extra, "model", s->name);
    for (uint64_t seq = 256; seq <= 1024; seq *= 4) {
        for (size_t i = 0; i < G_N_ELEMENTS(mm); i++) {
            HwOp npu = gemm(mm[i].out, mm[i].in, seq, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16);
            HwOp gpu = gemm(seq, mm[i].in, mm[i].out, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16);
            double tn = (double) alone_ps(p->soc, HW_KIND_NPU, &npu, NULL);
            double tg = (double) alone_ps(p->soc, HW_KIND_GPU, &gpu, NULL);
            curve_row(c, (double[]) { (double) seq, (double) i, tn / 1e6, tg / 1e6, tg / tn });
        }
    }
    return c;
}

typedef struct Meter {
    HwRuntime *rt;
    uint32_t left;
} Meter;

static void
meter_done(void *opaque)
{
    ((Meter *) opaque)->left--;
}

/* Decode-like streaming (1-token W4A16 matmuls, 64 MiB of weights each) on
 * the processors in @mask at once; total bytes / time. */
static double
stream_gbps(const HwSoc *soc, unsigned mask)
{
    g_autoptr(SimKernel) k = sim_kernel_new();
    g_autoptr(HwRuntime) rt = hw_runtime_new(soc, k);
    Meter m = { rt, 0 };
    uint64_t bytes = 0;
    for (uint32_t kind = 0; kind < HW_KIND_COUNT; kind++) {
        if (!(mask & (1u << kind))) {
            continue;
        }
        const HwDev *d = hw_soc_find_kind(soc, (HwKind) kind);
        /* [1, 8192] x [8192, 16384] INT4 weights: 64 MiB, memory-bound */
        HwOp op = gemm(1, 8192, 16384, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16);
        if (kind == HW_KIND_NPU) {
            /* W4A8 on the INT8 datapath: the NPU's decode path */
            op = gemm(16384, 8192, 32, HW_DTYPE_INT4, HW_DTYPE_INT8, HW_DTYPE_INT8);
            hw_runtime_npu_prepared(rt, 32);
        }
        HwCost cost;
        hw_dev_estimate(d, &op, &cost);
        bytes += cost.dram_bytes;
        HwSubmit s = { .dev = d->index, .op = op, .npu_tokens = 32, .presubmitted = TRUE,
                       .on_done = meter_done, .opaque = &m };
        m.left++;
        g_assert_true(hw_runtime_submit(rt, &s, NULL));
    }
    sim_kernel_run_until(k, SIM_TIME_MAX);
    g_assert(m.left == 0);
    return (double) bytes / ((double) sim_kernel_now(k) / 1000.0);
}

static Curve *
probe_membw(const Probe *p)
{
    enum { C = 1u << HW_KIND_CPU, G = 1u << HW_KIND_GPU, N = 1u << HW_KIND_NPU };
    Curve *c = curve_new("membw", "DRAM bandwidth of decode-like streaming (GB/s)",
                         (const char *const[]) { "mask", "gbps", NULL });
    static const struct { const char *name; unsigned mask; } sets[] = {
        { "cpu", C }, { "gpu", G }, { "npu", N },
        { "gpu+npu", G | N }, { "cpu+gpu", C | G }, { "cpu+npu", C | N },
        { "all", C | G | N },
    };
    c->extra = cJSON_CreateObject();
    cJSON *single = cJSON_AddObjectToObject(c->extra, "single_gbps");
    cJSON *pair = cJSON_AddObjectToObject(c->extra, "pair_gbps");
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
        double g = stream_gbps(p->soc, sets[i].mask);
        curve_row(c, (double[]) { (double) sets[i].mask, g });
        if (i < 3) {
            cJSON_AddNumberToObject(single, sets[i].name, g);
        } else if (i < 6) {
            cJSON_AddNumberToObject(pair, sets[i].name, g);
        } else {
            cJSON_AddNumberToObject(c->extra, "all_gbps", g);
        }
    }
    cJSON_AddNumberToObject(c->extra, "peak_gbps", p->soc->mem.peak_gbps);
    return c;
}

static Curve *
probe_npu_graph(const Probe *p)
{
    /* activations of every matmul of the model at a sequence length: what
     * preparing its graphs handles */
    const MdlSpec *s = p->spec;
    uint64_t h = s->hidden_size, f = s->intermediate_size;
    uint64_t q = (uint64_t) s->num_attention_heads * s->head_dim;
    uint64_t kv = (uint64_t) s->num_key_value_heads * s->head_dim;
    uint64_t per_token = (3 * h + q + 2 * h + f) + (q + 2 * kv + h + 2 * f + h);
    Curve *c = curve_new("npu-graph", "NPU graph preparation time vs sequence length (ms)",
                         (const char *const[]) { "seq", "prepare_ms", NULL });
    for (uint64_t seq = 32; seq <= 2048; seq += seq < 256 ? 32 : 128) {
        HwOp op = { .kind = HW_OP_PREPARE,
                    .read_bytes = per_token * 2 * seq * s->num_hidden_layers };
        uint64_t t = alone_ps(p->soc, HW_KIND_NPU, &op, NULL);
        curve_row(c, (double[]) { (double) seq, t / 1e9 });
    }
    return c;
}

static Curve *
probe_gemm_breakdown(const Probe *p, HwKind kind)
{
    HwOp op = kind == HW_KIND_NPU
              ? p->w4a16 ? gemm(p->m, p->k, p->n, HW_DTYPE_INT4, HW_DTYPE_FP16, HW_DTYPE_FP16)
                         : gemm(p->m, p->k, p->n, p->dtype, p->dtype, p->dtype)
              : gemm(p->m, p->k, p->n, HW_DTYPE_FP16, HW_DTYPE_INT4, HW_DTYPE_FP16);
    HwCost cost;
    alone_ps(p->soc, kind, &op, &cost);
    Curve *c = curve_new(kind == HW_KIND_NPU ? "npu-gemm" : "gpu-gemm",
                         kind == HW_KIND_NPU ? "NPU model breakdown of one matmul"
                                             : "GPU model breakdown of one matmul",
                         (const char *const[]) { "m", "k", "n", "cycles", "compute_cycles",
                                                 "weight_loads", "passes", "dram_bytes",
                                                 "compute_us", "time_us", "tflops", NULL });
    curve_row(c, (double[]) { p->m, p->k, p->n, (double) cost.cycles,
                              (double) cost.compute_cycles, (double) cost.weight_loads,
                              (double) cost.passes, (double) cost.dram_bytes,
                              cost.compute_ps / 1e6, cost.alone_ps / 1e6,
                              (double) op.flops / (double) cost.alone_ps });
    return c;
}

static Curve *
probe_sync(const Probe *p)
{
    Curve *c = curve_new("sync", "one GPU -> NPU -> GPU hand-off (us): 0 = driver, 1 = fast",
                         (const char *const[]) { "mechanism", "gpu_to_npu_us", "npu_to_gpu_us",
                                                 "round_trip_us", NULL });
    const HwGpu *gpu = (const HwGpu *) hw_soc_find_kind(p->soc, HW_KIND_GPU);
    for (int m = 0; m < 2; m++) {
        double one = sim_time_to_us(hw_sync_cost_ps(p->soc, m ? HW_SYNC_FAST : HW_SYNC_DRIVER));
        /* back on the GPU after a blocking sync, its queue restarts */
        double back = one + (m ? 0 : gpu->launch_idle_us);
        curve_row(c, (double[]) { m, one, back, one + back });
    }
    return c;
}

typedef Curve *(*ProbeFn)(const Probe *p);

static const struct {
    const char *name;
    ProbeFn fn;
    gboolean needs_model;
} probes[] = {
    { "gpu-gemm", probe_gpu_gemm, FALSE },
    { "npu-stage", probe_npu_stage, FALSE },
    { "npu-order", probe_npu_order, FALSE },
    { "npu-shape", probe_npu_shape, TRUE },
    { "membw", probe_membw, FALSE },
    { "npu-graph", probe_npu_graph, TRUE },
    { "sync", probe_sync, FALSE },
};

static gboolean
emit(Curve *c, HsFormat format, const char *out_dir, GError **error)
{
    if (out_dir == NULL) {
        curve_print(c, format, stdout);
        return TRUE;
    }
    g_autofree char *csv = g_strdup_printf("%s/%s.csv", out_dir, c->name);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    curve_print(c, HS_FORMAT_CSV, mem);
    fclose(mem);
    gboolean ok = hs_outfile_write_all(csv, buf, len, error);
    free(buf);
    if (ok && curve_rows(c) > 1) {
        g_autofree char *svg_path = g_strdup_printf("%s/%s.svg", out_dir, c->name);
        g_autofree char *svg = curve_svg(c, c->cols->len - 1);
        ok = hs_outfile_write_all(svg_path, svg, strlen(svg), error);
    }
    if (ok) {
        printf("wrote %s\n", csv);
    }
    return ok;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autofree char *what = NULL, *soc_name = NULL, *model = NULL, *format_name = NULL;
    g_autofree char *out_dir = NULL, *dtype = NULL;
    int m = 0, k = 0, n = 0;
    GOptionEntry entries[] = {
        { "what", 'w', 0, G_OPTION_ARG_STRING, &what,
          "gpu-gemm, npu-stage, npu-order, npu-shape, membw, npu-graph, npu-gemm, sync, all",
          "NAME" },
        { "soc", 's', 0, G_OPTION_ARG_STRING, &soc_name, "SoC (default sd8gen3)", "SOC" },
        { "model", 0, 0, G_OPTION_ARG_STRING, &model,
          "Model for npu-shape / npu-graph (default llama-3-8b)", "MODEL" },
        { "m", 0, 0, G_OPTION_ARG_INT, &m, "npu-gemm / gpu-gemm: rows of the left operand", "M" },
        { "k", 0, 0, G_OPTION_ARG_INT, &k, "npu-gemm / gpu-gemm: reduction length", "K" },
        { "n", 0, 0, G_OPTION_ARG_INT, &n, "npu-gemm / gpu-gemm: columns of the right operand", "N" },
        { "dtype", 0, 0, G_OPTION_ARG_STRING, &dtype, "npu-gemm: fp16, int8 or w4a16 (INT4 left operand, as W . X^T; default fp16)", "T" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "text, csv or json", "FMT" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
          "Write each curve as DIR/NAME.csv plus an SVG plot", "DIR" },
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
    Probe p = { .m = m, .k = k, .n = n, .dtype = HW_DTYPE_FP16 };
    gboolean breakdown = strcmp(what, "npu-gemm") == 0 ||
                         (strcmp(what, "gpu-gemm") == 0 && (m || k || n));
    if (breakdown && (m <= 0 || k <= 0 || n <= 0)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "probe %s: expected --m, --k and --n, each a positive integer", what);
        return FALSE;
    }
    if (dtype && strcmp(dtype, "fp16") != 0 && strcmp(dtype, "int8") != 0 &&
        strcmp(dtype, "w4a16") != 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--dtype: expected fp16, int8 or w4a16 (got \"%s\")", dtype);
        return FALSE;
    }
    if (dtype && strcmp(dtype, "int8") == 0) {
        p.dtype = HW_DTYPE_INT8;
    }
    p.w4a16 = dtype && strcmp(dtype, "w4a16") == 0;
    if (out_dir && g_mkdir_with_parents(out_dir, 0755) != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO, "%s: cannot create directory",
                    out_dir);
        return FALSE;
    }
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autofree char *models = g_build_filename(hs_cli_data_dir(), "models", NULL);
    g_autoptr(HwSoc) soc = hw_soc_load(soc_name ? soc_name : "sd8gen3", configs, error);
    if (soc == NULL) {
        return FALSE;
    }
    g_autoptr(MdlSpec) spec = mdl_spec_load(model ? model : "llama-3-8b", models, error);
    if (spec == NULL) {
        return FALSE;
    }
    p.soc = soc;
    p.spec = spec;
    if (breakdown) {
        g_autoptr(Curve) c = probe_gemm_breakdown(&p, strcmp(what, "npu-gemm") == 0
                                                      ? HW_KIND_NPU : HW_KIND_GPU);
        return emit(c, format, out_dir, error);
    }
    gboolean all = strcmp(what, "all") == 0, found = FALSE;
    for (size_t i = 0; i < G_N_ELEMENTS(probes); i++) {
        if (all || strcmp(what, probes[i].name) == 0) {
            found = TRUE;
            g_autoptr(Curve) c = probes[i].fn(&p);
            if (!emit(c, format, out_dir, error)) {
                return FALSE;
            }
        }
    }
    if (!found) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--what: expected one of gpu-gemm, npu-stage, npu-order, npu-shape, "
                    "membw, npu-graph, npu-gemm, sync, all (got \"%s\")", what);
        return FALSE;
    }
    return TRUE;
}

const HsCommand hs_cmd_probe = {
    "probe", "--what NAME [options]", "characterisation curves of the SoC's models", run,
};
