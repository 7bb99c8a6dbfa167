/*
 * cmd-validate.c - `hetero-sim validate`: every published point next to
 * the simulation, with its error and tolerance.
 *
 * Points live in a data file (configs/points/heterollm.json by default),
 * one entry each: id, paper and section, SoC, model, policy, sync,
 * workload, metric, published value (or range) and tolerance.  Adding a
 * paper's points needs no code.  A point the model cannot meet without a
 * hack says so in "known_miss" (the reason); it is reported but does not
 * fail the command.  A point a parameter was fitted to says so in
 * "calibrated" (which parameter): it is shown, must still be met, and is
 * left out of the mean error, which measures prediction.  Runs are timing-only (values are checked by `run`).
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum {
    M_PREFILL_TPS, M_DECODE_TPS, M_DECODE_GBPS, M_PREFILL_W,
    M_PREFILL_SPEEDUP, M_DECODE_SPEEDUP, M_PREFILL_SPEEDUP_MEAN,
    M_PREFILL_LATENCY_REDUCTION_MEAN, M_PREFILL_PREPARE_SHARE,
    M_COUNT
} Metric;

static const char *const metric_name[M_COUNT] = {
    "prefill_tokens_per_s", "decode_tokens_per_s", "decode_dram_gbps", "prefill_avg_w",
    "prefill_speedup", "decode_speedup", "prefill_speedup_mean",
    "prefill_latency_reduction_mean", "prefill_prepare_share",
};

typedef struct Row {
    char *id, *paper, *metric_s, *known_miss, *calibrated;
    double published, lo, hi, tolerance_pct, simulated, error_pct;
    gboolean range, ok;
} Row;

typedef struct Ctx {
    const char *configs, *models;
    GHashTable *socs, *specs;    /* name -> loaded (owned) */
    const HsOverrides *ovr;      /* --set, applied to every point's SoC and model */
} Ctx;

static gboolean
get_str(const cJSON *o, const char *path, const char *key, const char **out, GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v)) {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.%s: expected a string (got %s)", path, key, got);
        return FALSE;
    }
    *out = v->valuestring;
    return TRUE;
}

static gboolean
get_num(const cJSON *o, const char *path, const char *key, double lo, double hi,
        double *out, GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.%s: expected a number in [%g, %g] (got %s)", path, key, lo, hi, got);
        return FALSE;
    }
    *out = v->valuedouble;
    return TRUE;
}

/* Simulate one (policy, sync, prompt) of a point. */
static gboolean
simulate(Ctx *c, const char *soc_name, const char *model, const char *policy,
         const char *sync, uint32_t prompt, uint32_t decode, uint32_t batch,
         SimRunReport *r, const char *path, GError **error)
{
    HwSoc *soc = g_hash_table_lookup(c->socs, soc_name);
    if (soc == NULL) {
        soc = hs_config_load_soc(soc_name, c->ovr, error);
        if (soc == NULL) {
            if ((*error)->domain != HS_USAGE_ERROR) {
                g_prefix_error(error, "%s.soc: ", path);
            }
            return FALSE;
        }
        g_hash_table_insert(c->socs, g_strdup(soc_name), soc);
    }
    MdlSpec *spec = g_hash_table_lookup(c->specs, model);
    if (spec == NULL) {
        spec = hs_config_load_model(model, c->ovr, error);
        if (spec == NULL) {
            if ((*error)->domain != HS_USAGE_ERROR) {
                g_prefix_error(error, "%s.model: ", path);
            }
            return FALSE;
        }
        g_hash_table_insert(c->specs, g_strdup(model), spec);
    }
    const SimPolicy *p = sim_policy_find(policy);
    if (p == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.policy: expected a policy from 'list policies' (got \"%s\")", path,
                    policy);
        return FALSE;
    }
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = prompt;
    w.decode = decode;
    w.batch = batch;
    w.check_layers = -1;
    if (strcmp(sync, "driver") == 0) {
        w.sync = SIM_SYNC_DRIVER;
    } else if (strcmp(sync, "fast") != 0) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.sync: expected driver or fast (got \"%s\")", path, sync);
        return FALSE;
    }
    return sim_run(soc, spec, p, &w, NULL, r, NULL, NULL, error);
}

