/*
 * override.c - see override.h.
 */
#include "sim/util/override.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"

#include <string.h>

/*
 * Documents other than the SoC a path may name by its first component.
 * A new kind of config document is one more row here (and a loader that
 * calls hs_overrides_apply(o, "NAME", root, error) on its JSON).
 */
static const char *const hs_override_docs[] = { "model", "stack", "soc", NULL };

typedef struct HsOverride {
    char *arg;          /* "npu.sram_kib=16384", as given */
    char *doc;          /* "soc" */
    char *key;          /* "npu.sram_kib" without the document prefix */
    char *target;       /* "stack@NAME.KEY": the one stack it edits (NULL: every one) */
    cJSON *value;       /* parsed VALUE */
    char *json_path;    /* set by apply: "$.processors[2].sram_kib" */
    char *parent_path;  /* "$.processors[2]" */
} HsOverride;

struct HsOverrides {
    GPtrArray *items;   /* of HsOverride *, owned, in command-line order */
};

static void
override_free(HsOverride *v)
{
    g_free(v->arg);
    g_free(v->doc);
    g_free(v->key);
    g_free(v->target);
    cJSON_Delete(v->value);
    g_free(v->json_path);
    g_free(v->parent_path);
    g_free(v);
}

void
hs_overrides_free(HsOverrides *o)
{
    if (o == NULL) {
        return;
    }
    g_ptr_array_unref(o->items);
    g_free(o);
}

const char *
hs_override_doc(const char *path)
{
    for (const char *const *d = hs_override_docs; *d; d++) {
        size_t n = strlen(*d);
        /* "stack@NAME.KEY" names one stack, "soc@NAME.KEY" one SoC
         * (path[n] is read only once the first n characters matched: a
         * shorter path ends before it) */
        if (strncmp(path, *d, n) == 0 &&
            (path[n] == '.' || (path[n] == '@' && strcmp(*d, "model") != 0))) {
            return *d;
        }
    }
    return "soc";
}

gboolean
hs_override_key_valid(const char *key)
{
    if (key[0] == '\0' || key[0] == '.' || g_str_has_suffix(key, ".") || strstr(key, "..")) {
        return FALSE;
    }
    /* "stack@NAME.KEY" or "soc@NAME.KEY": one '@', right after "stack" or
     * "soc", NAME non-empty */
    const char *at = strchr(key, '@');
    if (at && (!((at == key + strlen("stack") && g_str_has_prefix(key, "stack")) ||
                 (at == key + strlen("soc") && g_str_has_prefix(key, "soc"))) ||
               at[1] == '.' || at[1] == '\0' || strchr(at + 1, '.') == NULL)) {
        return FALSE;
    }
    for (const char *p = key; *p; p++) {
        if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-' && *p != '.' && p != at) {
            return FALSE;
        }
    }
    return TRUE;
}

/* NAME of a valid "stack@NAME.KEY" or "soc@NAME.KEY" path, or NULL */
static char *
path_target(const char *path)
{
    const char *at = strchr(path, '@');
    return at ? g_strndup(at + 1, strchr(at, '.') - at - 1) : NULL;
}

char *
hs_override_target(const char *arg, const char *doc)
{
    const char *eq = strchr(arg, '=');
    g_autofree char *path = eq ? g_strndup(arg, eq - arg) : NULL;
    if (path == NULL || !hs_override_key_valid(path) ||
        strcmp(hs_override_doc(path), doc) != 0) {
        return NULL;
    }
    return path_target(path);
}

HsOverrides *
hs_overrides_new(const char *const *args, GError **error)
{
    g_autoptr(HsOverrides) o = g_new0(HsOverrides, 1);
    o->items = g_ptr_array_new_with_free_func((GDestroyNotify) override_free);
    for (const char *const *a = args; a && *a; a++) {
        const char *eq = strchr(*a, '=');
        g_autofree char *path = eq ? g_strndup(*a, eq - *a) : NULL;
        if (path == NULL || !hs_override_key_valid(path)) {
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--set %s: expected PATH=VALUE with PATH a config key such as "
                        "npu.sram_kib, memory.peak_gbps or model.num_hidden_layers", *a);
            return NULL;
        }
        HsOverride *v = g_new0(HsOverride, 1);
        v->arg = g_strdup(*a);
        v->doc = g_strdup(hs_override_doc(path));
        size_t skip = strchr(path, '.') && g_str_has_prefix(path, v->doc) &&
                      path[strlen(v->doc)] == '.' ? strlen(v->doc) + 1 : 0;
        v->target = path_target(path);
        if (v->target) {
            skip = strchr(strchr(path, '@'), '.') + 1 - path;
        }
        v->key = g_strdup(path + skip);
        const char *end = NULL;
        v->value = cJSON_ParseWithOpts(eq + 1, &end, TRUE);
        if (v->value == NULL) {
            v->value = cJSON_CreateString(eq + 1);      /* a bare word: a string */
        }
        g_ptr_array_add(o->items, v);
    }
    return g_steal_pointer(&o);
}

