/*
 * config.c - see config.h.
 */
#include "sim/cli/config.h"
#include "hw/stack.h"
#include "sim/cli/cli.h"
#include "sim/util/json.h"

/* --set stack.KEY=VALUE on every stack the run loads (each policy's own):
 * applied, then checked here so an error names the option */
static gboolean
stack_edit(cJSON *root, void *ovr, GError **error)
{
    if (!hs_overrides_apply(ovr, "stack", root, error)) {
        return FALSE;
    }
    g_autoptr(HwStack) st = hw_stack_from_json(root, "stack", error);
    if (st == NULL) {
        hs_overrides_explain(ovr, "stack", error);
        return FALSE;
    }
    return TRUE;
}

HwSoc *
hs_config_load_soc(const char *name, const HsOverrides *ovr, GError **error)
{
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    HwSoc *soc = hw_soc_load_edit(name, configs,
                                  hs_overrides_count(ovr, "soc") ? hs_overrides_apply_soc : NULL,
                                  (void *) ovr, error);
    if (soc == NULL) {
        hs_overrides_explain(ovr, "soc", error);
    } else if (hs_overrides_count(ovr, "stack") > 0) {
        soc->stack_edit = stack_edit;
        soc->stack_edit_opaque = (void *) ovr;
    }
    return soc;
}

MdlSpec *
hs_config_load_model(const char *name, const HsOverrides *ovr, GError **error)
{
    g_autofree char *models = g_build_filename(hs_cli_data_dir(), "models", NULL);
    gboolean edit = hs_overrides_count(ovr, "model") > 0;
    g_autoptr(MdlSpec) spec = mdl_spec_load_edit(name, models,
                                                 edit ? hs_overrides_apply_model : NULL,
                                                 (void *) ovr, error);
    if (spec == NULL) {
        hs_overrides_explain(ovr, "model", error);
        return NULL;
    }
    if (edit) {
        /* config.json holds keys the simulator does not read: setting one
         * would change nothing, so only the keys it reads are accepted */
        g_autoptr(cJSON) known = mdl_spec_to_json(spec);
        if (!hs_overrides_check_known(ovr, "model", known, error)) {
            return NULL;
        }
    }
    return g_steal_pointer(&spec);
}

static cJSON *
workload_json(const SimWorkload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "prompt", w->prompt);
    cJSON_AddNumberToObject(o, "decode", w->decode);
    cJSON_AddNumberToObject(o, "batch", w->batch);
    cJSON_AddStringToObject(o, "sync", sim_sync_name[w->sync]);
    cJSON_AddNumberToObject(o, "check_layers", w->check_layers);
    cJSON_AddNumberToObject(o, "seed", (double) w->seed);
    cJSON *p = cJSON_AddObjectToObject(o, "policy_options");
    cJSON_AddNumberToObject(p, "chunk_tokens", w->opts.chunk_tokens);
    cJSON_AddNumberToObject(p, "row_align", w->opts.row_align);
    cJSON_AddNumberToObject(p, "tok_align", w->opts.tok_align);
    cJSON_AddNumberToObject(p, "min_npu_shape", w->opts.min_npu_shape);
    cJSON_AddNumberToObject(p, "max_npu_shape", w->opts.max_npu_shape);
    cJSON *r = cJSON_AddObjectToObject(o, "render");
    cJSON_AddNumberToObject(r, "fps", w->render.fps);
    cJSON_AddNumberToObject(r, "frame_ms", w->render.frame_ms);
    cJSON_AddNumberToObject(r, "frame_mb", w->render.frame_mb);
    cJSON_AddNumberToObject(r, "llm_priority", w->render.llm_priority);
    return o;
}

cJSON *
hs_config_resolved(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "soc", hw_soc_to_json(soc));
    cJSON_AddItemToObject(o, "model", mdl_spec_to_json(spec));
    cJSON_AddItemToObject(o, "workload", workload_json(w));
    return o;
}

char *
hs_config_hash(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w)
{
    g_autoptr(cJSON) c = hs_config_resolved(soc, spec, w);
    g_autofree char *text = hs_json_print(c, FALSE);
    return g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
}

cJSON *
hs_config_json(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
               const SimWorkload *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "overrides", hs_overrides_to_json(ovr));
    g_autofree char *hash = hs_config_hash(soc, spec, w);
    cJSON_AddStringToObject(o, "hash", hash);
    return o;
}