static double
metric_of(Metric m, const SimRunReport *r)
{
    switch (m) {
    case M_PREFILL_TPS:
    case M_PREFILL_SPEEDUP:
    case M_PREFILL_SPEEDUP_MEAN:
        return r->prefill.tokens_per_s;
    case M_DECODE_TPS:
    case M_DECODE_SPEEDUP:
        return r->decode.tokens_per_s;
    case M_DECODE_GBPS:
        return r->decode.dram_gbps;
    case M_PREFILL_W:
        return r->prefill.avg_w;
    case M_PREFILL_LATENCY_REDUCTION_MEAN:
        return r->prefill.time_ms;
    case M_PREFILL_PREPARE_SHARE:
        return r->prefill.time_ms > 0 ? r->prefill.prepare_ms / r->prefill.time_ms : 0;
    default:
        g_assert_not_reached();
    }
}

static gboolean
eval_point(Ctx *c, const cJSON *pt, int idx, Row *row, GError **error)
{
    g_autofree char *path = g_strdup_printf("$.points[%d]", idx);
    const char *id, *paper, *soc, *model, *metric, *policy, *sync;
    if (!cJSON_IsObject(pt)) {
        g_autofree char *got = hs_json_describe(pt);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected an object (got %s)", path, got);
        return FALSE;
    }
    if (!get_str(pt, path, "id", &id, error) || !get_str(pt, path, "paper", &paper, error) ||
        !get_str(pt, path, "soc", &soc, error) || !get_str(pt, path, "model", &model, error) ||
        !get_str(pt, path, "metric", &metric, error) ||
        !get_str(pt, path, "policy", &policy, error) || !get_str(pt, path, "sync", &sync, error) ||
        !get_num(pt, path, "tolerance_pct", 0, 1000, &row->tolerance_pct, error)) {
        return FALSE;
    }
    int m = -1;
    for (int i = 0; i < M_COUNT; i++) {
        if (strcmp(metric, metric_name[i]) == 0) {
            m = i;
        }
    }
    if (m < 0) {
        g_autofree char *list = g_strjoinv(", ", (char **) metric_name);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.metric: expected one of %s (got \"%s\")", path, list, metric);
        return FALSE;
    }
    row->id = g_strdup(id);
    row->paper = g_strdup(paper);
    row->metric_s = g_strdup(metric);
    const cJSON *km = cJSON_GetObjectItemCaseSensitive(pt, "known_miss");
    row->known_miss = cJSON_IsString(km) ? g_strdup(km->valuestring) : NULL;
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(pt, "calibrated");
    row->calibrated = cJSON_IsString(cal) ? g_strdup(cal->valuestring) : NULL;
    if (row->known_miss && row->calibrated) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected at most one of known_miss and calibrated (got both)", path);
        return FALSE;
    }
    const cJSON *rng = cJSON_GetObjectItemCaseSensitive(pt, "published_range");
    if (cJSON_IsArray(rng) && cJSON_GetArraySize(rng) == 2) {
        row->range = TRUE;
        row->lo = cJSON_GetArrayItem(rng, 0)->valuedouble;
        row->hi = cJSON_GetArrayItem(rng, 1)->valuedouble;
        row->published = (row->lo + row->hi) / 2;
    } else if (!get_num(pt, path, "published", -1e12, 1e12, &row->published, error)) {
        return FALSE;
    }

    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(pt, "workload");
    g_autofree char *wpath = g_strdup_printf("%s.workload", path);
    double decode = 0, batch = 1, prompt = 0;
    if (!cJSON_IsObject(wl) || !get_num(wl, wpath, "decode", 0, 4096, &decode, error) ||
        !get_num(wl, wpath, "batch", 1, 256, &batch, error)) {
        if (error && *error == NULL) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: expected an object", wpath);
        }
        return FALSE;
    }
    g_autoptr(GArray) prompts = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(wl, "prompts");
    if (cJSON_IsArray(ps)) {
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, ps) {
            uint32_t v = (uint32_t) it->valuedouble;
            g_array_append_val(prompts, v);
        }
    } else if (get_num(wl, wpath, "prompt", 1, 32768, &prompt, error)) {
        uint32_t v = (uint32_t) prompt;
        g_array_append_val(prompts, v);
    } else {
        return FALSE;
    }
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(pt, "baseline");
    gboolean ratio = m == M_PREFILL_SPEEDUP || m == M_DECODE_SPEEDUP ||
                     m == M_PREFILL_SPEEDUP_MEAN || m == M_PREFILL_LATENCY_REDUCTION_MEAN;
    const char *bpolicy = NULL, *bsync = NULL;
    if (ratio) {
        g_autofree char *bpath = g_strdup_printf("%s.baseline", path);
        if (!cJSON_IsObject(base) || !get_str(base, bpath, "policy", &bpolicy, error) ||
            !get_str(base, bpath, "sync", &bsync, error)) {
            if (error && *error == NULL) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                            "%s: missing key \"baseline\" (a %s compares two policies)",
                            path, metric);
            }
            return FALSE;
        }
    }
    double acc = 0;
    for (guint i = 0; i < prompts->len; i++) {
        uint32_t pr = g_array_index(prompts, uint32_t, i);
        SimRunReport a = { 0 }, b = { 0 };
        if (!simulate(c, soc, model, policy, sync, pr, (uint32_t) decode, (uint32_t) batch,
                      &a, path, error)) {
            return FALSE;
        }
        double va = metric_of((Metric) m, &a), v = va;
        if (ratio) {
            if (!simulate(c, soc, model, bpolicy, bsync, pr, (uint32_t) decode,
                          (uint32_t) batch, &b, path, error)) {
                sim_run_report_clear(&a);
                return FALSE;
            }
            double vb = metric_of((Metric) m, &b);
            v = m == M_PREFILL_LATENCY_REDUCTION_MEAN ? 1.0 - va / vb : va / vb;
        }
        acc += v;
        sim_run_report_clear(&a);
        sim_run_report_clear(&b);
    }
    row->simulated = acc / prompts->len;
    row->error_pct = 100.0 * (row->simulated - row->published) / row->published;
    row->ok = row->range ? (row->simulated >= row->lo && row->simulated <= row->hi)
                         : fabs(row->error_pct) <= row->tolerance_pct;
    return TRUE;
}

