/*
 * run-opts.c - see run-opts.h.
 */
#include "sim/cli/run-opts.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <stdlib.h>
#include <string.h>

static GOptionEntry *
entries_for(HsRunOpts *o)
{
    *o = (HsRunOpts) { .prompt = 256, .decode = 32, .batch = 1, .chunk = 256, .seed = 1,
                       .frame_ms = 8, .frame_mb = 48 };
    GOptionEntry e[] = {
        { "soc", 's', 0, G_OPTION_ARG_STRING, &o->soc,
          "SoC config: a name from 'list socs' or a JSON file (default sd8gen3)", "SOC" },
        { "stack", 0, 0, G_OPTION_ARG_STRING, &o->stack,
          "Software stack the kernels run on, replacing each policy's own: a name from "
          "'list stacks' or a JSON file", "STACK" },
        { "model", 'm', 0, G_OPTION_ARG_STRING, &o->model,
          "Model: a name from 'list models', a config.json or a model directory "
          "(default llama-3-8b)", "MODEL" },
        { "sync", 0, 0, G_OPTION_ARG_STRING, &o->sync,
          "Sync mechanism between processors: driver or fast (default fast)", "MECH" },
        { "prompt", 'p', 0, G_OPTION_ARG_INT, &o->prompt,
          "Prompt tokens (prefill length, default 256)", "N" },
        { "decode", 'd', 0, G_OPTION_ARG_INT, &o->decode,
          "Decode steps (default 32)", "N" },
        { "batch", 'b', 0, G_OPTION_ARG_INT, &o->batch,
          "Sequences decoded together (test-time scaling, default 1)", "B" },
        { "chunk", 0, 0, G_OPTION_ARG_INT, &o->chunk,
          "Chunk size of the chunked policy (default 256)", "N" },
        { "functional", 0, 0, G_OPTION_ARG_STRING, &o->functional,
          "Check values against the unpartitioned reference: off, layers=N (the "
          "first N layers at full width) or full (default layers=1)", "MODE" },
        { "seed", 0, 0, G_OPTION_ARG_INT64, &o->seed,
          "Seed of the synthetic weights (default 1)", "S" },
        { "render", 0, 0, G_OPTION_ARG_DOUBLE, &o->render_fps,
          "A game renders on the GPU alongside at this frame rate (default 0: none)", "FPS" },
        { "frame-ms", 0, 0, G_OPTION_ARG_DOUBLE, &o->frame_ms,
          "GPU time of one frame alone (default 8, an assumed mid-weight game)", "MS" },
        { "frame-mb", 0, 0, G_OPTION_ARG_DOUBLE, &o->frame_mb,
          "DRAM traffic of one frame in MiB (default 48, assumed)", "MB" },
        { "llm-priority", 0, 0, G_OPTION_ARG_STRING, &o->llm_priority,
          "GPU queue priority of the LLM's kernels next to rendering: low or normal "
          "(default normal)", "P" },
        { "policy-plugin", 0, 0, G_OPTION_ARG_FILENAME, &o->plugin,
          "Load a policy from a shared module (see README)", "FILE.so" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &o->format,
          "Output: text, json or csv (default text)", "FMT" },
        HS_SET_OPTION(&o->set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    return g_memdup2(e, sizeof(e));
}

gboolean
hs_run_opts_parse(const char *command, const char *summary, const GOptionEntry *extra,
                  HsRunOpts *o, int *argc, char ***argv, gboolean *help_shown,
                  GError **error)
{
    g_autofree GOptionEntry *common = entries_for(o);
    guint nc = 0, ne = 0;
    while (common[nc].long_name) {
        nc++;
    }
    while (extra && extra[ne].long_name) {
        ne++;
    }
    g_autofree GOptionEntry *all = g_new0(GOptionEntry, ne + nc + 1);
    if (ne) {
        memcpy(all, extra, sizeof(GOptionEntry) * ne);
    }
    memcpy(all + ne, common, sizeof(GOptionEntry) * nc);
    if (!hs_cli_parse(command, NULL, summary, all, argc, argv, help_shown, error) ||
        (o->ovr = hs_overrides_new((const char *const *) o->set, error)) == NULL) {
        return FALSE;
    }
    return *help_shown || hs_cli_no_extra_args(*argc, *argv, 0, error);
}

void
hs_run_opts_clear(HsRunOpts *o)
{
    g_free(o->soc);
    g_free(o->stack);
    g_free(o->model);
    g_free(o->sync);
    g_free(o->format);
    g_free(o->trace);
    g_free(o->plugin);
    g_free(o->functional);
    g_free(o->llm_priority);
    g_strfreev(o->set);
    hs_overrides_free(o->ovr);
}

static gboolean
check_range(const char *name, int v, int lo, int hi, GError **error)
{
    if (v < lo || v > hi) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--%s: expected an integer in [%d, %d] (got %d)", name, lo, hi, v);
        return FALSE;
    }
    return TRUE;
}

gboolean
hs_run_opts_resolve(const HsRunOpts *o, unsigned formats, HsFormat *format,
                    HwSoc **soc, MdlSpec **spec, SimWorkload *w, GError **error)
{
    if (!hs_cli_format(o->format, formats, format, error) ||
        !check_range("prompt", o->prompt, 1, 32768, error) ||
        !check_range("decode", o->decode, 0, 65536, error) ||
        !check_range("batch", o->batch, 1, 256, error) ||
        !check_range("chunk", o->chunk, 1, 4096, error)) {
        return FALSE;
    }
    sim_workload_init(w);
    w->prompt = (uint32_t) o->prompt;
    w->decode = (uint32_t) o->decode;
    w->batch = (uint32_t) o->batch;
    w->opts.chunk_tokens = (uint32_t) o->chunk;
    if (o->sync == NULL || strcmp(o->sync, "fast") == 0) {
        w->sync = SIM_SYNC_FAST;
    } else if (strcmp(o->sync, "driver") == 0) {
        w->sync = SIM_SYNC_DRIVER;
    } else {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--sync: expected driver or fast (got \"%s\")", o->sync);
        return FALSE;
    }
    const char *f = o->functional ? o->functional : "layers=1";
    if (!sim_functional_parse(f, &w->check_layers)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--functional: expected off, full or layers=N with N in [1, 1000] "
                    "(got \"%s\")", f);
        return FALSE;
    }
    if (o->seed < 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--seed: expected a non-negative integer (got %" G_GINT64_FORMAT ")",
                    o->seed);
        return FALSE;
    }
    w->seed = (uint64_t) o->seed;
    if (!(o->render_fps >= 0 && o->render_fps <= 1000)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--render: expected a frame rate in [0, 1000] (got %g)", o->render_fps);
        return FALSE;
    }
    if (!(o->frame_ms > 0 && o->frame_ms <= 1000) || !(o->frame_mb >= 0 && o->frame_mb <= 4096)) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--frame-ms / --frame-mb: expected (0, 1000] ms and [0, 4096] MiB "
                    "(got %g and %g)", o->frame_ms, o->frame_mb);
        return FALSE;
    }
    w->render = (SimRender) { .fps = o->render_fps, .frame_ms = o->frame_ms,
                              .frame_mb = o->frame_mb, .llm_priority = HW_PRIO_NORMAL };
    if (o->llm_priority && strcmp(o->llm_priority, "low") == 0) {
        w->render.llm_priority = HW_PRIO_LOW;
    } else if (o->llm_priority && strcmp(o->llm_priority, "normal") != 0) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--llm-priority: expected low or normal (got \"%s\")", o->llm_priority);
        return FALSE;
    }
    *soc = hs_config_load_soc(o->soc ? o->soc : "sd8gen3", o->ovr, error);
    if (*soc == NULL) {
        return FALSE;
    }
    w->stack = o->stack;
    if (o->stack && hw_soc_stack(*soc, o->stack, error) == NULL) {
        g_clear_pointer(soc, hw_soc_free);
        return FALSE;
    }
    *spec = hs_config_load_model(o->model ? o->model : "llama-3-8b", o->ovr, error);
    if (*spec == NULL || !hs_cli_check_fits(*spec, w, error)) {
        g_clear_pointer(spec, mdl_spec_free);
        g_clear_pointer(soc, hw_soc_free);
        return FALSE;
    }
    /* a model directory: its config gave the spec, its weights the check */
    w->weights_dir = o->model && g_file_test(o->model, G_FILE_TEST_IS_DIR) ? o->model : NULL;
    return TRUE;
}

