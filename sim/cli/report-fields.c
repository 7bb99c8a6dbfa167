/*
 * report-fields.c - see report-fields.h.
 */
#include "sim/cli/report-fields.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

/* --- the values of NAME fields --- */

static char *
soc_of(const SimRunReport *r)
{
    return g_strdup(r->soc);
}

static char *
model_of(const SimRunReport *r)
{
    return g_strdup(r->model);
}

static char *
policy_of(const SimRunReport *r)
{
    return g_strdup(r->policy);
}

static char *
stack_of(const SimRunReport *r)
{
    return g_strdup(r->stack);
}

static char *
sync_of(const SimRunReport *r)
{
    return g_strdup(sim_sync_name[r->workload.sync]);
}

static char *
hot_op_of(const SimRunReport *r)
{
    return g_strdup(r->hot_op);
}

static char *
functional_of(const SimRunReport *r)
{
    int32_t cl = r->workload.check_layers;
    return cl < 0 ? g_strdup("off") : cl == 0 ? g_strdup("full")
                  : g_strdup_printf("layers=%d", cl);
}

static char *
weights_of(const SimRunReport *r)
{
    return sim_workload_weights(&r->workload);
}

static char *
llm_priority_of(const SimRunReport *r)
{
    return g_strdup(r->workload.render.llm_priority == HW_PRIO_LOW ? "low" : "normal");
}

/* --- text parts that are more than a format --- */

char *
hs_run_hot_op_text(const HwSoc *soc, const SimRunReport *r)
{
    if (!r->hot_op[0]) {
        return NULL;
    }
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%s (%.0f %% of prefill kernel time) ", r->hot_op,
                           100 * r->hot_time_share);
    guint used = 0;
    for (uint32_t p = 0; p < r->n_procs; p++) {
        used += r->hot_split[p] > 0;
    }
    if (used == 1) {
        for (uint32_t p = 0; p < r->n_procs; p++) {
            if (r->hot_split[p] > 0) {
                const HwDev *d = g_ptr_array_index(soc->devs, p);
                g_string_append_printf(s, "all on the %s", d->name);
            }
        }
    } else {
        g_string_append(s, "split");
        for (uint32_t p = 0, k = 0; p < r->n_procs; p++) {
            if (r->hot_split[p] > 0) {
                const HwDev *d = g_ptr_array_index(soc->devs, p);
                g_string_append_printf(s, "%s %s %.0f %%", k++ ? "," : "", d->name,
                                       100 * r->hot_split[p]);
            }
        }
    }
    return g_string_free(s, FALSE);
}


static void
text_peak(GString *out, const HsReportField *f, const HwSoc *soc, const SimRunReport *r)
{
    /* a small SoC's few GB/s get two decimals ("0.8 GB/s of 1" said little) */
    if (soc->mem.peak_gbps < 10) {
        g_string_append_printf(out, ", DRAM peak %.2f GB/s of %.3g", hs_report_field_value(f, r),
                               soc->mem.peak_gbps);
    } else {
        g_string_append_printf(out, ", DRAM peak %.1f GB/s of %.0f", hs_report_field_value(f, r),
                               soc->mem.peak_gbps);
    }
}

static void
text_devices(GString *out, const HsReportField *f, const HwSoc *soc, const SimRunReport *r)
{
    (void) f;
    for (uint32_t p = 0; p < r->n_procs; p++) {
        const HwDev *d = g_ptr_array_index(soc->devs, p);
        g_string_append_printf(out, "%s  %-6s busy %10.2f ms  (%5.1f %%)", p ? "\n" : "",
                               d->name, r->busy_ms[p], 100.0 * r->util[p]);
    }
}

static void
text_hot(GString *out, const HsReportField *f, const HwSoc *soc, const SimRunReport *r)
{
    (void) f;
    g_autofree char *hot = hs_run_hot_op_text(soc, r);
    g_string_append_printf(out, "  heaviest op: %s", hot);
}

static void
text_render(GString *out, const HsReportField *f, const HwSoc *soc, const SimRunReport *r)
{
    (void) f;
    (void) soc;
    /* frames counted over a window that is no whole number of vsyncs can
     * read 60.1 against 60: the text caps the rate at the target (JSON and
     * CSV keep the count over the window) */
    const double target = r->workload.render.fps;
    g_string_append_printf(out, "  render %.0f FPS target, LLM at %s priority: %.1f FPS during "
                           "prefill", target,
                           r->workload.render.llm_priority == HW_PRIO_LOW ? "low" : "normal",
                           MIN(r->render_fps_prefill, target));
    if (r->workload.decode > 0) {
        g_string_append_printf(out, ", %.1f during decode", MIN(r->render_fps_decode, target));
    }
    g_string_append_printf(out, "; %.0f %% of vsyncs on time, worst frame %.1f ms",
                           r->render_on_time_pct, r->render_worst_ms);
}

