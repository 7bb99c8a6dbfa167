/*
 * sweep-spec.c - a sweep spec and its points.  See sweep.h.
 */
#include "sim/cli/sweep.h"
#include "sim/cli/run-opts.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"
#include "sim/util/nearest.h"
#include "sim/util/override.h"
#include "sim/util/param.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* `run` options that are not a point's settings: a sweep stores JSON, a
 * config key is a setting of its own (npu.sram_kib), a plug-in is loaded
 * by the sweep's process */
static const char *const not_settings[] = { "format", "set", "policy-plugin", NULL };

/* How `run` parses option --@name (its GOptionEntry, the table run and
 * compare parse with); FALSE if a point cannot set it. */
static gboolean
option_arg(const char *name, GOptionArg *arg)
{
    if (strcmp(name, "policy") == 0) {
        *arg = G_OPTION_ARG_STRING;    /* run's own option (cmd-run.c, sweep-point.c) */
        return TRUE;
    }
    HsRunOpts scratch;
    g_autofree GOptionEntry *entries = hs_run_opts_entries(&scratch);
    for (const GOptionEntry *e = entries; e->long_name; e++) {
        if (strcmp(e->long_name, name) == 0 && !g_strv_contains(not_settings, name)) {
            *arg = e->arg;
            return TRUE;
        }
    }
    return FALSE;
}

/* The options a point may set, "policy" first.  (transfer full) */
static GStrv
option_names(void)
{
    HsRunOpts scratch;
    g_autofree GOptionEntry *entries = hs_run_opts_entries(&scratch);
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    g_strv_builder_add(b, "policy");
    for (const GOptionEntry *e = entries; e->long_name; e++) {
        if (!g_strv_contains(not_settings, e->long_name)) {
            g_strv_builder_add(b, e->long_name);
        }
    }
    return g_strv_builder_end(b);
}

/* A setting's name: a run option, or a config key as --set takes it. */
static gboolean
check_name(const char *name, const char *path, GError **error)
{
    GOptionArg arg;
    if (option_arg(name, &arg) || (strchr(name, '.') && hs_override_key_valid(name))) {
        return TRUE;
    }
    g_auto(GStrv) names = option_names();
    g_autofree char *list = g_strjoinv(", ", names);
    g_autofree char *got = hs_escape(name);
    const char *near = strchr(name, '.') ? NULL : hs_nearest(name, (const char *const *) names);
    g_autofree char *hint = near ? g_strdup_printf("did you mean %s? ", near) : NULL;
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                "%s: expected a run option (%s%s) or a config key such as npu.sram_kib "
                "(got \"%s\")", path, hint ? hint : "", list, got);
    return FALSE;
}

/*
 * The value @v of setting @name at @path.  A run option: what its entry
 * parses (a string, or an integer in the range run puts on it, or a
 * number), so a point fails here, with the JSON path, not when it runs.  A
 * config key: any value --set takes; the config's own table checks it
 * when the point loads it (override.h).
 */
static gboolean
check_value(const char *name, const cJSON *v, const char *path, GError **error)
{
    GOptionArg arg = G_OPTION_ARG_NONE;
    const char *want = "a string, number or boolean";
    g_autofree char *range = NULL;
    gboolean ok = FALSE;
    if (!option_arg(name, &arg)) {
        ok = cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsBool(v);
    } else if (arg == G_OPTION_ARG_INT || arg == G_OPTION_ARG_INT64) {
        /* a JSON number holds integers exactly to 2^53 */
        double lo = arg == G_OPTION_ARG_INT ? G_MININT : -9007199254740992.0;
        double hi = arg == G_OPTION_ARG_INT ? G_MAXINT : 9007199254740992.0;
        hs_run_opts_int_range(name, &lo, &hi);
        double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        ok = x >= lo && x <= hi && x == floor(x);
        want = range = g_strdup_printf("an integer in [%.0f, %.0f]", lo, hi);
    } else if (arg == G_OPTION_ARG_DOUBLE) {
        ok = cJSON_IsNumber(v) && isfinite(v->valuedouble);
        want = "a finite number";
    } else {
        ok = cJSON_IsString(v);
        want = "a string";
    }
    if (ok) {
        return TRUE;
    }
    g_autofree char *got = hs_json_describe(v);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                "%s: expected %s (got %s)", path, want, got);
    return FALSE;
}

/* A member of $.base or of a $.points[i]: one setting. */
static gboolean
setting_entry(const char *name, const cJSON *v, const char *path, GError **error)
{
    return check_name(name, path, error) && check_value(name, v, path, error);
}

