/*
 * test-hostile.c - every input in tests/data/hostile/ (fuzz finds and the
 * crashes found by fuzzing, by format) through the same loader the fuzz target
 * uses (fuzz/loaders.c, the CLI's own functions), each refused with its one
 * exact line.  A new fuzz find: copy the file into the folder of its
 * format and add its message here.
 */
#include "fuzz/loaders.h"
#include "sim/cli/sweep.h"
#include "sim/util/error.h"
#include "traces/record.h"

#include <glib.h>
#include <string.h>
#include <sys/wait.h>

typedef gboolean (*LoadFn)(const uint8_t *data, size_t size, const char *what,
                           GError **error);

typedef struct Case {
    const char *file;       /* tests/data/hostile/FILE */
    const char *message;    /* after "FILE: " (the path as given) */
} Case;

static const Case cases[] = {
    /* a header that is a JSON array (was strcmp(NULL)) */
    { "safetensors/header-array.safetensors",
      "safetensors header: expected an object (got an array)" },
    /* NaN / Inf weights (were quantised to garbage) */
    { "safetensors/nan-weight.safetensors",
      "tensor w: expected finite values (got nan at element 2)" },
    { "safetensors/inf-f16-weight.safetensors",
      "tensor w: expected finite values (got inf at element 1)" },
    /* input text escaped: a newline cannot forge a second line, raw bytes
     * do not reach the terminal */
    { "safetensors/name-newline.safetensors",
      "safetensors header: $.w\\nhetero-sim: forged.shape: expected an array of at most 8 "
      "integers in [0, 9007199254740992] (got \"no\")" },
    { "safetensors/name-invalid-utf8.safetensors",
      "tensor w\\xff\\x1b[2J: unsupported dtype I\\xff (expected F32, F16 or BF16)" },
    /* numbers checked before they become sizes */
    { "safetensors/shape-negative.safetensors",
      "safetensors header: $.w.shape[0]: expected an integer in [0, 9007199254740992] (got -1)" },
    { "safetensors/shape-overflow.safetensors",
      "tensor w: 0 bytes for 1152921504606846976 F32 values" },
    { "safetensors/offsets-fraction.safetensors",
      "safetensors header: $.w.data_offsets[0]: expected an integer in [0, 9007199254740992] "
      "(got 0.5)" },
    { "safetensors/tensor-not-object.safetensors",
      "safetensors header: $.w: expected an object (got 7)" },
    /* the header read by a param table: each tensor's keys, counts and
     * types checked with its JSON path */
    { "safetensors/offsets-three.safetensors",
      "safetensors header: $.w.data_offsets: expected an array of 2 integers in "
      "[0, 9007199254740992] (got an array)" },
    { "safetensors/tensor-extra-key.safetensors",
      "safetensors header: $.w: unknown key \"stride\" (known keys: dtype, shape, "
      "data_offsets)" },
    { "safetensors/name-twice.safetensors", "safetensors header: $: duplicate key \"w\"" },
    { "safetensors/shape-nine-dims.safetensors",
      "safetensors header: $.w.shape: expected an array of at most 8 integers in "
      "[0, 9007199254740992] (got an array)" },
    /* fuzz finds: input bytes echoed raw */
    { "model/hidden-act-raw-bytes.json",
      "$.hidden_act: expected silu, gelu, gelu_new or gelu_pytorch_tanh "
      "(got \"\\xeauli\")" },
    /* numbers: 1e999 parses as inf */
    { "model/rope-theta-inf.json",
      "$.rope_theta: expected a finite positive number (got inf)" },
    /* a rope_scaling of no object (was ignored: the model ran unscaled) */
    { "model/rope-scaling-string.json",
      "$.rope_scaling: expected an object (its rope_type and factors) or null (got "
      "\"llama3\")" },
    { "model/hidden-act-newline.json",
      "$.hidden_act: expected silu, gelu, gelu_new or gelu_pytorch_tanh "
      "(got \"relu\\nhetero-sim: forged\")" },
    /* policy options read by key: a typo is named, not skipped */
    { "record/options-typo.json",
      "$.workload.options: unknown key \"row_allign\" (known keys: chunk_tokens, row_align, "
      "tok_align, min_npu_shape, max_npu_shape)" },
    { "record/workload-sync-control.json",
      "$.workload.sync: expected one of driver, fast (got \"fast\\x07\\u2028\")" },
    { "record/proc-name-raw-bytes.json",
      "$.tasks[0].proc: expected a processor of $.processors (cpu\\xda, gpu, npu) (got "
      "\"gpu\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f"
      "\\x8f\\x8f\\x8f\\x8f\\x8f\\x8f\")" },
    /* found by fuzz-record: a task name's raw bytes echoed in the plan
     * check's message (sim/plan.c) */
    { "record/task-name-raw-bytes.json",
      "$.tasks: task 3 (L0.wq[" /* 68 raw 0xff bytes, escaped */
      "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
      "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
      "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
      "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
      "pad 32]): dependency cycle (81 tasks can never start)" },
    /* recordings checked against their model's graph (traces/record.c):
     * a kernel's work is what its node and slice make it (a k of 0 was
     * SIGFPE in the NPU's tiling, an m of 10^9 replayed) */
    { "record/matmul-k-zero.json",
      "$.tasks[3].k: expected 64, the input features of node 2 (L0.wq) (got 0)" },
    { "record/matmul-m-huge.json",
      "$.tasks[3].m: expected 64, the slice's 64 tokens (got 1000000000)" },
    { "record/attention-flops.json",
      "$.tasks[11].flops: expected 574080, what the slice of node 7 (L0.attn) computes at "
      "w4a16 (got 5)" },
    { "record/norm-weight-lhs.json",
      "$.tasks[1].weight_lhs: expected false, as node 1 (L0.attn_norm) is no matmul (got "
      "true)" },
    /* processors: a sync between two, one name each */
    { "record/sync-to-itself.json",
      "$.tasks[2].to: expected a processor other than \"from\" (a sync hands data between "
      "two) (got \"gpu\")" },
    { "record/processor-twice.json",
      "$.processors[3].name: expected a name no other processor has ($.processors[1] has "
      "it) (got \"gpu\")" },
    /* on the SoC it was recorded on, its processors by name and kind (were
     * matched by kind, silently) */
    { "record/processor-not-in-soc.json",
      "$.processors[2]: expected a processor of SoC tiny, the one recorded on (cpu (cpu), "
      "gpu (gpu), npu (npu)) (got \"dsp\" (npu))" },
    /* a batch the plan was not made for: the step named by its number
     * (was "decode step " and nothing) */
    { "record/batch-mismatch.json",
      "$.tasks: node 0 (embed) of decode step 0: slices cover 64 of its 128 output elements "
      "(a hole)" },
    /* the recording's own settings against its model, as its keys (were
     * blamed on --functional / --prompt, with a usage exit code) */
    { "record/functional-layers.json",
      "$.workload.functional: expected off, full or layers=N with N at most the model's 2 "
      "layers (got \"layers=9\")" },
    { "record/context-overflow.json",
      "$.workload: expected prompt + decode at most the model's context, $.model.config "
      "max_position_embeddings 2048 (got 2048 + 1)" },
    /* a number as written (was "got 1") */
    { "record/version-near-1.json",
      "$.hs_record_version: expected 1, the version this hetero-sim reads (got 1.0000001)" },
    /* sweep specs: input text escaped; 64 axes of 2 values are 2^64
     * combinations, which wrapped a 64-bit count to 0 (then expanded) */
    { "sweep/axis-name-newline.json",
      "$.axes.k\\x07ey\\nhetero-sim: forged: expected a run option (policy, soc, stack, model, "
      "sync, prompt, decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, "
      "llm-priority, governor) or a config key such as npu.sram_kib (got \"k\\x07ey\\nhetero-sim: "
      "forged\")" },
    /* settings typed by run's option table (run-opts-table.c) and checked
     * where they are read, with the JSON path, not when the point runs */
    { "sweep/axis-value-range.json",
      "$.axes.prompt[3]: expected an integer in [1, 32768] (got 0)" },
    { "sweep/base-option-number.json", "$.base.soc: expected a string (got 3)" },
    { "sweep/point-double-string.json",
      "$.points[0].render: expected a finite number (got \"30\")" },
    { "sweep/point-key-unknown.json",
      "$.points[1].colour: expected a run option (policy, soc, stack, model, sync, prompt, "
      "decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, llm-priority, governor) or "
      "a config key such as npu.sram_kib (got \"colour\")" },
    { "sweep/config-key-empty-part.json",
      "$.axes.npu..sram_kib: expected a run option (policy, soc, stack, model, sync, prompt, "
      "decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, llm-priority, governor) or "
      "a config key such as npu.sram_kib (got \"npu..sram_kib\")" },
    { "sweep/key-raw-bytes.json",
      "$: unknown key \"grid\\xff\\x1b[2J\" (known keys: description, base, axes, variants, points)" },
    /* found by fuzz-sweep: 2^16 points (the CLI takes up to 10^6) took
     * 14 s to expand under ASan; the fuzz loader's cap is 4096 */
    { "sweep/axes-65536.json",
      "$.axes: expected at most 4096 combinations (got 65536)" },
    { "sweep/axes-product-wraps.json",
      "$.axes: expected at most 4096 combinations (got 1.84467440737096e+19)" },
    /* a metric against its workload (were NaN or 1 by definition in
     * validate's table) */
    { "points/decode-metric-no-decode.json",
      "$.points[0].workload.decode: expected at least 1 decode step for a decode_speedup "
      "point (got 0)" },
    { "points/baseline-is-the-point.json",
      "$.points[0].baseline: expected a run other than the point's own (its policy, sync, "
      "model, batch, stack and game are the point's: the prefill_speedup is 1 by "
      "definition)" },
    /* found by fuzz-points: a key with a raw byte echoed unescaped */
    { "points/key-raw-bytes.json",
      "$: unknown key \"poi\\xeets\" (known keys: description, paper, notes, points, stacks)" },
};

