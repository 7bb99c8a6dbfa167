/*
 * cmd-replay.c - `hetero-sim replay FILE`: re-run a recording.
 *
 *   same SoC, no --policy   the recorded plan again: identical results
 *   --soc S                 the same plan re-timed on another SoC (placements
 *                           as planned for the recorded one; a note says so)
 *   --soc S --replan        the recorded workload re-planned by the recorded
 *                           policy for S: what that SoC would really run
 *   --policy P              the recorded workload re-planned by P
 *   --sync M                the recorded plan with another sync mechanism
 *   --model DIR             the values checked on DIR's weights (a Hugging
 *                           Face directory of the recorded model's shapes)
 *
 * Re-timing stays the default so `replay FILE` is the recorded run; the
 * what-if "a better NPU" needs --replan, as the plan decides how much work
 * the NPU gets (README, "Recording and replaying").
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/cli/report-fields.h"
#include "sim/util/json.h"
#include "sim/util/error.h"
#include "sim/util/json.h"
#include "traces/perfetto.h"
#include "traces/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --model DIR: a directory whose config gives @spec's shapes; its weights
 * check the values. */
static gboolean
weights_of(const char *dir, const MdlSpec *spec, SimWorkload *w, GError **error)
{
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--model: expected a model directory (config.json + *.safetensors) "
                    "(got \"%s\")", dir);
        return FALSE;
    }
    g_autoptr(MdlSpec) d = hs_config_load_model(dir, NULL, error);
    if (d == NULL) {
        return FALSE;
    }
    const struct {
        const char *key;
        uint64_t want, got;
    } keys[] = {
        { "hidden_size", spec->hidden_size, d->hidden_size },
        { "intermediate_size", spec->intermediate_size, d->intermediate_size },
        { "num_hidden_layers", spec->num_hidden_layers, d->num_hidden_layers },
        { "num_attention_heads", spec->num_attention_heads, d->num_attention_heads },
        { "num_key_value_heads", spec->num_key_value_heads, d->num_key_value_heads },
        { "head_dim", spec->head_dim, d->head_dim },
        { "vocab_size", spec->vocab_size, d->vocab_size },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (keys[i].want != keys[i].got) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: $.%s: expected the recorded model's %" G_GUINT64_FORMAT
                        " (got %" G_GUINT64_FORMAT ")", d->path ? d->path : dir, keys[i].key,
                        keys[i].want, keys[i].got);
            return FALSE;
        }
    }
    w->weights_dir = dir;
    return TRUE;
}

/* A compare directory (compare --out DIR) holds no recording of its own
 * but a run directory per policy: FALSE, naming them.  TRUE for any other
 * folder (its missing recording.json is then said by the reader). */
static gboolean
compare_dir_refused(const char *dir, GError **error)
{
    g_autofree char *cfg_path = g_build_filename(dir, "config.json", NULL);
    g_autoptr(cJSON) cfg = g_file_test(cfg_path, G_FILE_TEST_EXISTS)
                           ? hs_json_load_file(cfg_path, HS_CONFIG_ERROR, NULL) : NULL;
    const cJSON *pols = cJSON_GetObjectItemCaseSensitive(cfg, "policies");
    if (!cJSON_IsArray(pols)) {
        return TRUE;
    }
    g_autoptr(GString) which = g_string_new(NULL);
    const cJSON *p = NULL;
    cJSON_ArrayForEach(p, pols) {
        if (cJSON_IsString(p)) {
            g_autofree char *folder = hs_run_dir_folder(p->valuestring);
            g_autofree char *sub = g_build_filename(dir, folder, NULL);
            g_autofree char *q = hs_shell_quote(sub);
            g_string_append_printf(which, "%s%s", which->len ? ", " : "", q);
        }
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "replay %s: a compare directory, with a recording per policy: replay one "
                "policy's run directory (%s)", dir, which->str);
    return FALSE;
}

