/*
 * cmd-validate.c - `hetero-sim validate`: every published point of every
 * paper next to the simulation, with its error and tolerance.
 *
 * Points live in data files, one per paper (configs/points/PAPER.json,
 * read by points.c); all of them run by default, --points FILE runs one.
 * A point the model cannot meet without a hack says so in "known_miss"
 * (the reason); it is reported and does not fail the command unless
 * --strict (so `validate --out DIR` out of the box writes its plots and
 * exits 0 while every miss is declared).  A point a parameter was fitted to says so in "calibrated"
 * (which parameter): it is shown, must still be met, and is left out of
 * the mean errors, which measure prediction; the fitted parameters are
 * listed in a table of their own, so a reader sees what is fit.  A
 * published range is met anywhere inside it; its error is the distance to
 * the nearer bound (0 inside).  Runs are timing-only (values are checked
 * by `run`).  --sensitivity PCT prints, instead of the table, how far
 * each assumed constant moves the rows (validate-sensitivity.c).
 */
#include "hw/dev.h"
#include "sim/cli/points.h"
#include "sim/cli/points-eval.h"
#include "sim/cli/validate.h"
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef HsValidateRow Row;

void
hs_validate_judge(Row *row, double simulated)
{
    const HsPoint *pt = row->pt;
    row->simulated = simulated;
    if (pt->range) {
        double bound = simulated < pt->lo ? pt->lo : simulated > pt->hi ? pt->hi : NAN;
        row->error_pct = isnan(bound) ? 0 : 100.0 * (simulated - bound) / bound;
        row->ok = isnan(bound);
    } else {
        row->error_pct = 100.0 * (simulated - pt->published) / pt->published;
        row->ok = fabs(row->error_pct) <= pt->tolerance_pct;
    }
}

gboolean
hs_validate_eval(HsPointCache *c, Row *row, GError **error)
{
    g_autofree char *path = g_strdup_printf("$.points[%d]", row->index);
    double simulated = 0;
    if (!hs_point_eval(c, row->pt, path, &simulated, error)) {
        if ((*error)->domain != HS_USAGE_ERROR) {      /* --set names itself */
            g_prefix_error(error, "%s: ", row->path);
        }
        return FALSE;
    }
    hs_validate_judge(row, simulated);
    return TRUE;
}

gboolean
hs_validate_matches(char **pats, const char *id)
{
    if (pats == NULL) {
        return TRUE;
    }
    for (char **p = pats; *p; p++) {
        g_autofree char *pat = g_strstrip(g_strdup(*p));
        if (*pat && g_pattern_match_simple(pat, id)) {
            return TRUE;
        }
    }
    return FALSE;
}

static char *
scatter_svg(const Row *rows, guint n)
{
    /* simulated / published per point: 1 is perfect.  Each point has its
     * own band: its tolerance (15 % absolute, 20 % ratios) or its
     * published range.  The bottom margin holds the ids at 60 degrees. */
    const double W = 920, H = 496, L = 70, B = 170, T = 56, R = 200;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                              "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n"
                              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                              "<text x=\"%.0f\" y=\"22\" font-size=\"14\">Published points: "
                              "simulated / published (1 = exact), each in its tolerance band"
                              "</text>\n", W, H, L);
    /* +-50 %: every tolerance fits with room; a point beyond sits on the edge */
    double y0 = 0.5, y1 = 1.5;
