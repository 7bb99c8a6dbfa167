/*
 * sweep-spec.c - a sweep spec and its points.  See sweep.h.
 */
#include "sim/cli/sweep.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/override.h"
#include "sim/util/param.h"

#include <stdlib.h>
#include <string.h>

/* The `run` options a setting may name (GOption long names). */
static const char *const run_options[] = {
    "soc", "model", "policy", "sync", "prompt", "decode", "batch", "chunk",
    "functional", "seed", "render", "frame-ms", "frame-mb", "llm-priority", NULL,
};

/* The spec's own keys; base, axes and points are maps whose keys are the
 * settings a sweep varies (any run option, any config key), read by hand
 * below. */
static const HsParam root_params[] = {
    HS_PARAM_NAME_OPT("description", HsSweepSpec, description, "what the sweep asks"),
    HS_PARAM_END
};
static const char *const root_extra_keys[] = { "base", "axes", "points", NULL };

static void
point_free(HsSweepPoint *p)
{
    cJSON_Delete(p->settings);
    g_free(p->key);
    g_free(p);
}

void
hs_sweep_spec_free(HsSweepSpec *s)
{
    if (s == NULL) {
        return;
    }
    g_free(s->path);
    hs_param_clear(root_params, s);
    if (s->points) {
        g_ptr_array_unref(s->points);
    }
    if (s->names) {
        g_ptr_array_unref(s->names);
    }
    g_free(s);
}

static gboolean
check_value(const cJSON *v, const char *path, GError **error)
{
    if (cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsBool(v)) {
        return TRUE;
    }
    g_autofree char *got = hs_json_describe(v);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                "%s: expected a string, number or boolean (got %s)", path, got);
    return FALSE;
}

static gboolean
check_name(const char *name, const char *path, GError **error)
{
    if (strchr(name, '.') || g_strv_contains(run_options, name)) {
        return TRUE;
    }
    g_autofree char *list = g_strjoinv(", ", (char **) run_options);
    g_autofree char *got = hs_escape(name);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                "%s: expected a run option (%s) or a config key such as npu.sram_kib "
                "(got \"%s\")", path, list, got);
    return FALSE;
}

