/*
 * test-hw-config.c - SoC configs: the shipped ones load and carry a source
 * for every number; broken ones fail with their exact message (the messages
 * are part of the user interface).
 *
 * Most broken configs are made by mutating configs/tiny.json at one JSON
 * path, so each case reads as "what is wrong" -> "what the user sees".
 * Files that cannot be expressed that way live in tests/data/bad-configs/.
 */
#include "hw/soc.h"
#include "hw/npu.h"
#include "hw/stack.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static char *
src_path(const char *rel)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, rel, NULL);
}

static char *
configs_dir(void)
{
    return src_path("configs");
}

/* ---- shipped configs ---------------------------------------------------- */

static void
check_sources(const cJSON *node, const char *path)
{
    const cJSON *it = NULL;
    if (cJSON_IsNumber(node) || cJSON_IsBool(node)) {
        g_error("%s: a shipped config gives every number with a \"source\"", path);
    }
    if (cJSON_IsObject(node) && cJSON_GetObjectItem(node, "value")) {
        const cJSON *s = cJSON_GetObjectItem(node, "source");
        g_assert_true(cJSON_IsString(s));
        g_assert_cmpuint(strlen(s->valuestring), >, 5);
        return;
    }
    int i = 0;
    cJSON_ArrayForEach(it, node) {
        g_autofree char *child = it->string ? hs_json_path_key(path, it->string)
                                            : hs_json_path_index(path, i);
        check_sources(it, child);
        i++;
    }
}

static void
test_shipped(gconstpointer data)
{
    const char *name = data;
    g_autofree char *dir = configs_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load(name, dir, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(soc->name, ==, name);
    g_assert_nonnull(hw_soc_find_kind(soc, HW_KIND_CPU));
    g_assert_nonnull(hw_soc_find_kind(soc, HW_KIND_GPU));
    g_assert_nonnull(hw_soc_find_kind(soc, HW_KIND_NPU));

    g_autofree char *file = g_strdup_printf("%s.json", name);
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autoptr(cJSON) root = hs_json_load_file(path, 0, &error);
    g_assert_no_error(error);
    check_sources(root, "$");
}

/* The node of @root under processor @proc (by its name; NULL: the top)
 * at the keys @keys[0..n). */
static const cJSON *
same_place(const cJSON *root, const char *proc, const char *const *keys, int n)
{
    const cJSON *at = root;
    if (proc) {
        const cJSON *p = NULL;
        at = NULL;
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(root, "processors")) {
            const cJSON *nm = cJSON_GetObjectItem(p, "name");
            if (cJSON_IsString(nm) && strcmp(nm->valuestring, proc) == 0) {
                at = p;
            }
        }
    }
    for (int i = 0; at && i < n; i++) {
        at = cJSON_GetObjectItem(at, keys[i]);
    }
    return at;
}

/* Every sourced value of @node (under processor @proc, keys @keys) whose
 * source says it is sd8gen3's ("as sd8gen3 (...)", "assumed: as sd8gen3",
 * "sd8gen3's NPU value") has sd8gen3's value: a derived SoC must not
 * keep a stale copy. */
