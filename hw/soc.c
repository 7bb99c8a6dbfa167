/*
 * soc.c - builds a SoC from its JSON description.  See soc.h.
 */
#include "hw/soc.h"
#include "hw/stack.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <string.h>

static const HsParam hw_mem_params[] = {
    HS_PARAM_F64("peak_gbps", HwMemParams, peak_gbps, 0.001, 100000, HS_REQUIRED,
                 "theoretical DRAM peak bandwidth"),
    HS_PARAM_F64("ceiling_gbps", HwMemParams, ceiling_gbps, 0.001, 100000,
                 HS_REQUIRED, "achievable total bandwidth, all initiators together"),
    HS_PARAM_F64("energy_pj_per_byte", HwMemParams, energy_pj_per_byte, 0, 10000,
                 HS_REQUIRED, "DRAM access energy per byte moved"),
    HS_PARAM_F64("idle_w", HwMemParams, idle_w, 0, 100, 0,
                 "DRAM and interconnect background power"),
    HS_PARAM_END
};

static const HsParam hw_sync_driver_params[] = {
    HS_PARAM_F64("finish_us", HwSyncDriverParams, finish_us, 0, 1e6, HS_REQUIRED,
                 "blocking finish call returns after the device is idle"),
    HS_PARAM_F64("copy_us", HwSyncDriverParams, copy_us, 0, 1e6, HS_REQUIRED,
                 "host<->device copy of the hand-off buffer: its per-call part"),
    HS_PARAM_F64("copy_gbps", HwSyncDriverParams, copy_gbps, 0, 100000, 0,
                 "rate of that copy over the bytes handed over (0: no per-byte part)"),
    HS_PARAM_F64("maint_gbps", HwSyncDriverParams, maint_gbps, 0, 100000, 0,
                 "cache clean/invalidate of the bytes handed over (0: IO-coherent, none)"),
    HS_PARAM_END
};

static const HsParam hw_sync_fast_params[] = {
    HS_PARAM_F64("poll_us", HwSyncFastParams, poll_us, 0, 1e6, HS_REQUIRED,
                 "one flag poll on a small/middle CPU core"),
    HS_PARAM_END
};

typedef struct SocTop {
    char *name;
    char *description;
    HwGovernorMode governor;
    double baseline_w;
} SocTop;

static const HsParam hw_soc_top_params[] = {
    HS_PARAM_STR("name", SocTop, name, NULL, NULL, "short name of the SoC"),
    HS_PARAM_STR("description", SocTop, description, "", NULL, "one line"),
    HS_PARAM_ENUM("governor", SocTop, governor, HwGovernorMode, hw_governor_mode_name,
                  HW_GOVERNOR_COUNT, HW_GOVERNOR_ONDEMAND,
                  "DVFS: ondemand (each processor's own governor, from its dvfs block) or "
                  "performance (every processor at its top operating point); --governor"),
    HS_PARAM_F64("baseline_w", SocTop, baseline_w, 0, 100, 0,
                 "device power the SoC model leaves out (screen, radios, idle platform), "
                 "added over the whole run to compare with whole-phone measurements; "
                 "0: off"),
    HS_PARAM_END
};

typedef struct SyncTop {
    char *control_cpu;
} SyncTop;

static const HsParam hw_sync_top_params[] = {
    HS_PARAM_STR("control_cpu", SyncTop, control_cpu, "", NULL,
                 "the cpu processor that runs the control plane (sync threads, kernel "
                 "submission); default: the first cpu"),
    HS_PARAM_END
};

static const HsParamSection hw_soc_param_sections[] = {
    { "memory", hw_mem_params },
    { "sync.driver", hw_sync_driver_params },
    { "sync.fast", hw_sync_fast_params },
    { NULL, NULL },
};

const HsParamSection *
hw_soc_sections(void)
{
    return hw_soc_param_sections;
}

static const char *const top_sections[] = { "memory", "processors", "sync", NULL };
/* "kind" is what `soc show --format json` prints beside the model (it
 * follows from the model): accepted when it agrees, so a shown SoC loads */
static const char *const dev_base_keys[] = { "name", "model", "kind", "dvfs", NULL };
static const char *const sync_sections[] = { "driver", "fast", NULL };

void
hw_soc_free(HwSoc *soc)
{
    if (soc == NULL) {
        return;
    }
    g_free(soc->name);
    g_free(soc->description);
    g_free(soc->path);
    g_strfreev(soc->bases);
    if (soc->devs) {
        g_ptr_array_unref(soc->devs);
    }
    for (uint32_t i = 0; i < soc->n_dvfs; i++) {
        hw_dvfs_clear(&soc->dvfs[i]);
    }
    g_free(soc->dvfs);
    if (soc->sources) {
        g_hash_table_unref(soc->sources);
    }
    if (soc->stacks) {
        g_hash_table_unref(soc->stacks);
    }
    g_mutex_clear(&soc->stacks_lock);
    g_free(soc->stacks_dir);
    g_free(soc);
}

