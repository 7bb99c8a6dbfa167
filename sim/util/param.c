/*
 * param.c - see param.h.
 */
#include "sim/util/param.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/json.h"

#include <float.h>
#include <inttypes.h>
#include <string.h>

static gboolean
is_required(const HsParam *p)
{
    return p->type == HS_PARAM_T_STR ? p->def_str == NULL && !p->optional : isnan(p->def);
}

static uint32_t *
count_field(void *out, const HsParam *p)
{
    return (uint32_t *) ((char *) out + p->count_offset);
}

static void *
field(void *out, const HsParam *p)
{
    return (char *) out + p->offset;
}

static const void *
cfield(const void *out, const HsParam *p)
{
    return (const char *) out + p->offset;
}

static void
store_number(void *out, const HsParam *p, double v)
{
    switch (p->type) {
    case HS_PARAM_T_U32:
        *(uint32_t *) field(out, p) = (uint32_t) v;
        break;
    case HS_PARAM_T_I32:
        *(int32_t *) field(out, p) = (int32_t) v;
        break;
    case HS_PARAM_T_U64:
        *(uint64_t *) field(out, p) = (uint64_t) v;
        break;
    case HS_PARAM_T_F64:
        *(double *) field(out, p) = v;
        break;
    case HS_PARAM_T_BOOL:
        *(gboolean *) field(out, p) = v != 0;
        break;
    case HS_PARAM_T_ENUM:
        *(int *) field(out, p) = (int) v;
        break;
    default:
        g_assert_not_reached();
    }
}

/* @p's field as if its key were absent (what it owned already freed). */
static void
default_one(const HsParam *p, void *out)
{
    switch (p->type) {
    case HS_PARAM_T_STR:
        *(char **) field(out, p) = g_strdup(p->def_str);
        break;
    case HS_PARAM_T_OBJ:
        hs_param_set_defaults(p->sub, field(out, p));
        break;
    case HS_PARAM_T_U32_ARRAY:
    case HS_PARAM_T_U64_ARRAY:
        *count_field(out, p) = 0;
        break;
    case HS_PARAM_T_OBJ_ARRAY:
        *(void **) field(out, p) = NULL;
        *count_field(out, p) = 0;
        break;
    case HS_PARAM_T_STR_ARRAY:
    case HS_PARAM_T_MAP:
    case HS_PARAM_T_MAP_ARRAY:
        *(void **) field(out, p) = NULL;
        break;
    case HS_PARAM_T_RANGE:
        ((double *) field(out, p))[0] = -INFINITY;
        ((double *) field(out, p))[1] = INFINITY;
        break;
    default:
        store_number(out, p, isnan(p->def) ? 0 : p->def);
    }
}

/* Free what @p's field owns. */
static void
clear_one(const HsParam *p, void *out)
{
    switch (p->type) {
    case HS_PARAM_T_STR:
        g_clear_pointer((char **) field(out, p), g_free);
        break;
    case HS_PARAM_T_OBJ:
        hs_param_clear(p->sub, field(out, p));
        break;
    case HS_PARAM_T_OBJ_ARRAY: {
        char *a = *(char **) field(out, p);
        for (uint32_t i = 0; a && i < *count_field(out, p); i++) {
            hs_param_clear(p->sub, a + i * p->elem_size);
        }
        g_clear_pointer((char **) field(out, p), g_free);
        *count_field(out, p) = 0;
        break;
    }
    case HS_PARAM_T_STR_ARRAY:
        g_clear_pointer((char ***) field(out, p), g_strfreev);
        break;
    case HS_PARAM_T_MAP:
    case HS_PARAM_T_MAP_ARRAY:
        g_clear_pointer((cJSON **) field(out, p), cJSON_Delete);
        break;
    default:
        break;
    }
}

void
hs_param_set_defaults(const HsParam *table, void *out)
{
    for (const HsParam *p = table; p->name; p++) {
        default_one(p, out);
    }
}

void
hs_param_clear(const HsParam *table, void *out)
{
    for (const HsParam *p = table; p->name; p++) {
        clear_one(p, out);
    }
}

static char *
format_number(double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    /* a bound is the code's, not input: integers up to 2^64 in full */
    if (v == floor(v) && fabs(v) <= 18446744073709551616.0) {
        return g_strdup_printf("%.0f", v);
    }
    return g_strdup(g_ascii_formatd(buf, sizeof(buf), "%.6g", v));
}