/* Check an object of settings (base or an explicit point). */
static gboolean
check_settings(const cJSON *obj, const char *path, GError **error)
{
    if (obj == NULL) {
        return TRUE;
    }
    if (!cJSON_IsObject(obj)) {
        g_autofree char *got = hs_json_describe(obj);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected an object of settings (got %s)", path, got);
        return FALSE;
    }
    if (!hs_json_check_unique_keys(obj, path, HS_CONFIG_ERROR, error)) {
        return FALSE;
    }
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, obj) {
        g_autofree char *sub = hs_json_path_key(path, it->string);
        if (!check_name(it->string, sub, error) || !check_value(it, sub, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gint
cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A point from @base with @extra (may be NULL) laid over it, names sorted. */
static HsSweepPoint *
point_new(const cJSON *base, const cJSON *extra)
{
    g_autoptr(GHashTable) set = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *layers[2] = { base, extra };
    for (int l = 0; l < 2; l++) {
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, layers[l]) {
            g_hash_table_insert(set, it->string, (gpointer) it);
        }
    }
    g_autofree const char **names = (const char **) g_hash_table_get_keys_as_array(set, NULL);
    guint n = g_hash_table_size(set);
    qsort(names, n, sizeof(char *), (int (*)(const void *, const void *)) cmp_str);
    HsSweepPoint *p = g_new0(HsSweepPoint, 1);
    p->settings = cJSON_CreateObject();
    for (guint i = 0; i < n; i++) {
        cJSON_AddItemToObject(p->settings, names[i],
                              cJSON_Duplicate(g_hash_table_lookup(set, names[i]), TRUE));
    }
    p->key = hs_json_print(p->settings, FALSE);
    return p;
}

/* Append the product of axes [@a, n) to @s, over @cur. */
static void
expand(HsSweepSpec *s, const cJSON *base, const cJSON *const *axes, int a, int n, cJSON *cur)
{
    if (a == n) {
        g_ptr_array_add(s->points, point_new(base, cur));
        return;
    }
    const cJSON *v = NULL;
    cJSON_ArrayForEach(v, axes[a]) {
        cJSON_DeleteItemFromObjectCaseSensitive(cur, axes[a]->string);
        cJSON_AddItemToObject(cur, axes[a]->string, cJSON_Duplicate(v, TRUE));
        expand(s, base, axes, a + 1, n, cur);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cur, axes[a]->string);
}

static HsSweepSpec *
spec_from_json(const cJSON *root, guint max_points, GError **error)
{
    g_autoptr(HsSweepSpec) s = g_new0(HsSweepSpec, 1);
    if (!hs_param_apply(root, "$", root_params, s, root_extra_keys, NULL, error)) {
        return NULL;
    }
    const cJSON *it = NULL;
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(root, "base");
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    if (!check_settings(base, "$.base", error)) {
        return NULL;
    }
    if (axes && (!cJSON_IsObject(axes) ||
                 !hs_json_check_unique_keys(axes, "$.axes", HS_CONFIG_ERROR, error))) {
        if (error && *error == NULL) {
            g_autofree char *got = hs_json_describe(axes);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "$.axes: expected an object of name -> array of values (got %s)", got);
        }
        return NULL;
    }
    g_autoptr(GPtrArray) axis = g_ptr_array_new();
    double total = 1;            /* a double: 30 axes of 10 values do not wrap */
    cJSON_ArrayForEach(it, axes) {
        g_autofree char *path = hs_json_path_key("$.axes", it->string);
        if (!check_name(it->string, path, error)) {
            return NULL;
        }
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0) {
            g_autofree char *got = hs_json_describe(it);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: expected a non-empty array of values (got %s)", path,
                        cJSON_IsArray(it) ? "an empty array" : got);
            return NULL;
        }
        int i = 0;
        const cJSON *v = NULL;
        cJSON_ArrayForEach(v, it) {
            g_autofree char *vp = hs_json_path_index(path, i++);
            if (!check_value(v, vp, error)) {
                return NULL;
            }
        }
        total *= cJSON_GetArraySize(it);
        g_ptr_array_add(axis, (gpointer) it);
    }
    if (total > max_points) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.axes: expected at most %u combinations (got %.15g)", max_points, total);
        return NULL;
    }
    if (pts && !cJSON_IsArray(pts)) {
        g_autofree char *got = hs_json_describe(pts);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.points: expected an array of settings objects (got %s)", got);
        return NULL;
    }
    int i = 0;
    cJSON_ArrayForEach(it, pts) {
        g_autofree char *path = hs_json_path_index("$.points", i++);
        if (!check_settings(it, path, error)) {
            return NULL;
        }
    }
    s->points = g_ptr_array_new_with_free_func((GDestroyNotify) point_free);
    if (axis->len || pts == NULL || cJSON_GetArraySize(pts) == 0) {
        g_autoptr(cJSON) cur = cJSON_CreateObject();
        expand(s, base, (const cJSON *const *) axis->pdata, 0, (int) axis->len, cur);
    }
    cJSON_ArrayForEach(it, pts) {
        g_ptr_array_add(s->points, point_new(base, it));
    }
    /* the same point twice would be one row: keep the first.  (Not
     * g_hash_table_add alone: on a duplicate it stores the new key, which
     * is freed with its point; a third copy then read freed memory, found
     * by fuzz-sweep.) */
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint k = 0; k < s->points->len;) {
        HsSweepPoint *p = s->points->pdata[k];
        if (g_hash_table_contains(seen, p->key)) {
            g_ptr_array_remove_index(s->points, k);
            continue;
        }
        g_hash_table_add(seen, p->key);
        cJSON_ArrayForEach(it, p->settings) {
            g_hash_table_add(names, it->string);
        }
        k++;
    }
    s->names = g_ptr_array_new_with_free_func(g_free);
    GHashTableIter hi;
    gpointer name;
    g_hash_table_iter_init(&hi, names);
    while (g_hash_table_iter_next(&hi, &name, NULL)) {
        g_ptr_array_add(s->names, g_strdup(name));
    }
    g_ptr_array_sort(s->names, cmp_str);
    return g_steal_pointer(&s);
}

