/*
 * test-sim-weights.c - the values check on a model directory's own
 * weights: a tiny Hugging Face directory (config.json +
 * model.safetensors, written here from a synthetic FP32 model of another
 * seed) is what the check computes, and a plan whose syncs wait on nothing
 * is caught on it.
 */
#include "sim/run.h"
#include "sim/util/error.h"
#include "tests/model-dir.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
data_dir(const char *sub)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, sub, NULL);
}

/* tiny's config and a directory of its shape holding seed @seed's weights */
static char *
tiny_dir(uint64_t seed, MdlSpec **spec)
{
    g_autofree char *models = data_dir("models");
    g_autofree char *src = g_build_filename(models, "tiny.json", NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(src, &text, NULL, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(MdlSpec) tiny = mdl_spec_load("tiny", models, &error);
    g_assert_no_error(error);
    EngConfig cfg;
    sim_run_engine_config(tiny, seed, &cfg);
    cfg.weights = ENG_WFMT_F32;
    g_autoptr(EngModel) m = eng_model_new(&cfg);
    char *dir = hs_test_model_dir(m, text, NULL);
    *spec = mdl_spec_load(dir, models, &error);
    g_assert_no_error(error);
    return dir;
}

static GArray *
checked_tokens(const MdlSpec *spec, const SimWorkload *w)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(SimChecker) c = sim_run_checker_new(spec, w, &error);
    g_assert_no_error(error);
    uint32_t n;
    const uint32_t *t = sim_checker_tokens(c, &n);
    GArray *a = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_append_vals(a, t, n);
    return a;
}

/* The check computes the directory's weights: its greedy tokens are those
 * of the synthetic model the directory was written from (seed 7; FP32
 * values quantised alike), not those of the workload's synthetic seed. */
static void
test_directory_weights_used(void)
{
    MdlSpec *spec;
    g_autofree char *dir = tiny_dir(7, &spec);
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 12;
    w.decode = 6;
    w.check_layers = 0;
    w.seed = 1;
    g_autoptr(GArray) syn1 = checked_tokens(spec, &w);
    w.seed = 7;
    g_autoptr(GArray) syn7 = checked_tokens(spec, &w);
    w.seed = 1;
    w.weights_dir = dir;
    g_autoptr(GArray) real = checked_tokens(spec, &w);
    g_assert_cmpuint(real->len, ==, w.prompt + w.decode);
    g_assert_cmpmem(real->data, real->len * 4, syn7->data, syn7->len * 4);
    g_assert_true(memcmp(real->data, syn1->data, real->len * 4) != 0);
    g_autofree char *said = sim_workload_weights(&w);
    g_assert_cmpstr(said, ==, dir);
    w.weights_dir = NULL;
    g_autofree char *syn = sim_workload_weights(&w);
    g_assert_cmpstr(syn, ==, "synthetic seed 1");
    mdl_spec_free(spec);
    hs_test_model_dir_remove(dir);
}

/* A directory without a tensor the check needs: the tensor and the file
 * are named, before anything runs. */
static void
test_directory_missing_tensor(void)
{
    g_autofree char *models = data_dir("models");
    g_autoptr(GError) error = NULL;
    g_autoptr(MdlSpec) spec = mdl_spec_load("tiny", models, &error);
    g_autofree char *dir = g_dir_make_tmp("hs-weights-XXXXXX", NULL);
    g_autofree char *p = g_build_filename(dir, "model.safetensors", NULL);
    const char empty[] = "\x02\0\0\0\0\0\0\0{}";
    g_assert_true(g_file_set_contents(p, empty, sizeof(empty) - 1, NULL));
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 8;
    w.decode = 1;
    w.check_layers = 1;
    w.weights_dir = dir;
    g_autoptr(SimChecker) c = sim_run_checker_new(spec, &w, &error);
    g_assert_null(c);
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, "model.layers.0.self_attn.q_proj.weight"));
    g_unlink(p);
    g_rmdir(dir);
}

/* On the directory's weights, every policy's plan matches and the same
 * plans with syncs that wait on nothing are caught. */
static void
test_directory_dropped_syncs(void)
{
    MdlSpec *spec;
    g_autofree char *dir = tiny_dir(9, &spec);
    g_autofree char *configs = data_dir("configs");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load("tiny", configs, &error);
    g_assert_no_error(error);
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 64;
    w.decode = 2;
    w.check_layers = 0;
    w.weights_dir = dir;
    g_autoptr(SimChecker) checker = sim_run_checker_new(spec, &w, &error);
    g_assert_no_error(error);
    const SimPolicy *p = sim_policy_find("hetero-layer");
    for (int broken = 0; broken < 2; broken++) {
        g_autoptr(SimPlan) plan = sim_run_plan(soc, spec, p, &w, NULL, &error);
        g_assert_no_error(error);
        uint32_t cut = 0;
        for (uint32_t i = 0; broken && i < sim_plan_len(plan); i++) {
            SimTask *t = sim_plan_task(plan, i);
            if (t->kind == SIM_TASK_SYNC && t->n_deps > 0) {
                t->n_deps = 0;
                cut++;
            }
        }
        g_assert_true(!broken || cut > 0);
        g_autoptr(SimValues) values = sim_values_new(checker, plan);
        SimExecResult x = { 0 };
        g_assert_true(sim_exec_run(plan, soc, hw_soc_stack(soc, SIM_DEFAULT_STACK, NULL), NULL,
                                   &sim_values_ops, values, &x, &error));
        g_assert_no_error(error);
        SimCheck check;
        sim_values_check(values, &check);
        sim_exec_result_clear(&x);
        g_assert_cmpint(check.match, ==, !broken);
    }
    mdl_spec_free(spec);
    hs_test_model_dir_remove(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/weights/directory-used", test_directory_weights_used);
    g_test_add_func("/sim/weights/directory-missing-tensor", test_directory_missing_tensor);
    g_test_add_func("/sim/weights/directory-dropped-syncs", test_directory_dropped_syncs);
    return g_test_run();
}
