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
 * Each macro checks at compile time that the field has the C type its
 * kind stores (QEMU's DEFINE_PROP does the same): HS_PARAM_U32 on a double
 * field does not build.  HS_PARAM_NAME is a non-empty string (required, or
 * with HS_PARAM_NAME_OPT NULL when absent).  HS_PARAM_OBJ reads a nested object into an
 * embedded struct with its own table; HS_PARAM_U32_ARRAY / HS_PARAM_U64_ARRAY an array
 * of integers into a fixed array plus a count; HS_PARAM_OBJ_ARRAY an array of
 * objects, each read by its own table into a g_new0'ed array; HS_PARAM_STR_ARRAY
 * an array of strings (a GStrv); HS_PARAM_RANGE a pair [lo, hi] with null for an
 * open end; HS_PARAM_MAP an object whose keys are not known in advance (the
 * settings of a sweep: any run option, any config key), each member checked by
 * a callback, kept as JSON.  OBJ and OBJ_ARRAY take an optional check run on
 * each object once its table has read it: what one key cannot say alone.
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
    HS_PARAM_T_I32,      /* a signed integer: an index that may be -1 */
    HS_PARAM_T_U64,
    HS_PARAM_T_F64,
    HS_PARAM_T_BOOL,
    HS_PARAM_T_STR,      /* stored as char * (transfer full, g_free) */
    HS_PARAM_T_OBJ,      /* a nested object: an embedded struct, its own table */
    HS_PARAM_T_U32_ARRAY, /* an array of integers: uint32_t[max] and a uint32_t count */
    HS_PARAM_T_ENUM,     /* a name from a table sized by its enum, stored as the enum */
    HS_PARAM_T_U64_ARRAY, /* uint64_t[max] and a uint32_t count */
    HS_PARAM_T_OBJ_ARRAY, /* S * (g_new0, transfer full) and a uint32_t count */
    HS_PARAM_T_STR_ARRAY, /* char ** (a GStrv, transfer full; NULL when absent) */
    HS_PARAM_T_RANGE,    /* double[2]; a null end, or absent, is -inf / +inf */
    HS_PARAM_T_MAP,      /* cJSON * (a copy, transfer full; NULL when absent) */
    HS_PARAM_T_MAP_ARRAY, /* cJSON * array of such objects (the same) */
} HsParamType;

struct HsParam;

/* OBJ, OBJ_ARRAY: checks across the keys of one object @elem (read from
 * @json at @path by its table) */
typedef gboolean (*HsParamCheckFn)(void *elem, const cJSON *json, const char *path,
                                   GError **error);
/* MAP, MAP_ARRAY: one member @key = @value of the map, at @path */
typedef gboolean (*HsParamEntryFn)(const char *key, const cJSON *value, const char *path,
                                   GError **error);

typedef struct HsParam {
    const char *name;            /* JSON key, snake_case with unit suffix */
    HsParamType type;
    size_t offset;               /* offsetof(struct, field) */
    double min, max;             /* inclusive range for numbers; STR: min 1 is
                                  * a non-empty string */
    gboolean min_open;           /* F64: min itself excluded, (min, max] */
    double def;                  /* default; HS_REQUIRED (NaN) if required */
    const char *def_str;         /* STR default; NULL if required (or, @optional, absent) */
    gboolean optional;           /* STR: absent leaves NULL, not an error */
    const char *const *choices;  /* STR: NULL-terminated allowed values; ENUM: the
                                  * enum's name table (max + 1 entries) */
    const char *desc;            /* one line, for --describe */
    const struct HsParam *sub;   /* OBJ: the nested struct's table */
    size_t count_offset;         /* arrays: offsetof the uint32_t count */
    uint32_t min_count;          /* arrays: fewest elements */
    uint32_t max_count;          /* arrays: most elements (fixed arrays: what they hold) */
    size_t elem_size;            /* OBJ_ARRAY: sizeof an element */
    HsParamCheckFn check;        /* OBJ, OBJ_ARRAY: may be NULL */
    HsParamEntryFn entry;        /* MAP, MAP_ARRAY: checks each member */
    const char *expect;          /* MAP, MAP_ARRAY: "an object of settings" */
} HsParam;

#define HS_REQUIRED NAN

/* offsetof(T, f), and a compile error unless T.f has type C: the generic
 * selection has no branch for any other type. */
#define HS_PARAM_OFFSET(T, f, C) _Generic(((T *) 0)->f, C: offsetof(T, f))

