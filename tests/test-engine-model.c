/*
 * test-engine-model.c - the whole model on a tiny config with synthetic
 * weights: logits finite; prefill of N tokens then a decode step gives the
 * logits of a prefill of N + 1 tokens at the last position (KV cache
 * correctness); byte-identical with 1 and 4 OpenMP threads; synthetic
 * weights reproducible; and a model directory written by the test loads
 * and runs (errors naming the tensor and the file).
 */
#include "engine/model.h"
#include "engine/wcache.h"
#include "engine/weights.h"
#include "models/spec.h"
#include "sim/forward.h"
#include "sim/run.h"
#include "sim/util/error.h"
#include "tests/model-dir.h"

#include <glib.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* The tiny model's description: Qwen2 (Q/K/V biases) or Gemma (GeGLU,
 * (1 + w) RMSNorm, embedding scale).  The forward pass runs its graph. */
static MdlSpec *spec_of[2];

static MdlSpec *
tiny_spec(gboolean gemma)
{
    if (spec_of[gemma] == NULL) {
        g_autofree char *json = g_strdup_printf(
            "{\"model_type\": \"%s\", \"hidden_size\": 64, \"intermediate_size\": 176, "
            "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
            "\"num_key_value_heads\": 2, \"head_dim\": 16, \"vocab_size\": 256, "
            "\"rope_theta\": 10000, \"rms_norm_eps\": 1e-5, \"hidden_act\": \"%s\", "
            "\"tie_word_embeddings\": false}",
            gemma ? "gemma" : "qwen2", gemma ? "gelu" : "silu");
        g_autoptr(cJSON) root = cJSON_Parse(json);
        g_autoptr(GError) err = NULL;
        spec_of[gemma] = mdl_spec_from_json(root, "tiny", &err);
        g_assert_no_error(err);
    }
    return spec_of[gemma];
}

static EngModelConfig
tiny(EngWFormat f, gboolean gemma)
{
    EngModelConfig c;
    sim_run_engine_config(tiny_spec(gemma), 7, &c);
    c.weights = f;
    g_assert_true(c.attention_bias == !gemma && c.embed_scale == gemma);
    return c;
}

/* The forward pass of the tiny model @m (Gemma's: the one with the embedding scale). */
static void
prefill(EngModel *m, EngKV *kv, const uint32_t *t, uint32_t n, float *out)
{
    sim_forward_prefill(m, tiny_spec(eng_model_config(m)->embed_scale), kv, t, n, out);
}

static void
decode(EngModel *m, EngKV *kv, uint32_t t, float *out)
{
    sim_forward_decode(m, tiny_spec(eng_model_config(m)->embed_scale), kv, t, out);
}

static const uint32_t toks[] = { 3, 141, 59, 26, 5, 35, 89, 79, 32, 38 };
#define NT G_N_ELEMENTS(toks)

/* prefill(N) + decode(1) vs prefill(N + 1) at the last position.  The
 * two runs compute the last token's K/V the same way, but the prefill
 * runs its matmuls on N + 1 rows: for W4A16 every element's order is
 * fixed, so the logits must match exactly; for FP32/FP16 the BLAS tile
 * grid differs, so the bound is 1e-4 of the logits' scale. */