const HwStack *
hw_soc_stack(const HwSoc *csoc, const char *name_or_path, GError **error)
{
    HwSoc *soc = (HwSoc *) csoc;     /* the cache only: loaded once, never changed */
    g_mutex_lock(&soc->stacks_lock);
    HwStack *st = g_hash_table_lookup(soc->stacks, name_or_path);
    if (st == NULL) {
        st = hw_stack_load_edit(name_or_path, soc->stacks_dir, soc->stack_edit,
                                soc->stack_edit_opaque, error);
        if (st) {
            g_hash_table_insert(soc->stacks, g_strdup(name_or_path), st);
        }
    }
    g_mutex_unlock(&soc->stacks_lock);
    return st;
}

gboolean
hw_soc_stack_preload(HwSoc *soc, const char *name_or_path, const cJSON *json, const char *what,
                     GError **error)
{
    g_autoptr(cJSON) copy = cJSON_Duplicate(json, TRUE);
    if (soc->stack_edit && !soc->stack_edit(copy, soc->stack_edit_opaque, error)) {
        return FALSE;
    }
    HwStack *st = hw_stack_from_json(copy, what, error);
    if (st == NULL) {
        return FALSE;
    }
    g_mutex_lock(&soc->stacks_lock);
    g_hash_table_replace(soc->stacks, g_strdup(name_or_path), st);
    g_mutex_unlock(&soc->stacks_lock);
    return TRUE;
}

static const cJSON *
require(const cJSON *obj, const char *path, const char *key, GError **error)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (item == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing required key \"%s\"", path, key);
    }
    return item;
}

static gboolean
is_name(const char *s)
{
    if (s[0] == '\0' || strlen(s) > 32 || !g_ascii_isalpha(s[0])) {
        return FALSE;
    }
    for (const char *p = s; *p; p++) {
        if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-') {
            return FALSE;
        }
    }
    return TRUE;
}

/* The processor's "dvfs" block, if any, into @d (after its active_w and
 * idle_w are known: the top point draws active_w). */
static gboolean
load_dvfs(HwSoc *soc, const HwDev *dev, const cJSON *obj, const char *path, HwDvfs *d,
          GError **error)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, "dvfs");
    if (item == NULL) {
        return TRUE;
    }
    g_autofree char *sub = hs_json_path_key(path, "dvfs");
    if (!cJSON_IsObject(item)) {
        g_autofree char *got = hs_json_describe(item);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected an object with governor, window_ms and points (got %s)",
                    sub, got);
        return FALSE;
    }
    if (cJSON_GetObjectItemCaseSensitive(item, "points") == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing required key \"points\"", sub);
        return FALSE;
    }
    return hs_param_apply(item, sub, hw_dvfs_params, d, NULL, soc->sources, error) &&
           hw_dvfs_realize(d, dev->active_w, dev->idle_w, sub, error);
}

static HwDev *
load_dev(HwSoc *soc, const cJSON *obj, const char *path, HwDvfs *dvfs, GError **error)
{
    if (!cJSON_IsObject(obj)) {
        g_autofree char *got = hs_json_describe(obj);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected an object (got %s)", path, got);
        return NULL;
    }
    const cJSON *name = require(obj, path, "name", error);
    if (name == NULL) {
        return NULL;
    }
    if (!cJSON_IsString(name) || !is_name(name->valuestring)) {
        g_autofree char *got = hs_json_describe(name);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.name: expected a name of 1-32 letters, digits, '_' or '-' "
                    "starting with a letter (got %s)", path, got);
        return NULL;
    }
    const cJSON *model = require(obj, path, "model", error);
    if (model == NULL) {
        return NULL;
    }
    const HwDevClass *cls = cJSON_IsString(model)
                            ? hw_dev_class_find(model->valuestring) : NULL;
    if (cls == NULL) {
        g_autoptr(GString) known = g_string_new(NULL);
        for (const HwDevClass *const *c = hw_dev_class_list(); *c; c++) {
            g_string_append_printf(known, "%s%s", known->len ? ", " : "", (*c)->model);
        }
        g_autofree char *got = hs_json_describe(model);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.model: expected one of %s (got %s)", path, known->str, got);
        return NULL;
    }
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    if (kind && !(cJSON_IsString(kind) && strcmp(kind->valuestring, hw_kind_name[cls->kind]) == 0)) {
        g_autofree char *got = hs_json_describe(kind);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.kind: expected \"%s\", the kind of model %s (got %s)", path,
                    hw_kind_name[cls->kind], cls->model, got);
        return NULL;
    }
    g_autoptr(HwDev) dev = hw_dev_new(cls, name->valuestring);
    dev->soc = soc;
    if (!hs_param_apply(obj, path, cls->params, dev, dev_base_keys, soc->sources,
                        error)) {
        return NULL;
    }
    if (cls->realize && !cls->realize(dev, error)) {
        g_prefix_error(error, "%s.", path);
        return NULL;
    }
    if (!load_dvfs(soc, dev, obj, path, dvfs, error)) {
        return NULL;
    }
    return g_steal_pointer(&dev);
}