static guint
check_as_sd8gen3(const cJSON *node, const cJSON *g3, const char *proc, const char **keys,
                 int n, const char *file)
{
    guint checked = 0;
    if (cJSON_IsObject(node) && cJSON_GetObjectItem(node, "value")) {
        const char *s = cJSON_GetObjectItem(node, "source")->valuestring;
        if (g_str_has_prefix(s, "as sd8gen3") || strstr(s, ": as sd8gen3") ||
            strstr(s, "sd8gen3's value") || strstr(s, "sd8gen3's NPU value")) {
            const cJSON *ref = same_place(g3, proc, keys, n);
            g_assert_nonnull(ref);
            const cJSON *rv = cJSON_GetObjectItem(ref, "value");
            const cJSON *v = cJSON_GetObjectItem(node, "value");
            if (!cJSON_Compare(rv, v, TRUE)) {
                g_error("%s: %s.%s says it is sd8gen3's value but is %g (sd8gen3: %g)", file,
                        proc ? proc : "$", keys[n - 1], v->valuedouble, rv->valuedouble);
            }
            checked++;
        }
        return checked;
    }
    const cJSON *it = NULL;
    cJSON_ArrayForEach(it, node) {
        if (n == 0 && it->string && strcmp(it->string, "processors") == 0) {
            const cJSON *p = NULL;
            cJSON_ArrayForEach(p, it) {
                const char *pn = cJSON_GetObjectItem(p, "name")->valuestring;
                checked += check_as_sd8gen3(p, g3, pn, keys, 0, file);
            }
        } else if (it->string && n < 8) {
            keys[n] = it->string;
            checked += check_as_sd8gen3(it, g3, proc, keys, n + 1, file);
        }
    }
    return checked;
}

static void
test_as_sd8gen3(void)
{
    g_autofree char *dir = configs_dir();
    g_autoptr(GError) error = NULL;
    g_autofree char *g3_path = g_build_filename(dir, "sd8gen3.json", NULL);
    g_autoptr(cJSON) g3 = hs_json_load_file(g3_path, 0, &error);
    g_assert_no_error(error);
    static const char *const derived[] = { "sd8gen2.json", "dimensity9300.json", "sd8elite.json" };
    guint checked = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(derived); i++) {
        g_autofree char *path = g_build_filename(dir, derived[i], NULL);
        g_autoptr(cJSON) root = hs_json_load_file(path, 0, &error);
        g_assert_no_error(error);
        const char *keys[8];
        checked += check_as_sd8gen3(root, g3, NULL, keys, 0, derived[i]);
    }
    /* stationary_kib, deep_rows, the NPU's active power, the driver's
     * finish time ...: at least these */
    g_assert_cmpuint(checked, >=, 8);
}

static void
test_sd8gen3_values(void)
{
    g_autofree char *dir = configs_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load("sd8gen3", dir, &error);
    g_assert_no_error(error);
    /* HeteroLLM §1, §3; NPU-TTS §3 */
    g_assert_cmpfloat(soc->mem.peak_gbps, ==, 68);
    g_assert_cmpfloat_with_epsilon(soc->mem.ceiling_gbps, 60, 1.5);
    const HwNpu *npu = (const HwNpu *) hw_soc_find_kind(soc, HW_KIND_NPU);
    g_assert_cmpuint(npu->tile_rows, ==, 32);
    g_assert_cmpuint(npu->tile_cols, ==, 32);
    g_assert_cmpfloat(npu->sram_kib, ==, 8192);
    const char *src = g_hash_table_lookup(soc->sources, "$.memory.peak_gbps");
    g_assert_nonnull(src);
    g_assert_nonnull(strstr(src, "HeteroLLM"));
}

static void
test_by_path(void)
{
    g_autofree char *dir = configs_dir();
    g_autofree char *path = g_build_filename(dir, "tiny.json", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load(path, "/nonexistent", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(soc->path, ==, path);
}

static void
test_unknown_name(void)
{
    g_autofree char *dir = configs_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load("sd9gen9", dir, &error);
    g_assert_null(soc);
    g_assert_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_NOT_FOUND);
    g_assert_true(g_str_has_prefix(error->message, "unknown SoC \"sd9gen9\" (known: "));
    g_assert_nonnull(strstr(error->message, "sd8gen3"));
    g_assert_nonnull(strstr(error->message, "tiny"));
}

/* Defaults are filled in when a key is left out. */
static void
test_defaults(void)
{
    g_autofree char *dir = configs_dir();
    g_autofree char *path = g_build_filename(dir, "tiny.json", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(cJSON) root = hs_json_load_file(path, 0, &error);
    cJSON *npu = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "processors"), 2);
    cJSON_DeleteItemFromObject(npu, "arrays");
    cJSON_DeleteItemFromObject(npu, "fill_drain_cycles");
    g_autoptr(HwSoc) soc = hw_soc_from_json(root, "x.json", &error);
    g_assert_no_error(error);
    const HwNpu *n = (const HwNpu *) hw_soc_find_kind(soc, HW_KIND_NPU);
    g_assert_cmpuint(n->arrays, ==, 1);
    g_assert_cmpuint(n->fill_drain_cycles, ==, 62);
    g_assert_null(g_hash_table_lookup(soc->sources, "$.processors[2].arrays"));
}

