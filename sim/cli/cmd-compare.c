/*
 * cmd-compare.c - `hetero-sim compare`: the same request under several
 * policies, side by side.
 */
#include "sim/cli/report-fields.h"
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "traces/perfetto.h"
#include "traces/record.h"
#include "sim/util/error.h"
#include "sim/util/version-info.h"
#include "sim/util/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* max |run - FP reference| as a percentage of max |reference| */
static double
rel_err_pct(const SimCheck *c)
{
    return c->max_abs_ref > 0 ? 100.0 * c->precision_err / c->max_abs_ref : 0.0;
}

static void
print_table(GString *out, const HwSoc *soc, const SimRunReport *r, guint n)
{
    const SimWorkload *w = &r[0].workload;
    double best_pre = 0, best_dec = 0, best_j = 1e300;
    for (guint i = 0; i < n; i++) {
        best_pre = MAX(best_pre, r[i].prefill.tokens_per_s);
        best_dec = MAX(best_dec, r[i].decode.tokens_per_s);
        best_j = MIN(best_j, r[i].prefill.energy_j + r[i].decode.energy_j);
    }
    g_string_append_printf(out, "%s on %s, sync %s: prompt %u, decode %u x batch %u   (* = best)\n",
           r[0].model, r[0].soc, sim_sync_name[w->sync], w->prompt, w->decode, w->batch);
    const gboolean game = w->render.fps > 0;
    int pw = 6;                      /* the policy column: its longest name */
    for (guint i = 0; i < n; i++) {
        pw = MAX(pw, (int) strlen(r[i].policy));
    }
    g_string_append_printf(out, "  %-*s %12s %10s %12s %9s %9s %9s  %-*s%s\n", pw, "policy",
                           "prefill tok/s", "TTFT ms", "decode tok/s", "pre GB/s", "dec GB/s",
                           "energy J", game ? 16 : 0, "values, FP err",
                           game ? "  game FPS pre/dec" : "");
    for (guint i = 0; i < n; i++) {
        double j = r[i].prefill.energy_j + r[i].decode.energy_j;
        /* "match*": matches the plan's own arithmetic, some of it at
         * another precision than the reference's */
        const char *verdict = !r[i].check.match ? "WRONG"
                              : r[i].check.precision_changed ? "match*" : "match";
        /* beside it, precision_err: how far the values are from the FP
         * reference (what the run's storage precisions cost), as a share
         * of the reference's largest value (the absolute is in JSON) */
        g_autofree char *values = !r[i].check.checked ? g_strdup("-")
                                  : g_strdup_printf("%s %.3g %%", verdict,
                                                    rel_err_pct(&r[i].check));
        /* no decode steps: no decode figures, rather than a row of zeros */
        char dec_tps[32] = "-", dec_gbps[32] = "-";
        if (w->decode) {
            g_snprintf(dec_tps, sizeof dec_tps, "%.2f", r[i].decode.tokens_per_s);
            g_snprintf(dec_gbps, sizeof dec_gbps, "%.1f", r[i].decode.dram_gbps);
        }
        g_string_append_printf(out, "  %-*s %11.2f%s %10.1f %11s%s %9.1f %9s %8.3f%s  %-*s",
                               pw, r[i].policy, r[i].prefill.tokens_per_s,
                               r[i].prefill.tokens_per_s == best_pre ? "*" : " ",
                               r[i].ttft_ms, dec_tps,
                               w->decode && r[i].decode.tokens_per_s == best_dec ? "*" : " ",
                               r[i].prefill.dram_gbps, dec_gbps, j, j == best_j ? "*" : " ",
                               game ? 16 : 0, values);
        if (game) {
            /* capped at the target as run's text is: frames counted over
             * a window of no whole number of vsyncs read 60.1 against 60
             * (the JSON keeps the count) */
            g_string_append_printf(out, "  %7.1f / %.1f", MIN(r[i].render_fps_prefill,
                                                              w->render.fps),
                                   MIN(r[i].render_fps_decode, w->render.fps));
        }
        g_string_append_printf(out, "\n");
    }
    if (n > 0 && r[0].check.checked) {
        g_autofree char *weights = sim_workload_weights(&r[0].workload);
        g_string_append_printf(out, "  values checked on weights: %s\n", weights);
    }
    for (guint i = 0; i < n; i++) {
        if (r[i].check.checked && r[i].check.match && r[i].check.precision_changed) {
            g_string_append_printf(out, "  match*: %s matches its plan's own arithmetic; "
                                   "some of its tasks ran at another precision (%.3g from "
                                   "the FP reference, %.3g %% of its largest value)\n",
                                   r[i].policy, r[i].check.precision_err,
                                   rel_err_pct(&r[i].check));
        }
    }
    /* where the winner gains: against the GPU-only baseline when present */
    const SimRunReport *gpu = NULL, *win_pre = NULL, *win_dec = NULL;
    for (guint i = 0; i < n; i++) {
        if (strcmp(r[i].policy, "gpu-only") == 0) {
            gpu = &r[i];
        }
        if (r[i].prefill.tokens_per_s == best_pre && !win_pre) {
            win_pre = &r[i];
        }
        if (r[i].decode.tokens_per_s == best_dec && !win_dec) {
            win_dec = &r[i];
        }
    }
    /* against gpu-only when it is there and beaten, else just the winner */
    if (win_pre && win_pre->prefill.tokens_per_s > 0) {
        g_autofree char *hot = hs_run_hot_op_text(soc, win_pre);
        g_autofree char *vs = gpu && gpu != win_pre && gpu->prefill.tokens_per_s > 0
            ? g_strdup_printf(" is %.2fx gpu-only", win_pre->prefill.tokens_per_s /
                                                    gpu->prefill.tokens_per_s)
            : g_strdup(" is the fastest");
        g_string_append_printf(out, "  prefill: %s%s; its heaviest op: %s\n", win_pre->policy,
                               vs, hot ? hot : "-");
    }
    if (win_dec && w->decode && win_dec->decode.tokens_per_s > 0) {
        g_autofree char *vs = gpu && gpu != win_dec && gpu->decode.tokens_per_s > 0
            ? g_strdup_printf(" is %.2fx gpu-only", win_dec->decode.tokens_per_s /
                                                    gpu->decode.tokens_per_s)
            : g_strdup(" is the fastest");
        g_string_append_printf(out, "  decode: %s%s, using %.1f GB/s of %.0f", win_dec->policy,
                               vs, win_dec->decode.dram_gbps, soc->mem.peak_gbps);
        if (gpu && gpu != win_dec) {
            g_string_append_printf(out, " (gpu-only %.1f)", gpu->decode.dram_gbps);
        }
        g_string_append_printf(out, "\n");
    }
    /* what rests on an assumption: each caveat once, with its policies */
    for (guint i = 0; i < n; i++) {
        gboolean first = r[i].caveats != NULL;
        for (guint j = 0; first && j < i; j++) {
            first = g_strcmp0(r[j].caveats, r[i].caveats) != 0;
        }
        if (!first) {
            continue;
        }
        g_string_append_printf(out, "  caveat (%s", r[i].policy);
        for (guint j = i + 1; j < n; j++) {
            if (g_strcmp0(r[j].caveats, r[i].caveats) == 0) {
                g_string_append_printf(out, ", %s", r[j].policy);
            }
        }
        g_string_append_printf(out, "): %s\n", r[i].caveats);
    }
    /* the legend: what each column is, where it is shown */
    g_string_append(out, "  columns: tok/s of prefill and decode; TTFT = prefill time; GB/s = "
                    "the phase's average DRAM bandwidth;\n"
                    "    energy J = prefill + decode; values (--functional): match (the same "
                    "as the unpartitioned reference)\n"
                    "    or WRONG, then max |error| from an FP16 reference as % of its "
                    "largest value, - not checked; * = best\n");
}