static char *
expected_text(const HsParam *p)
{
    g_autofree char *lo = format_number(p->min);
    g_autofree char *hi = format_number(p->max);

    switch (p->type) {
    case HS_PARAM_T_U32:
    case HS_PARAM_T_I32:
    case HS_PARAM_T_U64:
        return g_strdup_printf("an integer in [%s, %s]", lo, hi);
    case HS_PARAM_T_F64:
        if (p->min_open && p->max == DBL_MAX) {
            return g_strdup("a finite positive number");
        }
        return g_strdup_printf("a number in %c%s, %s]", p->min_open ? '(' : '[', lo, hi);
    case HS_PARAM_T_BOOL:
        return g_strdup("true or false");
    case HS_PARAM_T_STR:
        if (p->choices) {
            g_autofree char *list = g_strjoinv(", ", (char **) p->choices);
            return g_strdup_printf("one of %s", list);
        }
        return g_strdup(p->min > 0 ? "a non-empty string" : "a string");
    case HS_PARAM_T_OBJ:
        return g_strdup("an object");
    case HS_PARAM_T_ENUM: {
        GString *s = g_string_new("one of ");
        for (int i = 0; i <= (int) p->max; i++) {
            g_string_append_printf(s, "%s%s", i ? ", " : "", p->choices[i]);
        }
        return g_string_free(s, FALSE);
    }
    case HS_PARAM_T_U32_ARRAY:
    case HS_PARAM_T_U64_ARRAY:
        if (p->min_count == p->max_count) {
            return g_strdup_printf("an array of %u integers in [%s, %s]", p->max_count, lo, hi);
        }
        return g_strdup_printf("an array of at most %u integers in [%s, %s]", p->max_count,
                               lo, hi);
    case HS_PARAM_T_OBJ_ARRAY:
        if (p->min_count > 0) {
            return g_strdup_printf("an array of %u to %u objects", p->min_count, p->max_count);
        }
        return g_strdup_printf("an array of at most %u objects", p->max_count);
    case HS_PARAM_T_STR_ARRAY:
        return g_strdup(p->min > 0 ? "an array of non-empty strings" : "an array of strings");
    case HS_PARAM_T_RANGE:
        return g_strdup_printf("[lo, hi] with each in [%s, %s] or null for an open end",
                               lo, hi);
    case HS_PARAM_T_MAP:
        return g_strdup(p->expect);
    case HS_PARAM_T_MAP_ARRAY:
        return g_strdup_printf("an array, each %s", p->expect);
    default:
        g_assert_not_reached();
    }
}

static gboolean
bad_value(const HsParam *p, const char *path, const cJSON *v, GError **error)
{
    g_autofree char *want = expected_text(p);
    g_autofree char *got = hs_json_describe(v);
    g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                "%s: expected %s (got %s)", path, want, got);
    return FALSE;
}

static gboolean
in_list(const char *const *list, const char *s)
{
    for (; list && *list; list++) {
        if (strcmp(*list, s) == 0) {
            return TRUE;
        }
    }
    return FALSE;
}

static const HsParam *
lookup(const HsParam *table, const char *name)
{
    for (const HsParam *p = table; p->name; p++) {
        if (strcmp(p->name, name) == 0) {
            return p;
        }
    }
    return NULL;
}

/* Unwrap {"value": v, "source": "..."}; sets *source (borrowed) if given. */
static gboolean
unwrap(const cJSON *item, const char *path, const cJSON **value,
       const char **source, GError **error)
{
    *value = item;
    *source = NULL;
    if (!cJSON_IsObject(item)) {
        return TRUE;
    }
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, item) {
        if (strcmp(it->string, "value") != 0 && strcmp(it->string, "source") != 0) {
            g_autofree char *e = hs_escape(it->string);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                        "%s: unknown key \"%s\" (a sourced value has only "
                        "\"value\" and \"source\")", path, e);
            return FALSE;
        }
    }
    if (!hs_json_check_unique_keys(item, path, HS_CONFIG_ERROR, error)) {
        return FALSE;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "value");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(item, "source");
    if (v == NULL) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                    "%s: missing key \"value\"", path);
        return FALSE;
    }
    if (s != NULL && (!cJSON_IsString(s) || s->valuestring[0] == '\0')) {
        g_autofree char *got = hs_json_describe(s);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s.source: expected a non-empty string (got %s)", path, got);
        return FALSE;
    }
    *value = v;
    *source = s ? s->valuestring : NULL;
    return TRUE;
}