static LoadFn
loader_for(const char *file)
{
    if (g_str_has_prefix(file, "soc/")) {
        return hs_load_soc;
    }
    if (g_str_has_prefix(file, "model/")) {
        return hs_load_model;
    }
    if (g_str_has_prefix(file, "record/")) {
        /* fuzz-replay's loader: fuzz-record's reading, then the plan on
         * the recorded SoC, checked and timed */
        return hs_load_replay;
    }
    if (g_str_has_prefix(file, "points/")) {
        return hs_load_points;
    }
    if (g_str_has_prefix(file, "sweep/")) {
        return hs_load_sweep;
    }
    return hs_load_safetensors;
}

static void
test_case(gconstpointer data)
{
    const Case *c = data;
    g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                             "hostile", c->file, NULL);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_autoptr(GError) error = NULL;
    g_assert_false(loader_for(c->file)((const uint8_t *) bytes, len, path, &error));
    g_assert_nonnull(error);
    g_autofree char *want = g_strdup_printf("%s: %s", path, c->message);
    g_assert_cmpstr(error->message, ==, want);
    g_assert_true(g_utf8_validate(error->message, -1, NULL));
    g_assert_null(strchr(error->message, '\n'));
}

/* Found by fuzz-sweep: the same explicit point three times read freed
 * memory (the de-duplication kept the key of a point it then freed).  A
 * valid spec: its six distinct points, each once.  (ASan, as CI runs this
 * test, reports the old read; the count holds either way.) */