/* Which policy of how many is running: the progress line's prefix. */
typedef struct Which {
    guint i, n;
} Which;

/* Progress on a terminal: "[2/11] hetero-tensor:  37 %" (the run's tasks,
 * and the reference's prefill before the first policy). */
static void
progress_line(void *opaque, const char *what, uint64_t done, uint64_t total)
{
    const Which *at = opaque;
    if (at->i == 0) {
        hs_progress_stderr(NULL, what, done, total);
    } else if (done < total) {
        fprintf(stderr, "\r[%u/%u] %s: %3d %%", at->i, at->n, what,
                (int) (100.0 * (double) done / (double) total));
    }
}

/* ---- compare --baseline DIR ------------------------------------------------ */

/* Every number of @base (a report's JSON) at @path, beside @now's at the
 * same path, as rows of @out; the run's own bookkeeping is left out. */
static void
diff_numbers(const cJSON *base, const cJSON *now, const char *path, cJSON *out)
{
    static const char *const skip[] = { "sim", "provenance", "config", "check", NULL };
    const cJSON *b = NULL;
    int i = 0;
    cJSON_ArrayForEach(b, base) {
        g_autofree char *p = b->string ? (path[0] ? g_strdup_printf("%s.%s", path, b->string)
                                                  : g_strdup(b->string))
                                       : g_strdup_printf("%s[%d]", path, i);
        const cJSON *n = b->string ? cJSON_GetObjectItemCaseSensitive(now, b->string)
                                   : cJSON_GetArrayItem(now, i);
        i++;
        if (b->string && path[0] == '\0' && g_strv_contains(skip, b->string)) {
            continue;
        }
        if (cJSON_IsNumber(b)) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "metric", p);
            cJSON_AddNumberToObject(row, "baseline", b->valuedouble);
            if (cJSON_IsNumber(n)) {
                cJSON_AddNumberToObject(row, "now", n->valuedouble);
                if (b->valuedouble != 0) {
                    cJSON_AddNumberToObject(row, "delta_pct",
                                            100.0 * (n->valuedouble - b->valuedouble) /
                                            fabs(b->valuedouble));
                } else {
                    cJSON_AddNumberToObject(row, "delta_pct", n->valuedouble == 0 ? 0 : NAN);
                }
            } else {
                cJSON_AddNullToObject(row, "now");
                cJSON_AddNullToObject(row, "delta_pct");
            }
            cJSON_AddItemToArray(out, row);
        } else if (cJSON_IsObject(b) || cJSON_IsArray(b)) {
            diff_numbers(b, n, p, out);
        }
    }
}