/* @item is an object with unique keys whose every member @p->entry takes. */
static gboolean
map_ok(const HsParam *p, const char *path, const cJSON *item, GError **error)
{
    if (!cJSON_IsObject(item)) {
        g_autofree char *got = hs_json_describe(item);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected %s (got %s)", path, p->expect, got);
        return FALSE;
    }
    if (!hs_json_check_unique_keys(item, path, HS_CONFIG_ERROR, error)) {
        return FALSE;
    }
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, item) {
        g_autofree char *kp = hs_json_path_key(path, it->string);
        if (!p->entry(it->string, it, kp, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
apply_one(const HsParam *p, const cJSON *item, const char *path, void *out,
          GHashTable *sources, GError **error)
{
    switch (p->type) {
    case HS_PARAM_T_ENUM:
        for (int i = 0; cJSON_IsString(item) && i <= (int) p->max; i++) {
            if (strcmp(p->choices[i], item->valuestring) == 0) {
                store_number(out, p, i);
                return TRUE;
            }
        }
        return bad_value(p, path, item, error);
    case HS_PARAM_T_OBJ:
        return hs_param_apply(item, path, p->sub, field(out, p), NULL, sources, error) &&
               (p->check == NULL || p->check(field(out, p), item, path, error));
    case HS_PARAM_T_U32_ARRAY:
    case HS_PARAM_T_U64_ARRAY: {
        int n_items = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
        if (n_items < (int) p->min_count || n_items > (int) p->max_count) {
            return bad_value(p, path, item, error);
        }
        uint32_t n = 0;
        const cJSON *e = NULL;
        cJSON_ArrayForEach(e, item) {
            double v = cJSON_IsNumber(e) ? e->valuedouble : NAN;
            if (!isfinite(v) || v < p->min || v > p->max || v != floor(v)) {
                g_autofree char *ep = hs_json_path_index(path, (int) n);
                g_autofree char *lo = format_number(p->min), *hi = format_number(p->max);
                g_autofree char *got = hs_json_describe(e);
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s: expected an integer in [%s, %s] (got %s)", ep, lo, hi, got);
                return FALSE;
            }
            if (p->type == HS_PARAM_T_U32_ARRAY) {
                ((uint32_t *) field(out, p))[n++] = (uint32_t) v;
            } else {
                ((uint64_t *) field(out, p))[n++] = (uint64_t) v;
            }
        }
        *count_field(out, p) = n;
        return TRUE;
    }
    case HS_PARAM_T_OBJ_ARRAY: {
        int n_items = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
        if (n_items < (int) p->min_count || n_items > (int) p->max_count) {
            return bad_value(p, path, item, error);
        }
        clear_one(p, out);
        char *a = g_malloc0(p->elem_size * (size_t) MAX(n_items, 1));
        *(char **) field(out, p) = a;
        const cJSON *e = NULL;
        cJSON_ArrayForEach(e, item) {
            uint32_t i = *count_field(out, p);
            void *elem = a + i * p->elem_size;
            g_autofree char *ep = hs_json_path_index(path, (int) i);
            hs_param_set_defaults(p->sub, elem);
            /* counted before it is read: a half-read element is freed too */
            *count_field(out, p) = i + 1;
            if (!hs_param_apply(e, ep, p->sub, elem, NULL, sources, error) ||
                (p->check && !p->check(elem, e, ep, error))) {
                return FALSE;
            }
        }
        return TRUE;
    }
    case HS_PARAM_T_STR_ARRAY: {
        if (!cJSON_IsArray(item)) {
            return bad_value(p, path, item, error);
        }
        g_autoptr(GPtrArray) strs = g_ptr_array_new_with_free_func(g_free);
        const cJSON *e = NULL;
        cJSON_ArrayForEach(e, item) {
            if (!cJSON_IsString(e) || (p->min > 0 && e->valuestring[0] == '\0')) {
                g_autofree char *ep = hs_json_path_index(path, (int) strs->len);
                g_autofree char *got = hs_json_describe(e);
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s: expected %s (got %s)", ep,
                            p->min > 0 ? "a non-empty string" : "a string", got);
                return FALSE;
            }
            g_ptr_array_add(strs, g_strdup(e->valuestring));
        }
        g_ptr_array_add(strs, NULL);
        clear_one(p, out);
        *(char ***) field(out, p) = (char **) g_ptr_array_free(g_steal_pointer(&strs), FALSE);
        return TRUE;
    }
    case HS_PARAM_T_RANGE: {
        if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2) {
            return bad_value(p, path, item, error);
        }
        double b[2] = { -INFINITY, INFINITY };
        g_autofree char *lo = format_number(p->min), *hi = format_number(p->max);
        for (int i = 0; i < 2; i++) {
            const cJSON *e = cJSON_GetArrayItem(item, i);
            if (cJSON_IsNull(e)) {
                continue;
            }
            if (!cJSON_IsNumber(e) || !(e->valuedouble >= p->min && e->valuedouble <= p->max)) {
                g_autofree char *ep = hs_json_path_index(path, i);
                g_autofree char *got = hs_json_describe(e);
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                            "%s: expected a number in [%s, %s] or null (got %s)", ep, lo, hi,
                            got);
                return FALSE;
            }
            b[i] = e->valuedouble;
        }
        if (isinf(b[0]) && isinf(b[1])) {
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: expected at least one finite bound (got [null, null])", path);
            return FALSE;
        }
        if (b[0] > b[1]) {
            g_autofree char *ep = hs_json_path_index(path, 1);
            g_autofree char *got = hs_json_describe(cJSON_GetArrayItem(item, 1));
            g_autofree char *l = format_number(b[0]);
            g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                        "%s: expected a bound at least the lower one, %s (got %s)", ep, l, got);
            return FALSE;
        }
        memcpy(field(out, p), b, sizeof(b));
        return TRUE;
    }
    case HS_PARAM_T_MAP:
        if (!map_ok(p, path, item, error)) {
            return FALSE;
        }
        clear_one(p, out);
        *(cJSON **) field(out, p) = cJSON_Duplicate(item, TRUE);
        return TRUE;
    case HS_PARAM_T_MAP_ARRAY: {
        if (!cJSON_IsArray(item)) {
            return bad_value(p, path, item, error);
        }
        int i = 0;
        const cJSON *e = NULL;
        cJSON_ArrayForEach(e, item) {
            g_autofree char *ep = hs_json_path_index(path, i++);
            if (!map_ok(p, ep, e, error)) {
                return FALSE;
            }
        }
        clear_one(p, out);
        *(cJSON **) field(out, p) = cJSON_Duplicate(item, TRUE);
        return TRUE;
    }
    case HS_PARAM_T_BOOL:
        if (!cJSON_IsBool(item)) {
            return bad_value(p, path, item, error);
        }
        store_number(out, p, cJSON_IsTrue(item));
        return TRUE;
    case HS_PARAM_T_STR:
        if (!cJSON_IsString(item) ||
            (p->choices && !in_list(p->choices, item->valuestring)) ||
            (p->min > 0 && item->valuestring[0] == '\0')) {
            return bad_value(p, path, item, error);
        }
        g_free(*(char **) field(out, p));
        *(char **) field(out, p) = g_strdup(item->valuestring);
        return TRUE;
    case HS_PARAM_T_U32:
    case HS_PARAM_T_I32:
    case HS_PARAM_T_U64:
    case HS_PARAM_T_F64: {
        if (!cJSON_IsNumber(item)) {
            return bad_value(p, path, item, error);
        }
        double v = item->valuedouble;
        gboolean integral = p->type != HS_PARAM_T_F64;
        if (!isfinite(v) || v < p->min || v > p->max || (p->min_open && v == p->min) ||
            (integral && v != floor(v))) {
            return bad_value(p, path, item, error);
        }
        store_number(out, p, v);
        return TRUE;
    }
    default:
        g_assert_not_reached();
    }
}