static char *
caveats_of(const SimRunReport *r)
{
    return g_strdup(r->caveats ? r->caveats : "");
}

static void
text_values(GString *out, const HsReportField *f, const HwSoc *soc, const SimRunReport *r)
{
    (void) f;
    (void) soc;
    if (!r->check.checked) {
        g_string_append(out, "  values: not checked (--functional off)");
        return;
    }
    const char *what = r->check.full ? "logits" : "hidden states";
    const char *verdict = r->check.match ? "match" : "DIFFER FROM (wrong numbers)";
    g_autofree char *scope = g_strdup_printf("%s%u layer%s", r->check.full ? "all " : "first ",
                                             r->check.layers, r->check.layers == 1 ? "" : "s");
    if (r->check.precision_changed) {
        g_string_append_printf(out, "  values: %s %s the plan's own arithmetic done in order "
                               "(%s; max abs err %.3g of %.3g); some tasks ran at another "
                               "precision: %.3g from the FP reference", what, verdict, scope,
                               r->check.max_abs_err, r->check.max_abs_ref,
                               r->check.precision_err);
    } else {
        g_string_append_printf(out, "  values: %s %s the unpartitioned reference (%s; max abs "
                               "err %.3g of %.3g); %.3g from the FP reference", what, verdict,
                               scope, r->check.max_abs_err, r->check.max_abs_ref,
                               r->check.precision_err);
    }
}

/* --- the table --- */

#define AT(m) offsetof(SimRunReport, m)
#define NAME(n, path, fn, at, fmt) \
    { .name = (n), .json_path = (path), .type = HS_FIELD_NAME, .label = (n), .name_of = (fn), \
      .text_at = (at), .text_format = (fmt) }
#define COUNT(n, path, m, at, fmt) \
    { .name = (n), .json_path = (path), .type = HS_FIELD_COUNT, .label = (n), .offset = AT(m), \
      .text_at = (at), .text_format = (fmt) }
/* a measurement shown by `sweep --show` by default */
#define HEAD(n, path, m, csv, lbl, at, fmt) \
    { .name = (n), .json_path = (path), .type = HS_FIELD_REAL, .csv_format = (csv), \
      .label = (lbl), .metric = TRUE, .offset = AT(m), .text_at = (at), .text_format = (fmt), \
      .headline = TRUE }

