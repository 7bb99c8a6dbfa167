/*
 * workload-json.c - see workload-json.h.
 */
#include "traces/workload-json.h"
#include "sim/util/error.h"

#include <string.h>

/* the policy options, each required (the writer writes them all);
 * bounds as the command line's */
static const HsParam options_params[] = {
    HS_PARAM_U32("chunk_tokens", SimPolicyOptions, chunk_tokens, 1, 65536, HS_REQUIRED,
                 "chunked prefill: chunk size"),
    HS_PARAM_U32("row_align", SimPolicyOptions, row_align, 1, 65536, HS_REQUIRED,
                 "tensor partitions: rows aligned to"),
    HS_PARAM_U32("tok_align", SimPolicyOptions, tok_align, 1, 65536, HS_REQUIRED,
                 "tensor partitions: tokens aligned to"),
    HS_PARAM_U32("min_npu_shape", SimPolicyOptions, min_npu_shape, 1, 65536, HS_REQUIRED,
                 "smallest standard NPU shape"),
    HS_PARAM_U32("max_npu_shape", SimPolicyOptions, max_npu_shape, 1, 65536, HS_REQUIRED,
                 "largest standard NPU shape"),
    HS_PARAM_END
};

/* a game rendering alongside, as the command line's --render options;
 * the priority by name ("low" | "normal") */
typedef enum { RENDER_PRIO_LOW, RENDER_PRIO_NORMAL, RENDER_PRIO_COUNT } RenderPrio;
static const char *const render_prio_name[] = { "low", "normal" };
G_STATIC_ASSERT(G_N_ELEMENTS(render_prio_name) == RENDER_PRIO_COUNT);

typedef struct RenderKeys {
    double fps, frame_ms, frame_mb;
    RenderPrio priority;
} RenderKeys;

static const HsParam render_params[] = {
    HS_PARAM_F64("fps", RenderKeys, fps, 0, 1000, HS_REQUIRED, "frames per second"),
    HS_PARAM_F64("frame_ms", RenderKeys, frame_ms, 1e-6, 1000, HS_REQUIRED,
                 "GPU time of one frame alone"),
    HS_PARAM_F64("frame_mb", RenderKeys, frame_mb, 0, 4096, HS_REQUIRED,
                 "DRAM traffic of one frame (MiB)"),
    HS_PARAM_ENUM("llm_priority", RenderKeys, priority, RenderPrio, render_prio_name,
                  RENDER_PRIO_COUNT, HS_REQUIRED, "the LLM's GPU queue priority"),
    HS_PARAM_END
};

/* "@path: expected @what (got ...)" */
static gboolean
bad(GError **error, const char *path, const char *what, const cJSON *got)
{
    g_autofree char *g = hs_json_describe(got);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE, "%s: expected %s (got %s)",
                path, what, g);
    return FALSE;
}

/* in the order recordings have them; bounds as the command line's
 * (decode up to 65536 as run --decode) */
const HsParam trc_workload_params[] = {
    HS_PARAM_U32("prompt", SimWorkload, prompt, 1, 32768, HS_REQUIRED, "prompt tokens"),
    HS_PARAM_U32("decode", SimWorkload, decode, 0, 65536, HS_REQUIRED, "decode steps"),
    HS_PARAM_U32("batch", SimWorkload, batch, 1, 256, HS_REQUIRED, "sequences decoded together"),
    HS_PARAM_ENUM("sync", SimWorkload, sync, SimSyncMech, sim_sync_name, SIM_SYNC_COUNT,
                  HS_REQUIRED, "sync mechanism"),
    HS_PARAM_U64("seed", SimWorkload, seed, 0, 9007199254740992.0, HS_REQUIRED,
                 "synthetic weights"),
    HS_PARAM_OBJ("options", SimWorkload, opts, SimPolicyOptions, options_params, TRUE,
                 "policy options"),
    HS_PARAM_END
};

cJSON *
trc_workload_to_json(const SimWorkload *w)
{
    g_autoptr(cJSON) table = cJSON_CreateObject();
    hs_param_dump_json(trc_workload_params, w, table);
    /* the table's members, with "functional" after "sync", where
     * recordings have always had it */
    cJSON *o = cJSON_CreateObject();
    while (table->child) {
        cJSON *m = cJSON_DetachItemViaPointer(table, table->child);
        cJSON_AddItemToObject(o, m->string, m);
        if (strcmp(m->string, "sync") == 0) {
            int32_t cl = w->check_layers;
            g_autofree char *fn = cl < 0 ? g_strdup("off") : cl == 0 ? g_strdup("full")
                                         : g_strdup_printf("layers=%d", cl);
            cJSON_AddStringToObject(o, "functional", fn);
        }
    }
    if (w->render.fps > 0) {
        RenderKeys rk = {
            .fps = w->render.fps, .frame_ms = w->render.frame_ms,
            .frame_mb = w->render.frame_mb,
            .priority = w->render.llm_priority == HW_PRIO_LOW ? RENDER_PRIO_LOW
                                                              : RENDER_PRIO_NORMAL,
        };
        hs_param_dump_json(render_params, &rk, cJSON_AddObjectToObject(o, "render"));
    }
    return o;
}

gboolean
trc_workload_from_json(const cJSON *obj, const char *path, SimWorkload *w, GError **error)
{
    if (!cJSON_IsObject(obj)) {
        return bad(error, path, "an object", obj);
    }
    static const char *const own_keys[] = { "functional", "render", NULL };
    if (!hs_param_apply(obj, path, trc_workload_params, w, own_keys, NULL, error)) {
        return FALSE;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, "functional");
    if (f == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: missing key \"functional\"", path);
        return FALSE;
    }
    if (!cJSON_IsString(f) || !sim_functional_parse(f->valuestring, &w->check_layers)) {
        g_autofree char *fp = hs_json_path_key(path, "functional");
        return bad(error, fp, "off, full or layers=N", f);
    }
    /* optional: a game rendering alongside */
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(obj, "render");
    if (g == NULL) {
        return TRUE;
    }
    g_autofree char *gp = hs_json_path_key(path, "render");
    RenderKeys rk = { 0 };
    if (!hs_param_apply(g, gp, render_params, &rk, NULL, NULL, error)) {
        return FALSE;
    }
    w->render = (SimRender) {
        .fps = rk.fps, .frame_ms = rk.frame_ms, .frame_mb = rk.frame_mb,
        .llm_priority = rk.priority == RENDER_PRIO_LOW ? HW_PRIO_LOW : HW_PRIO_NORMAL,
    };
    return TRUE;
}
