/*
 * validate-sensitivity.c - `hetero-sim validate --sensitivity PCT`: how
 * much each published prediction rides on the constants no source gives.
 *
 * Every numeric key of a shipped config whose source begins "assumed"
 * (the configs' own word for a number chosen without a measurement) is
 * scaled down and up by PCT % in turn, everything else as shipped, and
 * the rows are evaluated again.  A stack key is changed where it is
 * defined and in every stack that inherits it ("base") without setting it
 * itself, as the file's value would reach them; a SoC key moves only the
 * rows run on that SoC.  Integer keys are rounded (at least one step).  A
 * scaled value its loader refuses (an efficiency above 1) is reported as
 * refused, the other direction kept.  The keys are ranked by the largest
 * change of any row's simulated value; the per-paper means of the errors
 * (as validate's table computes them) are given at both ends.
 *
 * Calibrated keys are not scaled.  They are held at their shipped values,
 * or with --refit each is fitted again (its spec in configs/calibration/,
 * as `hetero-sim calibrate` fits it) whenever the change moves what it was
 * fitted to, until none moves: then the rows that move are what the model
 * predicts differently, not what a fit would absorb.  The largest change
 * and the count of rows moved are over predicted rows (calibrated ones
 * are fits, not predictions).
 */
#include "sim/cli/validate.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "sim/util/override.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One end of a key's range: the rows at its value. */
typedef struct End {
    double factor;               /* the scale asked */
    gboolean integer;            /* the loader wanted integers: rounded */
    char *refused;               /* the loader's message (NULL: evaluated) */
    HsValidateRow *rows;
    double max_change_pct;       /* the largest |change| of a predicted row */
    guint argmax, moved;         /* that row; predicted rows moved by >= 1 % */
    GPtrArray *refit;            /* --refit: "PATH=VALUE" of the keys refitted */
} End;

typedef struct Result {
    const HsAssumed *a;
    End end[2];                  /* scaled down, up */
    double rank;                 /* the larger of the ends' max_change_pct */
    gboolean zero;               /* its value is 0: no scale changes it */
} Result;

/* @v scaled by @f; for a key its loader takes as an integer (@integer),
 * rounded, at least one step from @v */
static double
scaled(double v, double f, gboolean integer)
{
    double s = v * f;
    if (integer && f != 1) {
        s = round(s);
        if (s == v) {
            s = v + (f > 1 ? 1 : -1);
        }
    }
    return s;
}

static gboolean
evaluate(const HsValidateRow *base, guint n, const char *const *set, const HsAssumed *a,
         HsRefits *refits, End *e, GError **error)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *s = set; s && *s; s++) {
        g_ptr_array_add(args, g_strdup(*s));
    }
    for (guint i = 0; i < a->edits->len; i++) {
        const HsAssumedEdit *ed = &g_array_index(a->edits, HsAssumedEdit, i);
        g_ptr_array_add(args, g_strdup_printf("%s=%.17g", ed->path,
                                              scaled(ed->value, e->factor, e->integer)));
    }
    g_ptr_array_add(args, NULL);
    if (refits) {
        e->refit = g_ptr_array_new_with_free_func(g_free);
        if (!hs_refits_apply(refits, args, e->refit, &e->refused) || e->refused) {
            return TRUE;            /* refused: a fit failed under the value */
        }
    }
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) args->pdata, error);
    if (ovr == NULL) {
        return FALSE;
    }
    g_autoptr(HsPointCache) c = hs_point_cache_new(ovr);
    e->rows = g_new(HsValidateRow, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        e->rows[i] = base[i];
        if (a->soc && strcmp(base[i].pt->soc, a->soc) != 0) {
            continue;                   /* another SoC's file */
        }
        g_autoptr(GError) err = NULL;
        if (!hs_validate_eval(c, &e->rows[i], &err)) {
            /* the rows ran as shipped: the scaled value is what the loader
             * refuses (out of its range, or against another key) */
            e->refused = g_strdup(err->message);
            return TRUE;
        }
        double d = base[i].simulated != 0 && !base[i].pt->calibrated
                   ? 100.0 * (e->rows[i].simulated - base[i].simulated) / fabs(base[i].simulated)
                   : 0;
        if (fabs(d) > fabs(e->max_change_pct)) {
            e->max_change_pct = d;
            e->argmax = i;
        }
        e->moved += fabs(d) >= 1;
    }
    return TRUE;
}

static void
end_clear(End *e)
{
    g_clear_pointer(&e->rows, g_free);
    g_clear_pointer(&e->refused, g_free);
    g_clear_pointer(&e->refit, g_ptr_array_unref);
    e->max_change_pct = 0;
    e->argmax = e->moved = 0;
}

static int
by_rank(gconstpointer pa, gconstpointer pb)
{
    const Result *a = pa, *b = pb;
    if (a->rank != b->rank) {
        return a->rank > b->rank ? -1 : 1;
    }
    return strcmp(a->a->key, b->a->key);
}