static gboolean
apply_table(const cJSON *obj, const char *path, const HsParam *table, void *out,
            const char *const *extra_keys, GHashTable *sources, gboolean open,
            GError **error);

gboolean
hs_param_apply(const cJSON *obj, const char *path, const HsParam *table,
               void *out, const char *const *extra_keys, GHashTable *sources,
               GError **error)
{
    return apply_table(obj, path, table, out, extra_keys, sources, FALSE, error);
}

gboolean
hs_param_apply_open(const cJSON *obj, const char *path, const HsParam *table, void *out,
                    GError **error)
{
    return apply_table(obj, path, table, out, NULL, NULL, TRUE, error);
}

static gboolean
apply_table(const cJSON *obj, const char *path, const HsParam *table, void *out,
            const char *const *extra_keys, GHashTable *sources, gboolean open,
            GError **error)
{
    if (!cJSON_IsObject(obj)) {
        g_autofree char *got = hs_json_describe(obj);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "%s: expected an object (got %s)", path, got);
        return FALSE;
    }
    if (!hs_json_check_unique_keys(obj, path, HS_CONFIG_ERROR, error)) {
        return FALSE;
    }

    /* Unknown keys first: a typo should not hide behind a missing key. */
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, obj) {
        if (open || lookup(table, it->string) || in_list(extra_keys, it->string)) {
            continue;
        }
        g_autoptr(GString) known = g_string_new(NULL);
        for (const HsParam *p = table; p->name; p++) {
            g_string_append_printf(known, "%s%s", known->len ? ", " : "", p->name);
        }
        for (const char *const *e = extra_keys; e && *e; e++) {
            g_string_append_printf(known, "%s%s", known->len ? ", " : "", *e);
        }
        g_autofree char *e = hs_escape(it->string);
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_UNKNOWN_KEY,
                    "%s: unknown key \"%s\" (known keys: %s)", path, e,
                    known->str);
        return FALSE;
    }

    for (const HsParam *p = table; p->name; p++) {
        g_autofree char *kpath = hs_json_path_key(path, p->name);
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, p->name);
        if (item == NULL || (open && cJSON_IsNull(item))) {
            if (is_required(p)) {
                g_autofree char *want = expected_text(p);
                g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_MISSING_KEY,
                            "%s: missing required key \"%s\" (%s, %s)", path,
                            p->name, want, p->desc);
                return FALSE;
            }
            clear_one(p, out);
            default_one(p, out);
            continue;
        }
        const cJSON *value = item;
        const char *source = NULL;
        /* only numbers, booleans and choices may carry a source, and only
         * in hetero-sim's own formats */
        gboolean scalar = p->type == HS_PARAM_T_U32 || p->type == HS_PARAM_T_I32 ||
                          p->type == HS_PARAM_T_U64 || p->type == HS_PARAM_T_F64 ||
                          p->type == HS_PARAM_T_BOOL || p->type == HS_PARAM_T_ENUM;
        if (scalar && !open && !unwrap(item, kpath, &value, &source, error)) {
            return FALSE;
        }
        if (!apply_one(p, value, kpath, out, sources, error)) {
            return FALSE;
        }
        if (sources && scalar && !open) {
            /* a plain number is the file's, not a default: say so */
            g_hash_table_replace(sources, g_steal_pointer(&kpath),
                                 g_strdup(source ? source : "given without a source"));
        }
    }
    return TRUE;
}