gboolean
hs_cli_check_fits(const MdlSpec *spec, const SimWorkload *w, GError **error)
{
    /* positions past the model's context have no trained RoPE meaning:
     * a run there times a request the model cannot serve */
    if ((uint64_t) w->prompt + w->decode > spec->max_position_embeddings) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--prompt + --decode: expected at most %s's context length, "
                    "max_position_embeddings %u (got %u + %u)", spec->name,
                    spec->max_position_embeddings, w->prompt, w->decode);
        return FALSE;
    }
    if (w->check_layers > 0 && (uint32_t) w->check_layers > spec->num_hidden_layers) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--functional: expected layers=N with N at most %s's %u layers "
                    "(got layers=%d; 'full' checks them all and the logits)",
                    spec->name, spec->num_hidden_layers, w->check_layers);
        return FALSE;
    }
    return TRUE;
}

const SimPolicy *
hs_run_opts_policy(const HsRunOpts *o, const char *name, GError **error)
{
    return hs_cli_policy(o->plugin, name, error);
}

const SimPolicy *
hs_cli_policy(const char *plugin, const char *name, GError **error)
{
    if (plugin) {
        const SimPolicy *p = sim_policy_load_plugin(plugin, error);
        if (p == NULL) {
            return NULL;
        }
        /* no name: the plug-in was loaded to be run */
        if (name == NULL || strcmp(name, p->name) == 0) {
            return p;
        }
    }
    if (name == NULL) {
        name = "hetero-tensor";
    }
    const SimPolicy *p = sim_policy_find(name);
    if (p == NULL) {
        g_autoptr(GString) list = g_string_new(NULL);
        for (const SimPolicy *const *q = sim_policy_list(); *q; q++) {
            g_string_append_printf(list, "%s%s", list->len ? ", " : "", (*q)->name);
        }
        /* like an unknown SoC or model: bad input (exit 1), and main()
         * adds "did you mean" (hs_cli_suggest) */
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND,
                    "unknown policy \"%s\" (known: %s%s)", name, list->str,
                    plugin ? "; or the plug-in's" : "");
    }
    return p;
}

