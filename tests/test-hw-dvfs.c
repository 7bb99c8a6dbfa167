/*
 * test-hw-dvfs.c - operating points and governors (hw/dvfs.h) and what
 * they do to a run: the governors' choices, the power per point, bad
 * tables refused with their JSON path, and on sd8gen3 + Llama-3-8B a
 * processor paced by another clocking down (less energy) while a fully
 * busy one stays at its top point (same timing), a stack whose runtime
 * pins the clock (OpenCL's perf hint) keeping it at the top whatever the
 * SoC's governor, and `performance` reproducing the energy of a SoC
 * without operating points to the bit; the CPU's public power table,
 * whose level NPU-TTS's measured power rules out.
 */
#include "hw/energy.h"
#include "hw/stack.h"
#include "sim/run.h"
#include "sim/util/error.h"
#include "sim/util/json.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static char *
data_dir(const char *sub)
{
    const char *root = g_getenv("HS_SOURCE_ROOT");
    return g_build_filename(root ? root : HS_SOURCE_ROOT, sub, NULL);
}

/* @file of the source tree's @sub folder, parsed.  (transfer full) */
static cJSON *
read_json(const char *sub, const char *file)
{
    g_autofree char *dir = data_dir(sub);
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_assert_nonnull(root);
    return root;
}

/* sd8gen3.json parsed, to edit before building. (transfer full) */
static cJSON *
sd8gen3_json(void)
{
    return read_json("configs", "sd8gen3.json");
}

static cJSON *
processor(cJSON *root, const char *name)
{
    cJSON *p = NULL;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(root, "processors")) {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(p, "name")->valuestring, name) == 0) {
            return p;
        }
    }
    g_assert_not_reached();
}

static HwSoc *
build(const cJSON *root, GError **error)
{
    HwSoc *soc = hw_soc_from_json(root, "sd8gen3.json", error);
    if (soc) {
        g_autofree char *dir = data_dir("configs");
        soc->stacks_dir = g_build_filename(dir, "stacks", NULL);
    }
    return soc;
}

/* A table of @n points at the given frequencies and voltages. */
static HwDvfs
table(HwGovKind gov, const double *mhz, const double *mv, uint32_t n)
{
    HwDvfs d = { .governor = gov, .window_ms = 20, .up_pct = 90, .down_pct = 5,
                 .margin = 1.25, .n_points = n, .points = g_new0(HwOpp, n) };
    for (uint32_t k = 0; k < n; k++) {
        d.points[k] = (HwOpp) { .freq_mhz = mhz[k], .volt_mv = mv[k] };
    }
    return d;
}

static void
test_governors(void)
{
    const double mhz[] = { 200, 400, 600, 800, 1000 }, mv[] = { 500, 600, 700, 800, 900 };
    HwDvfs d = table(HW_GOV_SCHEDUTIL, mhz, mv, 5);
    g_autoptr(GError) error = NULL;
    g_assert_true(hw_dvfs_realize(&d, 5.0, 1.0, "$.x", &error));
    /* a fully busy processor at the top stays there */
    g_assert_cmpuint(hw_dvfs_next(&d, 4, 1.0), ==, 4);
    /* schedutil: util 0.3 at the top -> 1.25 x 0.3 x 1000 = 375 -> 400 */
    g_assert_cmpuint(hw_dvfs_next(&d, 4, 0.3), ==, 1);
    /* frequency-invariant: fully busy at 400 MHz is util 0.4 -> 500 -> 600 */
    g_assert_cmpuint(hw_dvfs_next(&d, 1, 1.0), ==, 2);
    g_assert_cmpuint(hw_dvfs_next(&d, 4, 0.0), ==, 0);
    /* simple_ondemand (90/5): above 90 % the top, 85-90 % stays, else
     * f_cur x u / 0.875 rounded up to a point */
    d.governor = HW_GOV_SIMPLE_ONDEMAND;
    g_assert_cmpuint(hw_dvfs_next(&d, 0, 0.95), ==, 4);
    g_assert_cmpuint(hw_dvfs_next(&d, 2, 0.88), ==, 2);
    g_assert_cmpuint(hw_dvfs_next(&d, 4, 0.5), ==, 2);       /* 571 -> 600 */
    g_assert_cmpuint(hw_dvfs_next(&d, 4, 0.05), ==, 0);
    d.governor = HW_GOV_PERFORMANCE;
    g_assert_cmpuint(hw_dvfs_next(&d, 0, 0.0), ==, 4);
    /* power: idle + (active - idle) f V^2 / (f_top V_top^2); the top is
     * active_w exactly; compute stretches by f_top / f */
    g_assert_cmpfloat(d.busy_w[4], ==, 5.0);
    g_assert_cmpfloat_with_epsilon(d.busy_w[0], 1.0 + 4.0 * (200 * 0.25) / (1000 * 0.81),
                                   1e-12);
    g_assert_cmpfloat(hw_dvfs_slowdown(&d, 4), ==, 1.0);
    g_assert_cmpfloat(hw_dvfs_slowdown(&d, 0), ==, 5.0);
    hw_dvfs_clear(&d);
}