/* The request a run directory holds (its config.json's SoC, model, stack
 * and policy, its recording's workload), run again with today's binary
 * and @o's --set: a row of @rows per number of its report, each metric
 * named after @prefix; *@prov the directory's report's provenance. */
static gboolean
baseline_rows(const HsRunOpts *o, const char *dir, const char *prefix, cJSON *rows,
              cJSON **prov, GError **error)
{
    g_autofree char *cfg_path = g_build_filename(dir, "config.json", NULL);
    g_autofree char *rep_path = g_build_filename(dir, "report.json", NULL);
    g_autofree char *rec_path = g_build_filename(dir, "recording.json", NULL);
    g_autoptr(cJSON) cfg = hs_json_load_file(cfg_path, HS_CONFIG_ERROR, error);
    if (cfg == NULL) {
        return FALSE;
    }
    g_autoptr(cJSON) base = hs_json_load_file(rep_path, HS_CONFIG_ERROR, error);
    if (base == NULL) {
        return FALSE;
    }
    g_autoptr(TrcRecording) rec = trc_record_read(rec_path, error);
    if (rec == NULL) {
        return FALSE;
    }
    const cJSON *socj = cJSON_GetObjectItemCaseSensitive(cfg, "soc");
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(cfg, "policy");
    const cJSON *stk = cJSON_GetObjectItemCaseSensitive(cfg, "stack");
    if (!cJSON_IsObject(socj) || !cJSON_IsString(pol)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: $: expected a run directory's config (\"soc\" object, \"policy\" "
                    "string) (got neither)", cfg_path);
        return FALSE;
    }
    /* the run's own --set (its stacks' edits are in no resolved
     * document), then this command's */
    g_auto(GStrv) sets = hs_config_recorded_sets(cfg, TRUE, (const char *const *) o->set);
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) sets, error);
    if (ovr == NULL) {
        g_prefix_error(error, "%s: $.overrides: ", cfg_path);
        return FALSE;
    }
    g_autofree char *what = g_strdup_printf("%s (its \"soc\")", cfg_path);
    g_autoptr(HwSoc) soc = hs_config_soc_from_json(socj, what, ovr, error);
    if (soc == NULL || !hs_config_preload_stack(soc, cfg, cfg_path, error)) {
        return FALSE;
    }
    g_autoptr(MdlSpec) spec = NULL;
    {
        g_autoptr(cJSON) mj = mdl_spec_to_json(rec->spec);
        if (hs_overrides_count(o->ovr, "model") > 0 &&
            !hs_overrides_apply(o->ovr, "model", mj, error)) {
            return FALSE;
        }
        spec = mdl_spec_from_json(mj, rec->spec->name, error);
        if (spec == NULL) {
            hs_overrides_explain(o->ovr, "model", error);
            return FALSE;
        }
    }
    SimWorkload w = rec->workload;
    w.stack = cJSON_IsString(stk) ? stk->valuestring : NULL;
    if (w.stack && hw_soc_stack(soc, w.stack, error) == NULL) {
        return FALSE;
    }
    const SimPolicy *policy = hs_cli_policy(NULL, pol->valuestring, error);
    if (policy == NULL || !hs_cli_check_fits(spec, &w, error)) {
        return FALSE;
    }
    hs_provenance_config(NULL, NULL, w.stack, soc, spec, &w);
    SimRunReport r = { 0 };
    if (!sim_run(soc, spec, policy, &w, NULL, &r, NULL, NULL, error)) {
        return FALSE;
    }
    g_autoptr(cJSON) now_full = hs_report_json(soc, &r);
    sim_run_report_clear(&r);
    /* through the same printing as the baseline's report.json, so an
     * unchanged number compares equal to the digit */
    g_autofree char *now_text = hs_json_print(now_full, FALSE);
    g_autoptr(cJSON) now = cJSON_Parse(now_text);
    g_autoptr(cJSON) mine = cJSON_CreateArray();
    diff_numbers(base, now, "", mine);
    while (cJSON_GetArraySize(mine) > 0) {
        cJSON *row = cJSON_DetachItemFromArray(mine, 0);
        if (prefix[0]) {
            /* a compare directory's: "POLICY: metric" */
            cJSON *m = cJSON_GetObjectItemCaseSensitive(row, "metric");
            g_autofree char *named = g_strdup_printf("%s: %s", prefix, m->valuestring);
            cJSON_ReplaceItemInObjectCaseSensitive(row, "metric", cJSON_CreateString(named));
        }
        cJSON_AddItemToArray(rows, row);
    }
    if (*prov == NULL) {
        *prov = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(base, "provenance"), TRUE);
    }
    return TRUE;
}

