/*
 * cmd-replay.c - `hetero-sim replay FILE`: re-run a recording.
 *
 *   same SoC, no --policy   the recorded plan again: identical results
 *   --soc S                 the same plan re-timed on another SoC
 *   --policy P              the recorded workload re-planned by P
 *   --sync M                the recorded plan with another sync mechanism
 */
#include "sim/cli/run-opts.h"
#include "sim/util/error.h"
#include "traces/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE;
    g_autofree char *soc_name = NULL, *policy_name = NULL, *sync = NULL, *trace = NULL;
    g_autofree char *format_name = NULL, *functional = NULL;
    GOptionEntry entries[] = {
        { "soc", 's', 0, G_OPTION_ARG_STRING, &soc_name,
          "Re-time on this SoC (default: the one recorded)", "SOC" },
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &policy_name,
          "Re-plan the recorded workload with this policy", "POLICY" },
        { "sync", 0, 0, G_OPTION_ARG_STRING, &sync,
          "Run the plan's syncs with this mechanism: driver or fast", "MECH" },
        { "functional", 0, 0, G_OPTION_ARG_STRING, &functional,
          "Values check: off, layers=N or full (default: as recorded)", "MODE" },
        { "trace", 't', 0, G_OPTION_ARG_FILENAME, &trace,
          "Write a Perfetto / Chrome trace JSON", "FILE" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Output: text, json or csv (default text)", "FMT" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!hs_cli_parse("replay", "FILE", "Re-run a recording made with 'run --record FILE'.",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_format(format_name, HS_FORMATS_ALL, &format, error)) {
        return FALSE;
    }
    if (argc < 2) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "replay: missing FILE (see 'hetero-sim replay --help')");
        return FALSE;
    }
    if (!hs_cli_no_extra_args(argc, argv, 1, error)) {
        return FALSE;
    }
    g_autoptr(TrcRecording) rec = trc_record_read(argv[1], error);
    if (rec == NULL) {
        return FALSE;
    }
    SimWorkload w = rec->workload;
    w.progress = isatty(fileno(stderr)) ? hs_progress_stderr : NULL;
    if (sync) {
        if (strcmp(sync, "driver") != 0 && strcmp(sync, "fast") != 0) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--sync: expected driver or fast (got \"%s\")", sync);
            return FALSE;
        }
        w.sync = strcmp(sync, "driver") == 0 ? SIM_SYNC_DRIVER : SIM_SYNC_FAST;
    }
    if (functional && !sim_functional_parse(functional, &w.check_layers)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--functional: expected off, full or layers=N with N in [1, 1000] "
                    "(got \"%s\")", functional);
        return FALSE;
    }
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autoptr(HwSoc) soc = hw_soc_load(soc_name ? soc_name : rec->soc, configs, error);
    if (soc == NULL) {
        return FALSE;
    }
    g_autoptr(SimPlan) plan = NULL;
    const char *policy = rec->policy;
    if (policy_name) {
        const SimPolicy *p = sim_policy_find(policy_name);
        if (p == NULL) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "unknown policy \"%s\" (see 'hetero-sim list policies')", policy_name);
            return FALSE;
        }
        plan = sim_run_plan(soc, rec->spec, p, &w, NULL, error);
        policy = p->name;
    } else {
        plan = trc_record_plan_for(rec, soc, error);
        if (plan && sync) {
            for (uint32_t i = 0; i < sim_plan_len(plan); i++) {
                SimTask *t = sim_plan_task(plan, i);
                if (t->kind == SIM_TASK_SYNC) {
                    t->sync = w.sync;
                }
            }
        }
    }
    if (plan == NULL) {
        g_prefix_error(error, "%s: ", argv[1]);
        return FALSE;
    }
    SimRunReport r = { 0 };
    SimExecResult x = { 0 };
    gboolean ok = sim_run_execute(soc, rec->spec, policy, plan, &w, NULL, &r, &x, error);
    if (ok && trace) {
        ok = hs_run_write_trace(trace, soc, plan, &x, &r, error);
    }
    if (ok) {
        hs_run_print(soc, &r, format);
    }
    sim_exec_result_clear(&x);
    sim_run_report_clear(&r);
    return ok;
}

const HsCommand hs_cmd_replay = {
    "replay", "FILE [--soc S] [--policy P]", "re-run a recording, on another SoC or policy", run,
};