#define PY(v) (H - B - (H - B - T) * (fmin(fmax((v), y0), y1) - y0) / (y1 - y0))
    for (int i = 0; i <= 10; i++) {
        double v = 0.5 + i * 0.1;
        g_string_append_printf(s, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
                                  "stroke=\"%s\"/><text x=\"%.0f\" y=\"%.1f\" "
                                  "text-anchor=\"end\">%.1f</text>\n", L, W - R, PY(v), PY(v),
                               i == 5 ? "#666" : "#ececec", L - 6, PY(v) + 4, v);
    }
    double cy = (H - B + T) / 2;
    g_string_append_printf(s, "<text x=\"16\" y=\"%.0f\" text-anchor=\"middle\" "
                              "font-size=\"13\" transform=\"rotate(-90 16 %.0f)\">simulated / "
                              "published (x)</text>\n", cy, cy);
    double slot = (W - L - R) / MAX(n, 1);
    for (guint i = 0; i < n; i++) {
        const Row *r = &rows[i];
        double x = L + slot * (i + 0.5);
        double lo = r->pt->range ? r->pt->lo / r->pt->published : 1 - r->pt->tolerance_pct / 100;
        double hi = r->pt->range ? r->pt->hi / r->pt->published : 1 + r->pt->tolerance_pct / 100;
        g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                  "fill=\"#dcefdc\"/>\n", x - slot * 0.4, PY(hi), slot * 0.8,
                               PY(lo) - PY(hi));
    }
    /* grouped by paper (the rows come file by file): a rule between two
     * papers' points, the paper's name above its own */
    for (guint i = 0, g0 = 0, k = 0; i < n; i++) {
        gboolean last = i + 1 == n || g_strcmp0(rows[i + 1].file, rows[i].file) != 0;
        if (!last) {
            continue;
        }
        if (i + 1 < n) {
            g_string_append_printf(s, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
                                      "stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                                   L + slot * (i + 1), L + slot * (i + 1), T - 8, H - B);
        }
        const char *f = rows[i].file ? rows[i].file : "";
        const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
        g_autofree char *paper = g_str_has_suffix(base, ".json")
                                 ? g_strndup(base, strlen(base) - 5) : g_strdup(base);
        g_autofree char *esc = g_markup_escape_text(paper, -1);
        /* every other paper's name a line higher: a paper of few points
         * has a narrow group */
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" "
                                  "font-weight=\"bold\">%s</text>\n",
                               L + slot * (g0 + i + 1) / 2.0, k++ % 2 ? T - 16 : T - 4, esc);
        g0 = i + 1;
    }
    g_string_append_printf(s, "<path d=\"M%.0f %.0f V%.0f H%.0f\" fill=\"none\" "
                              "stroke=\"black\"/>\n", L, T, H - B, W - R);
    for (guint i = 0; i < n; i++) {
        const Row *r = &rows[i];
        double x = L + slot * (i + 0.5), ratio = r->simulated / r->pt->published, y = PY(ratio);
        if (!r->ok && r->pt->known_miss) {            /* known miss: orange triangle */
            g_string_append_printf(s, "<path d=\"M%.1f %.1f l6 10 h-12 Z\" fill=\"#e08a00\"/>\n",
                                   x, y - 6);
        } else if (!r->ok) {                      /* miss: red cross */
            g_string_append_printf(s, "<path d=\"M%.1f %.1f l10 10 m0 -10 l-10 10\" "
                                      "stroke=\"#d33\" stroke-width=\"3\"/>\n", x - 5, y - 5);
        } else if (r->pt->calibrated) {               /* calibrated: blue square */
            g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" "
                                      "fill=\"#1f77b4\"/>\n", x - 5, y - 5);
        } else {                                  /* ok: green circle */
            g_string_append_printf(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                                      "fill=\"#2a7\"/>\n", x, y);
        }
        if (ratio < y0 || ratio > y1) {
            /* off the scale: the marker sits on the edge, its value
             * written upright into the plot from there (slots are narrow) */
            double ty = ratio > y1 ? y + 10 : y - 10;
            g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                                      "transform=\"rotate(%d %.1f %.1f)\">%.2g</text>\n", x - 3,
                                   ty, ratio > y1 ? 90 : -90, x - 3, ty, ratio);
        }
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.0f\" transform=\"rotate(60 %.1f %.0f)\">"
                                  "%s</text>\n", x, H - B + 12, x, H - B + 12, r->pt->id);
    }
    /* legend */
    double lx = W - R + 16, ly = T + 10;
    g_string_append_printf(s,
        "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"5\" fill=\"#2a7\"/><text x=\"%.0f\" y=\"%.0f\">ok</text>\n"
        "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"#1f77b4\"/>"
        "<text x=\"%.0f\" y=\"%.0f\">ok, calibrated</text>\n"
        "<path d=\"M%.0f %.0f l6 10 h-12 Z\" fill=\"#e08a00\"/><text x=\"%.0f\" y=\"%.0f\">known miss</text>\n"
        "<path d=\"M%.0f %.0f l10 10 m0 -10 l-10 10\" stroke=\"#d33\" stroke-width=\"3\"/>"
        "<text x=\"%.0f\" y=\"%.0f\">miss</text>\n"
        "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"#dcefdc\"/>"
        "<text x=\"%.0f\" y=\"%.0f\">tolerance: 15 %% absolute,</text>"
        "<text x=\"%.0f\" y=\"%.0f\">20 %% ratios, or its range</text>\n"
        "<text x=\"%.0f\" y=\"%.0f\">beyond 0.5 or 1.5: on the</text>"
        "<text x=\"%.0f\" y=\"%.0f\">edge, its ratio written</text>\n",
        lx + 5, ly, lx + 18, ly + 4,
        lx, ly + 15, lx + 18, ly + 24,
        lx + 5, ly + 34, lx + 18, ly + 44,
        lx, ly + 55, lx + 18, ly + 64,
        lx - 1, ly + 75, lx + 18, ly + 85, lx + 18, ly + 99, lx, ly + 121, lx, ly + 135);