/* "360", or an array's "540-875" */
static char *
value_text(const HsAssumed *a, const End *e)
{
    double f = e ? e->factor : 1;
    gboolean integer = e && e->integer;
    double lo = scaled(a->lo, f, integer), hi = scaled(a->hi, f, integer);
    return lo == hi ? g_strdup_printf("%.4g", lo) : g_strdup_printf("%.4g-%.4g", lo, hi);
}

static void
print_end(const Result *r, int i, const HsValidateRow *rows)
{
    const End *e = &r->end[i];
    g_autofree char *v = value_text(r->a, e);
    if (e->refused) {
        printf(" %s: refused |", v);
    } else if (e->max_change_pct == 0) {
        printf(" %s: none |", v);
    } else {
        printf(" %s: %s %+.1f %% |", v, rows[e->argmax].pt->id, e->max_change_pct);
    }
}

static void
print_text(const Result *res, guint nk, const HsValidateRow *rows, guint n, double pct,
           gboolean with_refit)
{
    printf("Sensitivity of the predictions to the assumed constants: each scaled by "
           "%g and %g (integers rounded), the rest as shipped, %s; %u row%s.\n"
           "Largest change of a predicted row's simulated value at each end; predicted rows "
           "moved by 1 %% or more; the mean error over predicted rows, all papers, at each "
           "end.\n\n", 1 - pct / 100, 1 + pct / 100,
           with_refit ? "each calibrated key refitted to what it was fitted to (--refit)"
                      : "calibrated keys held at their shipped values", n, n == 1 ? "" : "s");
    HsValidateSummary s0 = hs_validate_summarise(rows, n, NULL);
    printf("| key | file | value | lower: largest change | higher: largest change | "
           "rows moved | MAPE lower / higher (now %.1f %%) |\n|---|---|---|---|---|---|---|\n",
           s0.mape);
    GString *still = g_string_new(NULL);
    guint n_still = 0;
    for (guint k = 0; k < nk; k++) {
        const Result *r = &res[k];
        if (r->zero) {
            continue;
        }
        if (r->rank < 0.1 && !r->end[0].refused && !r->end[1].refused) {
            g_string_append_printf(still, "%s%s", n_still++ ? ", " : "", r->a->key);
            continue;
        }
        g_autofree char *v = value_text(r->a, NULL);
        printf("| %s | %s | %s |", r->a->key, r->a->file, v);
        print_end(r, 0, rows);
        print_end(r, 1, rows);
        printf(" %u |", MAX(r->end[0].moved, r->end[1].moved));
        for (int i = 0; i < 2; i++) {
            if (r->end[i].refused) {
                printf(" -%s", i ? " |" : " /");
            } else {
                HsValidateSummary s = hs_validate_summarise(r->end[i].rows, n, NULL);
                printf(" %.1f %%%s", s.mape, i ? " |" : " /");
            }
        }
        printf("\n");
    }
    for (guint k = 0; k < nk && with_refit; k++) {
        for (int i = 0; i < 2; i++) {
            const End *e = &res[k].end[i];
            if (e->refit && e->refit->len && res[k].rank >= 0.1) {
                g_autofree char *v = value_text(res[k].a, e);
                printf("%s%s at %s refitted", k + i ? "" : "\n", res[k].a->key, v);
                for (guint j = 0; j < e->refit->len; j++) {
                    printf("%s %s", j ? "," : "", (char *) g_ptr_array_index(e->refit, j));
                }
                printf("\n");
            }
        }
    }
    if (n_still) {
        printf("\nmoved no row by 0.1 %% or more (%u): %s\n", n_still, still->str);
    }
    for (guint k = 0, z = 0; k < nk; k++) {
        if (res[k].zero) {
            printf("%s%s", z++ ? ", " : "\n0, so not scaled: ", res[k].a->key);
        }
        if (k + 1 == nk && z) {
            printf("\n");
        }
    }
    for (guint k = 0; k < nk; k++) {
        for (int i = 0; i < 2; i++) {
            if (res[k].end[i].refused) {
                g_autofree char *v = value_text(res[k].a, &res[k].end[i]);
                printf("\n%s at %s refused: %s", res[k].a->key, v, res[k].end[i].refused);
            }
        }
    }
    g_string_free(still, TRUE);
    printf("\n%s\n", hs_provenance_line());
}

static cJSON *
end_json(const End *e, const HsValidateRow *rows, guint n, GPtrArray *files)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "factor", e->factor);
    cJSON_AddBoolToObject(o, "rounded", e->integer);
    if (e->refused) {
        cJSON_AddStringToObject(o, "refused", e->refused);
        return o;
    }
    if (e->refit) {
        cJSON *rf = cJSON_AddObjectToObject(o, "refit");
        for (guint i = 0; i < e->refit->len; i++) {
            const char *kv = g_ptr_array_index(e->refit, i);
            g_autofree char *path = g_strndup(kv, strcspn(kv, "="));
            cJSON_AddNumberToObject(rf, path, g_ascii_strtod(strchr(kv, '=') + 1, NULL));
        }
    }
    cJSON *moved = cJSON_AddObjectToObject(o, "rows");
    for (guint i = 0; i < n; i++) {
        if (e->rows[i].simulated != rows[i].simulated) {
            cJSON *r = cJSON_AddObjectToObject(moved, rows[i].pt->id);
            cJSON_AddNumberToObject(r, "simulated", e->rows[i].simulated);
            cJSON_AddNumberToObject(r, "change_pct",
                                    100.0 * (e->rows[i].simulated - rows[i].simulated) /
                                    fabs(rows[i].simulated));
        }
    }
    cJSON *mape = cJSON_AddObjectToObject(o, "mape_pct");
    for (guint f = 0; f <= files->len; f++) {
        const char *file = f < files->len ? g_ptr_array_index(files, f) : NULL;
        HsValidateSummary s = hs_validate_summarise(e->rows, n, file);
        cJSON_AddNumberToObject(mape, file ? file : "all", s.mape);
    }
    return o;
}