/* Bad tables: one line naming the JSON path and what was expected. */
static void
expect_error(void (*edit)(cJSON *gpu_dvfs), const char *path, const char *what)
{
    g_autoptr(cJSON) root = sd8gen3_json();
    edit(cJSON_GetObjectItemCaseSensitive(processor(root, "gpu"), "dvfs"));
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) soc = build(root, &error);
    g_assert_null(soc);
    g_assert_nonnull(error);
    if (g_test_verbose()) {
        g_printerr("%s\n", error->message);
    }
    g_assert_null(strchr(error->message, '\n'));
    g_assert_nonnull(strstr(error->message, path));
    g_assert_nonnull(strstr(error->message, what));
}

static cJSON *
point(cJSON *dvfs, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(dvfs, "points"), i);
}

/* @obj's number @key, bare or {"value": v, "source": ...}, set to @v */
static void
set_num(cJSON *obj, const char *key, double v)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(it)) {
        it = cJSON_GetObjectItemCaseSensitive(it, "value");
    }
    g_assert_true(cJSON_IsNumber(it));
    cJSON_SetNumberValue(it, v);
}

static void
unsorted(cJSON *d)
{
    set_num(point(d, 3), "freq_mhz", 300);
}

static void
empty(cJSON *d)
{
    cJSON_ReplaceItemInObjectCaseSensitive(d, "points", cJSON_CreateArray());
}

static void
negative(cJSON *d)
{
    set_num(point(d, 2), "volt_mv", -5);
}

static void
both(cJSON *d)
{
    cJSON_AddNumberToObject(point(d, 1), "power_w", 1.0);
}

static void
falling_volts(cJSON *d)
{
    set_num(point(d, 5), "volt_mv", 100);
}

static void
bad_governor(cJSON *d)
{
    cJSON_ReplaceItemInObjectCaseSensitive(d, "governor", cJSON_CreateString("turbo"));
}

static void
test_bad_tables(void)
{
    expect_error(unsorted, "$.processors[1].dvfs.points[3].freq_mhz",
                 "expected more than points[2]'s 366 MHz");
    expect_error(empty, "$.processors[1].dvfs.points", "expected");
    expect_error(negative, "$.processors[1].dvfs.points[2].volt_mv", "expected");
    expect_error(both, "$.processors[1].dvfs.points[1]", "volt_mv or power_w");
    expect_error(falling_volts, "$.processors[1].dvfs.points[5].volt_mv", "at least");
    expect_error(bad_governor, "$.processors[1].dvfs.governor", "schedutil");
}

/* ---- runs ---------------------------------------------------------------- */

/* heterollm's stack without its GPU perf hint (an engine that leaves the
 * Adreno to its governor), written once by main(). */
static char *no_hint_stack;

static char *
write_no_hint_stack(void)
{
    g_autoptr(cJSON) root = read_json("configs/stacks", "heterollm.json");
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    cJSON *pins = cJSON_GetObjectItemCaseSensitive(gpu, "pins_clock");
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pins, "value")));
    cJSON_ReplaceItemInObjectCaseSensitive(pins, "value", cJSON_CreateFalse());
    cJSON_ReplaceItemInObjectCaseSensitive(root, "name", cJSON_CreateString("no-hint"));
    g_autofree char *out = cJSON_Print(root);
    char *file = NULL;
    int fd = g_file_open_tmp("hs-no-hint-XXXXXX.json", &file, NULL);
    g_assert_cmpint(fd, >=, 0);
    close(fd);
    g_assert_true(g_file_set_contents(file, out, -1, NULL));
    return file;
}

/* @policy on @soc and @model, timing only, on @stack (NULL: the policy's
 * own) */