static void
test_kv_cache(gconstpointer data)
{
    EngWFormat f = GPOINTER_TO_INT(data);
    for (int gemma = 0; gemma < 2; gemma++) {
        EngModelConfig c = tiny(f, gemma);
        g_autoptr(EngModel) m = eng_model_new(&c);
        g_autoptr(EngKV) kv1 = eng_kv_new(&c, NT), kv2 = eng_kv_new(&c, NT);
        g_autofree float *a = g_new(float, NT * c.vocab), *b = g_new(float, NT * c.vocab);
        prefill(m, kv1, toks, NT - 1, a);
        decode(m, kv1, toks[NT - 1], a + (NT - 1) * c.vocab);
        prefill(m, kv2, toks, NT, b);
        g_assert_cmpuint(eng_kv_len(kv1), ==, NT);
        double scale = 0;
        for (size_t i = 0; i < NT * c.vocab; i++) {
            g_assert_true(isfinite(a[i]) && isfinite(b[i]));
            scale = fmax(scale, fabs(b[i]));
        }
        g_assert_cmpfloat(scale, >, 0.1);
        for (size_t i = 0; i < NT * c.vocab; i++) {
            if (f == ENG_WFMT_W4A16) {
                g_assert_cmpfloat(a[i], ==, b[i]);
            } else {
                g_assert_cmpfloat(fabs(a[i] - b[i]), <=, 1e-4 * scale);
            }
        }
    }
}

/* 1 vs 4 OpenMP threads: the same logits, byte for byte. */
static void
test_threads(void)
{
    int saved = omp_get_max_threads();
    for (EngWFormat f = 0; f < ENG_WFMT_COUNT; f++) {
        EngModelConfig c = tiny(f, FALSE);
        g_autofree float *l1 = g_new(float, NT * c.vocab), *l4 = g_new(float, NT * c.vocab);
        int nth[2] = { 1, 4 };
        float *out[2] = { l1, l4 };
        for (int i = 0; i < 2; i++) {
            omp_set_num_threads(nth[i]);
            g_autoptr(EngModel) m = eng_model_new(&c);
            g_autoptr(EngKV) kv = eng_kv_new(&c, NT);
            prefill(m, kv, toks, NT - 2, out[i]);
            decode(m, kv, 7, out[i] + (NT - 2) * c.vocab);
            decode(m, kv, 9, out[i] + (NT - 1) * c.vocab);
        }
        g_assert_cmpmem(l1, sizeof(float) * NT * c.vocab, l4, sizeof(float) * NT * c.vocab);
    }
    omp_set_num_threads(saved);
}

/* Synthetic weights: the same seed gives the same weights, another seed
 * others; generation order does not matter. */
static void
test_synthetic(void)
{
    EngModelConfig c = tiny(ENG_WFMT_F32, FALSE);
    /* each model makes its own (no sharing: engine/wcache.h), so the two
     * are really generated twice, in two orders */
    eng_wcache_set_budget(0);
    g_autoptr(EngModel) a = eng_model_new(&c);
    g_autoptr(EngModel) b = eng_model_new(&c);
    const EngMatrix *wb_down = eng_model_weight(b, 1, ENG_W_DOWN);     /* other order */
    const EngMatrix *wa_down = eng_model_weight(a, 1, ENG_W_DOWN);
    g_assert_cmpmem(wa_down->f32, 64 * 176 * 4, wb_down->f32, 64 * 176 * 4);
    double ss = 0;
    for (size_t i = 0; i < 64 * 176; i++) {
        ss += (double) wa_down->f32[i] * wa_down->f32[i];
    }
    /* variance 1/fan_in = 1/176, within 5 % */
    g_assert_cmpfloat(fabs(ss / (64 * 176) * 176 - 1), <, 0.05);
    c.seed = 8;
    g_autoptr(EngModel) d = eng_model_new(&c);
    g_assert_true(memcmp(wa_down->f32, eng_model_weight(d, 1, ENG_W_DOWN)->f32, 64 * 4) != 0);
    /* norm gains near 1: 0.2 % of 64 channels rounds to no outlier */
    const float *n = eng_model_norm(a, 2, 0);
    for (int i = 0; i < 64; i++) {
        g_assert_cmpfloat(fabs(n[i] - 1), <=, 0.05);
    }
}

/* Outlier channels of a wider model: 0.2 % of 2048 is 4 channels, the same
 * in every norm, their gains ENG_SYN_OUTLIER_GAIN times the others'. */