#undef PY
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}


/* Mean absolute error of one paper's rows (or all: @file NULL). */
typedef HsValidateSummary Summary;

Summary
hs_validate_summarise(const Row *rows, guint n, const char *file)
{
    Summary s = { 0 };
    for (guint i = 0; i < n; i++) {
        const Row *r = &rows[i];
        if (file && strcmp(r->file, file) != 0) {
            continue;
        }
        s.n++;
        s.ok += r->ok;
        s.known += !r->ok && r->pt->known_miss;
        if (r->pt->calibrated) {
            s.calibrated++;
            continue;
        }
        s.predicted++;
        s.mape += fabs(r->error_pct);
        if (!r->pt->known_miss) {
            s.n_met++;
            s.mape_met += fabs(r->error_pct);
        }
    }
    s.mape = s.predicted ? s.mape / s.predicted : 0;
    s.mape_met = s.n_met ? s.mape_met / s.n_met : 0;
    return s;
}

static char *
published_text(const HsPoint *p)
{
    if (!p->range) {
        return g_strdup_printf("%.4g", p->published);
    }
    if (isinf(p->lo)) {
        return g_strdup_printf("<= %.4g", p->hi);
    }
    if (isinf(p->hi)) {
        return g_strdup_printf(">= %.4g", p->lo);
    }
    return g_strdup_printf("%.4g-%.4g", p->lo, p->hi);
}

static void
print_text(const Row *rows, guint n, GPtrArray *files, gboolean allow_known,
           gboolean unexpected)
{
    for (guint f = 0; f < files->len; f++) {
        const char *file = g_ptr_array_index(files, f);
        printf("%s| point | paper | metric | published | simulated | error | tolerance | |\n"
               "|---|---|---|---|---|---|---|---|\n", f ? "\n" : "");
        for (guint i = 0; i < n; i++) {
            const Row *r = &rows[i];
            if (strcmp(r->file, file) != 0) {
                continue;
            }
            g_autofree char *pub = published_text(r->pt);
            g_autofree char *tol = r->pt->range ? g_strdup("range")
                                   : g_strdup_printf("%.0f %%", r->pt->tolerance_pct);
            printf("| %s | %s | %s | %s | %.4g | %+.1f %% | %s | %s |\n", r->pt->id,
                   r->pt->paper, hs_metric_name[r->pt->metric], pub, r->simulated,
                   r->error_pct, tol,
                   !r->ok ? (r->pt->known_miss ? "known miss" : "MISS")
                   : r->pt->calibrated ? "ok (calibrated)" : "ok");
        }
    }
    printf("\n| paper | points | predicted | MAPE, predicted | MAPE, known misses apart "
           "| calibrated | within tolerance | known misses |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (guint f = 0; f <= files->len; f++) {
        const char *file = f < files->len ? g_ptr_array_index(files, f) : NULL;
        Summary s = hs_validate_summarise(rows, n, file);
        printf("| %s | %u | %u | %.1f %% | %.1f %% (%u) | %u | %u | %u |\n",
               file ? file : "all papers", s.n, s.predicted, s.mape, s.mape_met, s.n_met,
               s.calibrated, s.ok, s.known);
    }
    gboolean any_cal = FALSE;
    for (guint i = 0; i < n; i++) {
        const Row *r = &rows[i];
        if (r->pt->calibrated) {
            if (!any_cal) {
                printf("\nfitted to published rows (left out of the errors above):\n\n"
                       "| paper | row | what was fitted |\n|---|---|---|\n");
                any_cal = TRUE;
            }
            printf("| %s | %s | %s |\n", r->file, r->pt->id, r->pt->calibrated);
        }
    }
    if (!any_cal) {
        printf("\nno parameter was fitted to any of these rows\n");
    }
    Summary all = hs_validate_summarise(rows, n, NULL);
    printf("\nmean absolute percentage error: %.1f %% over %u points (calibration "
           "points excluded); %s\n", all.mape, all.predicted,
           all.ok == all.n ? "all within tolerance"
           : !unexpected ? "misses are all known (see known_miss in the points file)"
           : allow_known ? "some points MISS their tolerance"
                         : "some points miss their tolerance (--strict: even those the "
                           "points file declares)");
    printf("%s\n", hs_provenance_line());        /* what printed it, as run's text */
}