static void
run_model(HwSoc *soc, const char *model, const char *stack, const char *policy,
          uint32_t prompt, uint32_t decode, uint32_t batch, SimRunReport *r)
{
    g_autofree char *dir = data_dir("models");
    g_autoptr(GError) error = NULL;
    g_autoptr(MdlSpec) spec = mdl_spec_load(model, dir, &error);
    g_assert_no_error(error);
    SimWorkload w;
    sim_workload_init(&w);
    w.prompt = prompt;
    w.decode = decode;
    w.batch = batch;
    w.check_layers = -1;
    w.stack = stack;
    memset(r, 0, sizeof(*r));
    g_assert_true(sim_run(soc, spec, sim_policy_find(policy), &w, NULL, r, NULL, NULL,
                          &error));
    g_assert_no_error(error);
}

/* @policy on @soc and Llama-3-8B, on @stack (NULL: the policy's own) */
static void
run_on(HwSoc *soc, const char *stack, const char *policy, uint32_t prompt, uint32_t decode,
       SimRunReport *r)
{
    run_model(soc, "llama-3-8b", stack, policy, prompt, decode, 1, r);
}

/* On an engine without the perf hint: what the governors do. */
static void
run(HwSoc *soc, const char *policy, uint32_t prompt, uint32_t decode, SimRunReport *r)
{
    run_on(soc, no_hint_stack, policy, prompt, decode, r);
}

/* The shipped SoC @file under @mode (its GPU runs msm's simple_ondemand,
 * as the config says) unless @strip_dvfs drops every table. */
static HwSoc *
shipped(const char *file, HwGovernorMode mode, gboolean strip_dvfs)
{
    g_autoptr(cJSON) root = read_json("configs", file);
    g_assert_cmpstr(cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(processor(root, "gpu"), "dvfs"),
                        "governor")->valuestring, ==, "simple_ondemand");
    cJSON *p = NULL;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(root, "processors")) {
        if (strip_dvfs) {
            cJSON_DeleteItemFromObjectCaseSensitive(p, "dvfs");
        }
    }
    cJSON_AddStringToObject(root, "governor", hw_governor_mode_name[mode]);
    g_autoptr(GError) error = NULL;
    HwSoc *soc = build(root, &error);
    g_assert_no_error(error);
    return soc;
}

static HwSoc *
sd8gen3(HwGovernorMode mode, gboolean strip_dvfs)
{
    return shipped("sd8gen3.json", mode, strip_dvfs);
}

/* hetero-layer prefill: the GPU, busy a few % between the NPU's matmuls,
 * clocks down under ondemand and the prefill draws less; on the 8 Gen 3
 * and on the 8 Gen 2 (the Adreno 740's own table). */
static void
test_paced_gpu_saves(gconstpointer file)
{
    g_autoptr(HwSoc) perf = shipped(file, HW_GOVERNOR_PERFORMANCE, FALSE);
    g_autoptr(HwSoc) ond = shipped(file, HW_GOVERNOR_ONDEMAND, FALSE);
    SimRunReport a, b;
    run(perf, "hetero-layer", 256, 0, &a);
    run(ond, "hetero-layer", 256, 0, &b);
    uint32_t gpu = hw_soc_find_kind(perf, HW_KIND_GPU)->index;
    if (g_test_verbose()) {
        g_printerr("performance %.4f J %.2f ms gpu %.2f ms; ondemand %.4f J %.2f ms gpu %.2f ms\n",
                   a.prefill.energy_j, a.prefill.time_ms, a.busy_ms[gpu],
                   b.prefill.energy_j, b.prefill.time_ms, b.busy_ms[gpu]);
    }
    g_assert_cmpfloat(a.util[gpu], <, 0.1);
    /* at a lower clock its kernels take longer, at less power */
    g_assert_cmpfloat(b.busy_ms[gpu], >, 1.2 * a.busy_ms[gpu]);
    g_assert_cmpfloat(b.prefill.energy_j, <, 0.97 * a.prefill.energy_j);
    sim_run_report_clear(&a);
    sim_run_report_clear(&b);
}

/* The same hetero-layer prefill on heterollm's own stack, whose runtime
 * asks for the GPU's top clock (cl_qcom_perf_hint): the governor never
 * samples the GPU, whose kernels take what they take under performance
 * (energy differs a little: this engine leaves the compute cores, where
 * it runs nothing, to schedutil). */