static char *
scatter_svg(const Row *rows, guint n)
{
    /* simulated / published per point: 1 is perfect; the band is +-20 %.
     * The bottom and right margins hold the ids, written at 60 degrees
     * (up to ~30 characters: ~150 px down, ~90 px right) */
    const double W = 800, H = 440, L = 60, B = 170, T = 30, R = 100;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                              "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n"
                              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                              "<text x=\"%.0f\" y=\"18\" font-size=\"13\">simulated / published "
                              "(1 = exact; band: +-20 %%)</text>\n", W, H, L);
    double y0 = 0, y1 = 2;
#define PY(v) (H - B - (H - B - T) * (fmin(fmax((v), y0), y1) - y0) / (y1 - y0))
    g_string_append_printf(s, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" "
                              "fill=\"#e8f4e8\"/>\n", L, PY(1.2), W - L - R, PY(0.8) - PY(1.2));
    g_string_append_printf(s, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
                              "stroke=\"#888\"/>\n", L, W - R, PY(1.0), PY(1.0));
    for (int i = 0; i <= 4; i++) {
        g_string_append_printf(s, "<text x=\"20\" y=\"%.1f\">%.1f</text>\n", PY(i * 0.5) + 4,
                               i * 0.5);
    }
    for (guint i = 0; i < n; i++) {
        double x = L + (W - L - R) * (i + 0.5) / n;
        double ratio = rows[i].simulated / rows[i].published;
        g_string_append_printf(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>\n", x,
                               PY(ratio), rows[i].ok ? "#2a7" : "#d33");
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.0f\" transform=\"rotate(60 %.1f %.0f)\">"
                                  "%s</text>\n", x, H - B + 12, x, H - B + 12, rows[i].id);
    }
