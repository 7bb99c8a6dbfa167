/*
 * json.h - cJSON helpers: the one autoptr definition, file loading with
 * line:column parse errors, and JSON-path strings for error messages.
 *
 * Paths follow JSONPath spelling: "$", "$.memory.peak_gbps",
 * "$.processors[2].tile_rows".
 */
#ifndef HS_JSON_H
#define HS_JSON_H

#include <glib.h>
#include <cjson/cJSON.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)

/* An edit of a parsed config document before its loader reads it (the
 * --set overrides, sim/util/override.h). */
typedef gboolean (*HsJsonEditFn)(cJSON *root, void *opaque, GError **error);

/*
 * Read and parse a JSON file.  (transfer full) on success.  Errors
 * (HS_CONFIG_ERROR, or @domain if non-zero) are prefixed with @filename:
 * "x.json: empty file", "x.json: invalid JSON at line 3, column 7".
 */
cJSON *hs_json_load_file(const char *filename, GQuark domain, GError **error);

/* Parse @len bytes of JSON held in memory (need not be NUL-terminated);
 * @what names it in errors. */
cJSON *hs_json_parse(const char *text, gsize len, const char *what,
                     GQuark domain, GError **error);

/* "a string", "an integer", "an array" ...: what a value is, for messages. */
const char *hs_json_kind(const cJSON *item);

/* Describe a value for "(got ...)": numbers printed, others by kind. */
char *hs_json_describe(const cJSON *item);   /* (transfer full) */

/* Child paths: "$.a" + "b" -> "$.a.b"; "$.a" + 3 -> "$.a[3]". */
char *hs_json_path_key(const char *path, const char *key);   /* (transfer full) */
char *hs_json_path_index(const char *path, int index);       /* (transfer full) */

/* Fail with "PATH: duplicate key "k"" if an object repeats a key. */
gboolean hs_json_check_unique_keys(const cJSON *obj, const char *path,
                                   GQuark domain, GError **error);

/* Stems of the *.json files in @dir ("sd8gen3" for sd8gen3.json), sorted.
 * (transfer full) */
GStrv hs_json_list_stems(const char *dir, GError **error);

/*
 * Load the config named @name_or_path: a path (it has a '/' or ends in
 * .json) as given, else @dir/NAME.json; an unknown name fails with
 * "unknown WHAT "x" (known: ...; or give a path to a JSON file)" (the
 * stems of @dir, "none" if it is NULL or empty).  A document with a
 * "base" (a name in @dir, or a file, relative to the document's own
 * directory) is that base with the document's keys written over it:
 * objects merge key by key, arrays of objects that each have a "name"
 * entry by entry by name (a new name appended), anything else (a
 * {"value", "source"} pair whole) replaces the base's; a base may have a
 * base, never in a circle.
 * @edit, when given, is applied to the merged document.  *@path_out: the
 * file named.
 * (transfer full)
 */
cJSON *hs_json_load_named(const char *name_or_path, const char *dir, const char *what,
                          HsJsonEditFn edit, void *opaque, char **path_out,
                          GError **error);
/* hs_json_load_named(), and *@bases_out (when not NULL): the file of each
 * base in the chain, nearest first, as named (empty without a base). */
cJSON *hs_json_load_based(const char *name_or_path, const char *dir, const char *what,
                          HsJsonEditFn edit, void *opaque, char **path_out,
                          GStrv *bases_out, GError **error);

/* Print @item to @out (compact when @pretty is FALSE).  (transfer full) */
char *hs_json_print(const cJSON *item, gboolean pretty);

#endif /* HS_JSON_H */
