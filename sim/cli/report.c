/*
 * report.c - printing one run (text, JSON, CSV) and writing its trace; shared
 * by run, compare and replay.
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/report-fields.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/perfetto.h"

#include <stdio.h>

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

void
hs_run_print_text(const HwSoc *soc, const SimRunReport *r)
{
    printf("%s on %s, policy %s, sync %s: prompt %u, decode %u x batch %u\n",
           r->model, r->soc, r->policy, sim_sync_name[r->workload.sync],
           r->workload.prompt, r->workload.decode, r->workload.batch);
    printf("  prefill  %10.2f ms  %9.2f tokens/s  %6.1f GB/s  %7.3f J  %5.2f W\n",
           r->prefill.time_ms, r->prefill.tokens_per_s, r->prefill.dram_gbps,
           r->prefill.energy_j, r->prefill.avg_w);
    if (r->workload.decode > 0) {
        printf("  decode   %10.2f ms  %9.2f tokens/s  %6.1f GB/s  %7.3f J  %5.2f W"
               "  (%.2f ms per token)\n", r->decode.time_ms, r->decode.tokens_per_s,
               r->decode.dram_gbps, r->decode.energy_j, r->decode.avg_w, r->tpot_ms);
    }
    printf("  TTFT %.2f ms, DRAM peak %.1f GB/s of %.0f\n", r->ttft_ms, r->peak_gbps,
           soc->mem.peak_gbps);
    for (uint32_t p = 0; p < r->n_procs; p++) {
        const HwDev *d = g_ptr_array_index(soc->devs, p);
        printf("  %-6s busy %10.2f ms  (%5.1f %%)\n", d->name, r->busy_ms[p],
               100.0 * r->util[p]);
    }
    g_autofree char *hot = hs_run_hot_op_text(soc, r);
    if (hot) {
        printf("  heaviest op: %s\n", hot);
    }
    if (r->workload.render.fps > 0) {
        printf("  render %.0f FPS target, LLM at %s priority: %.1f FPS during prefill",
               r->workload.render.fps,
               r->workload.render.llm_priority == HW_PRIO_LOW ? "low" : "normal",
               r->render_fps_prefill);
        if (r->workload.decode > 0) {
            printf(", %.1f during decode", r->render_fps_decode);
        }
        printf("; %.0f %% of vsyncs on time, worst frame %.1f ms\n", r->render_on_time_pct,
               r->render_worst_ms);
    }
    if (r->check.checked) {
        const char *what = r->check.full ? "logits" : "hidden states";
        g_autofree char *scope = g_strdup_printf("%s%u layer%s", r->check.full ? "all " : "first ",
                                                 r->check.layers,
                                                 r->check.layers == 1 ? "" : "s");
        if (r->check.precision_changed) {
            printf("  values: %s %s the plan's own arithmetic done in order (%s; max abs err "
                   "%.3g of %.3g); some tasks ran at another precision: %.3g from the FP "
                   "reference\n", what, r->check.match ? "match" : "DIFFER FROM (wrong numbers)",
                   scope, r->check.max_abs_err, r->check.max_abs_ref, r->check.precision_err);
        } else {
            printf("  values: %s %s the unpartitioned reference (%s; max abs err %.3g of %.3g); "
                   "%.3g from the FP reference\n",
                   what, r->check.match ? "match" : "DIFFER FROM (wrong numbers)", scope,
                   r->check.max_abs_err, r->check.max_abs_ref, r->check.precision_err);
        }
        g_autofree char *weights = sim_workload_weights(&r->workload);
        printf("  values checked on weights: %s\n", weights);
    } else {
        printf("  values: not checked (--functional off)\n");
    }
    printf("  simulated %" G_GUINT64_FORMAT " tasks, %" G_GUINT64_FORMAT
           " events in %.2f s\n", r->tasks, r->events, r->wall_s);
}

/* One CSV row, columns from the report's field table (report-fields.h). */
static void
print_csv(const SimRunReport *r, gboolean header)
{
    if (header) {
        for (const HsReportField *f = hs_report_fields; f->name; f++) {
            printf("%s%s", f == hs_report_fields ? "" : ",", f->name);
        }
        printf(",values_match,max_abs_err,precision_err,heaviest_op,heaviest_op_share\n");
    }
    for (const HsReportField *f = hs_report_fields; f->name; f++) {
        g_autofree char *cell = hs_report_field_text(f, r);
        printf("%s%s", f == hs_report_fields ? "" : ",", cell);
    }
    /* the values check (empty when off) and where prefill time went */
    if (r->check.checked) {
        printf(",%s,%.6g,", r->check.match ? "true" : "false", r->check.max_abs_err);
        if (r->check.precision_changed) {
            printf("%.6g", r->check.precision_err);
        }
    } else {
        printf(",,,");
    }
    printf(",%s,%.4f\n", r->hot_op, r->hot_op[0] ? r->hot_time_share : 0.0);
}

void
hs_run_print_csv(const SimRunReport *r, gboolean header)
{
    print_csv(r, header);
}

gboolean
hs_run_write_trace(const char *path, const HwSoc *soc, const SimPlan *plan,
            const SimExecResult *x, const SimRunReport *r, GError **error)
{
    g_autofree const char **names = g_new0(const char *, soc->devs->len + 1);
    for (guint i = 0; i < soc->devs->len; i++) {
        names[i] = ((HwDev *) g_ptr_array_index(soc->devs, i))->name;
    }
    const char *keys[] = { "soc", "model", "policy", "sync", NULL };
    const char *vals[] = { r->soc, r->model, r->policy, sim_sync_name[r->workload.sync] };
    const HwDev *gpu = hw_soc_find_kind(soc, HW_KIND_GPU);
    TrcInput in = {
        plan, x->times, names, soc->devs->len,
        (const SimBwSample *) x->bw->data, x->bw->len, keys, vals,
        x->control ? (const HwSpan *) x->control->data : NULL,
        x->control ? x->control->len : 0, x->control_proc,
        x->frames ? (const SimFrame *) x->frames->data : NULL,
        x->frames ? x->frames->len : 0, gpu ? gpu->index : UINT32_MAX,
        x->preemptions ? (const SimPreemption *) x->preemptions->data : NULL,
        x->preemptions ? x->preemptions->len : 0,
    };
    return trc_perfetto_write(path, &in, error);
}

void
hs_run_print(const HwSoc *soc, const SimRunReport *r, HsFormat format)
{
    if (format == HS_FORMAT_JSON) {
        g_autoptr(cJSON) j = hs_run_report_json(soc, r);
        g_autofree char *s = hs_json_print(j, FALSE);
        printf("%s\n", s);
    } else if (format == HS_FORMAT_CSV) {
        print_csv(r, TRUE);
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
        g_autoptr(cJSON) j = hs_run_report_json(soc, r);
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