static void
test_sweep_point_three_times(void)
{
    g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                             "hostile", "sweep", "point-three-times.json",
                                             NULL);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(HsSweepSpec) s = hs_sweep_spec_parse(bytes, len, path, NULL, HS_SWEEP_MAX_POINTS,
                                                   &error);
    g_assert_no_error(error);
    g_assert_cmpuint(s->points->len, ==, 6);
    g_autoptr(GHashTable) keys = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < s->points->len; i++) {
        g_assert_true(g_hash_table_add(keys, ((HsSweepPoint *) s->points->pdata[i])->key));
    }
}

/* The CLI's own cap (the loader above takes a lower one). */
static void
test_sweep_cli_cap(void)
{
    g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                             "hostile", "sweep", "axes-product-wraps.json",
                                             NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(HsSweepSpec) s = hs_sweep_spec_load(path, NULL, &error);
    g_assert_null(s);
    g_autofree char *want = g_strdup_printf("%s: $.axes: expected at most 1000000 combinations "
                                            "(got 1.84467440737096e+19)", path);
    g_assert_cmpstr(error->message, ==, want);
}

/* Model directories (model-dir/NAME: config.json + model.safetensors)
 * whose options and tensors disagree, each run as `run --model DIR
 * --functional full` runs it: refused with its line (after "DIR: "). */
typedef struct DirCase {
    const char *dir;
    const char *message;         /* NULL: a valid model, its values matched */
} DirCase;

static const DirCase dir_cases[] = {
    { "valid", NULL },
    /* was: the embedding used as the head, silently */
    { "untied-no-head",
      "tensor lm_head.weight: not found, and config.json's tie_word_embeddings is false (the "
      "model has an LM head of its own, not the embedding)" },
    /* were left out, silently */
    { "layer-past-config",
      "tensor model.layers.1.mlp.down_proj.weight: not a tensor of the model config.json "
      "describes (layer 1, past num_hidden_layers 1)" },
    { "bias-undeclared",
      "tensor model.layers.0.self_attn.q_proj.bias: not a tensor of the model config.json "
      "describes (a bias none of its options declares: attention_bias, mlp_bias)" },
    /* finite weights, overflowing products: was "policy hetero-layer
     * computed wrong values ... (max abs err inf of nan)", exit 3 */
    { "overflow",
      "the unpartitioned reference's values are not finite from node L0.ffn_down of prefill "
      "on (finite weights whose products overflow: the model's values, not a policy's)" },
};