const HsReportField hs_report_fields[] = {
    /* the request */
    NAME("soc", "soc", soc_of, 102, " on %s"),
    NAME("model", "model", model_of, 101, "%s"),
    NAME("policy", "policy", policy_of, 103, ", policy %s"),
    NAME("stack", "stack", stack_of, 104, " on stack %s"),
    NAME("sync", "sync", sync_of, 105, ", sync %s"),
    COUNT("prompt", "prompt_tokens", workload.prompt, 106, ": prompt %u"),
    COUNT("decode", "decode_tokens", workload.decode, 107, ", decode %u"),
    COUNT("batch", "batch", workload.batch, 108, " x batch %u"),
    /* the phases */
    HEAD("prefill_ms", "prefill.time_ms", prefill.time_ms, "%.4f", "prefill time (ms)",
         201, "  prefill  %10.2f ms"),
    HEAD("prefill_tokens_per_s", "prefill.tokens_per_s", prefill.tokens_per_s, "%.4f",
         "prefill tokens/s", 202, "  %9.2f tokens/s"),
    { .name = "prefill_prepare_ms", .json_path = "prefill.prepare_ms", .type = HS_FIELD_REAL,
      .csv_format = "%.4f", .label = "prefill NPU graph preparation (ms)", .metric = TRUE,
      .offset = AT(prefill.prepare_ms), .text_at = 207,
      .text_format = "  (%.2f ms NPU graph preparation)", .text_when = HS_WHEN_NONZERO },
    { .name = "heaviest_op", .json_path = "prefill.heaviest_op.name", .type = HS_FIELD_NAME,
      .label = "heaviest op", .metric = TRUE, .name_of = hot_op_of, .when = HS_WHEN_HOT,
      .text_at = 600, .text_fn = text_hot, .text_when = HS_WHEN_HOT },
    { .name = "heaviest_op_share", .json_path = "prefill.heaviest_op.time_share",
      .type = HS_FIELD_REAL, .csv_format = "%.4f",
      .label = "heaviest op's share of prefill kernel time", .metric = TRUE,
      .offset = AT(hot_time_share), .when = HS_WHEN_HOT, .text_in = "heaviest_op" },
    { .name = "heaviest_op_split", .json_path = "prefill.heaviest_op.split.*",
      .type = HS_FIELD_PER_PROC, .label = "heaviest op's output share per processor",
      .offset = AT(hot_split), .when = HS_WHEN_HOT, .text_in = "heaviest_op" },
    { .name = "decode_ms", .json_path = "decode.time_ms", .type = HS_FIELD_REAL,
      .csv_format = "%.4f", .label = "decode time (ms)", .metric = TRUE,
      .offset = AT(decode.time_ms), .text_at = 301, .text_format = "  decode   %10.2f ms",
      .text_when = HS_WHEN_DECODE, .headline = TRUE },
    { .name = "decode_tokens_per_s", .json_path = "decode.tokens_per_s", .type = HS_FIELD_REAL,
      .csv_format = "%.4f", .label = "decode tokens/s", .metric = TRUE,
      .offset = AT(decode.tokens_per_s), .text_at = 302, .text_format = "  %9.2f tokens/s",
      .text_when = HS_WHEN_DECODE, .headline = TRUE },
    { .name = "decode_prepare_ms", .json_path = "decode.prepare_ms", .type = HS_FIELD_REAL,
      .csv_format = "%.4f", .label = "decode NPU graph preparation (ms)", .metric = TRUE,
      .offset = AT(decode.prepare_ms), .text_at = 308,
      .text_format = "  (%.2f ms NPU graph preparation)", .text_when = HS_WHEN_NONZERO },
    { .name = "tpot_ms", .json_path = "decode.tpot_ms", .type = HS_FIELD_REAL,
      .csv_format = "%.4f", .label = "time per output token (ms)", .metric = TRUE,
      .offset = AT(tpot_ms), .text_at = 307, .text_format = "  (%.2f ms per token)",
      .text_when = HS_WHEN_DECODE, .headline = TRUE },
    HEAD("ttft_ms", "ttft_ms", ttft_ms, "%.4f", "time to first token (ms)", 401,
         "  TTFT %.2f ms"),
    /* DRAM and energy */
    HEAD("prefill_gbps", "dram.prefill_avg_gbps", prefill.dram_gbps, "%.3f",
         "prefill DRAM bandwidth (GB/s)", 203, "  %6.1f GB/s"),
    { .name = "decode_gbps", .json_path = "dram.decode_avg_gbps", .type = HS_FIELD_REAL,
      .csv_format = "%.3f", .label = "decode DRAM bandwidth (GB/s)", .metric = TRUE,
      .offset = AT(decode.dram_gbps), .text_at = 303, .text_format = "  %6.1f GB/s",
      .text_when = HS_WHEN_DECODE, .headline = TRUE },
    { .name = "peak_gbps", .json_path = "dram.peak_gbps", .type = HS_FIELD_REAL,
      .csv_format = "%.3f", .label = "peak DRAM bandwidth (GB/s)", .metric = TRUE,
      .offset = AT(peak_gbps), .text_at = 402, .text_fn = text_peak, .headline = TRUE },
    HEAD("prefill_j", "energy.prefill_j", prefill.energy_j, "%.5f", "prefill energy (J)", 204,
         "  %7.3f J"),
    { .name = "decode_j", .json_path = "energy.decode_j", .type = HS_FIELD_REAL,
      .csv_format = "%.5f", .label = "decode energy (J)", .metric = TRUE,
      .offset = AT(decode.energy_j), .text_at = 304, .text_format = "  %7.3f J",
      .text_when = HS_WHEN_DECODE, .headline = TRUE },
    HEAD("prefill_w", "energy.prefill_avg_w", prefill.avg_w, "%.4f", "prefill power (W)", 205,
         "  %5.2f W"),
    { .name = "decode_w", .json_path = "energy.decode_avg_w", .type = HS_FIELD_REAL,
      .csv_format = "%.4f", .label = "decode power (W)", .metric = TRUE,
      .offset = AT(decode.avg_w), .text_at = 305, .text_format = "  %5.2f W",
      .text_when = HS_WHEN_DECODE, .headline = TRUE },
    /* the processors */
    { .name = "busy_ms", .json_path = "devices.*.busy_ms", .type = HS_FIELD_PER_PROC,
      .label = "busy time (ms)", .offset = AT(busy_ms), .text_at = 500,
      .text_fn = text_devices },
    { .name = "util", .json_path = "devices.*.util", .type = HS_FIELD_PER_PROC,
      .label = "utilisation (busy / run time)", .offset = AT(util), .text_in = "busy_ms" },
    /* what the figures rest on where no measurement stands behind them */
    { .name = "caveats", .json_path = "caveats", .type = HS_FIELD_NAME,
      .label = "caveats", .metric = TRUE, .name_of = caveats_of, .when = HS_WHEN_CAVEAT,
      .text_at = 950, .text_format = "  caveat: %s", .text_when = HS_WHEN_CAVEAT },
    /* the values check */
    { .name = "functional", .json_path = "functional.mode", .type = HS_FIELD_NAME,
      .label = "values check", .name_of = functional_of, .text_at = 800,
      .text_fn = text_values },
    { .name = "values_checked", .json_path = "functional.checked", .type = HS_FIELD_BOOL,
      .label = "values checked", .metric = TRUE, .offset = AT(check.checked),
      .text_in = "functional" },
    { .name = "values_layers", .json_path = "functional.layers", .type = HS_FIELD_COUNT,
      .label = "layers checked", .metric = TRUE, .offset = AT(check.layers),
      .when = HS_WHEN_CHECKED, .text_in = "functional" },
    { .name = "values_weights", .json_path = "functional.weights", .type = HS_FIELD_NAME,
      .label = "weights checked on", .name_of = weights_of, .when = HS_WHEN_CHECKED,
      .text_at = 900, .text_format = "  values checked on weights: %s",
      .text_when = HS_WHEN_CHECKED },
    { .name = "values_match", .json_path = "functional.match", .type = HS_FIELD_BOOL,
      .label = "values match", .metric = TRUE, .offset = AT(check.match),
      .when = HS_WHEN_CHECKED, .text_in = "functional", .headline = TRUE },
    { .name = "precision_changed", .json_path = "functional.precision_changed",
      .type = HS_FIELD_BOOL, .label = "some task at another precision", .metric = TRUE,
      .offset = AT(check.precision_changed), .when = HS_WHEN_CHECKED,
      .text_in = "functional" },
    { .name = "precision_err", .json_path = "functional.precision_err", .type = HS_FIELD_REAL,
      .csv_format = "%.6g", .label = "max abs error from the FP reference", .metric = TRUE,
      .offset = AT(check.precision_err), .when = HS_WHEN_CHECKED, .text_in = "functional" },
    { .name = "max_abs_err", .json_path = "functional.max_abs_err", .type = HS_FIELD_REAL,
      .csv_format = "%.6g", .label = "max abs error from the reference", .metric = TRUE,
      .offset = AT(check.max_abs_err), .when = HS_WHEN_CHECKED, .text_in = "functional" },
    { .name = "max_abs_ref", .json_path = "functional.max_abs_ref", .type = HS_FIELD_REAL,
      .csv_format = "%.6g", .label = "max abs reference value", .metric = TRUE,
      .offset = AT(check.max_abs_ref), .when = HS_WHEN_CHECKED, .text_in = "functional" },
    /* a game rendered alongside */
    { .name = "render_fps", .json_path = "render.target_fps", .type = HS_FIELD_REAL,
      .csv_format = "%g", .label = "render target (FPS)", .offset = AT(workload.render.fps),
      .when = HS_WHEN_RENDER, .text_at = 700, .text_fn = text_render,
      .text_when = HS_WHEN_RENDER },
    { .name = "llm_priority", .json_path = "render.llm_priority", .type = HS_FIELD_NAME,
      .label = "LLM's GPU priority", .name_of = llm_priority_of, .when = HS_WHEN_RENDER,
      .text_in = "render_fps" },
    { .name = "render_prefill_fps", .json_path = "render.prefill_fps", .type = HS_FIELD_REAL,
      .csv_format = "%.2f", .label = "frames rendered during prefill (FPS)", .metric = TRUE,
      .offset = AT(render_fps_prefill), .when = HS_WHEN_RENDER, .text_in = "render_fps" },
    { .name = "render_decode_fps", .json_path = "render.decode_fps", .type = HS_FIELD_REAL,
      .csv_format = "%.2f", .label = "frames rendered during decode (FPS)", .metric = TRUE,
      .offset = AT(render_fps_decode), .when = HS_WHEN_RENDER, .text_in = "render_fps" },
    { .name = "render_on_time_pct", .json_path = "render.on_time_pct", .type = HS_FIELD_REAL,
      .csv_format = "%.2f", .label = "vsyncs on time (%)", .metric = TRUE,
      .offset = AT(render_on_time_pct), .when = HS_WHEN_RENDER, .text_in = "render_fps" },
    { .name = "render_worst_frame_ms", .json_path = "render.worst_frame_ms",
      .type = HS_FIELD_REAL, .csv_format = "%.4f", .label = "worst frame (ms)", .metric = TRUE,
      .offset = AT(render_worst_ms), .when = HS_WHEN_RENDER, .text_in = "render_fps" },
    /* the simulation itself */
    { .name = "tasks", .json_path = "sim.tasks", .type = HS_FIELD_U64, .label = "tasks",
      .metric = TRUE, .offset = AT(tasks), .text_at = 1001,
      .text_format = "  simulated %" PRIu64 " tasks" },
    { .name = "events", .json_path = "sim.events", .type = HS_FIELD_U64, .label = "events",
      .metric = TRUE, .offset = AT(events), .text_at = 1002,
      .text_format = ", %" PRIu64 " events" },
    /* host time: not a CSV or SQL column (a sweep row has its own wall_s),
     * as it is the one value two runs of a request do not share */
    { .name = "wall_s", .json_path = "sim.wall_s", .type = HS_FIELD_REAL,
      .csv_format = NULL, .label = "host time (s)", .offset = AT(wall_s), .text_at = 1003,
      .text_format = " in %.2f s" },
    { .name = NULL },
};