#define HS_PARAM_U32(n, T, f, lo, hi, d, text)                                \
    { .name = (n), .type = HS_PARAM_T_U32, .offset = HS_PARAM_OFFSET(T, f, uint32_t), \
      .min = (lo), .max = (hi), .def = (d), .desc = (text) }
#define HS_PARAM_I32(n, T, f, lo, hi, d, text)                                \
    { .name = (n), .type = HS_PARAM_T_I32, .offset = HS_PARAM_OFFSET(T, f, int32_t), \
      .min = (lo), .max = (hi), .def = (d), .desc = (text) }
#define HS_PARAM_U64(n, T, f, lo, hi, d, text)                                \
    { .name = (n), .type = HS_PARAM_T_U64, .offset = HS_PARAM_OFFSET(T, f, uint64_t), \
      .min = (lo), .max = (hi), .def = (d), .desc = (text) }
#define HS_PARAM_F64(n, T, f, lo, hi, d, text)                                \
    { .name = (n), .type = HS_PARAM_T_F64, .offset = HS_PARAM_OFFSET(T, f, double), \
      .min = (lo), .max = (hi), .def = (d), .desc = (text) }
/* a finite number > 0 and <= @hi ("a finite positive number" when @hi is
 * DBL_MAX): a scale, an epsilon, a base */
#define HS_PARAM_F64_POS(n, T, f, hi, d, text)                                \
    { .name = (n), .type = HS_PARAM_T_F64, .offset = HS_PARAM_OFFSET(T, f, double), \
      .min = 0, .min_open = TRUE, .max = (hi), .def = (d), .desc = (text) }
#define HS_PARAM_BOOL(n, T, f, d, text)                                       \
    { .name = (n), .type = HS_PARAM_T_BOOL, .offset = HS_PARAM_OFFSET(T, f, gboolean), \
      .min = 0, .max = 1, .def = (d), .desc = (text) }
#define HS_PARAM_STR(n, T, f, d, ch, text)                                    \
    { .name = (n), .type = HS_PARAM_T_STR, .offset = HS_PARAM_OFFSET(T, f, char *), \
      .def_str = (d), .choices = (ch), .desc = (text) }
/* a name (an id, a model, a reason): a non-empty string, required */
#define HS_PARAM_NAME(n, T, f, text)                                          \
    { .name = (n), .type = HS_PARAM_T_STR, .offset = HS_PARAM_OFFSET(T, f, char *), \
      .min = 1, .desc = (text) }
/* the same, optional: absent leaves T.f NULL (a string that is there must
 * say something) */
#define HS_PARAM_NAME_OPT(n, T, f, text)                                      \
    { .name = (n), .type = HS_PARAM_T_STR, .offset = HS_PARAM_OFFSET(T, f, char *), \
      .min = 1, .optional = TRUE, .desc = (text) }
/* T.f is a struct S read by @table (absent: @table's defaults; @req: the
 * object must be there) */
#define HS_PARAM_OBJ(n, T, f, S, table, req, text)                            \
    { .name = (n), .type = HS_PARAM_T_OBJ, .offset = HS_PARAM_OFFSET(T, f, S), \
      .def = (req) ? HS_REQUIRED : 0, .sub = (table), .desc = (text) }
/* T.f is uint32_t[mx] (checked: at least @mx elements), T.cnt the count
 * read; elements in [lo, hi]; absent: empty unless @req */
#define HS_PARAM_U32_ARRAY(n, T, f, cnt, mx, lo, hi, req, text)              \
    { .name = (n), .type = HS_PARAM_T_U32_ARRAY,                              \
      .offset = HS_PARAM_OFFSET(T, f, uint32_t *) +                           \
                0 * sizeof(char[sizeof(((T *) 0)->f) >= (mx) * sizeof(uint32_t) ? 1 : -1]), \
      .count_offset = HS_PARAM_OFFSET(T, cnt, uint32_t), .max_count = (mx),   \
      .min = (lo), .max = (hi), .def = (req) ? HS_REQUIRED : 0, .desc = (text) }
/* T.f is uint64_t[mx], the same with @mn to @mx elements (data_offsets:
 * exactly 2) */
#define HS_PARAM_U64_ARRAY(n, T, f, cnt, mn, mx, lo, hi, req, text)          \
    { .name = (n), .type = HS_PARAM_T_U64_ARRAY,                              \
      .offset = HS_PARAM_OFFSET(T, f, uint64_t *) +                           \
                0 * sizeof(char[sizeof(((T *) 0)->f) >= (mx) * sizeof(uint64_t) ? 1 : -1]), \
      .count_offset = HS_PARAM_OFFSET(T, cnt, uint32_t), .min_count = (mn),   \
      .max_count = (mx), .min = (lo), .max = (hi), .def = (req) ? HS_REQUIRED : 0, \
      .desc = (text) }