/* ---- broken configs ------------------------------------------------------ */

typedef struct Mutation {
    const char *name;       /* test path component */
    const char *target;     /* "memory", "processors/2", "sync/fast", "" = root */
    const char *key;        /* key to set or delete in target */
    const char *value;      /* JSON text to set; NULL deletes the key */
    const char *message;    /* expected message after "FILE: " */
} Mutation;

static const Mutation mutations[] = {
    { "out-of-range", "processors/2", "tile_rows", "0",
      "$.processors[2].tile_rows: expected an integer in [1, 1024] (got 0)" },
    { "not-an-integer", "processors/2", "tile_cols", "8.5",
      "$.processors[2].tile_cols: expected an integer in [1, 1024] (got 8.5)" },
    { "wrong-type-string", "memory", "peak_gbps", "\"fast\"",
      "$.memory.peak_gbps: expected a number in [0.001, 100000] (got \"fast\")" },
    { "negative-size", "processors/2", "sram_kib", "-256",
      "$.processors[2].sram_kib: expected a number in [1, 1048576] (got -256)" },
    { "huge-number", "processors/0", "cores", "1e300",
      "$.processors[0].cores: expected an integer in [1, 64] (got 1e+300)" },
    { "missing-required", "processors/1", "peak_fp16_tflops", NULL,
      "$.processors[1]: missing required key \"peak_fp16_tflops\" "
      "(a number in [0.001, 1000], theoretical FP16 throughput)" },
    { "unknown-key", "processors/2", "sram_kb", "256",
      "$.processors[2]: unknown key \"sram_kb\" (known keys: dram_cap_gbps, active_w, "
      "idle_w, tile_rows, tile_cols, arrays, freq_mhz, arch, fp16_macs_per_pe_cycle, "
      "int8_macs_per_pe_cycle, int4_macs_per_pe_cycle, fill_drain_cycles, sram_kib, "
      "stationary_kib, deep_rows, dma_gbps, relayout_gbps, vector_gflops, name, model, kind, dvfs)" },
    { "unknown-top-key", "", "memroy", "{}",
      "$: unknown key \"memroy\" (known keys: name, description, governor, baseline_w, memory, processors, sync)" },
    { "missing-section", "", "memory", NULL,
      "$: missing required key \"memory\"" },
    { "unknown-model", "processors/1", "model", "\"gpu-mali\"",
      "$.processors[1].model: expected one of cpu, gpu, npu-systolic (got \"gpu-mali\")" },
    { "duplicate-processor-name", "processors/2", "name", "\"gpu\"",
      "$.processors[2].name: duplicate processor name \"gpu\"" },
    { "bad-processor-name", "processors/0", "name", "\"big core\"",
      "$.processors[0].name: expected a name of 1-32 letters, digits, '_' or '-' "
      "starting with a letter (got \"big core\")" },
    { "processors-not-array", "", "processors", "{}",
      "$.processors: expected a non-empty array of processors (got an object)" },
    { "processors-empty", "", "processors", "[]",
      "$.processors: expected a non-empty array of processors (got an empty array)" },
    { "sourced-value-missing-value", "memory", "peak_gbps", "{\"source\": \"x\"}",
      "$.memory.peak_gbps: missing key \"value\"" },
    { "sourced-value-extra-key", "memory", "peak_gbps",
      "{\"value\": 1, \"source\": \"x\", \"unit\": \"GB/s\"}",
      "$.memory.peak_gbps: unknown key \"unit\" (a sourced value has only \"value\" "
      "and \"source\")" },
    { "empty-source", "memory", "ceiling_gbps", "{\"value\": 10, \"source\": \"\"}",
      "$.memory.ceiling_gbps.source: expected a non-empty string (got \"\")" },
    { "ceiling-above-peak", "memory", "ceiling_gbps", "25",
      "$.memory.ceiling_gbps: expected at most peak_gbps (20) (got 25)" },
    { "stack-key-in-soc", "processors/1", "achieved_fp16_tflops", "0.25",
      "$.processors[1]: unknown key \"achieved_fp16_tflops\" (known keys: dram_cap_gbps, "
      "active_w, idle_w, peak_fp16_tflops, arch, preempt_us, name, model, kind, dvfs)" },
    { "stationary-above-tcm", "processors/2", "stationary_kib", "512",
      "$.processors[2].stationary_kib: expected at most sram_kib (256) (got 512)" },
    { "control-cpu-not-a-cpu", "sync", "control_cpu", "\"gpu\"",
      "$.sync.control_cpu: expected the name of a cpu processor (cpu) (got \"gpu\")" },
    { "control-cpu-unknown", "sync", "control_cpu", "\"cpu-little\"",
      "$.sync.control_cpu: expected the name of a cpu processor (cpu) (got \"cpu-little\")" },
    { "missing-sync-mechanism", "sync", "fast", NULL,
      "$.sync: missing required key \"fast\"" },
    { "name-wrong-type", "", "name", "42",
      "$.name: expected a string (got 42)" },
    { "processor-not-object", "processors", NULL, "\"npu\"",
      "$.processors[3]: expected an object (got \"npu\")" },
    { "no-npu", "processors", "-2", NULL,
      "$.processors: expected at least one npu processor (found none)" },
};