static gboolean
run(int argc, char **argv, GError **error)
{
    gboolean help = FALSE, replan = FALSE;
    g_autofree char *soc_name = NULL, *policy_name = NULL, *sync = NULL, *trace = NULL;
    g_autofree char *format_name = NULL, *functional = NULL, *stack = NULL;
    g_autofree char *plugin = NULL, *model = NULL, *out = NULL;
    g_auto(GStrv) set = NULL;
    g_autofree char *governor = NULL;
    GOptionEntry entries[] = {
        { "soc", 's', 0, G_OPTION_ARG_STRING, &soc_name,
          "Re-time on this SoC (default: the one recorded, as its run resolved it, with "
          "its --set)", "SOC" },
        { "replan", 0, 0, G_OPTION_ARG_NONE, &replan,
          "Re-plan the recorded workload with the recorded policy (for --soc)", NULL },
        { "stack", 0, 0, G_OPTION_ARG_STRING, &stack,
          "Re-time the same plan on this software stack (same phone, other kernels; "
          "default: the recorded run's, as it loaded it, else the policy's)", "STACK" },
        { "policy", 'P', 0, G_OPTION_ARG_STRING, &policy_name,
          "Re-plan the recorded workload with this policy", "POLICY" },
        { "policy-plugin", 0, 0, G_OPTION_ARG_FILENAME, &plugin,
          "Load a policy from a shared module (see README)", "FILE.so" },
        { "sync", 0, 0, G_OPTION_ARG_STRING, &sync,
          "Run the plan's syncs with this mechanism: driver or fast", "MECH" },
        { "functional", 0, 0, G_OPTION_ARG_STRING, &functional,
          "Values check: off, layers=N or full (default: as recorded)", "MODE" },
        { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
          "Check the values on this model directory's weights (its config.json must "
          "give the recorded model's shapes; default: synthetic weights)", "DIR" },
        { "trace", 't', 0, G_OPTION_ARG_FILENAME, &trace,
          "Write a Perfetto / Chrome trace JSON", "FILE" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
          "Output: text, json or csv (default text)", "FMT" },
        { "governor", 0, 0, G_OPTION_ARG_STRING, &governor, HS_GOVERNOR_HELP, "GOV" },
        HS_SET_OPTION(&set),
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Write a run directory (as run --out DIR) of the replay", "DIR" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    hs_provenance_command(argc, argv);
    if (!hs_cli_parse("replay", "FILE|DIR", "Re-run a recording made with 'run --record FILE'.",
                      entries, &argc, &argv, &help, error)) {
        return FALSE;
    }
    if (help) {
        return TRUE;
    }
    HsFormat format;
    if (!hs_cli_governor(governor, &set, error)) {
        return FALSE;
    }
    g_autoptr(HsOverrides) ovr = hs_overrides_new((const char *const *) set, error);
    if (ovr == NULL || !hs_cli_format(format_name, HS_FORMATS_ALL, &format, error)) {
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
    /* a run directory (run --out DIR): its recording */
    g_autofree char *rec_path = g_file_test(argv[1], G_FILE_TEST_IS_DIR)
                                ? g_build_filename(argv[1], "recording.json", NULL)
                                : g_strdup(argv[1]);
    if (g_file_test(argv[1], G_FILE_TEST_IS_DIR) && !g_file_test(rec_path, G_FILE_TEST_EXISTS) &&
        !compare_dir_refused(argv[1], error)) {
        return FALSE;
    }
    g_autoptr(TrcRecording) rec = trc_record_read(rec_path, error);
    if (rec == NULL) {
        return FALSE;
    }
    /* a run directory (or a recording that says how it was made) replays
     * under its run's own configuration: the SoC as resolved, the stack
     * and the --set list its config.json (its provenance) records
     * (the stacks' edits are in no resolved document; with --soc, the
     * stacks' alone), then this command's options over them */
    g_autofree char *cfg_path = g_file_test(argv[1], G_FILE_TEST_IS_DIR)
                                ? g_build_filename(argv[1], "config.json", NULL) : NULL;
    const gboolean has_cfg = cfg_path && g_file_test(cfg_path, G_FILE_TEST_EXISTS);
    g_autoptr(cJSON) cfg = has_cfg ? hs_json_load_file(cfg_path, HS_CONFIG_ERROR, error) : NULL;
    if (has_cfg && cfg == NULL) {
        return FALSE;
    }
    if (cfg == NULL && rec->config) {
        /* a recording alone: the configuration its provenance records */
        cfg = cJSON_Duplicate(rec->config, TRUE);
        g_free(cfg_path);
        cfg_path = g_strdup_printf("%s: $.provenance.config", rec_path);
    }
    const cJSON *cfg_soc = cJSON_GetObjectItemCaseSensitive(cfg, "soc");
    const cJSON *cfg_stack = cJSON_GetObjectItemCaseSensitive(cfg, "stack");
    g_auto(GStrv) all_sets = hs_config_recorded_sets(cfg, soc_name == NULL,
                                                     (const char *const *) set);
    g_autoptr(HsOverrides) run_ovr = hs_overrides_new((const char *const *) all_sets, error);
    if (run_ovr == NULL) {
        g_prefix_error(error, "%s: $.overrides: ", cfg_path);
        return FALSE;
    }
    /* the directory's own stack unless --stack names another */
    gboolean own_stack = stack == NULL;
    if (stack == NULL && cJSON_IsString(cfg_stack)) {
        stack = g_strdup(cfg_stack->valuestring);
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
    g_autofree char *soc_what = cfg_path ? g_strdup_printf("%s (its \"soc\")", cfg_path)
                                         : NULL;
    g_autoptr(HwSoc) soc = soc_name == NULL && cJSON_IsObject(cfg_soc)
                           ? hs_config_soc_from_json(cfg_soc, soc_what, run_ovr, error)
                           : hs_config_load_soc(soc_name ? soc_name : rec->soc, run_ovr, error);
    if (soc == NULL || (cfg && own_stack && !hs_config_preload_stack(soc, cfg, cfg_path, error))) {
        return FALSE;
    }
    w.stack = stack;
    if (stack && hw_soc_stack(soc, stack, error) == NULL) {
        return FALSE;
    }
    if (hs_overrides_count(ovr, "model") > 0) {
        /* the recorded plan is the recorded model's: another model needs a
         * new plan */
        if (!(policy_name || replan || plugin)) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--set model.*: the recorded plan is for the recorded model; "
                        "add --replan (or --policy P) to re-plan the changed model");
            return FALSE;
        }
        g_autoptr(cJSON) mj = mdl_spec_to_json(rec->spec);
        if (!hs_overrides_apply(ovr, "model", mj, error)) {
            return FALSE;
        }
        MdlSpec *changed = mdl_spec_from_json(mj, rec->spec->name, error);
        if (changed == NULL) {
            hs_overrides_explain(ovr, "model", error);
            return FALSE;
        }
        mdl_spec_free(rec->spec);
        rec->spec = changed;
    }
    /* the recording's own workload was checked against its model when it
     * was read (trc_record_read); what is checked here is a command-line
     * option's or --set's change of it */
    if (!functional && w.check_layers > 0 &&
        (uint32_t) w.check_layers > rec->spec->num_hidden_layers) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--set model.*: the model as changed has %u layers, fewer than the "
                    "recording's $.workload.functional layers=%d checks (add --functional "
                    "off, full or layers=N)", rec->spec->num_hidden_layers, w.check_layers);
        return FALSE;
    }
    if (!hs_cli_check_fits(rec->spec, &w, error)) {
        return FALSE;
    }
    if (model && !weights_of(model, rec->spec, &w, error)) {
        return FALSE;
    }
    g_autoptr(SimPlan) plan = NULL;
    const char *policy = rec->policy;
    gboolean plan_is_new = policy_name || replan || plugin;
    if (plan_is_new) {
        const char *name = policy_name ? policy_name : rec->policy;
        const SimPolicy *p = hs_cli_policy(plugin, plugin && !policy_name ? NULL : name, error);
        if (p == NULL) {
            return FALSE;
        }
        plan = sim_run_plan(soc, rec->spec, p, &w, NULL, error);
        policy = p->name;
    } else {
        /* another SoC, or the recorded one changed by --set: the old
         * plan on new hardware, which a what-if usually does not want */
        guint soc_sets = hs_overrides_count(ovr, "soc");
        if (soc_name || soc_sets > 0) {
            fprintf(stderr, "hetero-sim: note: re-timing the plan made for %s on %s%s "
                    "(same placements; --replan re-plans it for %s)\n",
                    rec->soc, soc->name, soc_sets ? " as --set changed it" : "", soc->name);
        }
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
    /* a recorded plan that hands data between processors without a sync
     * (a dropped sync) runs, and fails with the reason */
    g_autofree char *unsynced = policy_name ? NULL : trc_plan_unsynced(plan, soc);
    SimRunReport r = { 0 };
    hs_provenance_config(soc_name, NULL, stack, soc, rec->spec, &w);
    g_autoptr(HsRunDir) rd = NULL;
    if (out && trace) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "replay: --out DIR writes DIR/trace.json itself: drop --trace");
        return FALSE;
    }
    if (out && (rd = hs_run_dir_open(out, error)) == NULL) {
        return FALSE;
    }
    const char *trace_path = rd ? hs_run_dir_trace(rd) : trace;
    /* the trace written as the replay goes, as run writes its own */
    g_autoptr(TrcTrace) tr = trace_path ? hs_run_trace_open(trace_path, error) : NULL;
    gboolean ok = trace_path == NULL || tr != NULL;
    if (tr) {
        hs_run_trace_begin(tr, NULL, soc, &w);
    }
    ok = ok && sim_run_execute(soc, rec->spec, policy, plan, &w, NULL, &r, NULL, error);
    if (ok && tr) {
        hs_run_trace_end(tr, &w);
        ok = hs_run_trace_close(g_steal_pointer(&tr), soc, rec->spec->name, policy, w.sync,
                                error);
    }
    if (ok) {
        cJSON *extra = cJSON_CreateObject();
        cJSON_AddItemToObject(extra, "config", hs_config_json(run_ovr, soc, rec->spec, &w));
        if (soc_name || hs_overrides_count(ovr, "soc") > 0 || replan || policy_name || plugin) {
            /* what was replayed: the recorded plan re-timed, or a new plan */
            cJSON *o = cJSON_AddObjectToObject(extra, "replay");
            cJSON_AddStringToObject(o, "recorded_soc", rec->soc);
            cJSON_AddStringToObject(o, "recorded_policy", rec->policy);
            cJSON_AddStringToObject(o, "plan", plan_is_new ? "replanned" : "recorded");
        }
        r.soc = hs_provenance_soc();
        if (rd) {
            g_autoptr(cJSON) c = hs_config_request(run_ovr, soc, rec->spec, &w, policy, stack);
            hs_run_dir_set_config(rd, c);
            /* the plan replayed, as a recording in the directory too */
            g_autoptr(cJSON) prov = hs_provenance_with_config(run_ovr, soc, rec->spec, &w,
                                                              policy, stack);
            ok = trc_record_write_with(hs_run_dir_recording(rd), soc, rec->spec, policy, &w,
                                       plan, prov, error);
        }
        /* what this replay is, said in every format: the recorded plan
         * re-timed (on the recorded SoC, or another) or a plan made anew */
        const char *how = plan_is_new ? "re-planned" : "re-timed";
        g_autofree char *said = plan_is_new
            ? g_strdup_printf("replay: re-planned by %s on %s (recorded: %s on %s)\n", policy,
                              soc->name, rec->policy, rec->soc)
            : g_strdup_printf("replay: re-timed, the plan %s made on %s run on %s\n",
                              rec->policy, rec->soc, soc->name);

        if (ok && format == HS_FORMAT_CSV) {
            /* the report's columns and a last one, plan */
            g_autofree char *why = hs_run_failure(&r, unsynced);
            g_autofree char *head = hs_report_csv_header();
            g_autofree char *row = hs_report_csv_row(&r);
            /* the report's columns, plan, then the provenance columns
             * every run's CSV ends in */
            g_autofree char *h = g_strdup_printf("%.*s,plan", (int) strcspn(head, "\n"), head);
            g_autofree char *v = g_strdup_printf("%.*s,%s", (int) strcspn(row, "\n"), row, how);
            g_autofree char *hp = hs_csv_with_provenance(h, TRUE);
            g_autofree char *vp = hs_csv_with_provenance(v, FALSE);
            printf("%s%s", hp, vp);
            if (rd) {
                HsRunTexts t = { 0 };
                hs_run_texts(soc, &r, why, extra, &t);
                ok = hs_run_dir_commit(rd, &t, error);
                hs_run_texts_clear(&t);
            }
            cJSON_Delete(extra);
            if (ok && why) {
                g_set_error(error, HS_SIM_ERROR, HS_SIM_ERROR_MISMATCH, "%s", why);
                ok = FALSE;
            }
        } else if (ok) {
            ok = hs_run_output(soc, &r, format, unsynced, extra, rd, error);
            /* last: the report's head line (or a failure's reason) first */
            if (format == HS_FORMAT_TEXT) {
                fputs(said, stdout);
            }
        } else {
            cJSON_Delete(extra);
        }
    }
    sim_run_report_clear(&r);
    return ok;
}

const HsCommand hs_cmd_replay = {
    "replay", "FILE [--soc S] [--replan] [--policy P]",
    "re-run a recording: re-timed on another SoC, or re-planned", run,
};
