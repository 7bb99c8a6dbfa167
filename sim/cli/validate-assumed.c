/*
 * validate-assumed.c - the constants of the shipped configs that no
 * source gives (see validate.h: hs_assumed_collect), for `validate
 * --sensitivity`: every numeric key whose source begins "assumed" (or
 * "derived"), with the --set edits that carry it.  A stack key is changed
 * where it is defined and in every stack that inherits it ("base")
 * without setting it itself, as the file's value would reach them; a SoC
 * key only in that SoC (soc@NAME); the same key of every element of an
 * array (an operating-point table's voltages) is one assumption.
 */
#include "sim/cli/validate.h"
#include "sim/cli/config.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <stdio.h>
#include <string.h>

static void
edit_clear(HsAssumedEdit *e)
{
    g_free(e->path);
}

void
hs_assumed_free(HsAssumed *a)
{
    g_free(a->key);
    g_free(a->file);
    g_free(a->soc);
    g_free(a->source);
    g_array_unref(a->edits);
    g_free(a);
}

static HsAssumed *
assumed_new(const char *key, const char *file, const char *soc, double value,
            const char *source)
{
    HsAssumed *a = g_new0(HsAssumed, 1);
    a->key = g_strdup(key);
    a->file = g_strdup(file);
    a->soc = g_strdup(soc);
    a->lo = a->hi = value;
    a->source = g_strdup(source);
    a->edits = g_array_new(FALSE, FALSE, sizeof(HsAssumedEdit));
    g_array_set_clear_func(a->edits, (GDestroyNotify) edit_clear);
    return a;
}

static void
assumed_edit(HsAssumed *a, const char *path, double value)
{
    HsAssumedEdit e = { g_strdup(path), value };
    g_array_append_val(a->edits, e);
    a->lo = MIN(a->lo, value);
    a->hi = MAX(a->hi, value);
}

/* Is @leaf a number whose source begins "assumed" (or, with @derived,
 * "derived": computed from a source by a chain of reasoning)? */
static gboolean
is_assumed(const cJSON *leaf, gboolean derived, double *value, const char **source)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(leaf, "value");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(leaf, "source");
    if (!cJSON_IsNumber(v) || !cJSON_IsString(s)) {
        return FALSE;
    }
    const char *t = s->valuestring;
    while (g_ascii_isspace(*t)) {
        t++;
    }
    *value = v->valuedouble;
    *source = s->valuestring;
    return g_ascii_strncasecmp(t, "assumed", strlen("assumed")) == 0 ||
           (derived && g_ascii_strncasecmp(t, "derived", strlen("derived")) == 0);
}

/* @key (a --set path), @group the same with array indices as "*". */
typedef void (*LeafFn)(const char *key, const char *group, double value, const char *source,
                       void *data);

/* Every assumed leaf under @node, its key @prefix + the components. */
static void
walk(const cJSON *node, const char *prefix, const char *group, gboolean derived, LeafFn fn,
     void *data)
{
    double value;
    const char *source;
    if (cJSON_IsObject(node) && cJSON_HasObjectItem(node, "value")) {
        if (is_assumed(node, derived, &value, &source)) {
            fn(prefix, group, value, source, data);
        }
        return;
    }
    const cJSON *it = NULL;
    int i = 0;
    cJSON_ArrayForEach(it, node) {
        g_autofree char *comp = cJSON_IsArray(node) ? g_strdup_printf("%d", i)
                                : g_strdup(it->string);
        g_autofree char *key = g_strconcat(prefix, ".", comp, NULL);
        g_autofree char *grp = g_strconcat(group, ".", cJSON_IsArray(node) ? "*" : comp, NULL);
        if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
            walk(it, key, grp, derived, fn, data);
        }
        i++;
    }
}

typedef struct Collect {
    GPtrArray *out;              /* HsAssumed */
    const char *file, *soc;
    GHashTable *stacks;          /* stack name -> its file's JSON, for a stack key */
    const char *stack;           /* the stack being walked */
} Collect;

static void
add_soc_key(const char *key, const char *group, double value, const char *source, void *data)
{
    Collect *c = data;
    for (guint i = 0; i < c->out->len; i++) {
        HsAssumed *a = g_ptr_array_index(c->out, i);
        if (strcmp(a->key, group) == 0 && strcmp(a->file, c->file) == 0) {
            /* another element of the array */
            g_autofree char *path = g_strdup_printf("soc@%s.%s", c->soc, key);
            assumed_edit(a, path, value);
            return;
        }
    }
    HsAssumed *a = assumed_new(group, c->file, c->soc, value, source);
    g_autofree char *path = g_strdup_printf("soc@%s.%s", c->soc, key);
    assumed_edit(a, path, value);
    g_ptr_array_add(c->out, a);
}

