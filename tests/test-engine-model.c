/*
 * test-engine-model.c - the whole model: KV cache consistency, thread-count
 * independence, and real weights from a Hugging Face style directory that
 * the test writes itself (safetensors F32, F16, BF16), with every error a
 * bad directory can give.
 */
#include "engine/forward.h"
#include "engine/safetensors.h"
#include "sim/util/error.h"

#include <glib/gstdio.h>
#include <math.h>
#include <omp.h>
#include <string.h>

static EngConfig
tiny_config(void)
{
    return (EngConfig) { .hidden = 64, .intermediate = 176, .layers = 2, .heads = 4,
                         .kv_heads = 2, .head_dim = 16, .vocab = 256, .rope_theta = 1e4,
                         .rms_eps = 1e-5, .seed = 3 };
}

static const uint32_t prompt[] = { 5, 17, 200, 3, 99, 42, 7 };

/* Prefill of n+1 tokens == prefill of n then one decode step (the KV
 * cache), and every logit finite. */
static void
test_kv_cache(void)
{
    EngConfig cfg = tiny_config();
    g_autoptr(EngModel) m = eng_model_new(&cfg);
    const uint32_t n = G_N_ELEMENTS(prompt);
    g_autofree float *all = g_new(float, n * cfg.vocab);
    g_autofree float *step = g_new(float, n * cfg.vocab);
    g_autoptr(EngKV) a = eng_kv_new(&cfg, 16), b = eng_kv_new(&cfg, 16);
    eng_forward(m, a, prompt, n, 0, all);
    eng_forward(m, b, prompt, n - 1, 0, step);
    eng_forward(m, b, prompt + n - 1, 1, n - 1, step + (n - 1) * cfg.vocab);
    double maxd = 0, maxv = 0;
    for (uint32_t i = 0; i < n * cfg.vocab; i++) {
        g_assert_true(isfinite(all[i]));
        maxd = fmax(maxd, fabs(all[i] - step[i]));
        maxv = fmax(maxv, fabs(all[i]));
    }
    g_assert_cmpfloat(maxv, >, 0.1);
    g_assert_cmpfloat(maxd, <, 1e-4 * maxv);
}

static void
test_threads(void)
{
    EngConfig cfg = tiny_config();
    const uint32_t n = G_N_ELEMENTS(prompt);
    g_autofree float *x1 = g_new(float, n * cfg.vocab), *x4 = g_new(float, n * cfg.vocab);
    omp_set_num_threads(1);
    {
        g_autoptr(EngModel) m = eng_model_new(&cfg);
        g_autoptr(EngKV) kv = eng_kv_new(&cfg, 16);
        eng_forward(m, kv, prompt, n, 0, x1);
    }
    omp_set_num_threads(4);
    {
        g_autoptr(EngModel) m = eng_model_new(&cfg);
        g_autoptr(EngKV) kv = eng_kv_new(&cfg, 16);
        eng_forward(m, kv, prompt, n, 0, x4);
    }
    omp_set_num_threads(2);
    g_assert_cmpint(memcmp(x1, x4, sizeof(float) * n * cfg.vocab), ==, 0);
}

/* Write @m's weights as a Hugging Face directory (F32 safetensors). */
static char *
write_model_dir(EngModel *m, const char *skip, const char *wrong_shape)
{
    const EngConfig *c = eng_model_config(m);
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("hs-st-XXXXXX", &error);
    g_assert_no_error(error);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *data = g_ptr_array_new();
    GArray *shapes = g_array_new(FALSE, FALSE, sizeof(uint64_t) * 2);
    GArray *ranks = g_array_new(FALSE, FALSE, sizeof(int));
    static const char *const proj[ENG_W_COUNT] = {
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
    };
    uint64_t q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    uint64_t rows[] = { q, kv, kv, c->hidden, c->intermediate, c->intermediate, c->hidden };
    uint64_t cols[] = { c->hidden, c->hidden, c->hidden, q, c->hidden, c->hidden, c->intermediate };
    GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
    float *embed = g_new(float, (size_t) c->vocab * c->hidden);
    for (uint32_t t = 0; t < c->vocab; t++) {
        eng_model_embed(m, t, embed + (size_t) t * c->hidden);
    }
#define ADD(nm, ptr, r, cc, rk) do {                                                    \
        uint64_t sh[2] = { (r), (cc) };                                              \
        int rank = (rk);                                                             \
        g_ptr_array_add(names, (nm));                                                \
        g_ptr_array_add(data, (gpointer) (ptr));                                     \
        g_array_append_val(shapes, sh);                                              \
        g_array_append_val(ranks, rank);                                             \
    } while (0)
    for (uint32_t l = 0; l < c->layers; l++) {
        for (int w = 0; w < ENG_W_COUNT; w++) {
            const EngMatrix *mat = eng_model_weight(m, l, (EngWeight) w);
            float *f = g_new(float, (size_t) mat->rows * mat->cols);
            eng_matrix_rows_f32(mat, 0, mat->rows, f);
            g_ptr_array_add(owned, f);
            ADD(g_strdup_printf("model.layers.%u.%s.weight", l, proj[w]), f, rows[w],
                cols[w], 2);
        }
        ADD(g_strdup_printf("model.layers.%u.input_layernorm.weight", l),
            eng_model_norm(m, l, 0), c->hidden, 0, 1);
        ADD(g_strdup_printf("model.layers.%u.post_attention_layernorm.weight", l),
            eng_model_norm(m, l, 1), c->hidden, 0, 1);
    }
    ADD(g_strdup("model.norm.weight"), eng_model_norm(m, c->layers, 0), c->hidden, 0, 1);
    ADD(g_strdup("model.embed_tokens.weight"), embed, c->vocab, c->hidden, 2);
    float *head = g_new(float, (size_t) c->vocab * c->hidden);
    eng_matrix_rows_f32(eng_model_lm_head(m), 0, c->vocab, head);
    g_ptr_array_add(owned, head);
    ADD(g_strdup("lm_head.weight"), head, c->vocab, c->hidden, 2);
