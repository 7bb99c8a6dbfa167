/*
 * cmd-run.c - `hetero-sim run`: simulate one request under one policy.
 */
#include "hw/stack.h"
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/perfetto.h"
#include "traces/record.h"

#include <stdio.h>
#include <unistd.h>
#include <string.h>

/* "A:B" -> decode steps A..B. */
static gboolean
parse_steps(const char *text, uint32_t *a, uint32_t *b, GError **error)
{
    guint64 x = 0, y = 0;
    g_auto(GStrv) parts = g_strsplit(text, ":", 3);
    if (g_strv_length(parts) != 2 || !g_ascii_string_to_unsigned(parts[0], 10, 0, G_MAXUINT32, &x,
                                                               NULL) ||
        !g_ascii_string_to_unsigned(parts[1], 10, 0, G_MAXUINT32, &y, NULL) || x > y) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "run: --trace-steps: expected A:B, decode steps 0 <= A <= B (got \"%s\")",
                    text);
        return FALSE;
    }
    *a = (uint32_t) x;
    *b = (uint32_t) y;
    return TRUE;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    HsRunOpts o;
    g_autofree char *policy_name = NULL, *record = NULL, *steps = NULL, *out = NULL;
    gboolean help = FALSE, no_prefill = FALSE;
    GOptionEntry extra[] = {
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &policy_name,
          "Scheduling policy from 'list policies' (default hetero-tensor, or the "
          "--policy-plugin's)", "POLICY" },
        { "trace", 't', 0, G_OPTION_ARG_FILENAME, &o.trace,
          "Write a Perfetto / Chrome trace JSON (open at ui.perfetto.dev)", "FILE" },
        { "trace-steps", 0, 0, G_OPTION_ARG_STRING, &steps,
          "Trace only decode steps A to B (from 0) and the prefill", "A:B" },
        { "trace-no-prefill", 0, 0, G_OPTION_ARG_NONE, &no_prefill,
          "Leave the prefill out of the trace", NULL },
        { "record", 'r', 0, G_OPTION_ARG_FILENAME, &record,
          "Write a recording (workload + plan) that 'hetero-sim replay' re-runs", "FILE" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Write a run directory: config.json, report.json, report.csv, trace.json, "
          "recording.json, summary.txt (all or none; 'replay DIR' re-runs it)", "DIR" },
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
    g_autoptr(TrcTrace) tr = NULL;
    g_autoptr(TrcRecordWriter) rec = NULL;
    uint32_t step_a = 0, step_b = UINT32_MAX;

    g_autoptr(HsRunDir) rd = NULL;
    ok = hs_run_opts_resolve(&o, HS_FORMATS_ALL, &format, &soc, &spec, &w, error);
    if (ok) {
        hs_run_opts_warn_noop(&o, soc, spec, &w);
        hs_provenance_config(o.soc, o.model, o.stack, soc, spec, &w);
    }
    if (ok && out && (o.trace || record)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "run: --out DIR writes DIR/trace.json and DIR/recording.json itself: "
                    "drop --trace and --record");
        ok = FALSE;
    }
    if (ok && out) {
        ok = (rd = hs_run_dir_open(out, error)) != NULL;
    }
    const char *trace_path = rd ? hs_run_dir_trace(rd) : o.trace;
    const char *record_path = rd ? hs_run_dir_recording(rd) : record;
    w.progress = isatty(fileno(stderr)) ? hs_progress_stderr : NULL;
    ok = ok && (policy = hs_run_opts_policy(&o, policy_name, error)) != NULL &&
         (steps == NULL || parse_steps(steps, &step_a, &step_b, error));
    if (ok) {
        const char *key = o.stack ? o.stack : policy->stack ? policy->stack : SIM_DEFAULT_STACK;
        const HwStack *st = hw_soc_stack(soc, key, NULL);
        hs_config_warn_other_targets(o.set, "stack", st ? st->name : key, "this run's");
    }
    if (ok && (steps || no_prefill) && !trace_path) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "run: --trace-steps and --trace-no-prefill need --trace FILE");
        ok = FALSE;
    }
    /* the trace and the recording are written as the run goes: a run with
     * neither values check nor times to give back is streamed (memory flat
     * in decode steps: sim_run) */
    if (ok && trace_path) {
        ok = (tr = hs_run_trace_open(trace_path, error)) != NULL;
    }
    if (ok && tr) {
        trc_trace_set_steps(tr, step_a, step_b, !no_prefill);
        hs_run_trace_begin(tr, NULL, soc, &w);
    }
    if (ok && record_path) {
        g_autoptr(cJSON) prov = hs_provenance_with_config(o.ovr, soc, spec, &w, policy->name,
                                                          o.stack);
        ok = (rec = trc_record_open_with(record_path, soc, spec, policy->name, &w, prov,
                                         error)) != NULL;
        w.planned = trc_record_add;
        w.planned_opaque = rec;
    }
    ok = ok && sim_run(soc, spec, policy, &w, NULL, &r, NULL, NULL, error);
    if (ok && tr) {
        hs_run_trace_end(tr, &w);
        ok = hs_run_trace_close(g_steal_pointer(&tr), soc, spec->name, policy->name, w.sync,
                                error);
    }
    if (ok && rec) {
        ok = trc_record_close(g_steal_pointer(&rec), error);
    }
    if (ok) {
        /* a SoC or model given as a file is said as one (provenance) */
        r.soc = hs_provenance_soc();
        r.model = hs_provenance_model();
        if (o.stack) {
            r.stack = hs_provenance_label(o.stack, r.stack);
        }
        cJSON *json = cJSON_CreateObject();
        cJSON_AddItemToObject(json, "config", hs_config_json(o.ovr, soc, spec, &w));
        if (rd) {
            g_autoptr(cJSON) c = hs_config_request(o.ovr, soc, spec, &w, policy->name, o.stack);
            hs_run_dir_set_config(rd, c);
        }
        ok = hs_run_output(soc, &r, format, NULL, json, rd, error);
    }
    sim_run_report_clear(&r);
    hs_run_opts_clear(&o);
    return ok;
}

const HsCommand hs_cmd_run = {
    "run", "[--policy P] [options]", "simulate one request under one policy", run,
};
