/*
 * cmd-run.c - `hetero-sim run`: simulate one request under one policy.
 */
#include "sim/cli/run-opts.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/perfetto.h"

#include <stdio.h>
#include <string.h>

static void
print_text(const HwSoc *soc, const SimRunReport *r)
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
    if (r->check.checked) {
        const char *verdict = r->check.match ? "match"
                              : r->check.precision_changed ? "differ (expected: some tasks ran "
                                                             "at another precision) from"
                              : "DIFFER FROM (wrong numbers)";
        printf("  values: %s %s the unpartitioned reference (%s%u layer%s; max abs err %.3g "
               "of %.3g)\n", r->check.full ? "logits" : "hidden states", verdict,
               r->check.full ? "all " : "first ", r->check.layers,
               r->check.layers == 1 ? "" : "s", r->check.max_abs_err, r->check.max_abs_ref);
    } else {
        printf("  values: not checked (--functional off)\n");
    }
    printf("  simulated %" G_GUINT64_FORMAT " tasks, %" G_GUINT64_FORMAT
           " events in %.2f s\n", r->tasks, r->events, r->wall_s);
}

static void
print_csv(const SimRunReport *r, gboolean header)
{
    if (header) {
        printf("soc,model,policy,sync,prompt,decode,batch,prefill_ms,prefill_tokens_per_s,"
               "decode_ms,decode_tokens_per_s,tpot_ms,ttft_ms,prefill_gbps,decode_gbps,"
               "peak_gbps,prefill_j,decode_j,prefill_w,decode_w\n");
    }
    printf("%s,%s,%s,%s,%u,%u,%u,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f,%.3f,%.5f,"
           "%.5f,%.4f,%.4f\n", r->soc, r->model, r->policy,
           sim_sync_name[r->workload.sync], r->workload.prompt, r->workload.decode,
           r->workload.batch, r->prefill.time_ms, r->prefill.tokens_per_s,
           r->decode.time_ms, r->decode.tokens_per_s, r->tpot_ms, r->ttft_ms,
           r->prefill.dram_gbps, r->decode.dram_gbps, r->peak_gbps, r->prefill.energy_j,
           r->decode.energy_j, r->prefill.avg_w, r->decode.avg_w);
}

void hs_run_print_csv(const SimRunReport *r, gboolean header);

void
hs_run_print_csv(const SimRunReport *r, gboolean header)
{
    print_csv(r, header);
}

static gboolean
write_trace(const char *path, const HwSoc *soc, const SimPlan *plan,
            const SimExecResult *x, const SimRunReport *r, GError **error)
{
    g_autofree const char **names = g_new0(const char *, soc->devs->len + 1);
    for (guint i = 0; i < soc->devs->len; i++) {
        names[i] = ((HwDev *) g_ptr_array_index(soc->devs, i))->name;
    }
    const char *keys[] = { "soc", "model", "policy", "sync", NULL };
    const char *vals[] = { r->soc, r->model, r->policy, sim_sync_name[r->workload.sync] };
    TrcInput in = {
        plan, x->times, names, soc->devs->len,
        (const SimBwSample *) x->bw->data, x->bw->len, keys, vals,
    };
    return trc_perfetto_write(path, &in, error);
}

static gboolean
run(int argc, char **argv, GError **error)
{
    HsRunOpts o;
    g_autofree GOptionEntry *common = hs_run_opts_entries(&o);
    g_autofree char *policy_name = NULL;
    gboolean help = FALSE;
    GOptionEntry extra[] = {
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &policy_name,
          "Scheduling policy from 'list policies' (default hetero-tensor)", "POLICY" },
        { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace,
          "Write a Perfetto / Chrome trace JSON (open at ui.perfetto.dev)", "FILE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    guint nc = 0;
    while (common[nc].long_name) {
        nc++;
    }
    g_autofree GOptionEntry *all = g_new0(GOptionEntry, nc + G_N_ELEMENTS(extra));
    memcpy(all, extra, sizeof(GOptionEntry) * 2);
    memcpy(all + 2, common, sizeof(GOptionEntry) * nc);

    gboolean ok = hs_cli_parse("run", NULL,
                               "Simulate one request (prefill, then decode steps) of a "
                               "model on a SoC under one scheduling policy.",
                               all, &argc, &argv, &help, error);
    if (ok && !help) {
        ok = hs_cli_no_extra_args(argc, argv, 0, error);
    }
    if (!ok || help) {
        hs_run_opts_clear(&o);
        return ok;
    }
    HsFormat format;
    g_autoptr(HwSoc) soc = NULL;
    g_autoptr(MdlSpec) spec = NULL;
    SimWorkload w;
    const SimPolicy *policy = NULL;
    SimRunReport r = { 0 };
    SimExecResult x = { 0 };
    g_autoptr(SimPlan) plan = NULL;

    ok = hs_run_opts_resolve(&o, HS_FORMATS_ALL, &format, &soc, &spec, &w, error) &&
         (policy = hs_run_opts_policy(&o, policy_name ? policy_name : "hetero-tensor",
                                      error)) != NULL &&
         sim_run(soc, spec, policy, &w, NULL, &r, &x, &plan, error);
    if (ok && o.trace) {
        ok = write_trace(o.trace, soc, plan, &x, &r, error);
    }
    if (ok) {
        if (format == HS_FORMAT_JSON) {
            g_autoptr(cJSON) j = hs_run_report_json(soc, &r);
            g_autofree char *s = hs_json_print(j, FALSE);
            printf("%s\n", s);
        } else if (format == HS_FORMAT_CSV) {
            print_csv(&r, TRUE);
        } else {
            print_text(soc, &r);
        }
    }
    sim_exec_result_clear(&x);
    sim_run_report_clear(&r);
    hs_run_opts_clear(&o);
    return ok;
}

const HsCommand hs_cmd_run = {
    "run", "[--policy P] [options]", "simulate one request under one policy", run,
};
