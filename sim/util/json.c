/*
 * json.c - see json.h.
 */
#include "sim/util/json.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/outfile.h"

#include <math.h>
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
    g_autoptr(GError) local = NULL;

    if (domain == 0) {
        domain = HS_CONFIG_ERROR;
    }
    if (g_file_test(filename, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, domain, 0, "%s: is a directory, expected a JSON file",
                    filename);
        return NULL;
    }
    if (!g_file_get_contents(filename, &text, &len, &local)) {
        g_set_error(error, domain, 0, "%s", local->message);
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

cJSON *
hs_json_load_named(const char *name_or_path, const char *dir, const char *what,
                   HsJsonEditFn edit, void *opaque, char **path_out, GError **error)
{
    g_autofree char *path = NULL;
    if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".json")) {
        path = g_strdup(name_or_path);
    } else {
        g_autofree char *file = g_strdup_printf("%s.json", name_or_path);
        path = dir ? g_build_filename(dir, file, NULL) : NULL;
        if (path == NULL || !g_file_test(path, G_FILE_TEST_EXISTS)) {
            g_auto(GStrv) names = dir ? hs_json_list_stems(dir, NULL) : NULL;
            g_autofree char *list = names && names[0] ? g_strjoinv(", ", names)
                                                      : g_strdup("none");
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND,
                        "unknown %s \"%s\" (known: %s; or give a path to a JSON file)",
                        what, name_or_path, list);
            return NULL;
        }
    }
    g_autoptr(cJSON) root = hs_json_load_file(path, HS_CONFIG_ERROR, error);
    if (root == NULL || (edit && !edit(root, opaque, error))) {
        return NULL;
    }
    *path_out = g_steal_pointer(&path);
    return g_steal_pointer(&root);
}
