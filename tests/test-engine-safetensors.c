/*
 * test-engine-safetensors.c - the safetensors reader: the test writes
 * its own small model directory (F32, F16 and BF16 tensors, by hand,
 * byte by byte), reads it back, and checks every error with its exact
 * message (missing tensor, wrong shape, truncated file, unknown dtype,
 * bad header JSON, index naming the wrong file).
 */
#include "engine/kernels.h"
#include "engine/safetensors.h"
#include "sim/util/error.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

typedef struct T {
    const char *name, *dtype;
    int rank;
    uint64_t shape[2];
    const float *values;
} T;

/* Write @n tensors as one safetensors file; drop the last @cut bytes. */
static void
write_st(const char *path, const T *ts, int n, size_t cut, const char *header_override)
{
    GString *h = g_string_new("{\"__metadata__\":{\"format\":\"pt\"}");
    GByteArray *data = g_byte_array_new();
    for (int i = 0; i < n; i++) {
        uint64_t count = 1;
        for (int d = 0; d < ts[i].rank; d++) {
            count *= ts[i].shape[d];
        }
        size_t begin = data->len;
        for (uint64_t j = 0; j < count; j++) {
            float f = ts[i].values[j];
            if (strcmp(ts[i].dtype, "F32") == 0) {
                g_byte_array_append(data, (const guint8 *) &f, 4);
            } else if (strcmp(ts[i].dtype, "F16") == 0) {
                uint16_t b = eng_fp16_from_float(f);
                g_byte_array_append(data, (const guint8 *) &b, 2);
            } else {
                uint32_t bits;
                memcpy(&bits, &f, 4);
                uint16_t b = (uint16_t) (bits >> 16);        /* BF16: exact for our values */
                g_byte_array_append(data, (const guint8 *) &b, 2);
            }
        }
        g_string_append_printf(h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", ts[i].name,
                               strcmp(ts[i].dtype, "X") == 0 ? "I64" : ts[i].dtype);
        for (int d = 0; d < ts[i].rank; d++) {
            g_string_append_printf(h, "%s%" G_GUINT64_FORMAT, d ? "," : "", ts[i].shape[d]);
        }
        g_string_append_printf(h, "],\"data_offsets\":[%zu,%u]}", begin, data->len);
    }
    g_string_append_c(h, '}');
    if (header_override) {
        g_string_assign(h, header_override);
    }
    GByteArray *file = g_byte_array_new();
    uint64_t hl = h->len;
    g_byte_array_append(file, (const guint8 *) &hl, 8);
    g_byte_array_append(file, (const guint8 *) h->str, h->len);
    g_byte_array_append(file, data->data, data->len);
    g_assert_true(g_file_set_contents(path, (const char *) file->data,
                                      (gssize) (file->len - cut), NULL));
    g_string_free(h, TRUE);
    g_byte_array_unref(data);
    g_byte_array_unref(file);
}

static const float vals[6] = { 1.0f, -2.5f, 0.15625f, 3.0f, -0.0078125f, 100.0f };

static char *
make_dir(void)
{
    return g_dir_make_tmp("hs-st-XXXXXX", NULL);
}

static void
rm_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, n, NULL);
        g_unlink(p);
    }
    g_rmdir(dir);
}

/* Two files, three dtypes, an index: every value comes back exactly. */
static void
test_read_dtypes(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *f1 = g_build_filename(dir, "model-00001-of-00002.safetensors", NULL);
    g_autofree char *f2 = g_build_filename(dir, "model-00002-of-00002.safetensors", NULL);
    T a[] = { { "a.f32", "F32", 2, { 2, 3 }, vals }, { "b.f16", "F16", 1, { 6 }, vals } };
    T b[] = { { "c.bf16", "BF16", 2, { 3, 2 }, vals } };
    write_st(f1, a, 2, 0, NULL);
    write_st(f2, b, 1, 0, NULL);
    g_autofree char *idx = g_build_filename(dir, "model.safetensors.index.json", NULL);
    g_assert_true(g_file_set_contents(idx,
        "{\"weight_map\":{\"a.f32\":\"model-00001-of-00002.safetensors\","
        "\"c.bf16\":\"model-00002-of-00002.safetensors\"}}", -1, NULL));
    g_autoptr(GError) err = NULL;
    g_autoptr(EngSafetensors) st = eng_safetensors_open_dir(dir, &err);
    g_assert_no_error(err);
    const char *names[] = { "a.f32", "b.f16", "c.bf16" };
    uint64_t shapes[3][2] = { { 2, 3 }, { 6, 0 }, { 3, 2 } };
    for (int i = 0; i < 3; i++) {
        float out[6];
        g_assert_true(eng_safetensors_has(st, names[i]));
        g_assert_true(eng_safetensors_read_f32(st, names[i], shapes[i], i == 1 ? 1 : 2, out,
                                               &err));
        g_assert_no_error(err);
        g_assert_cmpmem(out, sizeof(out), vals, sizeof(vals));
    }
    rm_dir(dir);
}

