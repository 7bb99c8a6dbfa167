/*
 * model-dir.c - see model-dir.h.
 */
#include "tests/model-dir.h"

#include <glib/gstdio.h>

typedef struct Writer {
    GString *hdr;                /* the safetensors JSON header */
    GByteArray *body;
} Writer;

static void
add_tensor(Writer *w, const char *name, const float *v, uint64_t rows, uint64_t cols)
{
    uint64_t n = rows * (cols ? cols : 1);
    g_string_append_printf(w->hdr, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%" G_GUINT64_FORMAT,
                           w->hdr->len > 1 ? "," : "", name, rows);
    if (cols) {
        g_string_append_printf(w->hdr, ",%" G_GUINT64_FORMAT, cols);
    }
    g_string_append_printf(w->hdr, "],\"data_offsets\":[%u,%" G_GUINT64_FORMAT "]}",
                           w->body->len, w->body->len + n * 4);
    g_byte_array_append(w->body, (const guint8 *) v, (guint) (n * 4));
}

char *
hs_test_model_dir(EngModel *m, const char *config, const char *drop)
{
    const EngModelConfig *c = eng_model_config(m);
    static const char *const proj[ENG_W_COUNT] = {
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
    };
    Writer w = { g_string_new("{"), g_byte_array_new() };
    g_autofree float *emb = g_new(float, (size_t) c->vocab * c->hidden);
    for (uint32_t t = 0; t < c->vocab; t++) {
        eng_model_embed(m, t, emb + (size_t) t * c->hidden);
    }
    add_tensor(&w, "model.embed_tokens.weight", emb, c->vocab, c->hidden);
    for (uint32_t l = 0; l < c->layers; l++) {
        for (int i = 0; i < ENG_W_COUNT; i++) {
            g_autofree char *nm = g_strdup_printf("model.layers.%u.%s.weight", l, proj[i]);
            const EngMatrix *mat = eng_model_weight(m, l, (EngWeight) i);
            if (g_strcmp0(drop, nm) != 0) {
                add_tensor(&w, nm, mat->f32, mat->rows, mat->cols);
            }
            const float *b = eng_model_bias(m, l, i);
            if (b) {
                g_autofree char *bn = g_strdup_printf("model.layers.%u.%s.bias", l, proj[i]);
                add_tensor(&w, bn, b, mat->rows, 0);
            }
        }
        g_autofree char *n0 = g_strdup_printf("model.layers.%u.input_layernorm.weight", l);
        g_autofree char *n1 = g_strdup_printf("model.layers.%u.post_attention_layernorm.weight",
                                              l);
        add_tensor(&w, n0, eng_model_norm(m, l, 0), c->hidden, 0);
        add_tensor(&w, n1, eng_model_norm(m, l, 1), c->hidden, 0);
    }
    add_tensor(&w, "model.norm.weight", eng_model_norm(m, c->layers, 0), c->hidden, 0);
    const EngMatrix *head = eng_model_lm_head(m);
    add_tensor(&w, "lm_head.weight", head->f32, head->rows, head->cols);
    g_string_append_c(w.hdr, '}');

    char *dir = g_dir_make_tmp("hs-model-XXXXXX", NULL);
    g_assert_nonnull(dir);
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    g_autoptr(GByteArray) file = g_byte_array_new();
    uint64_t hl = w.hdr->len;
    g_byte_array_append(file, (const guint8 *) &hl, 8);
    g_byte_array_append(file, (const guint8 *) w.hdr->str, w.hdr->len);
    g_byte_array_append(file, w.body->data, w.body->len);
    g_assert_true(g_file_set_contents(path, (const char *) file->data, file->len, NULL));
    if (config) {
        g_autofree char *cfg = g_build_filename(dir, "config.json", NULL);
        g_assert_true(g_file_set_contents(cfg, config, -1, NULL));
    }
    g_byte_array_unref(w.body);
    g_string_free(w.hdr, TRUE);
    return dir;
}

void
hs_test_model_dir_remove(const char *dir)
{
    g_autofree char *p = g_build_filename(dir, "model.safetensors", NULL);
    g_autofree char *c = g_build_filename(dir, "config.json", NULL);
    g_unlink(p);
    g_unlink(c);
    g_rmdir(dir);
}