static const struct {
    const char *suffix;
    const char *unit;
} units[] = {
    { "_ms_per_mib", "ms/MiB" }, { "_pj_per_byte", "pJ/B" },
    { "_gbps", "GB/s" },   { "_gflops", "GFLOP/s" }, { "_tflops", "TFLOP/s" },
    { "_mhz", "MHz" },     { "_ghz", "GHz" },        { "_us", "us" },
    { "_ns", "ns" },       { "_ms", "ms" },          { "_ps", "ps" },
    { "_kib", "KiB" },     { "_mib", "MiB" },        { "_gib", "GiB" },
    { "_bytes", "B" },     { "_mw", "mW" },          { "_w", "W" },
    { "_pct", "%" },     { "_cycles", "cycles" },
};

const char *
hs_param_unit(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
        if (g_str_has_suffix(name, units[i].suffix)) {
            return units[i].unit;
        }
    }
    return "";
}

static char *
value_text(const HsParam *p, const void *out)
{
    switch (p->type) {
    case HS_PARAM_T_U32:
        return g_strdup_printf("%" PRIu32, *(const uint32_t *) cfield(out, p));
    case HS_PARAM_T_I32:
        return g_strdup_printf("%" PRId32, *(const int32_t *) cfield(out, p));
    case HS_PARAM_T_U64:
        return g_strdup_printf("%" PRIu64, *(const uint64_t *) cfield(out, p));
    case HS_PARAM_T_F64:
        return format_number(*(const double *) cfield(out, p));
    case HS_PARAM_T_BOOL:
        return g_strdup(*(const gboolean *) cfield(out, p) ? "true" : "false");
    case HS_PARAM_T_STR: {
        const char *s = *(char *const *) cfield(out, p);
        return g_strdup(s ? s : "");
    }
    case HS_PARAM_T_ENUM:
        return g_strdup(p->choices[*(const int *) cfield(out, p)]);
    case HS_PARAM_T_U32_ARRAY: {
        const uint32_t *a = cfield(out, p);
        uint32_t n = *(const uint32_t *) ((const char *) out + p->count_offset);
        GString *s = g_string_new("[");
        for (uint32_t i = 0; i < n; i++) {
            g_string_append_printf(s, "%s%" PRIu32, i ? ", " : "", a[i]);
        }
        g_string_append_c(s, ']');
        return g_string_free(s, FALSE);
    }
    default: {
        /* the kinds that hold more than a line: as their JSON */
        g_autoptr(cJSON) j = cJSON_CreateObject();
        const HsParam one[] = { *p, HS_PARAM_END };
        hs_param_dump_json(one, out, j);
        return hs_json_print(j->child, FALSE);
    }
    }
}

