/*
 * report.c - printing one run (text, JSON, CSV: each written from the field
 * table, report-fields.h) and writing its trace; shared by run, compare and
 * replay.
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/report-fields.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/perfetto.h"

#include <stdio.h>

void
hs_run_print_text(const HwSoc *soc, const SimRunReport *r)
{
    g_autofree char *text = hs_report_text(soc, r);
    fputs(text, stdout);
}

/* One CSV row, after the header line if @header. */
void
hs_run_print_csv(const SimRunReport *r, gboolean header)
{
    if (header) {
        g_autofree char *h = hs_report_csv_header();
        fputs(h, stdout);
    }
    g_autofree char *row = hs_report_csv_row(r);
    fputs(row, stdout);
}

TrcTrace *
hs_run_trace_open(const char *path, GError **error)
{
    return trc_trace_open(path, error);
}

void
hs_run_trace_begin(TrcTrace *tr, const char *label, const HwSoc *soc, SimWorkload *w)
{
    g_autofree const char **names = g_new0(const char *, soc->devs->len + 1);
    for (guint i = 0; i < soc->devs->len; i++) {
        names[i] = ((HwDev *) g_ptr_array_index(soc->devs, i))->name;
    }
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    trc_trace_begin_run(tr, label, names, soc->devs->len, soc->control_cpu,
                        gpu ? gpu->index : UINT32_MAX);
    w->observer = &trc_trace_observer;
    w->observer_opaque = tr;
}

void
hs_run_trace_end(TrcTrace *tr, SimWorkload *w)
{
    trc_trace_end_run(tr);
    w->observer = NULL;
    w->observer_opaque = NULL;
}

gboolean
hs_run_trace_close(TrcTrace *tr, const HwSoc *soc, const char *model, const char *policy,
                   SimSyncMech sync, GError **error)
{
    const char *keys[] = { "soc", "model", "policy", "sync", NULL };
    const char *vals[] = { soc->name, model, policy, sim_sync_name[sync] };
    return trc_trace_close(tr, keys, vals, error);
}

void
hs_run_print(const HwSoc *soc, const SimRunReport *r, HsFormat format)
{
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = hs_report_json(soc, r);
        g_autofree char *s = hs_json_print(j, FALSE);
        printf("%s\n", s);
    } else if (format == HS_FORMAT_CSV) {
        hs_run_print_csv(r, TRUE);
    } else {
        hs_run_print_text(soc, r);
    }
}

char *
hs_run_failure(const SimRunReport *r, const char *plan_failure)
{
    if (plan_failure) {
        return g_strdup(plan_failure);
    }
    if (r->check.checked && !r->check.match) {
        return g_strdup_printf("policy %s computed wrong values: its %s differ from the "
                               "reference (max abs err %.3g of %.3g)", r->policy,
                               r->check.full ? "logits" : "hidden states", r->check.max_abs_err,
                               r->check.max_abs_ref);
    }
    return NULL;
}

gboolean
hs_run_print_checked(const HwSoc *soc, const SimRunReport *r, HsFormat format,
                     const char *plan_failure, cJSON *json_extra, GError **error)
{
    g_autofree char *why = hs_run_failure(r, plan_failure);
    g_autoptr(cJSON) extra = json_extra;
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = hs_report_json(soc, r);
        while (extra && extra->child) {
            cJSON *m = cJSON_DetachItemViaPointer(extra, extra->child);
            cJSON_AddItemToObject(j, m->string, m);
        }
        if (why) {
            cJSON_AddStringToObject(j, "failure", why);
        }
        g_autofree char *s = hs_json_print(j, FALSE);
        printf("%s\n", s);
    } else {
        if (why && format == HS_FORMAT_TEXT) {
            printf("FAILED: %s\n", why);
        }
        hs_run_print(soc, r, format);
    }
    if (why) {
        g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_MISMATCH, "%s", why);
        return FALSE;
    }
    return TRUE;
}

void
hs_progress_stderr(void *opaque, const char *what, uint64_t done, uint64_t total)
{
    if (done >= total) {
        fprintf(stderr, "\r%70s\r", "");              /* leave the line clean */
    } else {
        fprintf(stderr, "\r%s: %3d %%", what, (int) (100.0 * (double) done / (double) total));
    }
}