#undef PY
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE, allow_known = FALSE;
    g_autofree char *points = NULL, *format_name = NULL, *out_dir = NULL;
    g_auto(GStrv) set = NULL;
    GOptionEntry entries[] = {
        { "known-misses", 'k', 0, G_OPTION_ARG_NONE, &allow_known,
          "Do not fail on points the points file declares a known_miss (with its reason)",
          NULL },
        { "points", 'p', 0, G_OPTION_ARG_FILENAME, &points,
          "Published points (default configs/points/heterollm.json)", "FILE" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "text or json", "FMT" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
          "Also write DIR/validate.csv and DIR/validate.svg", "DIR" },
        HS_SET_OPTION(&set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("validate", NULL,
                      "Published results side by side with the simulation.  Exit status 1 "
                      "if a point is outside its tolerance (with --known-misses: a point "
                      "that is not a declared known miss).",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL || !hs_cli_no_extra_args(argc, argv, 0, error) ||
        !hs_cli_format(format_name, HS_FORMATS_TEXT_JSON, &format, error)) {
        return FALSE;
    }
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autofree char *models = g_build_filename(hs_cli_data_dir(), "models", NULL);
    g_autofree char *def = g_build_filename(configs, "points", "heterollm.json", NULL);
    const char *file = points ? points : def;
    g_autoptr(cJSON) root = hs_json_load_file(file, HS_CONFIG_ERROR, error);
    if (root == NULL) {
        return FALSE;
    }
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) == 0) {
        g_autofree char *got = hs_json_describe(pts);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: $.points: expected a non-empty array of points (got %s)", file, got);
        return FALSE;
    }
    Ctx c = { configs, models,
              g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) hw_soc_free),
              g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) mdl_spec_free),
              ovr };
    guint n = (guint) cJSON_GetArraySize(pts);
    g_autofree Row *rows = g_new0(Row, n);
    gboolean ok = TRUE;
    for (guint i = 0; i < n && ok; i++) {
        ok = eval_point(&c, cJSON_GetArrayItem(pts, (int) i), (int) i, &rows[i], error);
        if (!ok && (*error)->domain != HS_USAGE_ERROR) {      /* --set names itself */
            g_prefix_error(error, "%s: ", file);
        }
    }
    g_hash_table_destroy(c.socs);
    g_hash_table_destroy(c.specs);
    gboolean all_ok = TRUE, unexpected = FALSE;
    double mape = 0;
    guint n_pred = 0;
    if (ok) {
        for (guint i = 0; i < n; i++) {
            if (!rows[i].calibrated) {
                mape += fabs(rows[i].error_pct);
                n_pred++;
            }
            all_ok = all_ok && rows[i].ok;
            unexpected = unexpected ||
                         (!rows[i].ok && (rows[i].known_miss == NULL || !allow_known));
        }
        mape = n_pred ? mape / n_pred : 0;
        if (format == HS_FORMAT_JSON) {
            g_autoptr(cJSON) j = cJSON_CreateObject();
            cJSON *arr = cJSON_AddArrayToObject(j, "rows");
            for (guint i = 0; i < n; i++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "id", rows[i].id);
                cJSON_AddStringToObject(o, "paper", rows[i].paper);
                cJSON_AddStringToObject(o, "metric", rows[i].metric_s);
                cJSON_AddNumberToObject(o, "published", rows[i].published);
                cJSON_AddNumberToObject(o, "simulated", rows[i].simulated);
                cJSON_AddNumberToObject(o, "error_pct", rows[i].error_pct);
                cJSON_AddNumberToObject(o, "tolerance_pct", rows[i].tolerance_pct);
                cJSON_AddBoolToObject(o, "ok", rows[i].ok);
                if (rows[i].known_miss) {
                    cJSON_AddStringToObject(o, "known_miss", rows[i].known_miss);
                }
                if (rows[i].calibrated) {
                    cJSON_AddStringToObject(o, "calibrated", rows[i].calibrated);
                }
                cJSON_AddItemToArray(arr, o);
            }
            cJSON_AddNumberToObject(j, "mape_pct", mape);
            cJSON_AddBoolToObject(j, "all_ok", all_ok);
            g_autofree char *s = hs_json_print(j, FALSE);
            printf("%s\n", s);
        } else {
            printf("| point | paper | metric | published | simulated | error | tolerance | |\n"
                   "|---|---|---|---|---|---|---|---|\n");
            for (guint i = 0; i < n; i++) {
                g_autofree char *pub = rows[i].range
                    ? g_strdup_printf("%.3g-%.3g", rows[i].lo, rows[i].hi)
                    : g_strdup_printf("%.4g", rows[i].published);
                printf("| %s | %s | %s | %s | %.4g | %+.1f %% | %s%.0f %% | %s |\n",
                       rows[i].id, rows[i].paper, rows[i].metric_s, pub, rows[i].simulated,
                       rows[i].error_pct, rows[i].range ? "range / " : "",
                       rows[i].tolerance_pct,
                       !rows[i].ok ? (rows[i].known_miss ? "known miss" : "MISS")
                       : rows[i].calibrated ? "ok (calibrated)" : "ok");
            }
            printf("\nmean absolute percentage error: %.1f %% over %u points (calibration "
                   "points excluded); %s\n", mape, n_pred,
                   all_ok ? "all within tolerance"
                   : !unexpected ? "misses are all known (see known_miss in the points file)"
                   : allow_known ? "some points MISS their tolerance"
                                 : "some points miss their tolerance (--known-misses "
                                   "accepts those the points file declares)");
        }
        if (out_dir) {
            if (g_mkdir_with_parents(out_dir, 0755) != 0) {
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                            "%s: cannot create directory", out_dir);
                ok = FALSE;
            } else {
                GString *csv = g_string_new("id,metric,published,simulated,error_pct,"
                                            "tolerance_pct,ok\n");
                for (guint i = 0; i < n; i++) {
                    g_string_append_printf(csv, "%s,%s,%.6g,%.6g,%.3f,%.1f,%d\n", rows[i].id,
                                           rows[i].metric_s, rows[i].published,
                                           rows[i].simulated, rows[i].error_pct,
                                           rows[i].tolerance_pct, rows[i].ok);
                }
                g_autofree char *cp = g_build_filename(out_dir, "validate.csv", NULL);
                g_autofree char *sp = g_build_filename(out_dir, "validate.svg", NULL);
                g_autofree char *svg = scatter_svg(rows, n);
                ok = hs_outfile_write_all(cp, csv->str, csv->len, error) &&
                     hs_outfile_write_all(sp, svg, strlen(svg), error);
                g_string_free(csv, TRUE);
            }
        }
    }
    for (guint i = 0; i < n; i++) {
        g_free(rows[i].id);
        g_free(rows[i].paper);
        g_free(rows[i].metric_s);
        g_free(rows[i].known_miss);
        g_free(rows[i].calibrated);
    }
    if (ok && unexpected) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED,
                    "validate: some points are outside their tolerance%s",
                    allow_known ? " and not declared known misses" : "");
        return FALSE;
    }
    return ok;
}

const HsCommand hs_cmd_validate = {
    "validate", "[--points FILE]", "published results side by side with the simulation", run,
};
