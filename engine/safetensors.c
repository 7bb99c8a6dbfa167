/*
 * safetensors.c - see safetensors.h.
 */
#include "engine/safetensors.h"
#include "sim/util/error.h"
#include "sim/util/escape.h"
#include "sim/util/infile.h"
#include "sim/util/json.h"
#include "sim/util/param.h"
#include "engine/kernels.h"

#include <math.h>
#include <string.h>

typedef struct Entry {
    char *file;                  /* (borrowed from the file list) */
    const uint8_t *data;         /* start of the tensor's bytes */
    char dtype[24];
    uint64_t shape[8];
    int rank;
    uint64_t nbytes;
    gboolean read;               /* by eng_safetensors_read_f32 (once is enough) */
} Entry;

struct EngSafetensors {
    char *dir;
    GPtrArray *maps;             /* of GMappedFile* */
    GPtrArray *files;            /* of char* */
    GHashTable *tensors;         /* name -> Entry* */
};

void
eng_safetensors_free(EngSafetensors *st)
{
    if (st == NULL) {
        return;
    }
    g_hash_table_destroy(st->tensors);
    g_free(st->dir);
    g_ptr_array_unref(st->maps);
    g_ptr_array_unref(st->files);
    g_free(st);
}

static uint64_t
read_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static int
dtype_size(const char *d)
{
    if (strcmp(d, "F32") == 0) {
        return 4;
    }
    if (strcmp(d, "F16") == 0 || strcmp(d, "BF16") == 0) {
        return 2;
    }
    return 0;
}

/* One tensor of the header, as the format writes it.  sim/util is the
 * hs-util library below engine/ and everything else (error domains, JSON,
 * param tables; DESIGN.md "engine/ is pure math" is about time, devices and
 * policies), so the header is read by a param table like every input. */
typedef struct StTensor {
    char *dtype;
    uint64_t shape[8];
    uint32_t rank;
    uint64_t offsets[2];         /* [begin, end) in the data after the header */
    uint32_t n_offsets;
} StTensor;

/* 2^53: the largest integer a uint64_t and a JSON number (a double) both
 * hold exactly, past every byte offset of a real file */
#define ST_MAX_SIZE 9007199254740992.0

static const HsParam tensor_params[] = {
    HS_PARAM_NAME("dtype", StTensor, dtype, "element type (F32, F16 and BF16 are read)"),
    HS_PARAM_U64_ARRAY("shape", StTensor, shape, rank, 0, 8, 0, ST_MAX_SIZE, TRUE,
                       "dimensions, at most 8"),
    HS_PARAM_U64_ARRAY("data_offsets", StTensor, offsets, n_offsets, 2, 2, 0, ST_MAX_SIZE, TRUE,
                       "[begin, end) of the bytes"),
    HS_PARAM_END
};

/* Parse one file's bytes (@base, @size, borrowed: they must outlive @st). */
static gboolean
parse_bytes(EngSafetensors *st, const uint8_t *base, uint64_t size, const char *path,
            GError **error)
{
    if (size < 8) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                    "%s: truncated safetensors file (%" G_GUINT64_FORMAT " bytes, no header)",
                    path, size);
        return FALSE;
    }
    uint64_t hlen = read_le64(base);
    if (hlen > size - 8) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                    "%s: truncated safetensors file (header of %" G_GUINT64_FORMAT
                    " bytes, file of %" G_GUINT64_FORMAT ")", path, hlen, size);
        return FALSE;
    }
    g_autoptr(GError) jerr = NULL;
    /* the JSON parser wants a NUL-terminated text; the tensor data follows
     * the header directly */
    g_autofree char *htext = g_strndup((const char *) base + 8, hlen);
    g_autoptr(cJSON) head = hs_json_parse(htext, hlen, path, HS_MODEL_ERROR,
                                          &jerr);
    if (head == NULL) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT, "%s (safetensors header)",
                    jerr->message);
        return FALSE;
    }
    if (!cJSON_IsObject(head)) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                    "%s: safetensors header: expected an object (got %s)", path,
                    hs_json_kind(head));
        return FALSE;
    }
    const uint8_t *data = base + 8 + hlen;
    uint64_t data_len = size - 8 - hlen;
    char *file = g_strdup(path);
    g_ptr_array_add(st->files, file);
    if (!hs_json_check_unique_keys(head, "$", HS_MODEL_ERROR, &jerr)) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT, "%s: safetensors header: %s",
                    path, jerr->message);
        return FALSE;
    }
    const cJSON *t = NULL;
    cJSON_ArrayForEach(t, head) {
        if (strcmp(t->string, "__metadata__") == 0) {
            continue;
        }
        g_autofree char *name = hs_escape(t->string);
        g_autofree char *tpath = hs_json_path_key("$", t->string);
        StTensor tt = { 0 };
        gboolean ok = hs_param_apply(t, tpath, tensor_params, &tt, NULL, NULL, &jerr);
        if (!ok) {
            g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                        "%s: safetensors header: %s", path, jerr->message);
            hs_param_clear(tensor_params, &tt);
            return FALSE;
        }
        if (g_hash_table_contains(st->tensors, t->string)) {
            g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                        "%s: tensor %s: listed twice", path, name);
            hs_param_clear(tensor_params, &tt);
            return FALSE;
        }
        g_autofree Entry *e = g_new0(Entry, 1);
        e->file = file;
        g_strlcpy(e->dtype, tt.dtype, sizeof(e->dtype));
        /* element count, saturated at 2^60 (times a dtype's 4 bytes still
         * fits): no real tensor, so it fails the byte check below rather
         * than wrapping round to a size that passes */
        uint64_t count = 1;
        for (uint32_t k = 0; k < tt.rank; k++) {
            uint64_t dim = tt.shape[k];
            e->shape[e->rank++] = dim;
            count = (dim != 0 && count > (UINT64_C(1) << 60) / dim) ? (UINT64_C(1) << 60)
                                                                      : count * dim;
        }
        uint64_t b = tt.offsets[0], en = tt.offsets[1];
        hs_param_clear(tensor_params, &tt);
        int ds = dtype_size(e->dtype);
        if (en < b || en > data_len) {
            g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                        "%s: tensor %s: data [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                        ") lies outside the file's %" G_GUINT64_FORMAT
                        " data bytes (truncated file?)", path, name, b, en, data_len);
            return FALSE;
        }
        if (ds && en - b != count * (uint64_t) ds) {
            g_autofree char *dtype = hs_escape(e->dtype);
            g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                        "%s: tensor %s: %" G_GUINT64_FORMAT " bytes for %" G_GUINT64_FORMAT
                        " %s values", path, name, en - b, count, dtype);
            return FALSE;
        }
        e->data = data + b;
        e->nbytes = en - b;
        g_hash_table_replace(st->tensors, g_strdup(t->string), g_steal_pointer(&e));
    }
    return TRUE;
}

