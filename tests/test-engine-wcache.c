/*
 * test-engine-wcache.c - the shared cache of encoded weights
 * (engine/wcache.h): a second model of the same values takes the first
 * one's matrices (hits, nothing made), the bits are those made without
 * the cache, released entries are freed least recent first beyond the
 * budget and never while in use, threads asking at once make an entry
 * once, a bad HS_WEIGHT_CACHE_MB is refused; and through the binary, a
 * compare of every policy prints the same bytes with the cache, without
 * it (HS_WEIGHT_CACHE_MB=0) and with a budget that frees every format
 * between runs.
 */
#include "engine/model.h"
#include "engine/quant-formats.h"
#include "engine/wcache.h"
#include "engine/weights.h"
#include "sim/util/error.h"

#include <glib.h>
#include <string.h>

static EngModelConfig
tiny_config(uint64_t seed)
{
    return (EngModelConfig) {
        .hidden = 64, .intermediate = 160, .layers = 2, .heads = 4, .kv_heads = 2,
        .head_dim = 16, .vocab = 96, .rope_theta = 10000.0, .rms_eps = 1e-5,
        .act = ENG_ACT_SILU, .seed = seed,
    };
}

static void
assert_same_qmatrix(const EngQMatrix *a, const EngQMatrix *b)
{
    g_assert_cmpint(a->format, ==, b->format);
    g_assert_cmpuint(eng_qmatrix_bytes(a), ==, eng_qmatrix_bytes(b));
    g_assert_cmpmem(a->codes, (size_t) a->rows * a->groups * a->group_bytes, b->codes,
                    (size_t) b->rows * b->groups * b->group_bytes);
    if (a->format != ENG_QFMT_F16) {
        g_assert_cmpmem(a->scales, sizeof(uint16_t) * a->rows * a->groups, b->scales,
                        sizeof(uint16_t) * b->rows * b->groups);
    }
}

static void
assert_same_matrix(const EngMatrix *a, const EngMatrix *b)
{
    g_assert_cmpint(a->format, ==, b->format);
    g_assert_cmpuint(eng_matrix_bytes(a), ==, eng_matrix_bytes(b));
    g_assert_cmpmem(a->q4, (size_t) a->rows * a->groups * 64, b->q4,
                    (size_t) b->rows * b->groups * 64);
    g_assert_cmpmem(a->scales, sizeof(uint16_t) * a->rows * a->groups, b->scales,
                    sizeof(uint16_t) * b->rows * b->groups);
}

/* A second model of the same seed takes every matrix from the first:
 * the same pointers, hits counted, nothing made; another seed shares
 * nothing. */
static void
test_shared_between_models(void)
{
    eng_wcache_set_budget((uint64_t) 64 << 20);
    EngModelConfig c = tiny_config(11);
    g_autoptr(EngModel) a = eng_model_new(&c);
    const EngMatrix *wa = eng_model_weight(a, 1, ENG_W_UP);
    const EngQMatrix *qa = eng_model_weight_as(a, 1, ENG_W_UP, ENG_QFMT_Q4_0);
    EngWCacheStats s0, s1;
    eng_wcache_stats(&s0);
    g_autoptr(EngModel) b = eng_model_new(&c);
    g_assert_true(eng_model_weight(b, 1, ENG_W_UP) == wa);
    g_assert_true(eng_model_weight_as(b, 1, ENG_W_UP, ENG_QFMT_Q4_0) == qa);
    eng_wcache_stats(&s1);
    g_assert_cmpuint(s1.hits, ==, s0.hits + 2);
    g_assert_cmpuint(s1.misses, ==, s0.misses);

    EngModelConfig other = tiny_config(12);
    g_autoptr(EngModel) d = eng_model_new(&other);
    g_assert_true(eng_model_weight(d, 1, ENG_W_UP) != wa);
    eng_wcache_stats(&s0);
    g_assert_cmpuint(s0.misses, ==, s1.misses + 1);
}

/* The bits from the cache are those of a model made with sharing off
 * (every matrix made by its own model), for every format and the FP16
 * copy made with the model's own matrix (eng_model_also_make). */