static void
print_json(const Result *res, guint nk, const HsValidateRow *rows, guint n, GPtrArray *files,
           double pct)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "pct", pct);
    cJSON *keys = cJSON_AddArrayToObject(root, "keys");
    for (guint k = 0; k < nk; k++) {
        const Result *r = &res[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", r->a->key);
        cJSON_AddStringToObject(o, "file", r->a->file);
        cJSON_AddStringToObject(o, "source", r->a->source);
        cJSON *edits = cJSON_AddObjectToObject(o, "set");
        for (guint i = 0; i < r->a->edits->len; i++) {
            const HsAssumedEdit *ed = &g_array_index(r->a->edits, HsAssumedEdit, i);
            cJSON_AddNumberToObject(edits, ed->path, ed->value);
        }
        if (r->zero) {
            cJSON_AddStringToObject(o, "not_scaled", "its value is 0");
        } else {
            cJSON_AddItemToObject(o, "lower", end_json(&r->end[0], rows, n, files));
            cJSON_AddItemToObject(o, "higher", end_json(&r->end[1], rows, n, files));
        }
        cJSON_AddItemToArray(keys, o);
    }
    cJSON_AddItemToObject(root, "provenance", hs_provenance_json());
    g_autofree char *text = hs_json_print(root, FALSE);
    printf("%s\n", text);
}

gboolean
hs_validate_sensitivity(const HsValidateRow *rows, guint n, GPtrArray *files,
                        const char *const *set, double pct, char **keys, gboolean derived,
                        gboolean with_refit, HsFormat format, GError **error)
{
    if (!(pct > 0 && pct < 100)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --sensitivity: expected a percentage in (0, 100) (got %g)", pct);
        return FALSE;
    }
    g_autoptr(GPtrArray) socs = g_ptr_array_new();
    for (guint i = 0; i < n; i++) {
        if (!g_ptr_array_find_with_equal_func(socs, rows[i].pt->soc, g_str_equal, NULL)) {
            g_ptr_array_add(socs, rows[i].pt->soc);
        }
    }
    g_autoptr(GPtrArray) assumed = hs_assumed_collect(socs, keys, derived, error);
    if (assumed == NULL) {
        return FALSE;
    }
    if (assumed->len == 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "validate: --keys: expected a pattern matching an assumed key such as "
                    "npu.stationary_kib or stack@heterollm.cpu.call_us (got none matching)");
        return FALSE;
    }
    g_autoptr(HsRefits) refits = with_refit ? hs_refits_load(set, error) : NULL;
    if (with_refit && refits == NULL) {
        return FALSE;
    }
    const guint nk = assumed->len;
    g_autofree Result *res = g_new0(Result, nk);
    const gboolean progress = isatty(STDERR_FILENO);
    gboolean ok = TRUE;
    for (guint k = 0; k < nk && ok; k++) {
        Result *r = &res[k];
        r->a = g_ptr_array_index(assumed, k);
        if (progress) {
            fprintf(stderr, "\rvalidate --sensitivity: key %u of %u", k + 1, nk);
        }
        if (r->a->lo == 0 && r->a->hi == 0) {
            r->zero = TRUE;
            r->rank = -1;
            continue;
        }
        for (int i = 0; i < 2 && ok; i++) {
            End *e = &r->end[i];
            e->factor = i ? 1 + pct / 100 : 1 - pct / 100;
            ok = evaluate(rows, n, set, r->a, refits, e, error);
            if (ok && e->refused && strstr(e->refused, "expected an integer")) {
                /* an integer key (cores, arrays): again, rounded */
                end_clear(e);
                e->integer = TRUE;
                ok = evaluate(rows, n, set, r->a, refits, e, error);
            }
            r->rank = MAX(r->rank, fabs(r->end[i].max_change_pct));
        }
    }
    if (progress) {
        fprintf(stderr, "\r%*s\r", 48, "");
    }
    if (ok) {
        qsort(res, nk, sizeof(Result), by_rank);
        if (format == HS_FORMAT_JSON) {
            print_json(res, nk, rows, n, files, pct);
        } else {
            print_text(res, nk, rows, n, pct, with_refit);
        }
    }
    for (guint k = 0; k < nk; k++) {
        end_clear(&res[k].end[0]);
        end_clear(&res[k].end[1]);
    }
    return ok;
}