static cJSON *
walk(cJSON *root, const char *target)
{
    cJSON *node = root;
    if (target[0] == '\0') {
        return node;
    }
    g_auto(GStrv) parts = g_strsplit(target, "/", -1);
    for (char **p = parts; *p; p++) {
        if (g_ascii_isdigit(**p)) {
            node = cJSON_GetArrayItem(node, atoi(*p));
        } else {
            node = cJSON_GetObjectItem(node, *p);
        }
        g_assert_nonnull(node);
    }
    return node;
}

static void
test_mutation(gconstpointer data)
{
    const Mutation *m = data;
    g_autofree char *dir = configs_dir();
    g_autofree char *tiny = g_build_filename(dir, "tiny.json", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(cJSON) root = hs_json_load_file(tiny, 0, &error);
    g_assert_no_error(error);

    cJSON *target = walk(root, m->target);
    if (cJSON_IsArray(target) && m->key == NULL) {
        cJSON_AddItemToArray(target, cJSON_Parse(m->value));
    } else if (cJSON_IsArray(target) && m->key[0] == '-') {
        cJSON_DeleteItemFromArray(target, cJSON_GetArraySize(target) + atoi(m->key) + 1);
    } else if (m->value == NULL) {
        g_assert_nonnull(cJSON_GetObjectItem(target, m->key));
        cJSON_DeleteItemFromObject(target, m->key);
    } else {
        cJSON *v = cJSON_Parse(m->value);
        g_assert_nonnull(v);
        if (cJSON_GetObjectItem(target, m->key)) {
            cJSON_ReplaceItemInObject(target, m->key, v);
        } else {
            cJSON_AddItemToObject(target, m->key, v);
        }
    }

    /* Through a real file, as a user would meet it. */
    g_autofree char *text = cJSON_Print(root);
    g_autofree char *tmpdir = g_dir_make_tmp("hs-config-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *file = g_build_filename(tmpdir, "broken.json", NULL);
    g_assert_true(g_file_set_contents(file, text, -1, NULL));

    g_autoptr(HwSoc) soc = hw_soc_load(file, dir, &error);
    g_assert_null(soc);
    g_assert_error(error, HS_CONFIG_ERROR, error->code);
    g_autofree char *want = g_strdup_printf("%s: %s", file, m->message);
    g_assert_cmpstr(error->message, ==, want);
    g_unlink(file);
    g_rmdir(tmpdir);
}

typedef struct BadFile {
    const char *file;       /* in tests/data/bad-configs */
    const char *message;    /* after "PATH: " */
} BadFile;

static const BadFile bad_files[] = {
    { "empty.json", "empty file" },
    { "whitespace.json", "empty file" },
    { "truncated.json", "invalid JSON: unexpected end of file at line 17, column 5" },
    { "trailing-comma.json", "invalid JSON at line 3, column 33" },
    { "array-root.json", "$: expected an object (got an array)" },
};

static void
test_bad_file(gconstpointer data)
{
    const BadFile *b = data;
    g_autofree char *rel = g_build_filename("tests/data/bad-configs", b->file, NULL);
    g_autofree char *path = src_path(rel);
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load(path, "/nonexistent", &error);
    g_assert_null(soc);
    g_assert_nonnull(error);
    g_autofree char *want = g_strdup_printf("%s: %s", path, b->message);
    g_assert_cmpstr(error->message, ==, want);
}

static void
test_missing_file(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load("/nonexistent/x.json", "/nonexistent", &error);
    g_assert_null(soc);
    g_assert_error(error, HS_CONFIG_ERROR, 0);
    g_assert_cmpstr(error->message, ==,
                    "/nonexistent/x.json: cannot read: No such file or directory");
}

static void
test_directory(void)
{
    g_autofree char *dir = configs_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load(dir, dir, &error);
    g_assert_null(soc);
    g_autofree char *want = g_strdup_printf("%s: is a directory, expected a JSON file", dir);
    g_assert_cmpstr(error->message, ==, want);
}

/* ---- a config from a base ----------------------------------------------- */

/* A scratch directory of JSON files, removed with what is in it. */
typedef struct Scratch {
    char *dir;
} Scratch;

static char *
scratch_file(Scratch *s, const char *name, const char *text)
{
    char *file = g_build_filename(s->dir, name, NULL);
    g_assert_true(g_file_set_contents(file, text, -1, NULL));
    return file;
}

static void
scratch_free(Scratch *s)
{
    g_autoptr(GDir) d = g_dir_open(s->dir, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d)) != NULL) {
        g_autofree char *f = g_build_filename(s->dir, e, NULL);
        g_unlink(f);
    }
    g_rmdir(s->dir);
    g_free(s->dir);
}

