/*
 * json.c - see json.h.
 */
#include "sim/util/json.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/infile.h"
#include "sim/util/outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cJSON *
hs_json_parse(const char *text, gsize len, const char *what, GQuark domain,
              GError **error)
{
    if (domain == 0) {
        domain = HS_CONFIG_ERROR;
    }
    gsize i = 0;
    while (i < len && g_ascii_isspace(text[i])) {
        i++;
    }
    if (i == len) {
        g_set_error(error, domain, 0, "%s: empty file", what);
        return NULL;
    }
    if (memchr(text, '\0', len) != NULL) {
        g_set_error(error, domain, 0, "%s: invalid JSON (contains a NUL byte)",
                    what);
        return NULL;
    }
    /* cJSON reads up to a NUL: parse a terminated copy, so @text may be
     * any @len bytes (a mapped file, a fuzzer's buffer) */
    g_autofree char *copy = g_strndup(text, len);
    text = copy;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, TRUE);
    if (root == NULL) {
        /* cJSON points at the first byte it could not use. */
        const char *at = end ? end : text;
        int line = 1, col = 1;
        for (const char *p = text; p < at && *p; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        if ((gsize) (at - text) >= len) {
            g_set_error(error, domain, 0,
                        "%s: invalid JSON: unexpected end of file at line %d, column %d",
                        what, line, col);
        } else {
            g_set_error(error, domain, 0,
                        "%s: invalid JSON at line %d, column %d", what, line, col);
        }
        return NULL;
    }
    return root;
}

cJSON *
hs_json_load_file(const char *filename, GQuark domain, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;

    if (domain == 0) {
        domain = HS_CONFIG_ERROR;
    }
    if (!hs_infile_read(filename, "a JSON file", domain, 0, &text, &len, error)) {
        return NULL;
    }
    hs_input_note(filename);     /* no output of this run may overwrite it */
    return hs_json_parse(text, len, filename, domain, error);
}

const char *
hs_json_kind(const cJSON *item)
{
    if (item == NULL) {
        return "nothing";
    }
    if (cJSON_IsString(item)) {
        return "a string";
    }
    if (cJSON_IsBool(item)) {
        return "a boolean";
    }
    if (cJSON_IsNull(item)) {
        return "null";
    }
    if (cJSON_IsArray(item)) {
        return "an array";
    }
    if (cJSON_IsObject(item)) {
        return "an object";
    }
    if (cJSON_IsNumber(item)) {
        double v = item->valuedouble;
        return (isfinite(v) && v == floor(v)) ? "an integer" : "a number";
    }
    return "an unknown value";
}

char *
hs_json_describe(const cJSON *item)
{
    if (item != NULL && cJSON_IsNumber(item)) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        double v = item->valuedouble;
        if (!isfinite(v)) {
            return g_strdup(v > 0 ? "inf" : "-inf");
        }
        if (v == floor(v) && fabs(v) < 1e15) {
            return g_strdup_printf("%.0f", v);
        }
        return g_strdup(g_ascii_formatd(buf, sizeof(buf), "%.6g", v));
    }
    if (item != NULL && cJSON_IsString(item)) {
        g_autofree char *e = hs_escape(item->valuestring);
        return g_strdup_printf("\"%s\"", e);
    }
    if (item != NULL && cJSON_IsBool(item)) {
        return g_strdup(cJSON_IsTrue(item) ? "true" : "false");
    }
    return g_strdup(hs_json_kind(item));
}

char *
hs_json_path_key(const char *path, const char *key)
{
    g_autofree char *e = hs_escape(key);
    return g_strdup_printf("%s.%s", path, e);
}

char *
hs_json_path_index(const char *path, int index)
{
    return g_strdup_printf("%s[%d]", path, index);
}

gboolean
hs_json_check_unique_keys(const cJSON *obj, const char *path, GQuark domain,
                          GError **error)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    const cJSON *it = NULL;

    cJSON_ArrayForEach(it, obj) {
        if (it->string == NULL) {
            continue;
        }
        if (!g_hash_table_add(seen, it->string)) {
            g_autofree char *e = hs_escape(it->string);
            g_set_error(error, domain ? domain : HS_CONFIG_ERROR, 0,
                        "%s: duplicate key \"%s\"", path, e);
            return FALSE;
        }
    }
    return TRUE;
}