void
hs_param_dump_json(const HsParam *table, const void *out, cJSON *json)
{
    for (const HsParam *p = table; p->name; p++) {
        switch (p->type) {
        case HS_PARAM_T_U32:
            cJSON_AddNumberToObject(json, p->name, *(const uint32_t *) cfield(out, p));
            break;
        case HS_PARAM_T_I32:
            cJSON_AddNumberToObject(json, p->name, *(const int32_t *) cfield(out, p));
            break;
        case HS_PARAM_T_U64:
            cJSON_AddNumberToObject(json, p->name,
                                    (double) *(const uint64_t *) cfield(out, p));
            break;
        case HS_PARAM_T_F64:
            cJSON_AddNumberToObject(json, p->name, *(const double *) cfield(out, p));
            break;
        case HS_PARAM_T_BOOL:
            cJSON_AddBoolToObject(json, p->name, *(const gboolean *) cfield(out, p));
            break;
        case HS_PARAM_T_STR: {
            const char *s = *(char *const *) cfield(out, p);
            if (s) {
                cJSON_AddStringToObject(json, p->name, s);
            } else {
                cJSON_AddNullToObject(json, p->name);
            }
            break;
        }
        case HS_PARAM_T_ENUM:
            cJSON_AddStringToObject(json, p->name, p->choices[*(const int *) cfield(out, p)]);
            break;
        case HS_PARAM_T_OBJ:
            hs_param_dump_json(p->sub, cfield(out, p), cJSON_AddObjectToObject(json, p->name));
            break;
        case HS_PARAM_T_U32_ARRAY: {
            const uint32_t *a = cfield(out, p);
            uint32_t n = *(const uint32_t *) ((const char *) out + p->count_offset);
            cJSON *arr = cJSON_AddArrayToObject(json, p->name);
            for (uint32_t i = 0; i < n; i++) {
                cJSON_AddItemToArray(arr, cJSON_CreateNumber(a[i]));
            }
            break;
        }
        case HS_PARAM_T_U64_ARRAY: {
            const uint64_t *a = cfield(out, p);
            uint32_t n = *(const uint32_t *) ((const char *) out + p->count_offset);
            cJSON *arr = cJSON_AddArrayToObject(json, p->name);
            for (uint32_t i = 0; i < n; i++) {
                cJSON_AddItemToArray(arr, cJSON_CreateNumber((double) a[i]));
            }
            break;
        }
        case HS_PARAM_T_OBJ_ARRAY: {
            const char *a = *(char *const *) cfield(out, p);
            uint32_t n = *(const uint32_t *) ((const char *) out + p->count_offset);
            cJSON *arr = cJSON_AddArrayToObject(json, p->name);
            for (uint32_t i = 0; i < n; i++) {
                cJSON *o = cJSON_CreateObject();
                hs_param_dump_json(p->sub, a + i * p->elem_size, o);
                cJSON_AddItemToArray(arr, o);
            }
            break;
        }
        case HS_PARAM_T_STR_ARRAY: {
            char *const *v = *(char **const *) cfield(out, p);
            cJSON *arr = cJSON_AddArrayToObject(json, p->name);
            for (; v && *v; v++) {
                cJSON_AddItemToArray(arr, cJSON_CreateString(*v));
            }
            break;
        }
        case HS_PARAM_T_RANGE: {
            const double *b = cfield(out, p);
            cJSON *arr = cJSON_AddArrayToObject(json, p->name);
            for (int i = 0; i < 2; i++) {
                cJSON_AddItemToArray(arr, isinf(b[i]) ? cJSON_CreateNull()
                                                      : cJSON_CreateNumber(b[i]));
            }
            break;
        }
        case HS_PARAM_T_MAP:
        case HS_PARAM_T_MAP_ARRAY: {
            const cJSON *m = *(cJSON *const *) cfield(out, p);
            cJSON_AddItemToObject(json, p->name, m ? cJSON_Duplicate(m, TRUE) : cJSON_CreateNull());
            break;
        }
        default:
            g_assert_not_reached();
        }
    }
}

