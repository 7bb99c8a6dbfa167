/*
 * registry.c - the built-in policies, and plug-ins loaded with GModule.
 */
#include "sim/policies/policy.h"
#include "sim/util/error.h"

#include <gmodule.h>
#include <string.h>

extern const SimPolicy sim_policy_cpu_only;
extern const SimPolicy sim_policy_gpu_only;
extern const SimPolicy sim_policy_npu_only;
extern const SimPolicy sim_policy_npu_pipe;
extern const SimPolicy sim_policy_online_prepare;
extern const SimPolicy sim_policy_chunked;
extern const SimPolicy sim_policy_hetero_layer;
extern const SimPolicy sim_policy_hetero_tensor;
extern const SimPolicy sim_policy_hetero_tensor_sync_aware;
extern const SimPolicy sim_policy_mllm_npu;
extern const SimPolicy sim_policy_mllm_npu_in_order;
extern const SimPolicy sim_policy_mllm_npu_per_group;
extern const SimPolicy sim_policy_mllm_npu_naive;
extern const SimPolicy sim_policy_mllm_npu_no_shadow;
extern const SimPolicy sim_policy_mllm_npu_no_prune;
extern const SimPolicy sim_policy_mllm_npu_pairs;
extern const SimPolicy sim_policy_transformer_lite;
extern const SimPolicy sim_policy_npu_tts;

static const SimPolicy *const builtins[] = {
    &sim_policy_cpu_only,
    &sim_policy_gpu_only,
    &sim_policy_npu_only,
    &sim_policy_npu_pipe,
    &sim_policy_online_prepare,
    &sim_policy_chunked,
    &sim_policy_hetero_layer,
    &sim_policy_hetero_tensor,
    &sim_policy_mllm_npu,
    &sim_policy_transformer_lite,
    &sim_policy_npu_tts,
    NULL,
};

/* Ablation variants (NAME/VARIANT): found by name, not listed, so that
 * `compare` without --policies runs the systems, not their ablations. */
static const SimPolicy *const variants[] = {
    &sim_policy_hetero_tensor_sync_aware,
    &sim_policy_mllm_npu_in_order,
    &sim_policy_mllm_npu_per_group,
    &sim_policy_mllm_npu_naive,
    &sim_policy_mllm_npu_no_shadow,
    &sim_policy_mllm_npu_no_prune,
    &sim_policy_mllm_npu_pairs,
    NULL,
};

const SimPolicy *const *
sim_policy_list(void)
{
    return builtins;
}

const SimPolicy *const *
sim_policy_variants(void)
{
    return variants;
}

const SimPolicy *
sim_policy_find(const char *name)
{
    for (size_t i = 0; builtins[i]; i++) {
        if (strcmp(builtins[i]->name, name) == 0) {
            return builtins[i];
        }
    }
    for (size_t i = 0; variants[i]; i++) {
        if (strcmp(variants[i]->name, name) == 0) {
            return variants[i];
        }
    }
    return NULL;
}

typedef const SimPolicy *(*PluginFn)(void);

const SimPolicy *
sim_policy_load_plugin(const char *path, GError **error)
{
    if (!g_module_supported()) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: this platform cannot load modules", path);
        return NULL;
    }
    /* a bare file name would be searched in the library path: anchor it */
    g_autofree char *abs = g_path_is_absolute(path) ? g_strdup(path)
                           : g_build_filename(g_get_current_dir(), path, NULL);
    GModule *mod = g_module_open(abs, G_MODULE_BIND_LOCAL);
    if (mod == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_IO,
                    "%s: cannot load policy plug-in: %s", path, g_module_error());
        return NULL;
    }
    PluginFn fn = NULL;
    if (!g_module_symbol(mod, "hs_policy_plugin", (gpointer *) &fn) || fn == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: not a policy plug-in (no symbol hs_policy_plugin)", path);
        g_module_close(mod);
        return NULL;
    }
    const SimPolicy *p = fn();
    if (p == NULL || p->abi != SIM_POLICY_ABI || p->name == NULL || p->plan_phase == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: policy plug-in ABI %u, expected %u", path,
                    p ? p->abi : 0, SIM_POLICY_ABI);
        g_module_close(mod);
        return NULL;
    }
    if (sim_policy_find(p->name)) {
        /* `--policy NAME` must mean one thing whatever is loaded */
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: policy plug-in name \"%s\" is a built-in policy's; rename it",
                    path, p->name);
        g_module_close(mod);
        return NULL;
    }
    g_module_make_resident(mod);
    return p;
}