/* Does the stack file @doc set @key itself ("cpu.dequant.q4_0_gbps")? */
static gboolean
sets_key(const cJSON *doc, const char *key)
{
    g_auto(GStrv) comps = g_strsplit(key, ".", -1);
    const cJSON *at = doc;
    for (char **c = comps; *c && at; c++) {
        at = cJSON_GetObjectItemCaseSensitive(at, *c);
    }
    return at != NULL;
}

/* Is @key of @stack's file what @t gets: @stack in @t's chain of bases,
 * no file before it setting @key? */
static gboolean
inherits(GHashTable *stacks, const char *t, const char *stack, const char *key)
{
    for (guint depth = 0; t && depth < 32; depth++) {
        if (strcmp(t, stack) == 0) {
            return TRUE;
        }
        const cJSON *doc = g_hash_table_lookup(stacks, t);
        if (doc == NULL || sets_key(doc, key)) {
            return FALSE;
        }
        const cJSON *base = cJSON_GetObjectItemCaseSensitive(doc, "base");
        t = cJSON_IsString(base) ? base->valuestring : NULL;
    }
    return FALSE;
}

static void
add_stack_key(const char *key, const char *group, double value, const char *source,
              void *data)
{
    Collect *c = data;
    g_autofree char *name = g_strdup_printf("stack@%s.%s", c->stack, group);
    HsAssumed *a = assumed_new(name, c->file, NULL, value, source);
    g_autoptr(GList) names = g_hash_table_get_keys(c->stacks);
    names = g_list_sort(names, (GCompareFunc) strcmp);
    for (GList *l = names; l; l = l->next) {
        if (inherits(c->stacks, l->data, c->stack, key)) {
            g_autofree char *path = g_strdup_printf("stack@%s.%s", (char *) l->data, key);
            assumed_edit(a, path, value);
        }
    }
    g_ptr_array_add(c->out, a);
}

GPtrArray *
hs_assumed_collect(GPtrArray *socs, char **pats, gboolean derived, GError **error)
{
    g_autofree char *configs = g_build_filename(hs_cli_data_dir(), "configs", NULL);
    g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func((GDestroyNotify) hs_assumed_free);
    for (guint i = 0; i < socs->len; i++) {
        const char *soc = g_ptr_array_index(socs, i);
        g_autofree char *base = g_strconcat(soc, ".json", NULL);
        g_autofree char *file = g_build_filename(configs, base, NULL);
        if (strchr(soc, '/') || g_str_has_suffix(soc, ".json") ||
            !g_file_test(file, G_FILE_TEST_IS_REGULAR)) {
            /* a SoC given as a file: its keys cannot be targeted by name */
            fprintf(stderr, "hetero-sim: warning: validate --sensitivity: %s is not a shipped "
                    "SoC config; its keys are not scaled\n", soc);
            continue;
        }
        g_autoptr(cJSON) doc = hs_json_load_file(file, HS_CONFIG_ERROR, error);
        if (doc == NULL) {
            return NULL;
        }
        Collect c = { all, base, soc, NULL, NULL };
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, doc) {
            if (strcmp(it->string, "processors") == 0) {
                const cJSON *p = NULL;
                cJSON_ArrayForEach(p, it) {
                    const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
                    if (cJSON_IsString(name)) {
                        walk(p, name->valuestring, name->valuestring, derived, add_soc_key, &c);
                    }
                }
            } else if (cJSON_IsObject(it)) {
                walk(it, it->string, it->string, derived, add_soc_key, &c);
            }
        }
    }
    g_autofree char *dir = g_build_filename(configs, "stacks", NULL);
    g_auto(GStrv) stems = hs_json_list_stems(dir, error);
    if (stems == NULL) {
        return NULL;
    }
    g_autoptr(GHashTable) stacks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) cJSON_Delete);
    for (char **s = stems; *s; s++) {
        g_autofree char *base = g_strconcat(*s, ".json", NULL);
        g_autofree char *file = g_build_filename(dir, base, NULL);
        cJSON *doc = hs_json_load_file(file, HS_CONFIG_ERROR, error);
        if (doc == NULL) {
            return NULL;
        }
        g_hash_table_insert(stacks, g_strdup(*s), doc);
    }
    for (char **s = stems; *s; s++) {
        g_autofree char *file = g_strconcat("stacks/", *s, ".json", NULL);
        Collect c = { all, file, NULL, stacks, *s };
        const cJSON *it = NULL;
        cJSON_ArrayForEach(it, (const cJSON *) g_hash_table_lookup(stacks, *s)) {
            if (cJSON_IsObject(it)) {
                walk(it, it->string, it->string, derived, add_stack_key, &c);
            }
        }
    }
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify) hs_assumed_free);
    for (guint i = 0; i < all->len; i++) {
        HsAssumed *a = g_ptr_array_index(all, i);
        if (hs_validate_matches(pats, a->key)) {
            g_ptr_array_add(out, g_ptr_array_steal_index(all, i--));
        }
    }
    return out;
}