static void
test_same_bits_without_cache(void)
{
    EngModelConfig c = tiny_config(21);
    const EngMatrix *m0[ENG_W_COUNT];
    const EngQMatrix *q0[ENG_W_COUNT][ENG_QFMT_COUNT];
    /* made now, with sharing off: the model's own */
    eng_wcache_set_budget(0);
    g_autoptr(EngModel) alone = eng_model_new(&c);
    eng_model_also_make(alone, ENG_QFMT_F16);
    for (int w = 0; w < ENG_W_COUNT; w++) {
        m0[w] = eng_model_weight(alone, 0, (EngWeight) w);
        for (int f = 0; f < ENG_QFMT_COUNT; f++) {
            q0[w][f] = eng_model_weight_as(alone, 0, (EngWeight) w, (EngQFormat) f);
        }
    }
    eng_wcache_set_budget((uint64_t) 64 << 20);
    g_autoptr(EngModel) first = eng_model_new(&c);
    eng_model_also_make(first, ENG_QFMT_F16);
    g_autoptr(EngModel) second = eng_model_new(&c);
    for (int w = 0; w < ENG_W_COUNT; w++) {
        const EngMatrix *m1 = eng_model_weight(first, 0, (EngWeight) w);
        g_assert_true(m0[w] != m1);
        assert_same_matrix(m0[w], m1);
        g_assert_true(eng_model_weight(second, 0, (EngWeight) w) == m1);
        for (int f = 0; f < ENG_QFMT_COUNT; f++) {
            const EngQMatrix *q1 = eng_model_weight_as(second, 0, (EngWeight) w, (EngQFormat) f);
            g_assert_true(q0[w][f] != q1);
            assert_same_qmatrix(q0[w][f], q1);
        }
    }
}

/* Released matrices beyond the budget are freed least recently released
 * first; those in use never are, whatever the budget. */
static void
test_budget_and_lru(void)
{
    EngModelConfig c = tiny_config(31);
    g_autoptr(EngModel) m = eng_model_new(&c);
    /* nothing released held from the tests before */
    eng_wcache_set_budget(1);
    eng_wcache_set_budget((uint64_t) 64 << 20);
    const EngQMatrix *q8 = eng_model_weight_as(m, 0, ENG_W_DOWN, ENG_QFMT_Q8_0);
    const EngQMatrix *fp4 = eng_model_weight_as(m, 0, ENG_W_DOWN, ENG_QFMT_FP4);
    size_t b8 = eng_qmatrix_bytes(q8), b4 = eng_qmatrix_bytes(fp4);
    EngWCacheStats s0, s1;
    eng_wcache_stats(&s0);
    /* released first: Q8_0, then FP4; a budget for what is in use (the
     * model's W4A16 matrices) plus FP4 alone frees Q8_0 only */
    eng_model_release_format(m, ENG_QFMT_Q8_0);
    eng_model_release_format(m, ENG_QFMT_FP4);
    eng_wcache_stats(&s1);
    g_assert_cmpuint(s1.in_use_bytes, ==, s0.in_use_bytes - b8 - b4);
    eng_wcache_set_budget(s1.bytes - b8);
    eng_wcache_stats(&s1);
    g_assert_cmpuint(s1.evictions, >=, s0.evictions + 1);
    /* whatever else went (entries of earlier tests), FP4 stays: a hit */
    g_assert_true(eng_model_weight_as(m, 0, ENG_W_DOWN, ENG_QFMT_FP4) == fp4);
    eng_wcache_stats(&s0);
    g_assert_cmpuint(s0.misses, ==, s1.misses);
    /* Q8_0 was freed: made again, the same bits as made directly */
    const EngQMatrix *again = eng_model_weight_as(m, 0, ENG_W_DOWN, ENG_QFMT_Q8_0);
    eng_wcache_stats(&s1);
    g_assert_cmpuint(s1.misses, ==, s0.misses + 1);
    g_autoptr(EngQMatrix) ref8 = eng_syn_qmatrix(eng_syn_key(c.seed, 0, ENG_W_DOWN),
                                                 again->rows, again->cols, ENG_QFMT_Q8_0);
    assert_same_qmatrix(ref8, again);
    /* a budget of one byte frees nothing in use: the model's matrices and
     * the two formats it holds stay valid */
    eng_wcache_set_budget(1);
    eng_wcache_stats(&s0);
    g_assert_cmpuint(s0.bytes, ==, s0.in_use_bytes);
    assert_same_qmatrix(ref8, again);
    g_assert_cmpuint(eng_qmatrix_bytes(fp4), ==, b4);
    eng_wcache_set_budget((uint64_t) 64 << 20);
}

typedef struct Race {
    EngModel *m;
    const EngQMatrix *got;
} Race;

static gpointer
race_one(gpointer p)
{
    Race *r = p;
    r->got = eng_model_weight_as(r->m, 1, ENG_W_GATE, ENG_QFMT_W8);
    return NULL;
}