static void
print_json(const Row *rows, guint n, GPtrArray *files)
{
    g_autoptr(cJSON) j = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(j, "rows");
    for (guint i = 0; i < n; i++) {
        const Row *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", r->pt->id);
        cJSON_AddStringToObject(o, "file", r->file);
        cJSON_AddStringToObject(o, "paper", r->pt->paper);
        cJSON_AddStringToObject(o, "metric", hs_metric_name[r->pt->metric]);
        /* the stacks a points file names (else each policy's own) */
        if (r->pt->stack) {
            cJSON_AddStringToObject(o, "stack", r->pt->stack);
        }
        if (r->pt->base.stack) {
            cJSON_AddStringToObject(o, "baseline_stack", r->pt->base.stack);
        }
        cJSON_AddNumberToObject(o, "published", r->pt->published);
        if (r->pt->range) {
            cJSON *rg = cJSON_AddArrayToObject(o, "published_range");
            cJSON_AddItemToArray(rg, isinf(r->pt->lo) ? cJSON_CreateNull()
                                                       : cJSON_CreateNumber(r->pt->lo));
            cJSON_AddItemToArray(rg, isinf(r->pt->hi) ? cJSON_CreateNull()
                                                       : cJSON_CreateNumber(r->pt->hi));
        }
        cJSON_AddNumberToObject(o, "simulated", r->simulated);
        cJSON_AddNumberToObject(o, "error_pct", r->error_pct);
        cJSON_AddNumberToObject(o, "tolerance_pct", r->pt->tolerance_pct);
        cJSON_AddBoolToObject(o, "ok", r->ok);
        if (r->pt->known_miss) {
            cJSON_AddStringToObject(o, "known_miss", r->pt->known_miss);
        }
        if (r->pt->calibrated) {
            cJSON_AddStringToObject(o, "calibrated", r->pt->calibrated);
        }
        cJSON_AddItemToArray(arr, o);
    }
    cJSON *papers = cJSON_AddArrayToObject(j, "papers");
    for (guint f = 0; f < files->len; f++) {
        Summary s = hs_validate_summarise(rows, n, g_ptr_array_index(files, f));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", g_ptr_array_index(files, f));
        cJSON_AddNumberToObject(o, "points", s.n);
        cJSON_AddNumberToObject(o, "predicted", s.predicted);
        cJSON_AddNumberToObject(o, "mape_pct", s.mape);
        cJSON_AddNumberToObject(o, "mape_known_misses_apart_pct", s.mape_met);
        cJSON_AddNumberToObject(o, "calibrated", s.calibrated);
        cJSON_AddNumberToObject(o, "ok", s.ok);
        cJSON_AddItemToArray(papers, o);
    }
    Summary all = hs_validate_summarise(rows, n, NULL);
    cJSON_AddNumberToObject(j, "mape_pct", all.mape);
    cJSON_AddBoolToObject(j, "all_ok", all.ok == all.n);
    cJSON_AddItemToObject(j, "provenance", hs_provenance_json());
    g_autofree char *s = hs_json_print(j, FALSE);
    printf("%s\n", s);
}