guint
hs_overrides_count(const HsOverrides *o, const char *doc)
{
    guint n = 0;
    for (guint i = 0; o && i < o->items->len; i++) {
        const HsOverride *v = o->items->pdata[i];
        n += doc == NULL || strcmp(v->doc, doc) == 0;
    }
    return n;
}

/* The processor of the SoC document called @name, or NULL. */
static cJSON *
find_processor(cJSON *root, const char *name, int *index)
{
    cJSON *procs = cJSON_GetObjectItemCaseSensitive(root, "processors");
    cJSON *p = NULL;
    int i = 0;
    cJSON_ArrayForEach(p, procs) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");
        if (cJSON_IsObject(p) && cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
            *index = i;
            return p;
        }
        i++;
    }
    return NULL;
}

/* "no section "x" (known: memory, sync, processors cpu, gpu, npu)". */
static void
set_no_section(const HsOverride *v, const char *doc, cJSON *root, cJSON *at,
               const char *comp, GError **error)
{
    g_autoptr(GString) known = g_string_new(NULL);
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, at) {
        if (cJSON_IsObject(it) && !cJSON_HasObjectItem(it, "value")) {
            g_string_append_printf(known, "%s%s", known->len ? ", " : "", it->string);
        }
    }
    if (at == root && strcmp(doc, "soc") == 0) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "processors")) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
            if (cJSON_IsString(n)) {
                g_string_append_printf(known, "%s%s", known->len ? ", " : "",
                                       n->valuestring);
            }
        }
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "--set %s: no processor or section \"%s\" in the %s config (known: %s)",
                v->arg, comp, doc, known->len ? known->str : "none");
}

/* @comp as an index of the array @at (at @path): digits, below its size. */
static gboolean
array_index(const HsOverride *v, const char *path, const cJSON *at, const char *comp,
            int *index, GError **error)
{
    const int size = cJSON_GetArraySize(at);
    guint64 i = 0;
    if (!g_ascii_string_to_unsigned(comp, 10, 0, G_MAXINT, &i, NULL) || (int) i >= size) {
        g_autofree char *got = hs_escape(comp);
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--set %s: %s is an array of %d: expected an index in [0, %d] "
                    "(got \"%s\")", v->arg, path, size, size - 1, got);
        return FALSE;
    }
    *index = (int) i;
    return TRUE;
}

/* Does --set create the objects on its path that @doc leaves out?  A
 * stack's: every object below its processors' sections is optional (the
 * dequant tables, the per-architecture entries), so a stack file may leave
 * out the one a user means to set; the stack's loader then refuses a
 * misspelt one by name (hs_overrides_explain says which --set).  A SoC's
 * sections and processors are named, never made up. */
static gboolean
creates_objects(const char *doc)
{
    return strcmp(doc, "stack") == 0;
}

/* The object @v's key is a member of in @root (its JSON path in
 * *@path_out), walked as --set names it: a SoC's processor by its name,
 * an array's element by its index; with @create, an absent object on the
 * way is added (creates_objects).  NULL with *error. */
static cJSON *
walk_to_parent(const HsOverride *v, cJSON *root, gboolean create, char **path_out,
               GError **error)
{
    g_auto(GStrv) comps = g_strsplit(v->key, ".", -1);
    guint n = g_strv_length(comps);
    cJSON *at = root;
    g_autofree char *path = g_strdup("$");
    for (guint i = 0; i + 1 < n; i++) {
        int index = 0;
        cJSON *next = NULL;
        char *sub = NULL;
        if (at == root && strcmp(v->doc, "soc") == 0 &&
            (next = find_processor(root, comps[i], &index)) != NULL) {
            sub = hs_json_path_index("$.processors", index);
        } else if (cJSON_IsArray(at)) {
            /* an element by its index: "gpu.dvfs.points.3.volt_mv" */
            if (!array_index(v, path, at, comps[i], &index, error)) {
                return NULL;
            }
            next = cJSON_GetArrayItem(at, index);
            sub = hs_json_path_index(path, index);
        } else {
            next = cJSON_GetObjectItemCaseSensitive(at, comps[i]);
            if (next == NULL && create && i > 0 && cJSON_IsObject(at)) {
                next = cJSON_AddObjectToObject(at, comps[i]);
            }
            if (!(cJSON_IsObject(next) || cJSON_IsArray(next)) ||
                cJSON_HasObjectItem(next, "value")) {
                if (next != NULL) {
                    /* "gpu.matmul_efficiency.x": a value stands there */
                    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                                "--set %s: \"%s\" in the %s config is a value, not a section",
                                v->arg, comps[i], v->doc);
                } else {
                    set_no_section(v, v->doc, root, at, comps[i], error);
                }
                return NULL;
            }
            sub = hs_json_path_key(path, comps[i]);
        }
        g_free(path);
        path = sub;
        at = next;
    }
    if (!cJSON_IsObject(at)) {
        g_autofree char *got = hs_json_describe(at);
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--set %s: the %s config is not an object (got %s)", v->arg, v->doc, got);
        return NULL;
    }
    *path_out = g_steal_pointer(&path);
    return at;
}