/* --- values --- */

gboolean
hs_report_field_present(const HsReportField *f, const SimRunReport *r)
{
    switch (f->when) {
    case HS_WHEN_HOT:
        return r->hot_op[0] != 0;
    case HS_WHEN_CHECKED:
        return r->check.checked;
    case HS_WHEN_RENDER:
        return r->workload.render.fps > 0;
    case HS_WHEN_CAVEAT:
        return r->caveats != NULL;
    case HS_WHEN_NEVER:
        return FALSE;
    case HS_WHEN_ALWAYS:
    case HS_WHEN_DECODE:
    case HS_WHEN_NONZERO:
    default:
        return TRUE;
    }
}

const void *
hs_report_field_ptr(const HsReportField *f, const SimRunReport *r)
{
    return (const char *) r + f->offset;
}

double
hs_report_field_value(const HsReportField *f, const SimRunReport *r)
{
    g_assert(f->type == HS_FIELD_REAL);
    return *(const double *) hs_report_field_ptr(f, r);
}

gboolean
hs_report_field_is_column(const HsReportField *f)
{
    return f->type != HS_FIELD_PER_PROC && (f->type != HS_FIELD_REAL || f->csv_format);
}

const char *
hs_report_field_sql_type(const HsReportField *f)
{
    return f->type == HS_FIELD_NAME ? "TEXT"
         : f->type == HS_FIELD_REAL ? "REAL" : "INTEGER";
}

char *
hs_report_field_text(const HsReportField *f, const SimRunReport *r)
{
    if (!hs_report_field_present(f, r)) {
        return g_strdup("");
    }
    switch (f->type) {
    case HS_FIELD_NAME:
        return f->name_of(r);
    case HS_FIELD_COUNT:
        return g_strdup_printf("%u", *(const uint32_t *) hs_report_field_ptr(f, r));
    case HS_FIELD_U64:
        return g_strdup_printf("%" PRIu64, *(const uint64_t *) hs_report_field_ptr(f, r));
    case HS_FIELD_BOOL:
        return g_strdup(*(const gboolean *) hs_report_field_ptr(f, r) ? "true" : "false");
    case HS_FIELD_REAL:
        return g_strdup_printf(f->csv_format, hs_report_field_value(f, r));
    case HS_FIELD_PER_PROC:
    default:
        g_assert_not_reached();
    }
}

const HsReportField *
hs_report_field_find(const char *name)
{
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}