static void
test_model_dir(gconstpointer data)
{
    const DirCase *c = data;
    const char *root = g_getenv("HS_SOURCE_ROOT");
    g_autofree char *dir = g_build_filename(root, "tests", "data", "hostile", "model-dir",
                                            c->dir, NULL);
    g_autofree char *configs = g_build_filename(root, "configs", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load("tiny", configs, &error);
    g_assert_no_error(error);
    g_autoptr(MdlSpec) spec = mdl_spec_load(dir, NULL, &error);
    g_assert_no_error(error);
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = 8;
    w.decode = 2;
    w.check_layers = 0;
    w.weights_dir = dir;
    SimRunReport r = { 0 };
    gboolean ok = sim_run(soc, spec, sim_policy_find("hetero-layer"), &w, NULL, &r, NULL, NULL,
                          &error);
    if (c->message == NULL) {
        g_assert_no_error(error);
        g_assert_true(ok && r.check.checked && r.check.match && !r.check.ref_nonfinite);
    } else {
        g_assert_false(ok);
        g_assert_nonnull(error);
        g_autofree char *want = g_strdup_printf("%s: %s", dir, c->message);
        g_assert_cmpstr(error->message, ==, want);
        g_assert_false(error->domain == HS_SIM_ERROR);     /* exit 1, not 3 */
    }
    sim_run_report_clear(&r);
}

/* The hetero-sim built beside this test (build/sim/cli/), for what only
 * the CLI computes; NULL (the test skipped) if there is none. */
static char *test_dir;

/* A points file that reads fine and whose run gives its metric no value
 * (gpu-only: no CPU time in prefill, the denominator of
 * prefill_npu_over_cpu_busy): `validate` refuses the row in one line,
 * exit 1, no NaN (was: a 0 compared with the published value; a decode
 * metric of no decode step printed a NaN MAPE). */
static void
test_points_not_computable(void)
{
    g_autofree char *bin = g_build_filename(test_dir, "..", "sim", "cli", "hetero-sim", NULL);
    if (!g_file_test(bin, G_FILE_TEST_IS_EXECUTABLE)) {
        g_test_skip("no hetero-sim beside the test");
        return;
    }
    g_autofree char *file = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                             "hostile", "points", "share-of-nothing.json",
                                             NULL);
    const char *argv[] = { bin, "validate", "-p", file, NULL };
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err, &status,
                               &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_autofree char *want = g_strdup_printf(
        "hetero-sim: %s: $.points[0].metric: prefill_npu_over_cpu_busy is not computable for "
        "this point (the run's CPU busy time in prefill is 0)\n", file);
    g_assert_cmpstr(err, ==, want);
    g_assert_null(strstr(out, "nan"));
}

/* The recordings the hostile ones are made from pass the same loader:
 * its checks refuse what is wrong, not what a run writes. */
static void
test_replay_valid(void)
{
    const char *const files[] = { "base.json", "dropped-sync.json", "unordered.json" };
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "tests", "data",
                                                 "replay", files[i], NULL);
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
        g_autoptr(GError) error = NULL;
        g_assert_true(hs_load_replay((const uint8_t *) bytes, len, path, &error));
        g_assert_no_error(error);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    test_dir = g_path_get_dirname(argv[0]);
    g_test_add_func("/hostile/record/valid-replays", test_replay_valid);
    g_test_add_func("/hostile/points/share-of-nothing.json", test_points_not_computable);
    for (size_t i = 0; i < G_N_ELEMENTS(dir_cases); i++) {
        g_autofree char *name = g_strdup_printf("/hostile/model-dir/%s", dir_cases[i].dir);
        g_test_add_data_func(name, &dir_cases[i], test_model_dir);
    }
    g_test_add_func("/hostile/sweep/point-three-times.json", test_sweep_point_three_times);
    g_test_add_func("/hostile/sweep/cli-cap", test_sweep_cli_cap);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *name = g_strdup_printf("/hostile/%s", cases[i].file);
        g_test_add_data_func(name, &cases[i], test_case);
    }
    return g_test_run();
}