/* compare --baseline DIR: a run directory's request (baseline_rows), or
 * each policy's of a compare directory (its "policies", each DIR/POLICY),
 * printed beside the directory's report. */
static gboolean
compare_baseline(const HsRunOpts *o, const char *dir, GError **error)
{
    HsFormat format;
    if (!hs_cli_format(o->format, HS_FORMATS_ALL, &format, error)) {
        return FALSE;
    }
    g_autofree char *cfg_path = g_build_filename(dir, "config.json", NULL);
    g_autoptr(cJSON) cfg = hs_json_load_file(cfg_path, HS_CONFIG_ERROR, error);
    if (cfg == NULL) {
        return FALSE;
    }
    g_autoptr(cJSON) rows = cJSON_CreateArray();
    g_autoptr(cJSON) bp = NULL;
    const cJSON *pols = cJSON_GetObjectItemCaseSensitive(cfg, "policies");
    if (cJSON_IsArray(pols)) {
        const cJSON *p = NULL;
        int i = 0;
        cJSON_ArrayForEach(p, pols) {
            if (!cJSON_IsString(p)) {
                g_autofree char *got = hs_json_describe(p);
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s: $.policies[%d]: expected a policy name (a string) (got "
                            "%s)", cfg_path, i, got);
                return FALSE;
            }
            g_autofree char *folder = hs_run_dir_folder(p->valuestring);
            g_autofree char *sub = g_build_filename(dir, folder, NULL);
            if (!baseline_rows(o, sub, p->valuestring, rows, &bp, error)) {
                return FALSE;
            }
            i++;
        }
    } else if (!baseline_rows(o, dir, "", rows, &bp, error)) {
        return FALSE;
    }
    const cJSON *bv = cJSON_GetObjectItemCaseSensitive(bp, "version");
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(bp, "command");
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "baseline", dir);
        if (bp) {
            cJSON_AddItemToObject(root, "baseline_provenance", cJSON_Duplicate(bp, TRUE));
        }
        cJSON_AddItemToObject(root, "metrics", cJSON_Duplicate(rows, TRUE));
        cJSON_AddItemToObject(root, "provenance", hs_provenance_json());
        g_autofree char *s = hs_json_print(root, FALSE);
        printf("%s\n", s);
        return TRUE;
    }
    int mw = 40;                     /* the metric column: its longest name */
    const cJSON *row = NULL;
    cJSON_ArrayForEach(row, rows) {
        mw = MAX(mw, (int) strlen(cJSON_GetObjectItemCaseSensitive(row, "metric")->valuestring));
    }
    if (format == HS_FORMAT_CSV) {
        /* the provenance columns as every CSV of a run has them */
        g_autofree char *head = hs_csv_with_provenance("metric,baseline,now,delta_pct", TRUE);
        fputs(head, stdout);
    } else {
        printf("baseline %s: %s (hetero-sim %s)\n", dir,
               cJSON_IsString(bc) ? bc->valuestring : "?",
               cJSON_IsString(bv) ? bv->valuestring : "?");
        printf("%-*s %14s %14s %9s\n", mw, "metric", "baseline", "now", "delta %");
    }
    guint changed = 0;
    cJSON_ArrayForEach(row, rows) {
        const char *m = cJSON_GetObjectItemCaseSensitive(row, "metric")->valuestring;
        double b = cJSON_GetObjectItemCaseSensitive(row, "baseline")->valuedouble;
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(row, "now");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(row, "delta_pct");
        g_autofree char *ns = cJSON_IsNumber(n) ? g_strdup_printf("%.6g", n->valuedouble)
                                                : g_strdup("-");
        g_autofree char *ds = cJSON_IsNumber(d) ? g_strdup_printf("%+.2f", d->valuedouble)
                                                : g_strdup("-");
        changed += !(cJSON_IsNumber(d) && d->valuedouble == 0);
        if (format == HS_FORMAT_CSV) {
            g_autofree char *line = g_strdup_printf("%s,%.9g,%s,%s", m, b, ns, ds);
            g_autofree char *full = hs_csv_with_provenance(line, FALSE);
            fputs(full, stdout);
        } else {
            printf("%-*s %14.6g %14s %9s\n", mw, m, b, ns, ds);
        }
    }
    if (format == HS_FORMAT_TEXT) {
        printf("%u of %d metrics differ\n%s\n", changed, cJSON_GetArraySize(rows),
               hs_provenance_line());
    }
    return TRUE;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    HsRunOpts o;
    g_autofree char *policies = NULL, *baseline = NULL, *out = NULL;
    gboolean help = FALSE;
    GOptionEntry extra[] = {
        { "policies", 'P', 0, G_OPTION_ARG_STRING, &policies,
          "Comma-separated policies (default: all built-in)", "A,B,.." },
        { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace,
          "Write one Perfetto / Chrome trace JSON of every policy (its processes named "
          "after it)", "FILE" },
        { "baseline", 'B', 0, G_OPTION_ARG_FILENAME, &baseline,
          "Re-run a run directory's request (run --out DIR) with this binary and --set, "
          "and print each metric: baseline, now, delta % (takes only --set, --governor and "
          "--format beside it)", "DIR" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Write a compare directory: config.json (the request and its policies), "
          "report.json, report.csv, trace.json, summary.txt, and a run directory per "
          "policy (DIR/POLICY: 'replay DIR/POLICY'); all or none", "DIR" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    gboolean ok = hs_run_opts_parse("compare",
                                    "Simulate the same request under several policies and "
                                    "print them side by side.", extra, &o, &argc, &argv,
                                    &help, error);
    if (!ok || help) {
        hs_run_opts_clear(&o);
        return ok;
    }
    if (baseline) {
        /* the directory's own request is re-run: an option that would
         * change it, or write or choose something else, would be
         * silently dropped */
        static const char *const taken[] = { "baseline", "set", "governor", "format", NULL };
        for (char **g = o.given; ok && *g; g++) {
            if (!g_strv_contains(taken, *g)) {
                g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                            "compare: --baseline DIR re-runs DIR's own request: --%s is not "
                            "taken with it (change its configs with --set or --governor)", *g);
                ok = FALSE;
            }
        }
        ok = ok && compare_baseline(&o, baseline, error);
        hs_run_opts_clear(&o);
        return ok;
    }
    HsFormat format;
    g_autoptr(HwSoc) soc = NULL;
    g_autoptr(MdlSpec) spec = NULL;
    SimWorkload w;
    if (!hs_run_opts_resolve(&o, HS_FORMATS_ALL, &format, &soc, &spec, &w, error)) {
        hs_run_opts_clear(&o);
        return FALSE;
    }
    hs_run_opts_warn_noop(&o, soc, spec, &w);
    hs_provenance_config(o.soc, o.model, o.stack, soc, spec, &w);
    g_autoptr(GPtrArray) list = g_ptr_array_new();
    if (policies) {
        g_auto(GStrv) names = g_strsplit(policies, ",", -1);
        for (char **n = names; *n; n++) {
            const SimPolicy *p = hs_run_opts_policy(&o, g_strstrip(*n), error);
            if (p == NULL) {
                hs_run_opts_clear(&o);
                return FALSE;
            }
            g_ptr_array_add(list, (gpointer) p);
        }
        if (list->len == 0) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--policies: expected one or more policy names, separated by commas "
                        "(got \"%s\")", policies);
            hs_run_opts_clear(&o);
            return FALSE;
        }
    } else {
        for (const SimPolicy *const *p = sim_policy_list(); *p; p++) {
            g_ptr_array_add(list, (gpointer) *p);
        }
    }
    /* the plug-in joins the policies compared, named in -P or not (the
     * guide: "compare adds it to every policy") */
    if (o.plugin) {
        const SimPolicy *p = sim_policy_load_plugin(o.plugin, error);
        if (p == NULL) {
            hs_run_opts_clear(&o);
            return FALSE;
        }
        gboolean named = FALSE;
        for (guint i = 0; i < list->len; i++) {
            named = named || strcmp(((const SimPolicy *) list->pdata[i])->name, p->name) == 0;
        }
        if (!named) {
            g_ptr_array_add(list, (gpointer) p);
        }
    }
    g_autofree SimRunReport *r = g_new0(SimRunReport, list->len);
    /* --out DIR: the compare's reports and trace in DIR, and each policy's
     * run as a run directory of its own, DIR/POLICY (its recording with
     * it), which replay and compare --baseline read */
    g_autoptr(HsRunDir) rd = NULL;
    if (out && o.trace) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "compare: --out DIR writes DIR/trace.json itself: drop --trace");
        ok = FALSE;
    }
    if (ok && out) {
        ok = (rd = hs_run_dir_open(out, error)) != NULL;
        for (guint i = 0; ok && i < list->len; i++) {
            ok = hs_run_dir_child(rd, ((const SimPolicy *) list->pdata[i])->name,
                                  error) != NULL;
        }
    }
    const char *trace_path = rd ? hs_run_dir_trace(rd) : o.trace;
    /* one trace, each policy's run streamed into it as the run goes (its
     * processes named after the policy): nothing is held but the writer's
     * last steps, whatever the plan's size */
    g_autoptr(TrcTrace) tr = NULL;
    if (ok && trace_path) {
        ok = (tr = hs_run_trace_open(trace_path, error)) != NULL;
    }
    gboolean tty = isatty(fileno(stderr));
    Which at = { 0, list->len };
    if (tty) {
        w.progress = progress_line;
        w.progress_opaque = &at;
    }
    /* one reference for every policy: the workload is the same */
    g_autoptr(SimChecker) checker = ok ? sim_run_checker_new(spec, &w, error) : NULL;
    if (ok && w.check_layers >= 0 && checker == NULL) {
        ok = FALSE;
    }
    g_autoptr(GString) names = g_string_new(NULL);
    for (guint i = 0; i < list->len && ok; i++) {
        const SimPolicy *p = list->pdata[i];
        at.i = i + 1;
        g_string_append_printf(names, "%s%s", i ? "," : "", p->name);
        if (tr) {
            hs_run_trace_begin(tr, p->name, soc, &w);
        }
        g_autoptr(TrcRecordWriter) rec = NULL;
        if (rd) {
            HsRunDir *c = hs_run_dir_child(rd, p->name, NULL);
            g_autoptr(cJSON) prov = hs_provenance_with_config(o.ovr, soc, spec, &w, p->name,
                                                              o.stack);
            ok = (rec = trc_record_open_with(hs_run_dir_recording(c), soc, spec, p->name, &w,
                                             prov, error)) != NULL;
            w.planned = trc_record_add;
            w.planned_opaque = rec;
        }
        ok = ok && sim_run(soc, spec, p, &w, checker, &r[i], NULL, NULL, error);
        if (ok && rec) {
            ok = trc_record_close(g_steal_pointer(&rec), error);
        }
        w.planned = NULL;
        w.planned_opaque = NULL;
        if (tr) {
            hs_run_trace_end(tr, &w);
        }
    }
    if (ok && tr) {
        const char *keys[] = { "soc", "model", "policies", "sync", "version", "command",
                               "config_hash", NULL };
        const char *vals[] = { hs_provenance_soc(), hs_provenance_model(), names->str,
                               sim_sync_name[w.sync], hs_version(),
                               hs_provenance_command_line(), hs_provenance_hash() };
        ok = trc_trace_close(g_steal_pointer(&tr), keys, vals, error);
    }
    if (tty) {
        fprintf(stderr, "\r%70s\r", "");
    }
    /* policies whose checked values are wrong: said first, and exit 3 */
    g_autoptr(GString) wrong = g_string_new(NULL);
    guint n_wrong = 0;
    for (guint i = 0; ok && i < list->len; i++) {
        if (r[i].check.checked && !r[i].check.match) {
            g_string_append_printf(wrong, "%s%s", n_wrong++ ? ", " : "", r[i].policy);
        }
    }
    g_autofree char *why = n_wrong == 0 ? NULL
        : g_strdup_printf("%u of %u policies computed wrong values (%s): their results "
                          "differ from the reference", n_wrong, list->len, wrong->str);
    if (ok) {
        /* the three reports as text: one is printed, all go to --out */
        HsRunTexts t = { 0 };
        {
            g_autoptr(cJSON) root = cJSON_CreateObject();
            cJSON *wl = cJSON_AddObjectToObject(root, "workload");
            cJSON_AddStringToObject(wl, "soc", hs_provenance_soc());
            cJSON_AddStringToObject(wl, "model", hs_provenance_model());
            cJSON_AddStringToObject(wl, "sync", sim_sync_name[w.sync]);
            cJSON_AddNumberToObject(wl, "prompt_tokens", w.prompt);
            cJSON_AddNumberToObject(wl, "decode_tokens", w.decode);
            cJSON_AddNumberToObject(wl, "batch", w.batch);
            cJSON_AddItemToObject(root, "config", hs_config_json(o.ovr, soc, spec, &w));
            if (why) {
                cJSON_AddStringToObject(root, "failure", why);
            }
            cJSON *res = cJSON_AddArrayToObject(root, "results");
            for (guint i = 0; i < list->len; i++) {
                cJSON *one = hs_report_json(soc, &r[i]);
                g_autofree char *one_why = hs_run_failure(&r[i], NULL);
                if (one_why) {
                    cJSON_AddStringToObject(one, "failure", one_why);
                }
                cJSON_AddItemToArray(res, one);
            }
            cJSON_AddItemToObject(root, "provenance", hs_provenance_json());
            g_autofree char *js = hs_json_print(root, FALSE);
            t.json = g_strdup_printf("%s\n", js);
        }
        g_autoptr(GString) csv = g_string_new(NULL);
        for (guint i = 0; i < list->len; i++) {
            g_autofree char *row = hs_run_csv_text(&r[i], i == 0);
            g_string_append(csv, row);
        }
        t.csv = g_string_free(g_steal_pointer(&csv), FALSE);
        g_autoptr(GString) text = g_string_new(NULL);
        if (why) {
            g_string_append_printf(text, "FAILED: %s\n", why);
        }
        print_table(text, soc, r, list->len);
        g_string_append_printf(text, "%s\n", hs_provenance_line());
        t.text = g_string_free(g_steal_pointer(&text), FALSE);
        fputs(format == HS_FORMAT_JSON ? t.json : format == HS_FORMAT_CSV ? t.csv : t.text,
              stdout);
        if (rd) {
            /* config.json: the request once, with the policies compared;
             * each policy's folder: its own run directory */
            g_autoptr(cJSON) c = hs_config_request(o.ovr, soc, spec, &w, NULL, o.stack);
            cJSON *pl = cJSON_CreateArray();
            for (guint i = 0; i < list->len; i++) {
                cJSON_AddItemToArray(pl, cJSON_CreateString(r[i].policy));
            }
            cJSON_AddItemToObject(c, "policies", pl);
            hs_run_dir_set_config(rd, c);
            for (guint i = 0; i < list->len; i++) {
                const SimPolicy *p = list->pdata[i];
                HsRunDir *child = hs_run_dir_child(rd, p->name, NULL);
                g_autoptr(cJSON) cc = hs_config_request(o.ovr, soc, spec, &w, p->name,
                                                        o.stack);
                hs_run_dir_set_config(child, cc);
                g_autoptr(cJSON) pextra = cJSON_CreateObject();
                cJSON_AddItemToObject(pextra, "config", hs_config_json(o.ovr, soc, spec, &w));
                g_autofree char *one_why = hs_run_failure(&r[i], NULL);
                HsRunTexts ct = { 0 };
                hs_run_texts(soc, &r[i], one_why, pextra, &ct);
                hs_run_dir_set_texts(child, &ct);
                hs_run_texts_clear(&ct);
            }
            ok = hs_run_dir_commit(rd, &t, error);
        }
        hs_run_texts_clear(&t);
    }
    for (guint i = 0; i < list->len; i++) {
        sim_run_report_clear(&r[i]);
    }
    hs_run_opts_clear(&o);
    if (ok && why) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_MISMATCH, "%s", why);
        return FALSE;
    }
    return ok;
}

const HsCommand hs_cmd_compare = {
    "compare", "[--policies a,b,..] [options]", "the same request under several policies, side by side", run,
};