static gboolean
parse_file(EngSafetensors *st, const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    GMappedFile *map = g_mapped_file_new(path, FALSE, &local);
    if (map == NULL) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    g_ptr_array_add(st->maps, map);
    return parse_bytes(st, (const uint8_t *) g_mapped_file_get_contents(map),
                       g_mapped_file_get_length(map), path, error);
}

static gint
cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* model.safetensors.index.json is optional; when present, every tensor it
 * maps must be in the file it names. */
static gboolean
check_index(const EngSafetensors *st, GError **error)
{
    g_autofree char *path = g_build_filename(st->dir, "model.safetensors.index.json", NULL);
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        return TRUE;
    }
    g_autoptr(GError) local = NULL;
    if (!hs_infile_read(path, "a JSON file", HS_MODEL_ERROR, HS_MODEL_ERROR_IO, &text, &len,
                        error)) {
        return FALSE;
    }
    g_autoptr(cJSON) root = hs_json_parse(text, len, path, HS_MODEL_ERROR, &local);
    if (root == NULL) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT, "%s", local->message);
        return FALSE;
    }
    const cJSON *map = cJSON_GetObjectItem(root, "weight_map");
    if (!cJSON_IsObject(map)) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                    "%s: $.weight_map: expected an object", path);
        return FALSE;
    }
    const cJSON *t = NULL;
    cJSON_ArrayForEach(t, map) {
        const Entry *e = g_hash_table_lookup(st->tensors, t->string);
        g_autofree char *base = e ? g_path_get_basename(e->file) : NULL;
        if (!cJSON_IsString(t) || base == NULL || strcmp(base, t->valuestring) != 0) {
            g_autofree char *name = hs_escape(t->string);
            g_autofree char *want = hs_escape(cJSON_IsString(t) ? t->valuestring : "?");
            g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_MISSING_TENSOR,
                        "%s: tensor %s: expected in %s (found %s)", path, name, want,
                        base ? base : "nowhere");
            return FALSE;
        }
    }
    return TRUE;
}

static EngSafetensors *
st_new(const char *dir)
{
    EngSafetensors *st = g_new0(EngSafetensors, 1);
    st->dir = g_strdup(dir);
    st->maps = g_ptr_array_new_with_free_func((GDestroyNotify) g_mapped_file_unref);
    st->files = g_ptr_array_new_with_free_func(g_free);
    st->tensors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return st;
}

EngSafetensors *
eng_safetensors_open_bytes(const void *data, size_t len, const char *what, GError **error)
{
    EngSafetensors *st = st_new(what);
    if (!parse_bytes(st, data, len, what, error)) {
        eng_safetensors_free(st);
        return NULL;
    }
    return st;
}