static gboolean
write_out(const char *out_dir, const Row *rows, guint n, GError **error)
{
    if (!hs_outdir_make(out_dir, error)) {
        return FALSE;
    }
    /* each row with the version and command that computed it (config_hash
     * empty: every row has its own SoC, model and stacks) */
    g_autofree char *head = hs_csv_with_provenance("file,id,metric,published,simulated,"
                                                   "error_pct,tolerance_pct,ok", TRUE);
    g_autoptr(GString) csv = g_string_new(head);
    for (guint i = 0; i < n; i++) {
        g_autofree char *row = g_strdup_printf("%s,%s,%s,%.6g,%.6g,%.3f,%.1f,%d", rows[i].file,
                                               rows[i].pt->id,
                                               hs_metric_name[rows[i].pt->metric],
                                               rows[i].pt->published, rows[i].simulated,
                                               rows[i].error_pct, rows[i].pt->tolerance_pct,
                                               rows[i].ok);
        g_autofree char *line = hs_csv_with_provenance(row, FALSE);
        g_string_append(csv, line);
    }
    g_autofree char *cp = g_build_filename(out_dir, "validate.csv", NULL);
    g_autofree char *sp = g_build_filename(out_dir, "validate.svg", NULL);
    g_autofree char *svg = scatter_svg(rows, n);
    g_autoptr(HsOutGroup) g = hs_outgroup_new();       /* both or neither */
    return hs_outgroup_write(g, cp, csv->str, csv->len, error) &&
           hs_outgroup_write(g, sp, svg, strlen(svg), error) &&
           hs_outgroup_commit(g_steal_pointer(&g), error);
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE, allow_known = FALSE, strict = FALSE, refit = FALSE, derived = FALSE;
    g_autofree char *points = NULL, *format_name = NULL, *out_dir = NULL, *only = NULL;
    g_autofree char *keys = NULL;
    double sens_pct = NAN;             /* not given */
    g_auto(GStrv) set = NULL;
    hs_provenance_command(argc, argv);          /* before GOption takes it apart */
    GOptionEntry entries[] = {
        { "strict", 's', 0, G_OPTION_ARG_NONE, &strict,
          "Fail on every point outside its tolerance, even one the points file declares a "
          "known_miss", NULL },
        { "known-misses", 'k', 0, G_OPTION_ARG_NONE, &allow_known,
          "Do not fail on declared known misses (the default; kept for scripts)", NULL },
        { "points", 'p', 0, G_OPTION_ARG_FILENAME, &points,
          "One paper's published points (default: every configs/points/*.json)", "FILE" },
        { "only", 0, 0, G_OPTION_ARG_STRING, &only,
          "Only the points whose id matches one of these patterns (comma-separated, * and ? "
          "as in the shell: 'naive-*,vs-cpu-1024'); the means are theirs", "IDS" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "text or json", "FMT" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
          "Also write DIR/validate.csv and DIR/validate.svg", "DIR" },
        { "sensitivity", 0, 0, G_OPTION_ARG_DOUBLE, &sens_pct,
          "Instead of the table: scale every assumed constant of the configs (a key whose "
          "source begins \"assumed\") by 1 - PCT/100 and 1 + PCT/100 in turn and show how "
          "far each moves the rows, the keys that move them most first", "PCT" },
        { "keys", 0, 0, G_OPTION_ARG_STRING, &keys,
          "With --sensitivity: only the assumed keys matching one of these patterns "
          "(comma-separated, * and ?: 'npu.*,stack@mllm.*')", "PATTERNS" },
        { "derived", 0, 0, G_OPTION_ARG_NONE, &derived,
          "With --sensitivity: scale the keys whose source begins \"derived\" too (computed "
          "from a source by reasoning the source does not state)", NULL },
        { "refit", 0, 0, G_OPTION_ARG_NONE, &refit,
          "With --sensitivity: refit each calibrated key (configs/calibration/) to what it "
          "was fitted to, under every scaled value that moves it", NULL },
        HS_SET_OPTION(&set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("validate", NULL,
                      "Published results side by side with the simulation, per paper, with "
                      "the mean error per paper and which parameters were fitted to which "
                      "rows.  Exit status 1 if a point is outside its tolerance and is not "
                      "a declared known miss (with --strict: any point outside it).",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    if ((keys || refit || derived) && isnan(sens_pct)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --%s: expected --sensitivity PCT beside it",
                    keys ? "keys" : refit ? "refit" : "derived");
        return FALSE;
    }
    if (!isnan(sens_pct) && out_dir) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --out writes the table's files; expected it without "
                    "--sensitivity");
        return FALSE;
    }
    if (strict && allow_known) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --strict and --known-misses contradict each other");
        return FALSE;
    }
    allow_known = !strict;
    HsFormat format;
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL || !hs_cli_no_extra_args(argc, argv, 0, error) ||
        !hs_cli_format(format_name, HS_FORMATS_TEXT_JSON, &format, error) ||
        (out_dir && !hs_outdir_check(out_dir, error))) {
        return FALSE;
    }
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func((GDestroyNotify) hs_points_free);
    g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    if (points) {
        HsPoints *p = hs_points_load(points, error);
        if (p == NULL) {
            return FALSE;
        }
        g_ptr_array_add(sets, p);
        g_ptr_array_add(files, g_strdup(p->name));
        g_ptr_array_add(paths, g_strdup(points));
    } else {
        g_autofree char *dir = g_build_filename(configs, "points", NULL);
        g_auto(GStrv) stems = hs_json_list_stems(dir, error);
        if (stems == NULL) {
            g_prefix_error(error, "%s: ", dir);
            return FALSE;
        }
        for (char **s = stems; *s; s++) {
            g_autofree char *base = g_strconcat(*s, ".json", NULL);
            g_autofree char *file = g_build_filename(dir, base, NULL);
            HsPoints *p = hs_points_load(file, error);
            if (p == NULL) {
                return FALSE;
            }
            g_ptr_array_add(sets, p);
            g_ptr_array_add(files, g_strdup(p->name));
            g_ptr_array_add(paths, g_steal_pointer(&file));
        }
    }
    guint n = 0;
    for (guint f = 0; f < sets->len; f++) {
        n += ((HsPoints *) g_ptr_array_index(sets, f))->n;
    }
    g_auto(GStrv) pats = only ? g_strsplit(only, ",", -1) : NULL;
    g_autoptr(HsPointCache) c = hs_point_cache_new(ovr);
    g_autofree Row *rows = g_new0(Row, MAX(1, n));
    g_autoptr(GPtrArray) shown = g_ptr_array_new();    /* files with a row */
    gboolean ok = TRUE;
    guint k = 0;
    for (guint f = 0; f < sets->len && ok; f++) {
        const HsPoints *pset = g_ptr_array_index(sets, f);
        guint k0 = k;
        for (guint i = 0; i < pset->n && ok; i++) {
            if (!hs_validate_matches(pats, pset->points[i].id)) {
                continue;
            }
            rows[k] = (Row) { .pt = &pset->points[i], .index = (int) i,
                              .file = g_ptr_array_index(files, f),
                              .path = g_ptr_array_index(paths, f) };
            ok = hs_validate_eval(c, &rows[k++], error);
        }
        if (k > k0) {
            g_ptr_array_add(shown, g_ptr_array_index(files, f));
        }
    }
    if (!ok) {
        return FALSE;
    }
    if (k == 0) {
        g_autofree char *got = hs_escape(only);
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --only: expected the id of a point, or a pattern matching one "
                    "(got \"%s\"; 'hetero-sim validate' lists them)", got);
        return FALSE;
    }
    n = k;
    if (!isnan(sens_pct)) {
        g_auto(GStrv) key_pats = keys ? g_strsplit(keys, ",", -1) : NULL;
        return hs_validate_sensitivity(rows, n, shown, (const char *const *) set, sens_pct,
                                       key_pats, derived, refit, format, error);
    }
    gboolean unexpected = FALSE;
    for (guint i = 0; i < n; i++) {
        unexpected = unexpected || (!rows[i].ok && (!rows[i].pt->known_miss || !allow_known));
    }
    if (format == HS_FORMAT_JSON) {
        print_json(rows, n, shown);
    } else {
        print_text(rows, n, shown, allow_known, unexpected);
    }
    if (out_dir && !write_out(out_dir, rows, n, error)) {
        return FALSE;
    }
    if (unexpected) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_UNSUPPORTED,
                    "validate: some points are outside their tolerance%s",
                    allow_known ? " and not declared known misses" : "");
        return FALSE;
    }
    return TRUE;
}

const HsCommand hs_cmd_validate = {
    "validate", "[--points FILE]", "published results side by side with the simulation", run,
};
