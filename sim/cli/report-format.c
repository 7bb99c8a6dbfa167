/*
 * report-format.c - a run's report as JSON, text and CSV, each written
 * from the field table (report-fields.h).
 */
#include "sim/cli/report-fields.h"

#include <inttypes.h>
#include <string.h>

/* --- JSON --- */

/* The object at @path (dot-separated) under @root, made where missing. */
static cJSON *
json_object_at(cJSON *root, char **parts, guint n)
{
    cJSON *o = root;
    for (guint i = 0; i < n; i++) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(o, parts[i]);
        o = c ? c : cJSON_AddObjectToObject(o, parts[i]);
    }
    return o;
}

static void
json_add(cJSON *o, const char *key, const HsReportField *f, const SimRunReport *r)
{
    switch (f->type) {
    case HS_FIELD_NAME: {
        g_autofree char *s = f->name_of(r);
        cJSON_AddStringToObject(o, key, s);
        break;
    }
    case HS_FIELD_COUNT:
        cJSON_AddNumberToObject(o, key, *(const uint32_t *) hs_report_field_ptr(f, r));
        break;
    case HS_FIELD_U64:
        cJSON_AddNumberToObject(o, key, (double) *(const uint64_t *) hs_report_field_ptr(f, r));
        break;
    case HS_FIELD_BOOL:
        cJSON_AddBoolToObject(o, key, *(const gboolean *) hs_report_field_ptr(f, r));
        break;
    case HS_FIELD_REAL:
        cJSON_AddNumberToObject(o, key, hs_report_field_value(f, r));
        break;
    case HS_FIELD_PER_PROC:
    default:
        g_assert_not_reached();
    }
}

cJSON *
hs_report_json(const HwSoc *soc, const SimRunReport *r)
{
    cJSON *root = cJSON_CreateObject();
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (!hs_report_field_present(f, r)) {
            continue;
        }
        g_auto(GStrv) parts = g_strsplit(f->json_path, ".", -1);
        guint n = g_strv_length(parts);
        if (f->type != HS_FIELD_PER_PROC) {
            json_add(json_object_at(root, parts, n - 1), parts[n - 1], f, r);
            continue;
        }
        /* "a.*.b": a.<device>.b for each processor; "a.*": a.<device>,
         * for the processors with a share (the object made even if none) */
        guint star = 0;
        while (strcmp(parts[star], "*") != 0) {
            star++;
        }
        cJSON *base = json_object_at(root, parts, star);
        const double *v = *(double *const *) hs_report_field_ptr(f, r);
        for (uint32_t p = 0; p < r->n_procs; p++) {
            const HwDev *d = g_ptr_array_index(soc->devs, p);
            if (star + 1 == n) {
                if (v[p] > 0) {
                    cJSON_AddNumberToObject(base, d->name, v[p]);
                }
                continue;
            }
            char *star_part = parts[star];
            parts[star] = (char *) d->name;
            cJSON *o = json_object_at(base, parts + star, n - 1 - star);
            parts[star] = star_part;
            cJSON_AddNumberToObject(o, parts[n - 1], v[p]);
        }
    }
    return root;
}

/* --- text --- */

static gboolean
text_shown(const HsReportField *f, const SimRunReport *r)
{
    if (f->text_at == 0 || !hs_report_field_present(f, r)) {
        return FALSE;
    }
    switch (f->text_when) {
    case HS_WHEN_DECODE:
        return r->workload.decode > 0;
    case HS_WHEN_NONZERO:
        return f->type != HS_FIELD_REAL || hs_report_field_value(f, r) != 0;
    default:
        return hs_report_field_present(&(HsReportField) { .when = f->text_when }, r);
    }
}

static gint
by_text_at(gconstpointer a, gconstpointer b)
{
    const HsReportField *x = *(const HsReportField *const *) a;
    const HsReportField *y = *(const HsReportField *const *) b;
    return x->text_at < y->text_at ? -1 : x->text_at > y->text_at;
}

char *
hs_report_text(const HwSoc *soc, const SimRunReport *r)
{
    g_autoptr(GPtrArray) shown = g_ptr_array_new();
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (text_shown(f, r)) {
            g_ptr_array_add(shown, (gpointer) f);
        }
    }
    g_ptr_array_sort(shown, by_text_at);
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < shown->len; i++) {
        const HsReportField *f = shown->pdata[i];
        if (i > 0 && f->text_at / 100 != ((const HsReportField *) shown->pdata[i - 1])->text_at / 100) {
            g_string_append_c(out, '\n');
        }
        if (f->text_fn) {
            f->text_fn(out, f, soc, r);
            continue;
        }
        switch (f->type) {
        case HS_FIELD_NAME: {
            g_autofree char *s = f->name_of(r);
            g_string_append_printf(out, f->text_format, s);
            break;
        }
        case HS_FIELD_COUNT:
            g_string_append_printf(out, f->text_format, *(const uint32_t *) hs_report_field_ptr(f, r));
            break;
        case HS_FIELD_U64:
            g_string_append_printf(out, f->text_format, *(const uint64_t *) hs_report_field_ptr(f, r));
            break;
        case HS_FIELD_REAL:
            g_string_append_printf(out, f->text_format, hs_report_field_value(f, r));
            break;
        default:
            g_assert_not_reached();
        }
    }
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}

/* --- CSV --- */

char *
hs_report_csv_header(void)
{
    GString *out = g_string_new(NULL);
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (hs_report_field_is_column(f)) {
            g_string_append_printf(out, "%s%s", out->len ? "," : "", f->name);
        }
    }
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}

char *
hs_report_csv_row(const SimRunReport *r)
{
    GString *out = g_string_new(NULL);
    gboolean first = TRUE;
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        if (hs_report_field_is_column(f)) {
            g_autofree char *cell = hs_report_field_text(f, r);
            g_string_append_printf(out, "%s%s", first ? "" : ",", cell);
            first = FALSE;
        }
    }
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}