static cJSON *
phase_json(const SimPhaseStats *p, gboolean decode, double tpot_ms)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time_ms", p->time_ms);
    cJSON_AddNumberToObject(o, "tokens_per_s", p->tokens_per_s);
    cJSON_AddNumberToObject(o, "prepare_ms", p->prepare_ms);
    if (decode) {
        cJSON_AddNumberToObject(o, "tpot_ms", tpot_ms);
    }
    return o;
}

cJSON *
hs_run_report_json(const HwSoc *soc, const SimRunReport *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "soc", r->soc);
    cJSON_AddStringToObject(o, "model", r->model);
    cJSON_AddStringToObject(o, "policy", r->policy);
    cJSON_AddStringToObject(o, "stack", r->stack);
    cJSON_AddStringToObject(o, "sync", sim_sync_name[r->workload.sync]);
    cJSON_AddNumberToObject(o, "prompt_tokens", r->workload.prompt);
    cJSON_AddNumberToObject(o, "decode_tokens", r->workload.decode);
    cJSON_AddNumberToObject(o, "batch", r->workload.batch);
    cJSON *pre = phase_json(&r->prefill, FALSE, 0);
    if (r->hot_op[0]) {
        cJSON *h = cJSON_AddObjectToObject(pre, "heaviest_op");
        cJSON_AddStringToObject(h, "name", r->hot_op);
        cJSON_AddNumberToObject(h, "time_share", r->hot_time_share);
        cJSON *sp = cJSON_AddObjectToObject(h, "split");
        for (uint32_t p = 0; p < r->n_procs; p++) {
            if (r->hot_split[p] > 0) {
                const HwDev *dev = g_ptr_array_index(soc->devs, p);
                cJSON_AddNumberToObject(sp, dev->name, r->hot_split[p]);
            }
        }
    }
    cJSON_AddItemToObject(o, "prefill", pre);
    cJSON_AddItemToObject(o, "decode", phase_json(&r->decode, TRUE, r->tpot_ms));
    cJSON_AddNumberToObject(o, "ttft_ms", r->ttft_ms);
    cJSON *d = cJSON_AddObjectToObject(o, "dram");
    cJSON_AddNumberToObject(d, "prefill_avg_gbps", r->prefill.dram_gbps);
    cJSON_AddNumberToObject(d, "decode_avg_gbps", r->decode.dram_gbps);
    cJSON_AddNumberToObject(d, "peak_gbps", r->peak_gbps);
    cJSON *e = cJSON_AddObjectToObject(o, "energy");
    cJSON_AddNumberToObject(e, "prefill_j", r->prefill.energy_j);
    cJSON_AddNumberToObject(e, "decode_j", r->decode.energy_j);
    cJSON_AddNumberToObject(e, "prefill_avg_w", r->prefill.avg_w);
    cJSON_AddNumberToObject(e, "decode_avg_w", r->decode.avg_w);
    cJSON *devs = cJSON_AddObjectToObject(o, "devices");
    for (uint32_t p = 0; p < r->n_procs; p++) {
        const HwDev *dev = g_ptr_array_index(soc->devs, p);
        cJSON *x = cJSON_AddObjectToObject(devs, dev->name);
        cJSON_AddNumberToObject(x, "busy_ms", r->busy_ms[p]);
        cJSON_AddNumberToObject(x, "util", r->util[p]);
    }
    cJSON *f = cJSON_AddObjectToObject(o, "functional");
    int32_t cl = r->workload.check_layers;
    g_autofree char *mode = cl < 0 ? g_strdup("off") : cl == 0 ? g_strdup("full")
                                   : g_strdup_printf("layers=%d", cl);
    cJSON_AddStringToObject(f, "mode", mode);
    cJSON_AddBoolToObject(f, "checked", r->check.checked);
    if (r->check.checked) {
        cJSON_AddNumberToObject(f, "layers", r->check.layers);
        g_autofree char *weights = sim_workload_weights(&r->workload);
        cJSON_AddStringToObject(f, "weights", weights);
        cJSON_AddBoolToObject(f, "match", r->check.match);
        cJSON_AddBoolToObject(f, "precision_changed", r->check.precision_changed);
        cJSON_AddNumberToObject(f, "precision_err", r->check.precision_err);
        cJSON_AddNumberToObject(f, "max_abs_err", r->check.max_abs_err);
        cJSON_AddNumberToObject(f, "max_abs_ref", r->check.max_abs_ref);
    }
    if (r->workload.render.fps > 0) {
        cJSON *g = cJSON_AddObjectToObject(o, "render");
        cJSON_AddNumberToObject(g, "target_fps", r->workload.render.fps);
        cJSON_AddStringToObject(g, "llm_priority",
                                r->workload.render.llm_priority == HW_PRIO_LOW ? "low"
                                                                                : "normal");
        cJSON_AddNumberToObject(g, "prefill_fps", r->render_fps_prefill);
        cJSON_AddNumberToObject(g, "decode_fps", r->render_fps_decode);
        cJSON_AddNumberToObject(g, "on_time_pct", r->render_on_time_pct);
        cJSON_AddNumberToObject(g, "worst_frame_ms", r->render_worst_ms);
    }
    cJSON *s = cJSON_AddObjectToObject(o, "sim");
    cJSON_AddNumberToObject(s, "tasks", (double) r->tasks);
    cJSON_AddNumberToObject(s, "events", (double) r->events);
    cJSON_AddNumberToObject(s, "wall_s", r->wall_s);
    return o;
}