/* @v's last component: the key it sets in its parent object */
static const char *
leaf_key(const HsOverride *v)
{
    const char *dot = strrchr(v->key, '.');
    return dot ? dot + 1 : v->key;
}

static gboolean
apply_one(HsOverride *v, cJSON *root, GError **error)
{
    g_autofree char *path = NULL;
    cJSON *at = walk_to_parent(v, root, creates_objects(v->doc), &path, error);
    if (at == NULL) {
        return FALSE;
    }
    const char *leaf = leaf_key(v);
    g_free(v->parent_path);
    g_free(v->json_path);
    v->parent_path = g_strdup(path);
    v->json_path = hs_json_path_key(path, leaf);
    cJSON *old = cJSON_GetObjectItemCaseSensitive(at, leaf);
    if (cJSON_IsObject(old) && cJSON_HasObjectItem(old, "value")) {
        /* a sourced value keeps its form; its source says who changed it */
        cJSON_ReplaceItemInObjectCaseSensitive(old, "value", cJSON_Duplicate(v->value, TRUE));
        g_autofree char *src = g_strdup_printf("--set %s", v->arg);
        cJSON_DeleteItemFromObjectCaseSensitive(old, "source");
        cJSON_AddStringToObject(old, "source", src);
    } else if (old) {
        cJSON_ReplaceItemInObjectCaseSensitive(at, leaf, cJSON_Duplicate(v->value, TRUE));
    } else if (creates_objects(v->doc) && at != root) {
        /* a key the stack's file leaves out: it says who set it too */
        cJSON *sourced = cJSON_AddObjectToObject(at, leaf);
        g_autofree char *src = g_strdup_printf("--set %s", v->arg);
        cJSON_AddItemToObject(sourced, "value", cJSON_Duplicate(v->value, TRUE));
        cJSON_AddStringToObject(sourced, "source", src);
    } else {
        cJSON_AddItemToObject(at, leaf, cJSON_Duplicate(v->value, TRUE));
    }
    return TRUE;
}