HwSoc *
hw_soc_from_json(const cJSON *root, const char *what, GError **error)
{
    g_autoptr(HwSoc) soc = g_new0(HwSoc, 1);
    SocTop top = { 0 };
    g_autofree char *control_cpu = NULL;

    soc->devs = g_ptr_array_new_with_free_func((GDestroyNotify) hw_dev_free);
    soc->sources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    soc->stacks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) hw_stack_free);
    g_mutex_init(&soc->stacks_lock);

    gboolean ok = hs_param_apply(root, "$", hw_soc_top_params, &top, top_sections,
                                 soc->sources, error);
    soc->name = g_steal_pointer(&top.name);
    soc->description = g_steal_pointer(&top.description);
    soc->governor = top.governor;
    soc->baseline_w = top.baseline_w;
    if (!ok) {
        goto fail;
    }

    const cJSON *mem = require(root, "$", "memory", error);
    if (mem == NULL ||
        !hs_param_apply(mem, "$.memory", hw_mem_params, &soc->mem, NULL,
                        soc->sources, error)) {
        goto fail;
    }
    if (soc->mem.ceiling_gbps > soc->mem.peak_gbps) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.memory.ceiling_gbps: expected at most peak_gbps (%g) (got %g)",
                    soc->mem.peak_gbps, soc->mem.ceiling_gbps);
        goto fail;
    }

    const cJSON *sync = require(root, "$", "sync", error);
    if (sync == NULL) {
        goto fail;
    }
    SyncTop st = { 0 };
    ok = hs_param_apply(sync, "$.sync", hw_sync_top_params, &st, sync_sections, NULL, error);
    control_cpu = g_steal_pointer(&st.control_cpu);
    if (!ok) {
        goto fail;
    }
    const cJSON *drv = require(sync, "$.sync", "driver", error);
    if (drv == NULL ||
        !hs_param_apply(drv, "$.sync.driver", hw_sync_driver_params,
                        &soc->sync_driver, NULL, soc->sources, error)) {
        goto fail;
    }
    const cJSON *fast = require(sync, "$.sync", "fast", error);
    if (fast == NULL ||
        !hs_param_apply(fast, "$.sync.fast", hw_sync_fast_params, &soc->sync_fast,
                        NULL, soc->sources, error)) {
        goto fail;
    }

    const cJSON *procs = require(root, "$", "processors", error);
    if (procs == NULL) {
        goto fail;
    }
    if (!cJSON_IsArray(procs) || cJSON_GetArraySize(procs) == 0) {
        g_autofree char *got = hs_json_describe(procs);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.processors: expected a non-empty array of processors (got %s)",
                    cJSON_IsArray(procs) ? "an empty array" : got);
        goto fail;
    }
    soc->n_dvfs = (uint32_t) cJSON_GetArraySize(procs);
    soc->dvfs = g_new0(HwDvfs, soc->n_dvfs);
    int i = 0;
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, procs) {
        g_autofree char *path = hs_json_path_index("$.processors", i);
        HwDev *dev = load_dev(soc, it, path, &soc->dvfs[i], error);
        if (dev == NULL) {
            goto fail;
        }
        if (hw_soc_find_name(soc, dev->name)) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s.name: duplicate processor name \"%s\"", path, dev->name);
            hw_dev_free(dev);
            goto fail;
        }
        dev->index = (uint32_t) i++;
        g_ptr_array_add(soc->devs, dev);
    }
    for (int k = 0; k < HW_KIND_COUNT; k++) {
        if (hw_soc_find_kind(soc, (HwKind) k) == NULL) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                        "$.processors: expected at least one %s processor (found none)",
                        hw_kind_name[k]);
            goto fail;
        }
    }
    const HwDev *ctl = control_cpu && control_cpu[0] ? hw_soc_find_name(soc, control_cpu)
                                                     : hw_soc_find_kind(soc, HW_KIND_CPU);
    if (ctl == NULL || ctl->cls->kind != HW_KIND_CPU) {
        g_autoptr(GString) cpus = g_string_new(NULL);
        for (guint d = 0; d < soc->devs->len; d++) {
            const HwDev *x = g_ptr_array_index(soc->devs, d);
            if (x->cls->kind == HW_KIND_CPU) {
                g_string_append_printf(cpus, "%s%s", cpus->len ? ", " : "", x->name);
            }
        }
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.sync.control_cpu: expected the name of a cpu processor (%s) (got \"%s\")",
                    cpus->str, control_cpu);
        goto fail;
    }
    soc->control_cpu = ctl->index;
    return g_steal_pointer(&soc);