static void
test_synthetic_outliers(void)
{
    EngModelConfig c = tiny(ENG_WFMT_F32, FALSE);
    c.hidden = 2048;
    c.intermediate = 64;
    g_autoptr(EngModel) m = eng_model_new(&c);
    uint32_t outliers = 0;
    for (uint32_t i = 0; i < c.hidden; i++) {
        gboolean hot = eng_syn_is_outlier(c.seed, c.hidden, i);
        outliers += hot;
        for (uint32_t l = 0; l <= c.layers; l++) {
            for (int which = 0; which < (l == c.layers ? 1 : 2); which++) {
                float g = eng_model_norm(m, l, which)[i];
                g_assert_cmpfloat(fabs(g / (hot ? ENG_SYN_OUTLIER_GAIN : 1.0) - 1), <=, 0.05);
            }
        }
    }
    g_assert_cmpuint(outliers, ==, 4);
    /* another seed, other channels */
    uint32_t same = 0;
    for (uint32_t i = 0; i < c.hidden; i++) {
        same += eng_syn_is_outlier(c.seed, c.hidden, i) && eng_syn_is_outlier(c.seed + 1, c.hidden, i);
    }
    g_assert_cmpuint(same, <, 4);
}

/* Two matrices of one format hold the same codes (and scales). */
static void
assert_same_qmatrix(const EngQMatrix *a, const EngQMatrix *b)
{
    g_assert_cmpint(a->format, ==, b->format);
    g_assert_cmpuint(eng_qmatrix_bytes(a), ==, eng_qmatrix_bytes(b));
    g_assert_cmpmem(a->codes, (size_t) a->rows * a->groups * a->group_bytes,
                    b->codes, (size_t) b->rows * b->groups * b->group_bytes);
    if (a->format != ENG_QFMT_F16) {
        g_assert_cmpmem(a->scales, sizeof(uint16_t) * a->rows * a->groups,
                        b->scales, sizeof(uint16_t) * b->rows * b->groups);
    }
}

/* Two formats made in one pass (eng_model_also_make) hold the bits of
 * each made alone: the model's own matrices (checked through the
 * logits) and the other format's codes and scales, layers and LM head. */
static void
test_also_make(void)
{
    EngModelConfig c = tiny(ENG_WFMT_W4A16, FALSE);
    /* each model makes its own: both's matrices not taken from alone's */
    eng_wcache_set_budget(0);
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        g_autoptr(EngModel) alone = eng_model_new(&c);
        g_autoptr(EngModel) both = eng_model_new(&c);
        eng_model_also_make(both, f);
        g_autoptr(EngKV) kv1 = eng_kv_new(&c, NT), kv2 = eng_kv_new(&c, NT);
        g_autofree float *a = g_new(float, NT * c.vocab), *b = g_new(float, NT * c.vocab);
        prefill(alone, kv1, toks, NT, a);
        prefill(both, kv2, toks, NT, b);
        g_assert_cmpmem(a, sizeof(float) * NT * c.vocab, b, sizeof(float) * NT * c.vocab);
        const EngWeight ws[3] = { ENG_W_K, ENG_W_UP, ENG_W_COUNT };   /* COUNT: LM head */
        for (int w = 0; w < 3; w++) {
            assert_same_qmatrix(eng_model_weight_as(alone, 1, ws[w], f),
                                eng_model_weight_as(both, 1, ws[w], f));
        }
    }
}

/* ---- a model directory written by the test -------------------------------- */

/* Synthetic FP32 weights written out and loaded back: the same logits,
 * bit for bit (F32 storage is exact). */