/* Is @v aimed at the document @root (a targeted one at its "name" only)? */
static gboolean
aims_at(const HsOverride *v, const char *doc, const cJSON *root)
{
    if (strcmp(v->doc, doc) != 0) {
        return FALSE;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    return v->target == NULL ||
           (cJSON_IsString(name) && strcmp(name->valuestring, v->target) == 0);
}

gboolean
hs_overrides_apply(const HsOverrides *o, const char *doc, cJSON *root, GError **error)
{
    for (guint i = 0; o && i < o->items->len; i++) {
        HsOverride *v = o->items->pdata[i];
        if (aims_at(v, doc, root) && !apply_one(v, root, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
hs_overrides_apply_soc(cJSON *root, void *o, GError **error)
{
    return hs_overrides_apply(o, "soc", root, error);
}

gboolean
hs_overrides_apply_model(cJSON *root, void *o, GError **error)
{
    return hs_overrides_apply(o, "model", root, error);
}

gboolean
hs_override_get_number(const cJSON *root, const char *path, double *value)
{
    g_autofree char *arg = g_strconcat(path, "=0", NULL);
    const char *const args[] = { arg, NULL };
    g_autoptr(HsOverrides) o = hs_overrides_new(args, NULL);
    if (o == NULL) {
        return FALSE;
    }
    const HsOverride *v = o->items->pdata[0];
    g_autofree char *parent_path = NULL;
    const cJSON *at = walk_to_parent(v, (cJSON *) root, FALSE, &parent_path, NULL);
    const cJSON *item = at ? cJSON_GetObjectItemCaseSensitive(at, leaf_key(v)) : NULL;
    if (cJSON_IsObject(item)) {
        item = cJSON_GetObjectItemCaseSensitive(item, "value");   /* {value, source} */
    }
    if (!cJSON_IsNumber(item)) {
        return FALSE;
    }
    *value = item->valuedouble;
    return TRUE;
}

/* Where @path is followed in @msg by ':' or '.': the loader's message. */
static const char *
find_path(const char *msg, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = strstr(msg, path); p; p = strstr(p + 1, path)) {
        if (p[n] == ':' || p[n] == '.') {
            return p + n;
        }
    }
    return NULL;
}

void
hs_overrides_explain(const HsOverrides *o, const char *doc, GError **error)
{
    if (o == NULL || error == NULL || *error == NULL) {
        return;
    }
    const char *msg = (*error)->message;
    for (guint i = o->items->len; i-- > 0;) {
        const HsOverride *v = o->items->pdata[i];
        if (strcmp(v->doc, doc) != 0 || v->json_path == NULL) {
            continue;
        }
        const char *rest = find_path(msg, v->json_path);
        /* an unknown key on its path: its own, or an object --set made */
        for (const char *dot = strrchr(v->json_path, '.'); rest == NULL && dot;
             dot = g_strrstr_len(v->json_path, dot - v->json_path, ".")) {
            g_autofree char *parent = g_strndup(v->json_path, dot - v->json_path);
            const char *end = strchr(dot + 1, '.');
            g_autofree char *comp = end ? g_strndup(dot + 1, end - dot - 1) : g_strdup(dot + 1);
            g_autofree char *unknown = g_strdup_printf("%s: unknown key \"%s\"", parent, comp);
            const char *at = strstr(msg, unknown);
            rest = at ? at + strlen(parent) : NULL;
        }
        if (rest == NULL) {
            continue;
        }
        rest += *rest == ':' ? 1 : 0;
        rest += *rest == ' ' ? 1 : 0;
        g_autofree char *text = g_strdup_printf("--set %s: %s", v->arg, rest);
        g_clear_error(error);
        g_set_error_literal(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION, text);
        return;
    }
    /* a check across keys (ceiling_gbps at most peak_gbps) names another
     * key: say which overrides the document had */
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint i = 0; i < o->items->len; i++) {
        const HsOverride *v = o->items->pdata[i];
        if (strcmp(v->doc, doc) == 0 && v->json_path) {
            g_string_append_printf(list, "%s--set %s", list->len ? ", " : "", v->arg);
        }
    }
    if (list->len) {
        g_prefix_error(error, "with %s: ", list->str);
    }
}

gboolean
hs_overrides_check_known(const HsOverrides *o, const char *doc, const cJSON *known,
                         GError **error)
{
    for (guint i = 0; o && i < o->items->len; i++) {
        const HsOverride *v = o->items->pdata[i];
        if (strcmp(v->doc, doc) != 0 || cJSON_HasObjectItem(known, v->key)) {
            continue;
        }
        g_autoptr(GString) list = g_string_new(NULL);
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, known) {
            g_string_append_printf(list, "%s%s", list->len ? ", " : "", it->string);
        }
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "--set %s: unknown %s key \"%s\" (known keys: %s)", v->arg, doc,
                    v->key, list->str);
        return FALSE;
    }
    return TRUE;
}

gboolean
hs_overrides_check_targets(const HsOverrides *o, const char *doc, const char *dir,
                           GError **error)
{
    for (guint i = 0; o && i < o->items->len; i++) {
        const HsOverride *v = o->items->pdata[i];
        if (v->target == NULL || strcmp(v->doc, doc) != 0) {
            continue;
        }
        g_autofree char *file = g_strdup_printf("%s.json", v->target);
        g_autofree char *path = g_build_filename(dir, file, NULL);
        if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
            gboolean stack = strcmp(doc, "stack") == 0;
            g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                        "--set %s: no %s \"%s\" (hetero-sim list %s)", v->arg,
                        stack ? "stack" : "SoC", v->target, stack ? "stacks" : "socs");
            return FALSE;
        }
    }
    return TRUE;
}

GStrv
hs_overrides_targets(const HsOverrides *o, const char *doc)
{
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; o && i < o->items->len; i++) {
        const HsOverride *v = o->items->pdata[i];
        if (v->target && strcmp(v->doc, doc) == 0 && g_hash_table_add(seen, v->target)) {
            g_strv_builder_add(b, v->target);
        }
    }
    return g_strv_builder_end(b);
}

cJSON *
hs_overrides_to_json(const HsOverrides *o)
{
    cJSON *a = cJSON_CreateArray();
    for (guint i = 0; o && i < o->items->len; i++) {
        const HsOverride *v = o->items->pdata[i];
        cJSON_AddItemToArray(a, cJSON_CreateString(v->arg));
    }
    return a;
}
