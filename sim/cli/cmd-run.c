/*
 * cmd-run.c - `hetero-sim run`: simulate one request under one policy.
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/record.h"

#include <stdio.h>
#include <unistd.h>
#include <string.h>

static gboolean
run(int argc, char **argv, GError **error)
{
    HsRunOpts o;
    g_autofree char *policy_name = NULL, *record = NULL;
    gboolean help = FALSE;
    GOptionEntry extra[] = {
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &policy_name,
          "Scheduling policy from 'list policies' (default hetero-tensor, or the "
          "--policy-plugin's)", "POLICY" },
        { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace,
          "Write a Perfetto / Chrome trace JSON (open at ui.perfetto.dev)", "FILE" },
        { "record", 'r', 0, G_OPTION_ARG_FILENAME, &record,
          "Write a recording (workload + plan) that 'hetero-sim replay' re-runs", "FILE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    gboolean ok = hs_run_opts_parse("run",
                                    "Simulate one request (prefill, then decode steps) of a "
                                    "model on a SoC under one scheduling policy.",
                                    extra, &o, &argc, &argv, &help, error);
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

    ok = hs_run_opts_resolve(&o, HS_FORMATS_ALL, &format, &soc, &spec, &w, error);
    w.progress = isatty(fileno(stderr)) ? hs_progress_stderr : NULL;
    ok = ok &&
         (policy = hs_run_opts_policy(&o, policy_name, error)) != NULL &&
         /* without a trace or a recording to write, the run is streamed
          * (memory flat in decode steps: sim_run) */
         sim_run(soc, spec, policy, &w, NULL, &r, o.trace ? &x : NULL,
                 o.trace || record ? &plan : NULL, error);
    if (ok && o.trace) {
        ok = hs_run_write_trace(o.trace, soc, plan, &x, &r, error);
    }
    if (ok && record) {
        ok = trc_record_write(record, soc, spec, policy->name, &w, plan, error);
    }
    if (ok) {
        cJSON *json = cJSON_CreateObject();
        cJSON_AddItemToObject(json, "config", hs_config_json(o.ovr, soc, spec, &w));
        ok = hs_run_print_checked(soc, &r, format, NULL, json, error);
    }
    sim_exec_result_clear(&x);
    sim_run_report_clear(&r);
    hs_run_opts_clear(&o);
    return ok;
}

const HsCommand hs_cmd_run = {
    "run", "[--policy P] [options]", "simulate one request under one policy", run,
};