fail:
    g_prefix_error(error, "%s: ", what);
    return NULL;
}

HwSoc *
hw_soc_load(const char *name_or_path, const char *configs_dir, GError **error)
{
    return hw_soc_load_edit(name_or_path, configs_dir, NULL, NULL, error);
}

HwSoc *
hw_soc_load_edit(const char *name_or_path, const char *configs_dir, HsJsonEditFn edit,
                 void *opaque, GError **error)
{
    g_autofree char *path = NULL;
    g_auto(GStrv) bases = NULL;
    g_autoptr(cJSON) root = hs_json_load_based(name_or_path, configs_dir, "SoC", edit,
                                               opaque, &path, &bases, error);
    if (root == NULL) {
        return NULL;
    }
    HwSoc *soc = hw_soc_from_json(root, path, error);
    if (soc) {
        soc->path = g_steal_pointer(&path);
        soc->bases = g_steal_pointer(&bases);
        soc->stacks_dir = g_build_filename(configs_dir, "stacks", NULL);
    }
    return soc;
}

gboolean
hw_soc_governor_samples(const HwSoc *soc, const HwStack *stack, uint32_t p)
{
    g_assert(p < soc->devs->len);
    if (p >= soc->n_dvfs) {
        return FALSE;
    }
    const HwDvfs *d = &soc->dvfs[p];
    if (d->n_points < 2 || d->governor == HW_GOV_PERFORMANCE ||
        soc->governor == HW_GOVERNOR_PERFORMANCE) {
        return FALSE;
    }
    const HwDev *dev = g_ptr_array_index(soc->devs, p);
    return !(stack && hw_stack_pins_clock(stack, dev->cls->kind) && p != soc->control_cpu &&
             hw_soc_find_kind(soc, dev->cls->kind) == dev);
}

HwDev *
hw_soc_find_kind(const HwSoc *soc, HwKind kind)
{
    for (guint i = 0; i < soc->devs->len; i++) {
        HwDev *d = g_ptr_array_index(soc->devs, i);
        if (d->cls->kind == kind) {
            return d;
        }
    }
    return NULL;
}

HwDev *
hw_soc_find_name(const HwSoc *soc, const char *name)
{
    for (guint i = 0; i < soc->devs->len; i++) {
        HwDev *d = g_ptr_array_index(soc->devs, i);
        if (strcmp(d->name, name) == 0) {
            return d;
        }
    }
    return NULL;
}

GStrv
hw_soc_list(const char *configs_dir, GError **error)
{
    return hs_json_list_stems(configs_dir, error);
}