/* A member of $.axes: a setting and the values it takes. */
static gboolean
axis_entry(const char *name, const cJSON *v, const char *path, GError **error)
{
    if (!check_name(name, path, error)) {
        return FALSE;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
        g_autofree char *got = hs_json_describe(v);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected a non-empty array of values (got %s)", path,
                    cJSON_IsArray(v) ? "an empty array" : got);
        return FALSE;
    }
    int i = 0;
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, v) {
        g_autofree char *ep = hs_json_path_index(path, i++);
        if (!check_value(name, e, ep, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The spec: its settings maps are open (any run option, any config key),
 * each member checked by the callbacks above. */
static const HsParam root_params[] = {
    HS_PARAM_NAME_OPT("description", HsSweepSpec, description, "what the sweep asks"),
    HS_PARAM_MAP("base", HsSweepSpec, base, setting_entry, "an object of settings",
                 "settings every point has"),
    HS_PARAM_MAP("axes", HsSweepSpec, axes, axis_entry,
                 "an object of name -> array of values", "every combination is a point"),
    HS_PARAM_MAP_ARRAY("variants", HsSweepSpec, variants, setting_entry,
                       "an object of settings",
                       "every combination of the axes runs once with each (a system: a "
                       "policy and its stack)"),
    HS_PARAM_MAP_ARRAY("points", HsSweepSpec, explicit_points, setting_entry,
                       "an object of settings", "points listed one by one"),
    HS_PARAM_END
};

static void
point_free(HsSweepPoint *p)
{
    g_free(p->key);
    g_free(p);
}

cJSON *
hs_sweep_point_settings(const HsSweepPoint *p)
{
    return cJSON_Parse(p->key);
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

static gint
cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A point from @base with @variant and then @extra (each may be NULL)
 * laid over it, names sorted; each name goes into @names_seen (a set of
 * owned strings). */
static HsSweepPoint *
point_new(const cJSON *base, const cJSON *variant, const cJSON *extra, GHashTable *names_seen)
{
    g_autoptr(GHashTable) set = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *layers[3] = { base, variant, extra };
    for (int l = 0; l < 3; l++) {
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, layers[l]) {
            g_hash_table_insert(set, it->string, (gpointer) it);
        }
    }
    g_autofree const char **names = (const char **) g_hash_table_get_keys_as_array(set, NULL);
    guint n = g_hash_table_size(set);
    qsort(names, n, sizeof(char *), (int (*)(const void *, const void *)) cmp_str);
    g_autoptr(cJSON) settings = cJSON_CreateObject();
    for (guint i = 0; i < n; i++) {
        cJSON_AddItemReferenceToObject(settings, names[i],
                                       g_hash_table_lookup(set, names[i]));
        if (!g_hash_table_contains(names_seen, names[i])) {
            g_hash_table_add(names_seen, g_strdup(names[i]));
        }
    }
    HsSweepPoint *p = g_new0(HsSweepPoint, 1);
    p->key = hs_json_print(settings, FALSE);
    return p;
}

/* Append the product of axes [@a, n) to @s, over @cur, on @base with
 * @variant (may be NULL). */
static void
expand(HsSweepSpec *s, const cJSON *base, const cJSON *variant, const cJSON *const *axes, int a,
       int n, cJSON *cur, GHashTable *names)
{
    if (a == n) {
        g_ptr_array_add(s->points, point_new(base, variant, cur, names));
        return;
    }
    const cJSON *v = NULL;
    cJSON_ArrayForEach(v, axes[a]) {
        cJSON_DeleteItemFromObjectCaseSensitive(cur, axes[a]->string);
        cJSON_AddItemToObject(cur, axes[a]->string, cJSON_Duplicate(v, TRUE));
        expand(s, base, variant, axes, a + 1, n, cur, names);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cur, axes[a]->string);
}

static HsSweepSpec *
spec_from_json(const cJSON *root, guint max_points, GError **error)
{
    g_autoptr(HsSweepSpec) s = g_new0(HsSweepSpec, 1);
    if (!hs_param_apply(root, "$", root_params, s, NULL, NULL, error)) {
        return NULL;
    }
    const cJSON *it = NULL;
    const cJSON *base = s->base, *pts = s->explicit_points;
    g_autoptr(GPtrArray) axis = g_ptr_array_new();
    const int n_variants = s->variants ? cJSON_GetArraySize(s->variants) : 0;
    double total = MAX(n_variants, 1);  /* a double: 30 axes of 10 values do not wrap */
    cJSON_ArrayForEach(it, s->axes) {
        total *= cJSON_GetArraySize(it);
        g_ptr_array_add(axis, (gpointer) it);
    }
    if (total > max_points) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "$.axes: expected at most %u combinations (got %.15g)", max_points, total);
        return NULL;
    }
    s->points = g_ptr_array_new_with_free_func((GDestroyNotify) point_free);
    g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (axis->len || n_variants || pts == NULL || cJSON_GetArraySize(pts) == 0) {
        /* each variant over the base (the variants vary slowest), then
         * every combination of the axes over that */
        g_autoptr(cJSON) cur = cJSON_CreateObject();
        const cJSON *v = s->variants ? s->variants->child : NULL;
        do {
            expand(s, base, v, (const cJSON *const *) axis->pdata, 0, (int) axis->len, cur,
                   names);
        } while (v && (v = v->next) != NULL);
    }
    cJSON_ArrayForEach(it, pts) {
        g_ptr_array_add(s->points, point_new(base, NULL, it, names));
    }
    /* the same point twice would be one row: keep the first.  (Not
     * g_hash_table_add alone: on a duplicate it stores the new key, which
     * is freed with its point; a third copy then read freed memory, found
     * by fuzz-sweep.) */
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint k = 0; k < s->points->len;) {
        HsSweepPoint *p = s->points->pdata[k];
        if (g_hash_table_contains(seen, p->key)) {
            g_ptr_array_remove_index(s->points, k);
            continue;
        }
        g_hash_table_add(seen, p->key);
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
    g_autoptr(cJSON) settings = hs_sweep_point_settings(p);
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, settings) {
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