static void
test_stack_pins_clock(void)
{
    g_autoptr(HwSoc) perf = sd8gen3(HW_GOVERNOR_PERFORMANCE, FALSE);
    g_autoptr(HwSoc) ond = sd8gen3(HW_GOVERNOR_ONDEMAND, FALSE);
    uint32_t gpu = hw_soc_find_kind(ond, HW_KIND_GPU)->index;
    g_autoptr(GError) error = NULL;
    g_autoptr(HwStack) ppl = hw_stack_load("heterollm", ond->stacks_dir, &error);
    g_assert_no_error(error);
    g_assert_true(hw_soc_governor_samples(ond, NULL, gpu));
    g_assert_false(hw_soc_governor_samples(ond, ppl, gpu));
    g_assert_false(hw_soc_governor_samples(perf, NULL, gpu));
    /* the control CPU's governor samples whatever the stack: its sync and
     * submission threads sleep */
    g_autoptr(HwStack) ggml = hw_stack_load("llama-cpp", ond->stacks_dir, &error);
    g_assert_no_error(error);
    g_assert_true(ggml->cpu.pins_clock);
    g_assert_true(hw_soc_governor_samples(ond, ggml, ond->control_cpu));
    g_assert_false(hw_soc_governor_samples(ond, ggml,
                                           hw_soc_find_kind(ond, HW_KIND_CPU)->index));
    SimRunReport a, b;
    run_on(perf, "heterollm", "hetero-layer", 256, 0, &a);
    run_on(ond, "heterollm", "hetero-layer", 256, 0, &b);
    g_assert_cmpfloat(b.prefill.time_ms, ==, a.prefill.time_ms);
    g_assert_cmpfloat(b.busy_ms[gpu], ==, a.busy_ms[gpu]);
    sim_run_report_clear(&a);
    sim_run_report_clear(&b);
}

/* gpu-only prefill keeps the GPU busy: it stays at its top point and the
 * timing is the same whatever the governor. */
static void
test_busy_stays_on_top(void)
{
    g_autoptr(HwSoc) perf = sd8gen3(HW_GOVERNOR_PERFORMANCE, FALSE);
    g_autoptr(HwSoc) ond = sd8gen3(HW_GOVERNOR_ONDEMAND, FALSE);
    SimRunReport a, b;
    run(perf, "gpu-only", 256, 0, &a);
    run(ond, "gpu-only", 256, 0, &b);
    uint32_t gpu = hw_soc_find_kind(perf, HW_KIND_GPU)->index;
    g_assert_cmpfloat(a.util[gpu], >, 0.95);
    g_assert_cmpfloat(b.prefill.time_ms, ==, a.prefill.time_ms);
    g_assert_cmpfloat(b.busy_ms[gpu], ==, a.busy_ms[gpu]);
    sim_run_report_clear(&a);
    sim_run_report_clear(&b);
}

/* --governor performance: time and energy to the bit those of the same
 * SoC without operating points, i.e. sum(busy x active_w + idle x idle_w)
 * + DRAM energy as before DVFS; checked against that formula too. */
static void
test_performance_is_exact(void)
{
    g_autoptr(HwSoc) perf = sd8gen3(HW_GOVERNOR_PERFORMANCE, FALSE);
    g_autoptr(HwSoc) none = sd8gen3(HW_GOVERNOR_ONDEMAND, TRUE);
    SimRunReport a, b;
    run(perf, "hetero-tensor", 256, 4, &a);
    run(none, "hetero-tensor", 256, 4, &b);
    g_assert_cmpfloat(a.prefill.time_ms, ==, b.prefill.time_ms);
    g_assert_cmpfloat(a.decode.time_ms, ==, b.decode.time_ms);
    g_assert_cmpfloat(a.prefill.energy_j, ==, b.prefill.energy_j);
    g_assert_cmpfloat(a.decode.energy_j, ==, b.decode.energy_j);
    sim_run_report_clear(&a);
    sim_run_report_clear(&b);
    /* prefill only: the run's busy times are the prefill's */
    run(perf, "hetero-tensor", 256, 0, &a);
    double secs = a.prefill.time_ms / 1e3, j = perf->mem.idle_w * secs;
    for (guint p = 0; p < perf->devs->len; p++) {
        const HwDev *d = g_ptr_array_index(perf->devs, p);
        double busy = a.busy_ms[p] / 1e3;
        j += d->active_w * busy + d->idle_w * (secs - busy);
    }
    j += a.prefill.dram_gbps * 1e9 * secs * perf->mem.energy_pj_per_byte * 1e-12;
    g_assert_cmpfloat_with_epsilon(a.prefill.energy_j, j, 1e-9 * j);
    sim_run_report_clear(&a);
}