char *
hs_json_print(const cJSON *item, gboolean pretty)
{
    char *s = pretty ? cJSON_Print(item) : cJSON_PrintUnformatted(item);
    char *out = g_strdup(s);
    cJSON_free(s);
    return out;
}

static gint
cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

GStrv
hs_json_list_stems(const char *dir, GError **error)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, error);
    if (d == NULL) {
        return NULL;
    }
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    const char *entry;
    while ((entry = g_dir_read_name(d)) != NULL) {
        if (g_str_has_suffix(entry, ".json")) {
            g_ptr_array_add(names, g_strndup(entry, strlen(entry) - 5));
        }
    }
    g_ptr_array_sort(names, cmp_str);
    g_ptr_array_add(names, NULL);
    return (GStrv) g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

/* The file a config name stands for: a path (it has a '/' or ends in
 * .json) as given, relative to @rel_dir when that is set and the path is
 * not absolute; else @dir/NAME.json, which must exist. */
static char *
named_path(const char *name_or_path, const char *dir, const char *rel_dir, const char *what,
           GError **error)
{
    if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".json")) {
        return rel_dir && !g_path_is_absolute(name_or_path)
               ? g_build_filename(rel_dir, name_or_path, NULL) : g_strdup(name_or_path);
    }
    g_autofree char *file = g_strdup_printf("%s.json", name_or_path);
    g_autofree char *path = dir ? g_build_filename(dir, file, NULL) : NULL;
    if (path == NULL || !g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_auto(GStrv) names = dir ? hs_json_list_stems(dir, NULL) : NULL;
        g_autofree char *list = names && names[0] ? g_strjoinv(", ", names)
                                                  : g_strdup("none");
        g_autofree char *e = hs_escape(name_or_path);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND,
                    "unknown %s \"%s\" (known: %s; or give a path to a JSON file)",
                    what, e, list);
        return NULL;
    }
    return g_steal_pointer(&path);
}

/* The file @path is, for telling whether a chain of bases comes back to
 * one: symbolic links resolved where the file exists. */
static char *
file_identity(const char *path)
{
    char *real = realpath(path, NULL);
    char *id = real ? g_strdup(real) : g_canonicalize_filename(path, NULL);
    free(real);
    return id;
}

static gboolean
is_value_pair(const cJSON *j)
{
    return cJSON_IsObject(j) && cJSON_GetObjectItemCaseSensitive(j, "value") != NULL;
}

/* A non-empty array of objects that each have a string "name" (a SoC's
 * processors). */
static gboolean
is_named_list(const cJSON *j)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) == 0) {
        return FALSE;
    }
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, j) {
        if (!cJSON_IsObject(e) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name"))) {
            return FALSE;
        }
    }
    return TRUE;
}

static void merge_over(cJSON *base, const cJSON *over);

/* @over's entries onto @base's of the same name, merged as objects; an
 * entry of a new name is added after the base's. */
static void
merge_named(cJSON *base, const cJSON *over)
{
    const cJSON *c = NULL;
    cJSON_ArrayForEach(c, over) {
        const char *name = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
        cJSON *b = NULL;
        cJSON_ArrayForEach(b, base) {
            if (strcmp(cJSON_GetObjectItemCaseSensitive(b, "name")->valuestring, name) == 0) {
                break;
            }
        }
        if (b) {
            merge_over(b, c);
        } else {
            cJSON_AddItemToArray(base, cJSON_Duplicate(c, TRUE));
        }
    }
}

/* @over written onto @base: objects merge key by key, and lists of named
 * objects (a SoC's processors) entry by entry, by name; anything else (a
 * number, a string, another array, a {"value", "source"} pair) replaces
 * the base's whole, so a value never keeps a source written for another. */