void
hs_param_dump_text(const HsParam *table, const void *out, GString *text,
                   int indent, GHashTable *sources, const char *path)
{
    for (const HsParam *p = table; p->name; p++) {
        g_autofree char *kpath = path ? hs_json_path_key(path, p->name) : NULL;
        if (p->type == HS_PARAM_T_OBJ) {
            g_string_append_printf(text, "%*s%s:\n", indent, "", p->name);
            hs_param_dump_text(p->sub, cfield(out, p), text, indent + 2, sources, kpath);
            continue;
        }
        g_autofree char *v = value_text(p, out);
        const char *src = (sources && kpath) ? g_hash_table_lookup(sources, kpath) : NULL;
        g_autofree char *vu = g_strdup_printf("%s %s", v, hs_param_unit(p->name));
        g_string_append_printf(text, "%*s%-26s %-16s %s%s%s\n", indent, "",
                                p->name, vu, src ? "[" : "", src ? src : "",
                                src ? "]" : (sources ? "[default]" : ""));
    }
}

void
hs_param_describe(const HsParam *table, GString *text)
{
    for (const HsParam *p = table; p->name; p++) {
        g_autofree char *want = expected_text(p);
        g_autofree char *def = NULL;
        if (is_required(p)) {
            def = g_strdup("required");
        } else if (p->type == HS_PARAM_T_OBJ) {
            def = g_strdup("keys below");
        } else if (p->type == HS_PARAM_T_U32_ARRAY || p->type == HS_PARAM_T_U64_ARRAY ||
                   p->type == HS_PARAM_T_OBJ_ARRAY || p->type == HS_PARAM_T_STR_ARRAY) {
            def = g_strdup("default []");
        } else if (p->type == HS_PARAM_T_MAP || p->type == HS_PARAM_T_MAP_ARRAY ||
                   p->type == HS_PARAM_T_RANGE) {
            def = g_strdup("optional");
        } else if (p->type == HS_PARAM_T_ENUM) {
            def = g_strdup_printf("default \"%s\"", p->choices[(int) p->def]);
        } else if (p->type == HS_PARAM_T_STR) {
            def = p->def_str ? g_strdup_printf("default \"%s\"", p->def_str)
                             : g_strdup("optional");
        } else if (p->type == HS_PARAM_T_BOOL) {
            def = g_strdup_printf("default %s", p->def != 0 ? "true" : "false");
        } else {
            g_autofree char *d = format_number(p->def);
            def = g_strdup_printf("default %s", d);
        }
        g_string_append_printf(text, "  %-26s %s; %s\n      %s\n", p->name, want,
                               def, p->desc);
        if (p->type == HS_PARAM_T_OBJ) {
            g_autoptr(GString) sub = g_string_new(NULL);
            hs_param_describe(p->sub, sub);
            g_auto(GStrv) lines = g_strsplit(sub->str, "\n", -1);
            for (char **l = lines; *l && **l; l++) {
                g_string_append_printf(text, "    %s\n", *l);
            }
        }
    }
}

gboolean
hs_param_is_number(const HsParam *p)
{
    return p->type == HS_PARAM_T_U32 || p->type == HS_PARAM_T_I32 ||
           p->type == HS_PARAM_T_U64 || p->type == HS_PARAM_T_F64;
}