#undef ADD
    GPtrArray *keep_n = g_ptr_array_new(), *keep_d = g_ptr_array_new();
    GArray *keep_s = g_array_new(FALSE, FALSE, sizeof(uint64_t *));
    GArray *keep_r = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < names->len; i++) {
        if (skip && strcmp(names->pdata[i], skip) == 0) {
            continue;
        }
        uint64_t *sh = &g_array_index(shapes, uint64_t, i * 2);
        if (wrong_shape && strcmp(names->pdata[i], wrong_shape) == 0) {
            sh[0] = 1;
            sh[1] = 64;
        }
        g_ptr_array_add(keep_n, names->pdata[i]);
        g_ptr_array_add(keep_d, data->pdata[i]);
        g_array_append_val(keep_s, sh);
        g_array_append_val(keep_r, g_array_index(ranks, int, i));
    }
    g_autofree char *file = g_build_filename(dir, "model.safetensors", NULL);
    g_assert_true(eng_safetensors_write_f32(file, (const char *const *) keep_n->pdata,
                                            (const float *const *) keep_d->pdata,
                                            (const uint64_t *const *) keep_s->data,
                                            (const int *) keep_r->data, (int) keep_n->len,
                                            &error));
    g_ptr_array_unref(keep_n);
    g_ptr_array_unref(keep_d);
    g_array_free(keep_s, TRUE);
    g_array_free(keep_r, TRUE);
    g_ptr_array_unref(names);
    g_ptr_array_unref(data);
    g_array_free(shapes, TRUE);
    g_array_free(ranks, TRUE);
    g_ptr_array_unref(owned);
    g_free(embed);
    return dir;
}

static void
remove_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, n, NULL);
        g_unlink(p);
    }
    g_rmdir(dir);
}

/* Loaded weights (FP32) equal the synthetic ones they were written from
 * (dequantised): the same logits, up to the order in which the INT4 kernel
 * and BLAS sum. */