static void
merge_over(cJSON *base, const cJSON *over)
{
    const cJSON *c = NULL;
    cJSON_ArrayForEach(c, over) {
        if (c->string == NULL) {
            continue;
        }
        cJSON *b = cJSON_GetObjectItemCaseSensitive(base, c->string);
        if (b && cJSON_IsObject(b) && cJSON_IsObject(c) && !is_value_pair(b) &&
            !is_value_pair(c)) {
            merge_over(b, c);
        } else if (is_named_list(b) && is_named_list(c)) {
            merge_named(b, c);
        } else if (b) {
            cJSON_ReplaceItemInObjectCaseSensitive(base, c->string, cJSON_Duplicate(c, TRUE));
        } else {
            cJSON_AddItemToObject(base, c->string, cJSON_Duplicate(c, TRUE));
        }
    }
}

/* Read @path; when it names a "base", that one (resolved as a name in
 * @dir, or a file beside @path) with @path's keys written over it.
 * @referrer: the file whose base @path is (NULL for the first), named in
 * an error reading it; @chain: the files read so far, to refuse a circle;
 * @bases: each base's file, as named, appended in order. */
static cJSON *
load_based(const char *path, const char *dir, const char *what, const char *referrer,
           GPtrArray *chain, GPtrArray *bases, GError **error)
{
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_CONFIG_ERROR, error);
    if (root == NULL && referrer) {
        /* say which file named it */
        g_prefix_error(error, "%s: $.base: ", referrer);
    }
    const cJSON *base = root && cJSON_IsObject(root)
                        ? cJSON_GetObjectItemCaseSensitive(root, "base") : NULL;
    if (base == NULL) {
        return g_steal_pointer(&root);
    }
    if (!cJSON_IsString(base) || base->valuestring[0] == '\0') {
        g_autofree char *got = hs_json_describe(base);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: $.base: expected the name or file of the %s to start from (got %s)",
                    path, what, got);
        return NULL;
    }
    g_autofree char *rel_dir = g_path_get_dirname(path);
    g_autofree char *bpath = named_path(base->valuestring, dir, rel_dir, what, error);
    if (bpath == NULL) {
        g_prefix_error(error, "%s: $.base: ", path);
        return NULL;
    }
    g_autofree char *canon = file_identity(bpath);
    for (guint i = 0; i < chain->len; i++) {
        if (strcmp(chain->pdata[i], canon) == 0) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: $.base: \"%s\" is already in this chain of bases "
                        "(a circle)", path, base->valuestring);
            return NULL;
        }
    }
    g_ptr_array_add(chain, g_steal_pointer(&canon));
    g_ptr_array_add(bases, g_strdup(bpath));
    g_autoptr(cJSON) merged = load_based(bpath, dir, what, path, chain, bases, error);
    if (merged == NULL) {
        return NULL;
    }
    if (!cJSON_IsObject(merged)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: $: expected an object (the base of %s; got %s)", bpath, path,
                    hs_json_kind(merged));
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "base");
    merge_over(merged, root);
    return g_steal_pointer(&merged);
}

cJSON *
hs_json_load_based(const char *name_or_path, const char *dir, const char *what,
                   HsJsonEditFn edit, void *opaque, char **path_out, GStrv *bases_out,
                   GError **error)
{
    g_autofree char *path = named_path(name_or_path, dir, NULL, what, error);
    if (path == NULL) {
        return NULL;
    }
    g_autoptr(GPtrArray) chain = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) bases = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(chain, file_identity(path));
    g_autoptr(cJSON) root = load_based(path, dir, what, NULL, chain, bases, error);
    if (root == NULL || (edit && !edit(root, opaque, error))) {
        return NULL;
    }
    *path_out = g_steal_pointer(&path);
    if (bases_out) {
        g_ptr_array_add(bases, NULL);
        *bases_out = (GStrv) g_ptr_array_free(g_steal_pointer(&bases), FALSE);
    }
    return g_steal_pointer(&root);
}

cJSON *
hs_json_load_named(const char *name_or_path, const char *dir, const char *what,
                   HsJsonEditFn edit, void *opaque, char **path_out, GError **error)
{
    return hs_json_load_based(name_or_path, dir, what, edit, opaque, path_out, NULL, error);
}