/* T.f is S * (g_new0'ed, @mn to @mx elements, each read by @table then
 * @chk, which may be NULL), T.cnt the count; absent: NULL and 0 unless @mn */
#define HS_PARAM_OBJ_ARRAY(n, T, f, cnt, S, table, chk, mn, mx, text)         \
    { .name = (n), .type = HS_PARAM_T_OBJ_ARRAY, .offset = HS_PARAM_OFFSET(T, f, S *), \
      .count_offset = HS_PARAM_OFFSET(T, cnt, uint32_t), .elem_size = sizeof(S), \
      .sub = (table), .check = (chk), .min_count = (mn), .max_count = (mx),   \
      .def = (mn) ? HS_REQUIRED : 0, .desc = (text) }
/* T.f is char ** (a GStrv) of strings (@lo 1: non-empty ones); absent: NULL */
#define HS_PARAM_STR_ARRAY(n, T, f, lo, text)                                 \
    { .name = (n), .type = HS_PARAM_T_STR_ARRAY, .offset = HS_PARAM_OFFSET(T, f, char **), \
      .min = (lo), .def = 0, .desc = (text) }
/* T.f is double[2]: [lo, hi] with lo <= hi, each in [@lo, @hi] or null (an
 * open end: -inf / +inf), at least one finite; absent: [-inf, +inf] */
#define HS_PARAM_RANGE(n, T, f, lo, hi, text)                                 \
    { .name = (n), .type = HS_PARAM_T_RANGE,                                  \
      .offset = HS_PARAM_OFFSET(T, f, double *) +                             \
                0 * sizeof(char[sizeof(((T *) 0)->f) == 2 * sizeof(double) ? 1 : -1]), \
      .min = (lo), .max = (hi), .def = 0, .desc = (text) }
/* T.f is a cJSON * copy of an object whose every member @fn accepts (the
 * keys are open: @fn names what it takes); @what is the expected text */
#define HS_PARAM_MAP(n, T, f, fn, what, text)                                 \
    { .name = (n), .type = HS_PARAM_T_MAP, .offset = HS_PARAM_OFFSET(T, f, cJSON *), \
      .entry = (fn), .expect = (what), .def = 0, .desc = (text) }
/* the same, an array of such objects */
#define HS_PARAM_MAP_ARRAY(n, T, f, fn, what, text)                           \
    { .name = (n), .type = HS_PARAM_T_MAP_ARRAY, .offset = HS_PARAM_OFFSET(T, f, cJSON *), \
      .entry = (fn), .expect = (what), .def = 0, .desc = (text) }
/* T.f is the enum E (int-sized), read by name from @names[0..n-1]; @d is
 * the default's index or HS_REQUIRED */
#define HS_PARAM_ENUM(n, T, f, E, names, cnt, d, text)                         \
    { .name = (n), .type = HS_PARAM_T_ENUM,                                   \
      .offset = HS_PARAM_OFFSET(T, f, E) + 0 * sizeof(char[sizeof(E) == sizeof(int) ? 1 : -1]), \
      .choices = (names), .min = 0, .max = (cnt) - 1, .def = (d), .desc = (text) }
#define HS_PARAM_END { .name = NULL, .type = HS_PARAM_T_END }

/* One object of a config document and the table that reads it, for code
 * that walks every key of a document (tests that set each key to the ends
 * of its range): @path as --set names it below the document ("memory",
 * "sync.driver", "npu.dequant").  Lists end with { NULL, NULL }. */
typedef struct HsParamSection {
    const char *path;
    const HsParam *params;
} HsParamSection;

/* Is @p a number (an integer or F64: it has a [min, max] range)? */
gboolean hs_param_is_number(const HsParam *p);

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

/*
 * The same for an object whose other keys belong to another program (a
 * Hugging Face config.json holds dozens hetero-sim does not read): keys not
 * in @table are skipped, and a null value counts as absent (transformers
 * writes "sliding_window": null).  Everything in @table is checked as above.
 */
gboolean hs_param_apply_open(const cJSON *obj, const char *path, const HsParam *table,
                             void *out, GError **error);

/* Fill @out with the defaults of @table (required fields are zeroed). */
void hs_param_set_defaults(const HsParam *table, void *out);

/* Free what @out's fields own (strings, arrays, maps) and zero them. */
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