static Scratch
scratch_new(void)
{
    GError *error = NULL;
    Scratch s = { g_dir_make_tmp("hs-base-XXXXXX", &error) };
    g_assert_no_error(error);
    return s;
}

static char *
stacks_dir(void)
{
    return src_path("configs/stacks");
}

/* A user's stack names a shipped one as its base and writes only what it
 * measured: the rest (values and sources) is the base's; a {"value",
 * "source"} pair replaces the base's whole, so no value keeps a source
 * written for another. */
static void
test_base_stack(void)
{
    g_autofree char *sdir = stacks_dir();
    Scratch s = scratch_new();
    g_autofree char *mine = scratch_file(&s, "mine.json",
        "{\"name\": \"mine\", \"base\": \"heterollm\","
        " \"gpu\": {\"matmul_efficiency\": {\"value\": 0.5, \"source\": \"measured\"},"
        "          \"dequant\": {\"q4_0_gbps\": 99}}}");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwStack) st = hw_stack_load(mine, sdir, &error);
    g_assert_no_error(error);
    g_autoptr(HwStack) base = hw_stack_load("heterollm", sdir, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(st->name, ==, "mine");
    /* the description is the base's where the file gives none */
    g_assert_cmpstr(st->description, ==, base->description);
    g_assert_cmpfloat(st->gpu.matmul_efficiency, ==, 0.5);
    g_assert_cmpstr(g_hash_table_lookup(st->sources, "$.gpu.matmul_efficiency"), ==,
                    "measured");
    /* a plain number over a pair: no source of another value left behind */
    g_assert_cmpfloat(st->gpu.dequant.gbps[HW_WFMT_Q4_0], ==, 99);
    g_assert_cmpstr(g_hash_table_lookup(st->sources, "$.gpu.dequant.q4_0_gbps"), ==,
                    "given without a source");
    /* everything else is the base's, values and sources */
    g_assert_cmpfloat(st->gpu.launch_idle_us, ==, base->gpu.launch_idle_us);
    g_assert_cmpfloat(st->npu.dequant.gbps[HW_WFMT_W4A16], ==,
                      base->npu.dequant.gbps[HW_WFMT_W4A16]);
    g_assert_cmpfloat(st->gpu.arch_matmul_efficiency[HW_GPU_ARCH_MALI_VALHALL5], ==,
                      base->gpu.arch_matmul_efficiency[HW_GPU_ARCH_MALI_VALHALL5]);
    g_assert_cmpstr(g_hash_table_lookup(st->sources, "$.npu.launch_us"), ==,
                    g_hash_table_lookup(base->sources, "$.npu.launch_us"));
    scratch_free(&s);
}