static void
test_load_round_trip(void)
{
    EngConfig cfg = tiny_config();
    g_autoptr(EngModel) syn = eng_model_new(&cfg);
    g_autofree char *dir = write_model_dir(syn, NULL, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(EngModel) real = eng_model_load(&cfg, dir, FALSE, &error);
    g_assert_no_error(error);
    const uint32_t n = G_N_ELEMENTS(prompt);
    g_autofree float *a = g_new(float, n * cfg.vocab), *b = g_new(float, n * cfg.vocab);
    g_autoptr(EngKV) ka = eng_kv_new(&cfg, 8), kb = eng_kv_new(&cfg, 8);
    eng_forward(syn, ka, prompt, n, 0, a);
    eng_forward(real, kb, prompt, n, 0, b);
    double maxd = 0, maxv = 0;
    for (uint32_t i = 0; i < n * cfg.vocab; i++) {
        maxd = fmax(maxd, fabs(a[i] - b[i]));
        maxv = fmax(maxv, fabs(a[i]));
    }
    g_assert_cmpfloat(maxv, >, 0.1);
    g_assert_cmpfloat(maxd, <, 1e-5 * maxv);
    remove_dir(dir);
}

static void
check_load_error(const char *skip, const char *wrong, const char *want_fmt)
{
    EngConfig cfg = tiny_config();
    g_autoptr(EngModel) syn = eng_model_new(&cfg);
    g_autofree char *dir = write_model_dir(syn, skip, wrong);
    g_autoptr(GError) error = NULL;
    g_autoptr(EngModel) real = eng_model_load(&cfg, dir, FALSE, &error);
    g_assert_null(real);
    g_autofree char *file = g_build_filename(dir, "model.safetensors", NULL);
    g_autofree char *want = g_strdup_printf(want_fmt, strstr(want_fmt, "%s: tensor") == want_fmt
                                                      && skip ? dir : file);
    g_assert_cmpstr(error->message, ==, want);
    remove_dir(dir);
}

static void
test_missing_tensor(void)
{
    check_load_error("model.layers.1.mlp.up_proj.weight", NULL,
                     "%s: tensor model.layers.1.mlp.up_proj.weight: not found in any of its 1 "
                     "*.safetensors files");
}

static void
test_wrong_shape(void)
{
    check_load_error(NULL, "model.layers.0.self_attn.k_proj.weight",
                     "%s: tensor model.layers.0.self_attn.k_proj.weight: expected shape [32, 64] "
                     "(got [1, 64])");
}

/* A raw file with a hand-made header: F16 and BF16 values, and errors. */
static char *
raw_file(const char *dir, const char *header, const void *data, size_t len)
{
    char *path = g_build_filename(dir, "x.safetensors", NULL);
    uint64_t h = strlen(header);
    GString *s = g_string_new(NULL);
    for (int i = 0; i < 8; i++) {
        g_string_append_c(s, (char) ((h >> (8 * i)) & 0xff));
    }
    g_string_append(s, header);
    g_string_append_len(s, data, (gssize) len);
    g_assert_true(g_file_set_contents(path, s->str, (gssize) s->len, NULL));
    g_string_free(s, TRUE);
    return path;
}

static void
test_dtypes_and_bad_files(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("hs-st-XXXXXX", &error);
    /* F16: 1.0, -2.0, 0.5; BF16: 1.0, -3.0 */
    const uint16_t vals[] = { 0x3c00, 0xc000, 0x3800, 0x3f80, 0xc040 };
    g_autofree char *p = raw_file(dir,
        "{\"a\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,6]},"
        "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[6,10]},"
        "\"c\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[0,2]}}", vals, sizeof(vals));
    g_autoptr(EngSafetensors) st = eng_safetensors_open_dir(dir, &error);
    g_assert_no_error(error);
    float a[3], b[2], c[2];
    g_assert_true(eng_safetensors_read_f32(st, "a", (uint64_t[]) { 3 }, 1, a, &error));
    g_assert_true(eng_safetensors_read_f32(st, "b", (uint64_t[]) { 2 }, 1, b, &error));
    g_assert_cmpfloat(a[0], ==, 1.0f);
    g_assert_cmpfloat(a[1], ==, -2.0f);
    g_assert_cmpfloat(a[2], ==, 0.5f);
    g_assert_cmpfloat(b[0], ==, 1.0f);
    g_assert_cmpfloat(b[1], ==, -3.0f);
    g_assert_false(eng_safetensors_read_f32(st, "c", (uint64_t[]) { 2 }, 1, c, &error));
    g_autofree char *want = g_strdup_printf("%s: tensor c: unsupported dtype I8 (expected F32, "
                                            "F16 or BF16)", p);
    g_assert_cmpstr(error->message, ==, want);
    g_clear_error(&error);
    g_clear_pointer(&st, eng_safetensors_free);

    /* truncated: the data offsets run past the end */
    g_autofree char *t = raw_file(dir, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],"
                                       "\"data_offsets\":[0,16]}}", vals, 6);
    g_assert_null(eng_safetensors_open_dir(dir, &error));
    g_autofree char *w2 = g_strdup_printf("%s: tensor a: data [0, 16) lies outside the file's "
                                          "6 data bytes (truncated file?)", t);
    g_assert_cmpstr(error->message, ==, w2);
    g_clear_error(&error);

    /* a header that is not JSON */
    g_autofree char *j = raw_file(dir, "{\"a\": nope}", vals, 6);
    g_assert_null(eng_safetensors_open_dir(dir, &error));
    g_autofree char *w3 = g_strdup_printf("%s: invalid JSON at line 1, column 7 (safetensors "
                                          "header)", j);
    g_assert_cmpstr(error->message, ==, w3);
    g_clear_error(&error);

    /* shorter than its own length field */
    g_assert_true(g_file_set_contents(j, "abc", 3, NULL));
    g_assert_null(eng_safetensors_open_dir(dir, &error));
    g_autofree char *w4 = g_strdup_printf("%s: truncated safetensors file (3 bytes, no header)", j);
    g_assert_cmpstr(error->message, ==, w4);
    g_clear_error(&error);
    remove_dir(dir);

    /* no safetensors at all */
    g_autofree char *empty = g_dir_make_tmp("hs-st-XXXXXX", NULL);
    g_assert_null(eng_safetensors_open_dir(empty, &error));
    g_autofree char *w5 = g_strdup_printf("%s: no *.safetensors file in the model directory", empty);
    g_assert_cmpstr(error->message, ==, w5);
    g_rmdir(empty);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/engine/model/kv-cache", test_kv_cache);
    g_test_add_func("/engine/model/threads", test_threads);
    g_test_add_func("/engine/model/load-round-trip", test_load_round_trip);
    g_test_add_func("/engine/model/missing-tensor", test_missing_tensor);
    g_test_add_func("/engine/model/wrong-shape", test_wrong_shape);
    g_test_add_func("/engine/safetensors/dtypes-and-bad-files", test_dtypes_and_bad_files);
    return g_test_run();
}