void
hw_soc_dump_text(const HwSoc *soc, GString *out)
{
    g_string_append_printf(out, "SoC %s%s%s\n", soc->name,
                           soc->description[0] ? ": " : "", soc->description);
    if (soc->path) {
        g_string_append_printf(out, "  from %s\n", soc->path);
    }
    for (char **b = soc->bases; b && *b; b++) {
        g_string_append_printf(out, "  on base %s\n", *b);
    }
    g_string_append_printf(out, "  governor %s%s\n", hw_governor_mode_name[soc->governor],
                           soc->governor == HW_GOVERNOR_PERFORMANCE
                           ? " (every processor at its top operating point)"
                           : " (each processor's own, from its dvfs block)");
    if (soc->baseline_w > 0) {
        g_string_append_printf(out, "  device baseline %g W (screen, idle platform)\n",
                               soc->baseline_w);
    }
    g_string_append(out, "\nmemory (shared DRAM)\n");
    hs_param_dump_text(hw_mem_params, &soc->mem, out, 2, soc->sources, "$.memory");
    for (guint i = 0; i < soc->devs->len; i++) {
        const HwDev *d = g_ptr_array_index(soc->devs, i);
        g_autofree char *path = hs_json_path_index("$.processors", (int) i);
        g_string_append_printf(out, "\nprocessor %s (%s, model %s)\n", d->name,
                               hw_kind_name[d->cls->kind], d->cls->model);
        hs_param_dump_text(d->cls->params, d, out, 2, soc->sources, path);
        if (soc->dvfs[i].n_points) {
            g_autofree char *sub = hs_json_path_key(path, "dvfs");
            g_string_append(out, "  dvfs (operating points; power while busy at each)\n");
            hs_param_dump_text(hw_dvfs_params, &soc->dvfs[i], out, 4, soc->sources, sub);
            for (uint32_t k = 0; k < soc->dvfs[i].n_points; k++) {
                g_string_append_printf(out, "    %8.1f MHz  %.3f W busy%s\n",
                                       soc->dvfs[i].points[k].freq_mhz, soc->dvfs[i].busy_w[k],
                                       k == hw_dvfs_top(&soc->dvfs[i]) ? " (active_w)" : "");
            }
        }
    }
    g_string_append(out, "\nsync driver (blocking finish, copy; the consumer queue restarts)\n");
    hs_param_dump_text(hw_sync_driver_params, &soc->sync_driver, out, 2,
                       soc->sources, "$.sync.driver");
    g_string_append(out, "\nsync fast (unified buffers, sleep, poll a flag)\n");
    hs_param_dump_text(hw_sync_fast_params, &soc->sync_fast, out, 2, soc->sources,
                       "$.sync.fast");
}

cJSON *
hw_soc_to_json(const HwSoc *soc)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", soc->name);
    cJSON_AddStringToObject(root, "description", soc->description);
    cJSON_AddStringToObject(root, "governor", hw_governor_mode_name[soc->governor]);
    cJSON_AddNumberToObject(root, "baseline_w", soc->baseline_w);
    cJSON *mem = cJSON_AddObjectToObject(root, "memory");
    hs_param_dump_json(hw_mem_params, &soc->mem, mem);
    cJSON *procs = cJSON_AddArrayToObject(root, "processors");
    for (guint i = 0; i < soc->devs->len; i++) {
        const HwDev *d = g_ptr_array_index(soc->devs, i);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", d->name);
        cJSON_AddStringToObject(p, "model", d->cls->model);
        cJSON_AddStringToObject(p, "kind", hw_kind_name[d->cls->kind]);
        hs_param_dump_json(d->cls->params, d, p);
        if (soc->dvfs[i].n_points) {
            hs_param_dump_json(hw_dvfs_params, &soc->dvfs[i], cJSON_AddObjectToObject(p, "dvfs"));
        }
        cJSON_AddItemToArray(procs, p);
    }
    cJSON *sync = cJSON_AddObjectToObject(root, "sync");
    cJSON_AddStringToObject(sync, "control_cpu",
                            ((const HwDev *) g_ptr_array_index(soc->devs, soc->control_cpu))->name);
    hs_param_dump_json(hw_sync_driver_params, &soc->sync_driver,
                       cJSON_AddObjectToObject(sync, "driver"));
    hs_param_dump_json(hw_sync_fast_params, &soc->sync_fast,
                       cJSON_AddObjectToObject(sync, "fast"));
    return root;
}

void
hw_soc_describe(GString *out)
{
    g_string_append(out, "Top level: name (string, required), description (string), "
                         "governor (ondemand or performance), baseline_w (W), "
                         "memory, processors, sync\n"
                         "Any number may be written as {\"value\": N, \"source\": \"where it comes from\"}.\n"
                         "base (optional): a SoC name or JSON file (relative to this one) to start "
                         "from; this file's keys\nare written over it (objects key by key, "
                         "processors by name; a number, a {value, source} pair\nor any other "
                         "array whole).\n\n");
    g_string_append(out, "$.memory\n");
    hs_param_describe(hw_mem_params, out);
    for (const HwDevClass *const *c = hw_dev_class_list(); *c; c++) {
        g_string_append_printf(out, "\n$.processors[] with \"model\": \"%s\" (%s): %s\n"
                                    "  name                       a unique processor name; required\n",
                               (*c)->model, hw_kind_name[(*c)->kind], (*c)->desc);
        hs_param_describe((*c)->params, out);
    }
    g_string_append(out, "\n$.processors[].dvfs (any processor; absent: always at active_w)\n");
    hs_param_describe(hw_dvfs_params, out);
    g_string_append(out, "\n$.sync\n");
    hs_param_describe(hw_sync_top_params, out);
    g_string_append(out, "\n$.sync.driver\n");
    hs_param_describe(hw_sync_driver_params, out);
    g_string_append(out, "\n$.sync.fast\n");
    hs_param_describe(hw_sync_fast_params, out);
}