/* Four models on four threads ask for one matrix at once: made once,
 * the others wait for it. */
static void
test_threads_make_once(void)
{
    eng_wcache_set_budget((uint64_t) 64 << 20);
    EngModelConfig c = tiny_config(41);
    c.hidden = 512;
    c.intermediate = 2048;
    EngModel *m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = eng_model_new(&c);
        (void) eng_model_weight(m[i], 1, ENG_W_GATE);
    }
    EngWCacheStats s0, s1;
    eng_wcache_stats(&s0);
    Race r[4];
    GThread *t[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (Race) { m[i], NULL };
        t[i] = g_thread_new("race", race_one, &r[i]);
    }
    for (int i = 0; i < 4; i++) {
        g_thread_join(t[i]);
        g_assert_true(r[i].got == r[0].got);
    }
    eng_wcache_stats(&s1);
    g_assert_cmpuint(s1.misses, ==, s0.misses + 1);
    g_assert_cmpuint(s1.hits, ==, s0.hits + 3);
    for (int i = 0; i < 4; i++) {
        eng_model_free(m[i]);
    }
}

static void
test_env_refused(void)
{
    const char *bad[] = { "abc", "-1", "", "12x", "1048577", "99999999999999999999" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_setenv("HS_WEIGHT_CACHE_MB", bad[i], TRUE);
        g_autoptr(GError) error = NULL;
        g_assert_false(eng_wcache_init(&error));
        g_assert_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE);
        g_autofree char *want = g_strdup_printf("(got '%s')", bad[i]);
        g_assert_true(g_str_has_prefix(error->message, "HS_WEIGHT_CACHE_MB: expected"));
        g_assert_true(g_str_has_suffix(error->message, want));
    }
    g_setenv("HS_WEIGHT_CACHE_MB", "3", TRUE);
    g_assert_true(eng_wcache_init(NULL));
    EngWCacheStats s;
    eng_wcache_stats(&s);
    g_assert_cmpuint(s.budget_bytes, ==, (uint64_t) 3 << 20);
    g_unsetenv("HS_WEIGHT_CACHE_MB");
    g_assert_true(eng_wcache_init(NULL));
    eng_wcache_stats(&s);
    g_assert_cmpuint(s.budget_bytes, ==, (uint64_t) ENG_WCACHE_DEFAULT_MB << 20);
}

/* hetero-sim compare (every policy: W4A16, W4A8, W8A8, FP4, Q4_0, Q8_0
 * and the FP16 reference) with @mb as HS_WEIGHT_CACHE_MB (NULL: unset). */
static char *
compare_with(const char *mb)
{
    const char *bin = g_getenv("HS_BIN");
    const char *argv[] = { bin, "compare", "-m", "llama-3.2-1b", "--prompt", "16", "--decode",
                           "3", "-f", "csv", NULL };
    g_auto(GStrv) env = g_get_environ();
    env = mb ? g_environ_setenv(env, "HS_WEIGHT_CACHE_MB", mb, TRUE)
             : g_environ_unsetenv(env, "HS_WEIGHT_CACHE_MB");
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
    g_assert_no_error(error);
    if (!g_spawn_check_wait_status(status, NULL)) {
        g_test_message("stderr: %s", err);
        g_assert_not_reached();
    }
    return g_steal_pointer(&out);
}

static void
test_compare_same_bytes(void)
{
    if (g_getenv("HS_BIN") == NULL) {
        g_test_skip("HS_BIN not set");
        return;
    }
    g_autofree char *shared = compare_with(NULL);
    g_autofree char *off = compare_with("0");
    g_autofree char *tight = compare_with("1");
    /* every policy's row, its values checked */
    g_assert_nonnull(strstr(shared, "npu-tts"));
    g_assert_nonnull(strstr(shared, "match"));
    g_assert_cmpstr(shared, ==, off);
    g_assert_cmpstr(shared, ==, tight);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_unsetenv("HS_WEIGHT_CACHE_MB");
    /* first: it sets the environment, before any thread exists */
    g_test_add_func("/engine/wcache/env-refused", test_env_refused);
    g_test_add_func("/engine/wcache/shared-between-models", test_shared_between_models);
    g_test_add_func("/engine/wcache/same-bits-without-cache", test_same_bits_without_cache);
    g_test_add_func("/engine/wcache/budget-and-lru", test_budget_and_lru);
    g_test_add_func("/engine/wcache/threads-make-once", test_threads_make_once);
    g_test_add_func("/engine/wcache/compare-same-bytes", test_compare_same_bytes);
    return g_test_run();
}