/* A base may be a file, found beside the file that names it, and have a
 * base itself; the nearest file wins. */
static void
test_base_chain(void)
{
    g_autofree char *sdir = stacks_dir();
    Scratch s = scratch_new();
    g_free(scratch_file(&s, "mid.json",
        "{\"name\": \"mid\", \"base\": \"llama-cpp\", \"cpu\": {\"call_us\": 7, \"submit_us\": 3}}"));
    g_autofree char *top = scratch_file(&s, "top.json",
        "{\"name\": \"top\", \"base\": \"mid.json\", \"cpu\": {\"submit_us\": 4}}");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwStack) st = hw_stack_load(top, sdir, &error);
    g_assert_no_error(error);
    g_autoptr(HwStack) ggml = hw_stack_load("llama-cpp", sdir, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(st->name, ==, "top");
    g_assert_cmpfloat(st->cpu.submit_us, ==, 4);
    g_assert_cmpfloat(st->cpu.call_us, ==, 7);
    g_assert_cmpfloat(st->cpu.simd_efficiency, ==, ggml->cpu.simd_efficiency);
    g_assert_true(st->cpu.pins_clock);
    /* and llama-cpp's own base, heterollm, under both */
    g_assert_cmpfloat(st->npu.launch_us, ==, ggml->npu.launch_us);
    /* the chain is kept, nearest first, and `stack show` prints it */
    g_autofree char *mid = g_build_filename(s.dir, "mid.json", NULL);
    g_autofree char *l = g_build_filename(sdir, "llama-cpp.json", NULL);
    g_autofree char *h = g_build_filename(sdir, "heterollm.json", NULL);
    g_assert_cmpuint(g_strv_length(st->bases), ==, 3);
    g_assert_cmpstr(st->bases[0], ==, mid);
    g_assert_cmpstr(st->bases[1], ==, l);
    g_assert_cmpstr(st->bases[2], ==, h);
    g_autoptr(GString) out = g_string_new(NULL);
    hw_stack_dump_text(st, out);
    g_autofree char *lines = g_strdup_printf("  from %s\n  on base %s\n  on base %s\n"
                                             "  on base %s\n", top, mid, l, h);
    g_assert_nonnull(strstr(out->str, lines));
    g_autoptr(HwStack) plain = hw_stack_load("heterollm", sdir, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(g_strv_length(plain->bases), ==, 0);
    scratch_free(&s);
}

/* A SoC config too; an array (the processors) is replaced whole. */
static void
test_base_soc(void)
{
    g_autofree char *dir = configs_dir();
    Scratch s = scratch_new();
    g_autofree char *mine = scratch_file(&s, "phone.json",
        "{\"name\": \"phone\", \"base\": \"sd8gen3\","
        " \"memory\": {\"ceiling_gbps\": {\"value\": 51.5, \"source\": \"my probe\"}}}");
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = hw_soc_load(mine, dir, &error);
    g_assert_no_error(error);
    g_autoptr(HwSoc) ref = hw_soc_load("sd8gen3", dir, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(soc->name, ==, "phone");
    g_assert_cmpfloat(soc->mem.ceiling_gbps, ==, 51.5);
    g_assert_cmpfloat(soc->mem.peak_gbps, ==, ref->mem.peak_gbps);
    g_assert_cmpuint(soc->devs->len, ==, ref->devs->len);

    /* the processors merge by name: one key of the GPU, the rest the
     * base's; a new name is a new processor, checked as one */
    g_autofree char *gpu = scratch_file(&s, "gpu.json",
        "{\"name\": \"phone\", \"base\": \"sd8gen3\", \"processors\": [{\"name\": \"gpu\","
        " \"dram_cap_gbps\": {\"value\": 40, \"source\": \"my probe\"}}]}");
    g_autoptr(HwSoc) g = hw_soc_load(gpu, dir, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(g->devs->len, ==, ref->devs->len);
    for (guint i = 0; i < ref->devs->len; i++) {
        const HwDev *a = g_ptr_array_index(g->devs, i), *b = g_ptr_array_index(ref->devs, i);
        g_assert_cmpstr(a->name, ==, b->name);
        g_assert_cmpfloat(a->active_w, ==, b->active_w);
        if (strcmp(a->name, "gpu") == 0) {
            g_assert_cmpfloat(a->dram_cap_gbps, ==, 40);
            g_assert_cmpfloat(b->dram_cap_gbps, !=, 40);
        } else {
            g_assert_cmpfloat(a->dram_cap_gbps, ==, b->dram_cap_gbps);
        }
    }
    g_autofree char *added = scratch_file(&s, "added.json",
        "{\"name\": \"phone\", \"base\": \"sd8gen3\", \"processors\": [{\"name\": \"dsp2\","
        " \"dram_cap_gbps\": 40}]}");
    g_assert_null(hw_soc_load(added, dir, &error));
    g_autofree char *want = g_strdup_printf("%s: $.processors[4]: missing required key \"model\"",
                                            added);
    g_assert_cmpstr(error->message, ==, want);
    scratch_free(&s);
}

/* What goes wrong with a base is named where it is written. */
static void
test_base_errors(void)
{
    g_autofree char *sdir = stacks_dir();
    Scratch s = scratch_new();
    g_autoptr(GError) error = NULL;

    g_autofree char *num = scratch_file(&s, "num.json", "{\"name\": \"n\", \"base\": 3}");
    g_assert_null(hw_stack_load(num, sdir, &error));
    g_autofree char *want = g_strdup_printf(
        "%s: $.base: expected the name or file of the stack to start from (got 3)", num);
    g_assert_cmpstr(error->message, ==, want);
    g_clear_error(&error);

    g_autofree char *unk = scratch_file(&s, "unk.json", "{\"name\": \"u\", \"base\": \"nope\"}");
    g_assert_null(hw_stack_load(unk, sdir, &error));
    g_autofree char *lead = g_strdup_printf("%s: $.base: unknown stack \"nope\" (known: ", unk);
    g_assert_true(g_str_has_prefix(error->message, lead));
    g_assert_nonnull(strstr(error->message, "heterollm"));
    g_clear_error(&error);

    /* a circle, through files and through a symbolic link */
    g_autofree char *a = scratch_file(&s, "a.json", "{\"name\": \"a\", \"base\": \"b.json\"}");
    g_autofree char *b = scratch_file(&s, "b.json", "{\"name\": \"b\", \"base\": \"a.json\"}");
    g_assert_null(hw_stack_load(a, sdir, &error));
    g_free(want);
    want = g_strdup_printf("%s: $.base: \"a.json\" is already in this chain of bases "
                           "(a circle)", b);
    g_assert_cmpstr(error->message, ==, want);
    g_clear_error(&error);
    g_autofree char *c = scratch_file(&s, "c.json", "{\"name\": \"c\", \"base\": \"l.json\"}");
    g_autofree char *l = g_build_filename(s.dir, "l.json", NULL);
    g_assert_cmpint(symlink("c.json", l), ==, 0);
    g_assert_null(hw_stack_load(c, sdir, &error));
    g_assert_nonnull(strstr(error->message, "(a circle)"));
    g_clear_error(&error);

    /* a base that cannot be read is named with the file naming it */
    g_autofree char *dev = scratch_file(&s, "dev.json", "{\"name\": \"d\", \"base\": \"/dev/zero\"}");
    g_assert_null(hw_stack_load(dev, sdir, &error));
    g_free(want);
    want = g_strdup_printf("%s: $.base: /dev/zero: is a device, expected a JSON file", dev);
    g_assert_cmpstr(error->message, ==, want);
    g_clear_error(&error);

    /* a base that is not an object */
    g_autofree char *arr = scratch_file(&s, "arr.json", "[1]");
    g_autofree char *on = scratch_file(&s, "on.json", "{\"name\": \"o\", \"base\": \"arr.json\"}");
    g_assert_null(hw_stack_load(on, sdir, &error));
    g_free(want);
    want = g_strdup_printf("%s: $: expected an object (the base of %s; got an array)", arr, on);
    g_assert_cmpstr(error->message, ==, want);
    g_clear_error(&error);

    /* a bad value inherited is still refused (named in the file read) */
    g_autofree char *bad = scratch_file(&s, "bad.json",
        "{\"name\": \"x\", \"base\": \"heterollm\", \"gpu\": {\"launch_busy_us\": -1}}");
    g_assert_null(hw_stack_load(bad, sdir, &error));
    g_assert_nonnull(strstr(error->message, "$.gpu.launch_busy_us"));
    scratch_free(&s);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_data_func("/hw/config/shipped/sd8gen3", "sd8gen3", test_shipped);
    g_test_add_data_func("/hw/config/shipped/tiny", "tiny", test_shipped);
    g_test_add_data_func("/hw/config/shipped/dimensity9300", "dimensity9300", test_shipped);
    g_test_add_data_func("/hw/config/shipped/sd8gen2", "sd8gen2", test_shipped);
    g_test_add_data_func("/hw/config/shipped/sd8elite", "sd8elite", test_shipped);
    g_test_add_func("/hw/config/sd8gen3-values", test_sd8gen3_values);
    g_test_add_func("/hw/config/as-sd8gen3", test_as_sd8gen3);
    g_test_add_func("/hw/config/by-path", test_by_path);
    g_test_add_func("/hw/config/unknown-name", test_unknown_name);
    g_test_add_func("/hw/config/defaults", test_defaults);
    g_test_add_func("/hw/config/base/stack", test_base_stack);
    g_test_add_func("/hw/config/base/chain", test_base_chain);
    g_test_add_func("/hw/config/base/soc", test_base_soc);
    g_test_add_func("/hw/config/base/errors", test_base_errors);
    g_test_add_func("/hw/config/bad/missing-file", test_missing_file);
    g_test_add_func("/hw/config/bad/directory", test_directory);
    for (size_t i = 0; i < G_N_ELEMENTS(mutations); i++) {
        g_autofree char *p = g_strdup_printf("/hw/config/bad/%s", mutations[i].name);
        g_test_add_data_func(p, &mutations[i], test_mutation);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(bad_files); i++) {
        g_autofree char *p = g_strdup_printf("/hw/config/bad/file/%s", bad_files[i].file);
        g_test_add_data_func(p, &bad_files[i], test_bad_file);
    }
    return g_test_run();
}