/* The device baseline adds its power over the run, nothing else. */
static void
test_baseline(void)
{
    g_autoptr(HwSoc) soc = sd8gen3(HW_GOVERNOR_PERFORMANCE, FALSE);
    SimRunReport a, b;
    run(soc, "hetero-layer", 64, 0, &a);
    soc->baseline_w = 1.5;
    run(soc, "hetero-layer", 64, 0, &b);
    g_assert_cmpfloat(b.prefill.time_ms, ==, a.prefill.time_ms);
    g_assert_cmpfloat_with_epsilon(b.prefill.avg_w - a.prefill.avg_w, 1.5, 1e-9);
    sim_run_report_clear(&a);
    sim_run_report_clear(&b);
}

/*
 * The 8 Gen 3's CPU points take their power shares from a public table
 * (Xiaomi 14's power_profile.xml, see the config), whose level, the top
 * point's power_w, is not taken: at that level NPU-TTS §7's own
 * measurement, decode under 5 W at batch 32 with its CPU running lm_head
 * ~60 % of the time, would miss.  Kept here because the config and
 * docs/accuracy.md rest the shipped active_w on it: when a change makes
 * the table's level pass, the choice is to be made again.
 */
static double
npu_tts_decode_w(HwSoc *soc)
{
    SimRunReport r;
    run_model(soc, "qwen2.5-1.5b", NULL, "npu-tts", 256, 8, 32, &r);
    double wat = r.decode.avg_w;
    sim_run_report_clear(&r);
    return wat;
}

static void
test_cpu_table_level(void)
{
    g_autoptr(cJSON) root = sd8gen3_json();
    cJSON *cpu = processor(root, "cpu");
    cJSON *points = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cpu, "dvfs"), "points");
    int n = cJSON_GetArraySize(points);
    g_assert_cmpint(n, >=, 2);
    /* the table gives powers, rising with the clock; the level is lower */
    double prev = 0;
    for (int k = 0; k < n; k++) {
        cJSON *pw = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(points, k), "power_w");
        g_assert_nonnull(pw);
        double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pw, "value"));
        g_assert_cmpfloat(v, >, prev);
        prev = v;
    }
    const double table_top_w = prev;
    cJSON *active = cJSON_GetObjectItemCaseSensitive(cpu, "active_w");
    g_assert_cmpfloat(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(active, "value")),
                      <, table_top_w);
    g_autoptr(GError) error = NULL;
    g_autoptr(HwSoc) shipped_soc = build(root, &error);
    g_assert_no_error(error);
    double shipped_w = npu_tts_decode_w(shipped_soc);
    cJSON_ReplaceItemInObjectCaseSensitive(active, "value", cJSON_CreateNumber(table_top_w));
    g_autoptr(HwSoc) table_soc = build(root, &error);
    g_assert_no_error(error);
    double table_w = npu_tts_decode_w(table_soc);
    if (g_test_verbose()) {
        g_printerr("npu-tts decode batch 32: %.3f W shipped, %.3f W at the table's %.2f W\n",
                   shipped_w, table_w, table_top_w);
    }
    g_assert_cmpfloat(shipped_w, <=, 5.0);
    g_assert_cmpfloat(table_w, >, 5.0);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hw/dvfs/governors", test_governors);
    g_test_add_func("/hw/dvfs/bad-tables", test_bad_tables);
    g_test_add_data_func("/hw/dvfs/paced-gpu-saves/sd8gen3", "sd8gen3.json",
                         test_paced_gpu_saves);
    g_test_add_data_func("/hw/dvfs/paced-gpu-saves/sd8gen2", "sd8gen2.json",
                         test_paced_gpu_saves);
    g_test_add_func("/hw/dvfs/stack-pins-clock", test_stack_pins_clock);
    g_test_add_func("/hw/dvfs/busy-stays-on-top", test_busy_stays_on_top);
    g_test_add_func("/hw/dvfs/performance-is-exact", test_performance_is_exact);
    g_test_add_func("/hw/dvfs/baseline", test_baseline);
    g_test_add_func("/hw/dvfs/cpu-table-level", test_cpu_table_level);
    no_hint_stack = write_no_hint_stack();
    int rc = g_test_run();
    g_unlink(no_hint_stack);
    g_free(no_hint_stack);
    return rc;
}