/* The spec in @root (read from @path) with @set over its base. */
static HsSweepSpec *
spec_from_root(cJSON *root, const char *path, const char *const *set, guint max_points,
               GError **error)
{
    /* --set on the command line: part of every point's base */
    g_autoptr(HsOverrides) ovr = hs_overrides_new(set, error);
    if (ovr == NULL) {
        return NULL;
    }
    cJSON *base = cJSON_GetObjectItemCaseSensitive(root, "base");
    for (const char *const *a = set; a && *a && cJSON_IsObject(base ? base : root); a++) {
        if (base == NULL) {
            base = cJSON_AddObjectToObject(root, "base");
        }
        const char *eq = strchr(*a, '=');
        g_autofree char *name = g_strndup(*a, eq - *a);
        cJSON *v = cJSON_ParseWithOpts(eq + 1, NULL, TRUE);
        cJSON_DeleteItemFromObjectCaseSensitive(base, name);
        cJSON_AddItemToObject(base, name, v ? v : cJSON_CreateString(eq + 1));
    }
    HsSweepSpec *s = spec_from_json(root, max_points, error);
    if (s == NULL) {
        g_prefix_error(error, "%s: ", path);
        return NULL;
    }
    s->path = g_strdup(path);
    return s;
}

HsSweepSpec *
hs_sweep_spec_load(const char *path, const char *const *set, GError **error)
{
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_CONFIG_ERROR, error);
    return root ? spec_from_root(root, path, set, HS_SWEEP_MAX_POINTS, error) : NULL;
}

HsSweepSpec *
hs_sweep_spec_parse(const char *text, gsize len, const char *what, const char *const *set,
                    guint max_points, GError **error)
{
    g_autoptr(cJSON) root = hs_json_parse(text, len, what, HS_CONFIG_ERROR, error);
    return root ? spec_from_root(root, what, set, max_points, error) : NULL;
}

char *
hs_sweep_column(const char *setting)
{
    char *c = g_strdup(setting);
    for (char *p = c; *p; p++) {
        if (!g_ascii_isalnum(*p)) {
            *p = '_';
        }
    }
    return c;
}

/* A setting's value as a command-line word. */
static char *
value_text(const cJSON *v, gboolean for_set)
{
    if (cJSON_IsString(v)) {
        /* --set reads VALUE as JSON first: a string that would parse as
         * something else is quoted */
        g_autoptr(cJSON) as_json = for_set ? cJSON_Parse(v->valuestring) : NULL;
        return as_json ? hs_json_print(v, FALSE) : g_strdup(v->valuestring);
    }
    return hs_json_print(v, FALSE);
}

GStrv
hs_sweep_point_argv(const HsSweepPoint *p)
{
    GPtrArray *b = g_ptr_array_new();
    g_ptr_array_add(b, g_strdup("run"));
    g_ptr_array_add(b, g_strdup("--format"));
    g_ptr_array_add(b, g_strdup("json"));
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, p->settings) {
        if (strchr(it->string, '.')) {
            g_autofree char *v = value_text(it, TRUE);
            g_ptr_array_add(b, g_strdup("--set"));
            g_ptr_array_add(b, g_strdup_printf("%s=%s", it->string, v));
        } else {
            g_ptr_array_add(b, g_strdup_printf("--%s", it->string));
            g_ptr_array_add(b, value_text(it, FALSE));
        }
    }
    g_ptr_array_add(b, NULL);
    return (GStrv) g_ptr_array_free(b, FALSE);
}