/* Each error, with its exact message. */
static void
test_errors(void)
{
    g_autofree char *dir = make_dir();
    g_autofree char *f = g_build_filename(dir, "model.safetensors", NULL);
    T a[] = { { "w", "F32", 2, { 2, 3 }, vals }, { "x", "X", 1, { 6 }, vals } };
    g_autoptr(GError) err = NULL;
    float out[6];

    write_st(f, a, 2, 0, NULL);
    {
        g_autoptr(EngSafetensors) st = eng_safetensors_open_dir(dir, &err);
        g_assert_no_error(err);
        uint64_t sh[2] = { 3, 2 };
        g_assert_false(eng_safetensors_read_f32(st, "model.norm.weight", sh, 2, out, &err));
        g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_MISSING_TENSOR);
        g_autofree char *m1 = g_strdup_printf(
            "%s: tensor model.norm.weight: not found (files: model.safetensors)", dir);
        g_assert_cmpstr(err->message, ==, m1);
        g_clear_error(&err);
        g_assert_false(eng_safetensors_read_f32(st, "w", sh, 2, out, &err));
        g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_SHAPE);
        g_autofree char *m2 = g_strdup_printf("%s: tensor w: expected shape [3, 2] (got [2, 3])", f);
        g_assert_cmpstr(err->message, ==, m2);
        g_clear_error(&err);
        uint64_t sx[1] = { 6 };
        g_assert_false(eng_safetensors_read_f32(st, "x", sx, 1, out, &err));
        g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_DTYPE);
        g_autofree char *m3 = g_strdup_printf(
            "%s: tensor x: unsupported dtype I64 (expected F32, F16 or BF16)", f);
        g_assert_cmpstr(err->message, ==, m3);
        g_clear_error(&err);
    }

    /* truncated: the data of "w" (24 bytes) cut by 4 */
    T only_w[] = { { "w", "F32", 2, { 2, 3 }, vals } };
    write_st(f, only_w, 1, 4, NULL);
    g_assert_null(eng_safetensors_open_dir(dir, &err));
    g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT);
    g_autofree char *m4 = g_strdup_printf(
        "%s: tensor w: data [0, 24) lies outside the file's 20 data bytes (truncated file?)", f);
    g_assert_cmpstr(err->message, ==, m4);
    g_clear_error(&err);

    /* truncated inside the header length */
    g_assert_true(g_file_set_contents(f, "\x10\0\0", 3, NULL));
    g_assert_null(eng_safetensors_open_dir(dir, &err));
    g_autofree char *m5 = g_strdup_printf(
        "%s: truncated safetensors file (3 bytes, no header)", f);
    g_assert_cmpstr(err->message, ==, m5);
    g_clear_error(&err);

    /* bad header JSON */
    write_st(f, only_w, 1, 0, "{\"w\": {\"dtype\": \"F32\",, }}");
    g_assert_null(eng_safetensors_open_dir(dir, &err));
    g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_FORMAT);
    g_autofree char *m8 = g_strdup_printf("%s: invalid JSON at line 1, column 24 (safetensors header)", f);
    g_assert_cmpstr(err->message, ==, m8);
    g_clear_error(&err);

    /* index naming a file that does not hold the tensor */
    write_st(f, only_w, 1, 0, NULL);
    g_autofree char *idx = g_build_filename(dir, "model.safetensors.index.json", NULL);
    g_assert_true(g_file_set_contents(idx, "{\"weight_map\":{\"w\":\"other.safetensors\"}}", -1,
                                      NULL));
    g_assert_null(eng_safetensors_open_dir(dir, &err));
    g_autofree char *m6 = g_strdup_printf(
        "%s: tensor w: expected in other.safetensors (found model.safetensors)", idx);
    g_assert_cmpstr(err->message, ==, m6);
    g_clear_error(&err);
    g_unlink(idx);

    /* no safetensors at all */
    g_unlink(f);
    g_assert_null(eng_safetensors_open_dir(dir, &err));
    g_autofree char *m7 = g_strdup_printf("%s: no *.safetensors file in the model directory", dir);
    g_assert_cmpstr(err->message, ==, m7);
    g_clear_error(&err);
    rm_dir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/engine/safetensors/f32-f16-bf16", test_read_dtypes);
    g_test_add_func("/engine/safetensors/errors", test_errors);
    return g_test_run();
}
