/*
 * param.h - table-driven JSON -> struct loading (QEMU Property arrays, SST
 * ELI parameter docs).
 *
 * Each device or config section describes its keys once:
 *
 *   static const HsParam hw_npu_params[] = {
 *       HS_PARAM_U32("freq_mhz", HwNpu, freq_mhz, 1, 10000, HS_REQUIRED, "core clock"),
 *       HS_PARAM_F64("sram_kib", HwNpu, sram_kib, 0, 65536, 512, "on-chip SRAM"),
 *       HS_PARAM_END
 *   };
 *
 * hs_param_apply() checks types and ranges, fills in defaults, rejects
 * unknown keys (listing the known ones) and reports the first error with
 * its JSON path.  The same table prints `--describe` help and `soc show`.
 *
 * A numeric value may be written bare (68) or with its provenance
 * ({"value": 68, "source": "HeteroLLM §3.3"}); sources are collected so
 * reports can show where every number came from.
 */
#ifndef HS_PARAM_H
#define HS_PARAM_H

#include <glib.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

typedef enum {
    HS_PARAM_T_END = 0,
    HS_PARAM_T_U32,
    HS_PARAM_T_U64,
    HS_PARAM_T_F64,
    HS_PARAM_T_BOOL,
    HS_PARAM_T_STR,      /* stored as char * (transfer full, g_free) */
} HsParamType;

typedef struct HsParam {
    const char *name;            /* JSON key, snake_case with unit suffix */
    HsParamType type;
    size_t offset;               /* offsetof(struct, field) */
    double min, max;             /* inclusive range for numbers */
    double def;                  /* default; HS_REQUIRED (NaN) if required */
    const char *def_str;         /* STR default; NULL if required */
    const char *const *choices;  /* STR: NULL-terminated allowed values */
    const char *desc;            /* one line, for --describe */
} HsParam;

#define HS_REQUIRED NAN

#define HS_PARAM_U32(n, T, f, lo, hi, d, text) \
    { (n), HS_PARAM_T_U32, offsetof(T, f), (lo), (hi), (d), NULL, NULL, (text) }
#define HS_PARAM_U64(n, T, f, lo, hi, d, text) \
    { (n), HS_PARAM_T_U64, offsetof(T, f), (lo), (hi), (d), NULL, NULL, (text) }
#define HS_PARAM_F64(n, T, f, lo, hi, d, text) \
    { (n), HS_PARAM_T_F64, offsetof(T, f), (lo), (hi), (d), NULL, NULL, (text) }
#define HS_PARAM_BOOL(n, T, f, d, text) \
    { (n), HS_PARAM_T_BOOL, offsetof(T, f), 0, 1, (d), NULL, NULL, (text) }
#define HS_PARAM_STR(n, T, f, d, ch, text) \
    { (n), HS_PARAM_T_STR, offsetof(T, f), 0, 0, 0, (d), (ch), (text) }
#define HS_PARAM_END { NULL, HS_PARAM_T_END, 0, 0, 0, 0, NULL, NULL, NULL }

/*
 * Apply @table to the JSON object @obj (found at JSON path @path) and fill
 * @out.  Keys in @extra_keys (NULL-terminated, may be NULL) belong to the
 * caller and are skipped.  If @sources is non-NULL, "PATH" -> "note" pairs
 * (both strings, owned by the table) are added for values given with a
 * source.  Errors are HS_CONFIG_ERROR with the JSON path, without file name.
 * STR fields are g_strdup'ed; free them with hs_param_clear().
 */
gboolean hs_param_apply(const cJSON *obj, const char *path,
                        const HsParam *table, void *out,
                        const char *const *extra_keys, GHashTable *sources,
                        GError **error);

/* Fill @out with the defaults of @table (required fields are zeroed). */
void hs_param_set_defaults(const HsParam *table, void *out);

/* g_free the STR fields of @out. */
void hs_param_clear(const HsParam *table, void *out);

/* Human unit of a key from its suffix ("peak_gbps" -> "GB/s"), or "". */
const char *hs_param_unit(const char *name);

/*
 * Append @out's values to @json as members, or to @text as aligned
 * "  name = value unit   [source]" lines (@indent spaces).  @sources and
 * @path may be NULL.
 */
void hs_param_dump_json(const HsParam *table, const void *out, cJSON *json);
void hs_param_dump_text(const HsParam *table, const void *out, GString *text,
                        int indent, GHashTable *sources, const char *path);

/* `--describe`: one line per key with type, range, default, description. */
void hs_param_describe(const HsParam *table, GString *text);

#endif /* HS_PARAM_H */
