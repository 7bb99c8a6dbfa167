/*
 * test-hostile.c - every input in tests/data/hostile/ (fuzz finds and the
 * crashes of issue 15, by format) through the same loader the fuzz target
 * uses (fuzz/loaders.c, the CLI's own functions), each refused with its one
 * exact line.  A new fuzz find: copy the file into the folder of its
 * format and add its message here.
 */
#include "fuzz/loaders.h"
#include "sim/cli/sweep.h"

#include <glib.h>
#include <string.h>

typedef gboolean (*LoadFn)(const uint8_t *data, size_t size, const char *what,
                           GError **error);

typedef struct Case {
    const char *file;       /* tests/data/hostile/FILE */
    const char *message;    /* after "FILE: " (the path as given) */
} Case;

static const Case cases[] = {
    /* issue 15: a header that is a JSON array (was strcmp(NULL)) */
    { "safetensors/header-array.safetensors",
      "safetensors header: expected an object (got an array)" },
    /* issue 15: NaN / Inf weights (were quantised to garbage) */
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
    /* sweep specs: input text escaped; 64 axes of 2 values are 2^64
     * combinations, which wrapped a 64-bit count to 0 (then expanded) */
    { "sweep/axis-name-newline.json",
      "$.axes.k\\x07ey\\nhetero-sim: forged: expected a run option (policy, soc, stack, model, "
      "sync, prompt, decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, "
      "llm-priority) or a config key such as npu.sram_kib (got \"k\\x07ey\\nhetero-sim: "
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
      "decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, llm-priority) or "
      "a config key such as npu.sram_kib (got \"colour\")" },
    { "sweep/config-key-empty-part.json",
      "$.axes.npu..sram_kib: expected a run option (policy, soc, stack, model, sync, prompt, "
      "decode, batch, chunk, functional, seed, render, frame-ms, frame-mb, llm-priority) or "
      "a config key such as npu.sram_kib (got \"npu..sram_kib\")" },
    { "sweep/key-raw-bytes.json",
      "$: unknown key \"grid\\xff\\x1b[2J\" (known keys: description, base, axes, points)" },
    /* found by fuzz-sweep: 2^16 points (the CLI takes up to 10^6) took
     * 14 s to expand under ASan; the fuzz loader's cap is 4096 */
    { "sweep/axes-65536.json",
      "$.axes: expected at most 4096 combinations (got 65536)" },
    { "sweep/axes-product-wraps.json",
      "$.axes: expected at most 4096 combinations (got 1.84467440737096e+19)" },
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
        return hs_load_record;
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

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hostile/sweep/point-three-times.json", test_sweep_point_three_times);
    g_test_add_func("/hostile/sweep/cli-cap", test_sweep_cli_cap);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *name = g_strdup_printf("/hostile/%s", cases[i].file);
        g_test_add_data_func(name, &cases[i], test_case);
    }
    return g_test_run();
}