static GStrv
names_where(const EngSafetensors *st, gboolean unread_only)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, st->tensors);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (!unread_only || !((const Entry *) v)->read) {
            g_ptr_array_add(names, g_strdup(k));
        }
    }
    g_ptr_array_sort(names, cmp_str);
    g_ptr_array_add(names, NULL);
    return (GStrv) g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

GStrv
eng_safetensors_names(const EngSafetensors *st)
{
    return names_where(st, FALSE);
}

GStrv
eng_safetensors_unread(const EngSafetensors *st)
{
    return names_where(st, TRUE);
}

int
eng_safetensors_shape(const EngSafetensors *st, const char *name, uint64_t shape[8])
{
    const Entry *e = g_hash_table_lookup(st->tensors, name);
    if (e == NULL) {
        return -1;
    }
    memcpy(shape, e->shape, sizeof(e->shape));
    return e->rank;
}

EngSafetensors *
eng_safetensors_open_dir(const char *dir, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GDir) d = g_dir_open(dir, 0, &local);
    if (d == NULL) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_IO, "%s", local->message);
        return NULL;
    }
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *n;
    while ((n = g_dir_read_name(d)) != NULL) {
        if (g_str_has_suffix(n, ".safetensors")) {
            g_ptr_array_add(names, g_build_filename(dir, n, NULL));
        }
    }
    if (names->len == 0) {
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_IO,
                    "%s: no *.safetensors file in the model directory", dir);
        return NULL;
    }
    g_ptr_array_sort(names, cmp_str);
    EngSafetensors *st = st_new(dir);
    for (guint i = 0; i < names->len; i++) {
        if (!parse_file(st, names->pdata[i], error)) {
            eng_safetensors_free(st);
            return NULL;
        }
    }
    if (!check_index(st, error)) {
        eng_safetensors_free(st);
        return NULL;
    }
    return st;
}

gboolean
eng_safetensors_has(const EngSafetensors *st, const char *name)
{
    return g_hash_table_contains(st->tensors, name);
}

static char *
shape_text(const uint64_t *s, int rank)
{
    GString *o = g_string_new("[");
    for (int i = 0; i < rank; i++) {
        g_string_append_printf(o, "%s%" G_GUINT64_FORMAT, i ? ", " : "", s[i]);
    }
    g_string_append_c(o, ']');
    return g_string_free(o, FALSE);
}

gboolean
eng_safetensors_read_f32(const EngSafetensors *st, const char *name, const uint64_t *shape,
                         int rank, float *out, GError **error)
{
    Entry *e = g_hash_table_lookup(st->tensors, name);
    g_autofree char *ename = hs_escape(name);
    if (e == NULL) {
        GString *files = g_string_new(NULL);
        for (guint i = 0; i < st->files->len; i++) {
            g_autofree char *base = g_path_get_basename(st->files->pdata[i]);
            g_string_append_printf(files, "%s%s", i ? ", " : "", base);
        }
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_MISSING_TENSOR,
                    "%s: tensor %s: not found (files: %s)", st->dir, ename, files->str);
        g_string_free(files, TRUE);
        return FALSE;
    }
    gboolean same = e->rank == rank;
    for (int i = 0; same && i < rank; i++) {
        same = e->shape[i] == shape[i];
    }
    if (!same) {
        g_autofree char *want = shape_text(shape, rank), *got = shape_text(e->shape, e->rank);
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_SHAPE,
                    "%s: tensor %s: expected shape %s (got %s)", e->file, ename, want, got);
        return FALSE;
    }
    uint64_t count = 1;
    for (int i = 0; i < rank; i++) {
        count *= shape[i];
    }
    if (strcmp(e->dtype, "F32") == 0) {
        memcpy(out, e->data, count * 4);
    } else if (strcmp(e->dtype, "F16") == 0) {
        for (uint64_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, e->data + 2 * i, 2);
            out[i] = eng_fp16_to_float(h);
        }
    } else if (strcmp(e->dtype, "BF16") == 0) {
        for (uint64_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, e->data + 2 * i, 2);
            uint32_t bits = (uint32_t) h << 16;
            memcpy(&out[i], &bits, 4);
        }
    } else {
        g_autofree char *dtype = hs_escape(e->dtype);
        g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_DTYPE,
                    "%s: tensor %s: unsupported dtype %s (expected F32, F16 or BF16)", e->file,
                    ename, dtype);
        return FALSE;
    }
    /* NaN or Inf would reach the quantiser (an undefined float-to-int
     * conversion) and every value computed from it: refused here, by name */
    for (uint64_t i = 0; i < count; i++) {
        if (!isfinite(out[i])) {
            g_set_error(error, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT,
                        "%s: tensor %s: expected finite values (got %s at element %"
                        G_GUINT64_FORMAT ")", e->file, ename,
                        isnan(out[i]) ? "nan" : out[i] > 0 ? "inf" : "-inf", i);
            return FALSE;
        }
    }
    e->read = TRUE;
    return TRUE;
}