static void
test_load_round_trip(void)
{
    EngModelConfig c = tiny(ENG_WFMT_F32, FALSE);
    g_autoptr(EngModel) syn = eng_model_new(&c);
    g_autofree char *dir = hs_test_model_dir(syn, NULL, NULL);
    g_autoptr(GError) err = NULL;
    g_autoptr(EngModel) real = eng_model_load(&c, dir, &err);
    g_assert_no_error(err);
    g_autoptr(EngKV) kv1 = eng_kv_new(&c, NT), kv2 = eng_kv_new(&c, NT);
    g_autofree float *a = g_new(float, NT * c.vocab), *b = g_new(float, NT * c.vocab);
    prefill(syn, kv1, toks, NT, a);
    prefill(real, kv2, toks, NT, b);
    g_assert_cmpmem(a, sizeof(float) * NT * c.vocab, b, sizeof(float) * NT * c.vocab);
    /* the other formats of a loaded weight come from its stored values:
     * from FP32 storage, the very codes of the synthetic model's */
    for (EngQFormat f = 0; f < ENG_QFMT_COUNT; f++) {
        const EngWeight ws[3] = { ENG_W_Q, ENG_W_DOWN, ENG_W_COUNT };   /* COUNT: LM head */
        for (int w = 0; w < 3; w++) {
            assert_same_qmatrix(eng_model_weight_as(syn, 1, ws[w], f),
                                eng_model_weight_as(real, 1, ws[w], f));
        }
    }
    /* and as W4A16: finite, close to the FP32 logits */
    c.weights = ENG_WFMT_W4A16;
    g_autoptr(EngModel) q = eng_model_load(&c, dir, &err);
    g_assert_no_error(err);
    g_autoptr(EngKV) kv3 = eng_kv_new(&c, NT);
    prefill(q, kv3, toks, NT, b);
    double num = 0, den = 0;
    for (size_t i = 0; i < NT * c.vocab; i++) {
        g_assert_true(isfinite(b[i]));
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += (double) a[i] * a[i];
    }
    g_test_message("W4A16 vs FP32 logits NMSE %.3g", num / den);
    g_assert_cmpfloat(num / den, <, 0.05);
    hs_test_model_dir_remove(dir);
}

static void
test_load_missing_tensor(void)
{
    EngModelConfig c = tiny(ENG_WFMT_F32, FALSE);
    g_autoptr(EngModel) syn = eng_model_new(&c);
    g_autofree char *dir = hs_test_model_dir(syn, NULL, "model.layers.1.mlp.up_proj.weight");
    g_autoptr(GError) err = NULL;
    g_assert_null(eng_model_load(&c, dir, &err));
    g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_MISSING_TENSOR);
    g_autofree char *want = g_strdup_printf(
        "%s: tensor model.layers.1.mlp.up_proj.weight: not found (files: model.safetensors)", dir);
    g_assert_cmpstr(err->message, ==, want);
    g_clear_error(&err);
    /* a config that disagrees with the file: wrong shape, naming the file */
    c.intermediate = 128;
    g_assert_null(eng_model_load(&c, dir, &err));
    g_assert_error(err, HS_MODEL_ERROR, HS_MODEL_ERROR_SHAPE);
    g_autofree char *want2 = g_strdup_printf(
        "%s/model.safetensors: tensor model.layers.0.mlp.gate_proj.weight: expected shape "
        "[128, 64] (got [176, 64])", dir);
    g_assert_cmpstr(err->message, ==, want2);
    hs_test_model_dir_remove(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (EngWFormat f = 0; f < ENG_WFMT_COUNT; f++) {
        g_autofree char *p = g_strdup_printf("/engine/model/kv-cache/%s", eng_wfmt_name[f]);
        g_test_add_data_func(p, GINT_TO_POINTER(f), test_kv_cache);
    }
    g_test_add_func("/engine/model/threads-1-vs-4", test_threads);
    g_test_add_func("/engine/model/synthetic-weights", test_synthetic);
    g_test_add_func("/engine/model/synthetic-outliers", test_synthetic_outliers);
    g_test_add_func("/engine/model/also-make", test_also_make);
    g_test_add_func("/engine/model/load-round-trip", test_load_round_trip);
    g_test_add_func("/engine/model/load-errors", test_load_missing_tensor);
    int rc = g_test_run();
    mdl_spec_free(spec_of[0]);
    mdl_spec_free(spec_of[1]);
    return rc;
}
